"""The workspace: one SQLite database (WAL) holding specs, arcs, checks and, later, LLM calls."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

import sqlite_utils

from . import migrations
from .errors import WorkspaceError
from .schema import Arc, ArcSpec, CheckResult

DEFAULT_WORKSPACE = Path("amg-workspace")
DB_NAME = "workspace.db"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


class Workspace:
    """A folder with ``workspace.db``; opening it applies pending migrations.

    ``create=False`` (every command that only reads or adds to a workspace) refuses a folder with
    no ``workspace.db`` instead of leaving a stray new workspace behind a mistyped path.
    """

    def __init__(self, path: str | Path = DEFAULT_WORKSPACE, *, create: bool = True):
        self.path = Path(path)
        if not create and not (self.path / DB_NAME).is_file():
            raise WorkspaceError(f"No workspace at {str(self.path)!r} (no {DB_NAME} there): check "
                                 "--workspace, or create one with `amg build`")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path / DB_NAME, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            self.db = sqlite_utils.Database(conn)
            self.db.enable_wal()
            # In WAL mode NORMAL still never loses a committed transaction to a crash or a kill
            # (only to a power cut), and spares an fsync per commit: arcs are stored one by one.
            conn.execute("PRAGMA synchronous = NORMAL")
            migrations.apply(self.db)
        except (OSError, sqlite3.Error) as e:
            raise WorkspaceError(f"Cannot open workspace {str(self.path)!r}: {e}") from None

    # -- specs -------------------------------------------------------------------------------
    def save_specs(self, specs: Iterable[ArcSpec]) -> None:
        rows = [
            {"id": s.id, "split": s.split, "factor": s.factor, "level": s.level,
             "outcome": s.outcome, "json": s.model_dump_json()}
            for s in specs
        ]
        with self.db.conn:
            self.db["specs"].upsert_all(rows, pk="id")

    def specs(self, split: str | None = None) -> list[ArcSpec]:
        where, args = ("split = ?", [split]) if split else (None, None)
        return [ArcSpec.model_validate_json(r["json"])
                for r in self.db["specs"].rows_where(where, args, order_by="rowid")]

    # -- arcs --------------------------------------------------------------------------------
    def save_arc(self, arc: Arc) -> None:
        """Store one arc at once, so an interrupted run keeps everything already rendered."""
        with self.db.conn:
            self.db["arcs"].upsert(
                {"id": arc.id, "split": arc.spec.split, "generator": arc.provenance.generator,
                 "json": arc.model_dump_json(), "created_at": now()},
                pk="id",
            )
            self.db["render_failures"].delete_where("id = ?", [arc.id])

    def save_failure(self, spec: ArcSpec, generator: str, reason: str, attempts: int) -> None:
        with self.db.conn:
            self.db["render_failures"].upsert(
                {"id": spec.id, "split": spec.split, "generator": generator, "reason": reason,
                 "attempts": attempts, "created_at": now()},
                pk="id",
            )

    def arc_ids(self, generator: str | None = None) -> set[str]:
        where, args = ("generator = ?", [generator]) if generator else (None, None)
        return {r["id"] for r in self.db["arcs"].rows_where(where, args, select="id")}

    def arcs(self, split: str | None = None, ids: Iterable[str] | None = None) -> Iterator[Arc]:
        """Arcs in spec order (the order the planner produced them)."""
        clauses, args = [], []
        if split:
            clauses.append("arcs.split = ?")
            args.append(split)
        sql = ("select arcs.json from arcs join specs on specs.id = arcs.id"
               + (" where " + " and ".join(clauses) if clauses else "") + " order by specs.rowid")
        wanted = set(ids) if ids is not None else None
        for (raw,) in self.db.execute(sql, args).fetchall():
            arc = Arc.model_validate_json(raw)
            if wanted is None or arc.id in wanted:
                yield arc

    def failures(self, split: str | None = None) -> list[dict]:
        where, args = ("split = ?", [split]) if split else (None, None)
        return list(self.db["render_failures"].rows_where(where, args))

    def clear_split(self, split: str) -> None:
        """Forget specs, arcs and checks of a split (a new plan replaces the old one)."""
        with self.db.conn:
            ids = [r["id"] for r in self.db["specs"].rows_where("split = ?", [split], select="id")]
            for table in ("arcs", "render_failures", "specs"):
                self.db[table].delete_where("split = ?", [split])
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                self.db["checks"].delete_where(
                    f"arc_id in ({','.join('?' * len(chunk))})", chunk)

    # -- checks ------------------------------------------------------------------------------
    def save_checks(self, results: Iterable[CheckResult]) -> None:
        rows = [{"arc_id": r.arc_id, "check": r.check, "passed": int(r.passed),
                 "detail": r.detail, "created_at": now()} for r in results]
        with self.db.conn:
            self.db["checks"].upsert_all(rows, pk=("arc_id", "check"))

    def checks(self, arc_ids: Iterable[str] | None = None) -> list[CheckResult]:
        rows = self.db["checks"].rows
        wanted = set(arc_ids) if arc_ids is not None else None
        return [CheckResult(arc_id=r["arc_id"], check=r["check"], passed=bool(r["passed"]),
                            detail=r["detail"] or "")
                for r in rows if wanted is None or r["arc_id"] in wanted]

    # -- runs --------------------------------------------------------------------------------
    def start_run(self, command: str, params: dict) -> int:
        with self.db.conn:
            table = self.db["runs"].insert(
                {"command": command, "params": json.dumps(params, default=str, sort_keys=True),
                 "started_at": now(), "status": "running"})
        return table.last_pk

    def finish_run(self, run_id: int, status: str) -> None:
        with self.db.conn:
            self.db["runs"].update(run_id, {"finished_at": now(), "status": status})
