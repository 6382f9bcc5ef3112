"""The workspace: one SQLite database (WAL) holding specs, arcs, checks and, later, LLM calls."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import migrations
from ._sqlite import sqlite_utils, upsert_rows
from .defaults import DEFAULT_WORKSPACE
from .errors import WorkspaceError
from .schema import Arc, ArcSpec, CheckResult

DB_NAME = "workspace.db"


def _missing_dirs(path: Path) -> list[Path]:
    """The folders ``path.mkdir(parents=True)`` would create, deepest first."""
    out = []
    p = path
    while not p.exists() and p != p.parent:
        out.append(p)
        p = p.parent
    return out


def _read_only(path: Path) -> str | None:
    """Why ``path`` (or the nearest folder above it that exists) cannot be written, if it cannot."""
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        if os.statvfs(p).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
    except (OSError, AttributeError):  # no statvfs (Windows)
        pass
    if not os.access(p, os.W_OK) or (
        (p / DB_NAME).exists() and not os.access(p / DB_NAME, os.W_OK)
    ):
        return "it is not writable (permission denied)"
    return None


def _cannot_open(path: Path, e: Exception) -> str:
    """One plain line for a workspace that cannot be opened (no raw ``[Errno 30]``)."""
    if path.is_file():  # a file given as --workspace, often one meant for another option
        return (
            f"Workspace {str(path)!r} is a file; a workspace is a folder (pass the folder "
            "that holds workspace.db as --workspace)"
        )
    why = _read_only(path)
    if (
        why is None
        and isinstance(e, OSError)
        and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    ):
        why = "it is read-only" if e.errno == errno.EROFS else "permission denied"
    if why is None and "readonly" in str(e).replace("-", "").replace(" ", "").lower():
        why = "its database file is read-only"
    if why:
        return (
            f"Workspace {str(path)!r} is read-only: {why}; amg writes to its workspace, so copy "
            "it to a writable folder or pass another --workspace"
        )
    detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    return f"Cannot open workspace {str(path)!r}: {detail}"


@contextmanager
def open_workspace(
    path: str | Path | Workspace = DEFAULT_WORKSPACE, *, create: bool = False
) -> Iterator[Workspace]:
    """A workspace for one command; one it created is removed again if the command fails first.

    Only the commands that may create a workspace pass ``create=True``; if such a command is
    rejected before it stores anything (a bad option, a missing key, an unknown source), the new
    workspace and any folders made for it go away, so nothing is left on disk.
    """
    ws = path if isinstance(path, Workspace) else Workspace(path, create=create)
    try:
        yield ws
    except BaseException:
        ws.discard_if_unused()
        raise


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def require_workspace(path: str | Path) -> Path:
    """The path of an existing workspace, or the one-line error for a mistyped ``--workspace``;
    cheap, so a command can check before importing what its work needs."""
    if not (Path(path) / DB_NAME).is_file():
        raise WorkspaceError(
            f"No workspace at {str(path)!r} (no {DB_NAME} there): check "
            "--workspace, or create one with `amg build`"
        )
    return Path(path)


class Workspace:
    """A folder with ``workspace.db``; opening it applies pending migrations.

    ``create=False`` (every command that only reads or adds to a workspace) refuses a folder with
    no ``workspace.db`` instead of leaving a stray new workspace behind a mistyped path.
    """

    def __init__(self, path: str | Path = DEFAULT_WORKSPACE, *, create: bool = True):
        self.path = Path(path)
        db_path = self.path / DB_NAME
        if not create:
            require_workspace(self.path)
        # What this call brings into being, so a command that fails before storing anything can
        # take it away again (``discard_if_unused``).
        self._new_dirs = _missing_dirs(self.path) if not db_path.is_file() else []
        self.created = not db_path.is_file()
        self._reads: dict | None = None  # ``read_cache``: parsed reads while nothing is written
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if db_path.is_file() and not os.access(
                db_path, os.W_OK
            ):  # would fail at the first write
                raise OSError(errno.EACCES, "read-only database file", str(db_path))
            conn = sqlite3.connect(db_path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            self.db = sqlite_utils.Database(conn)
            self.db.enable_wal()
            # In WAL mode NORMAL still never loses a committed transaction to a crash or a kill
            # (only to a power cut), and spares an fsync per commit: arcs are stored one by one.
            conn.execute("PRAGMA synchronous = NORMAL")
            migrations.apply(self.db)
        except (OSError, sqlite3.Error) as e:
            raise WorkspaceError(_cannot_open(self.path, e)) from None

    @contextmanager
    def read_cache(self) -> Iterator[None]:
        """Within this block, a repeated read through ``cached`` (``arcs`` by split, the judges'
        verdicts) returns what the first one parsed instead of parsing the rows again: for a
        step that reads the same rows many times and writes nothing meanwhile (an export, whose
        every card section reads each split's arcs and verdicts). What it returns is shared:
        read it, do not change it."""
        if self._reads is not None:  # nested: the outer block owns the cache
            yield
            return
        self._reads = {}
        try:
            yield
        finally:
            self._reads = None

    def cached(self, key: tuple, compute):
        """``compute()``, or inside ``read_cache`` the value an earlier call with ``key`` got."""
        if self._reads is None:
            return compute()
        if key not in self._reads:
            self._reads[key] = compute()
        return self._reads[key]

    def is_unused(self) -> bool:
        """True while nothing but bookkeeping (migrations applied, runs started) is stored."""
        tables = [
            t
            for t in self.db.table_names()
            if t not in ("_migrations", "runs") and not t.startswith("sqlite_")
        ]
        return not any(self.db.execute(f"select 1 from [{t}] limit 1").fetchone() for t in tables)

    def discard_if_unused(self) -> bool:
        """Remove the workspace again if this object created it and nothing was stored in it.

        Keeps a mistyped path or a rejected argument from leaving an empty ``workspace.db``
        (and its folder) behind. Returns whether anything was removed.
        """
        if not self.created or not self.is_unused():
            return False
        self.db.conn.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            (self.path / (DB_NAME + suffix)).unlink(missing_ok=True)
        for d in self._new_dirs:  # deepest first; only folders this call made, and only if empty
            try:
                d.rmdir()
            except OSError:
                break
        return True

    # -- specs -------------------------------------------------------------------------------
    def save_specs(self, specs: Iterable[ArcSpec]) -> None:
        rows = [
            {
                "id": s.id,
                "split": s.split,
                "factor": s.factor,
                "level": s.level,
                "outcome": s.outcome,
                "json": s.model_dump_json(),
            }
            for s in specs
        ]
        with self.db.conn:
            upsert_rows(self.db, "specs", rows, pk="id")

    def specs(self, split: str | None = None) -> list[ArcSpec]:
        where, args = ("split = ?", [split]) if split else (None, None)
        return [
            ArcSpec.model_validate_json(r["json"])
            for r in self.db["specs"].rows_where(where, args, order_by="rowid")
        ]

    # -- arcs --------------------------------------------------------------------------------
    def save_arc(self, arc: Arc) -> None:
        """Store one arc at once, so an interrupted run keeps everything already rendered."""
        with self.db.conn:
            upsert_rows(
                self.db,
                "arcs",
                [
                    {
                        "id": arc.id,
                        "split": arc.spec.split,
                        "generator": arc.provenance.generator,
                        "json": arc.model_dump_json(),
                        "created_at": now(),
                    }
                ],
                pk="id",
            )
            self.db.conn.execute("delete from render_failures where id = ?", [arc.id])

    def save_failure(self, spec: ArcSpec, generator: str, reason: str, attempts: int) -> None:
        with self.db.conn:
            self.db["render_failures"].upsert(
                {
                    "id": spec.id,
                    "split": spec.split,
                    "generator": generator,
                    "reason": reason,
                    "attempts": attempts,
                    "created_at": now(),
                },
                pk="id",
            )

    def arc_ids(
        self, generator: str | None = None, splits: Iterable[str] | None = None
    ) -> set[str]:
        """Ids of the stored arcs, optionally of one generator and of some splits only."""
        clauses, args = [], []
        if generator:
            clauses.append("generator = ?")
            args.append(generator)
        if splits is not None:
            splits = list(splits)
            clauses.append(f"split in ({','.join('?' * len(splits))})")
            args += splits
        return {
            r["id"]
            for r in self.db["arcs"].rows_where(
                " and ".join(clauses) or None, args or None, select="id"
            )
        }

    def arcs(self, split: str | None = None, ids: Iterable[str] | None = None) -> Iterator[Arc]:
        """Arcs in spec order (the order the planner produced them)."""
        clauses, args = [], []
        if split:
            clauses.append("arcs.split = ?")
            args.append(split)
        sql = (
            "select arcs.json from arcs join specs on specs.id = arcs.id"
            + (" where " + " and ".join(clauses) if clauses else "")
            + " order by specs.rowid"
        )
        wanted = set(ids) if ids is not None else None
        if self._reads is not None:
            parsed = self.cached(
                ("arcs", split),
                lambda: [
                    Arc.model_validate_json(raw) for (raw,) in self.db.execute(sql, args).fetchall()
                ],
            )
            yield from (a for a in parsed if wanted is None or a.id in wanted)
            return
        for (raw,) in self.db.execute(sql, args).fetchall():
            arc = Arc.model_validate_json(raw)
            if wanted is None or arc.id in wanted:
                yield arc

    def failures(self, split: str | None = None) -> list[dict]:
        where, args = ("split = ?", [split]) if split else (None, None)
        return list(self.db["render_failures"].rows_where(where, args))

    def clear_split(self, split: str, keep: set[str] = frozenset()) -> None:
        """Forget specs, arcs and checks of a split (a new plan replaces the old one); the arcs
        and checks of ids in ``keep`` stay (the specs are always replaced, in plan order)."""
        with self.db.conn:
            ids = [r["id"] for r in self.db["specs"].rows_where("split = ?", [split], select="id")]
            self.db["specs"].delete_where("split = ?", [split])
            gone = [i for i in ids if i not in keep]
            if not keep:
                for table in ("arcs", "render_failures"):
                    self.db[table].delete_where("split = ?", [split])
            for i in range(0, len(gone), 500):
                chunk = gone[i : i + 500]
                marks = ",".join("?" * len(chunk))
                if keep:
                    for table in ("arcs", "render_failures"):
                        self.db[table].delete_where(f"id in ({marks})", chunk)
                self.db["checks"].delete_where(f"arc_id in ({marks})", chunk)

    # -- checks ------------------------------------------------------------------------------
    def save_checks(self, results: Iterable[CheckResult]) -> None:
        rows = [
            {
                "arc_id": r.arc_id,
                "check": r.check,
                "passed": int(r.passed),
                "detail": r.detail,
                "created_at": now(),
            }
            for r in results
        ]
        with self.db.conn:
            upsert_rows(self.db, "checks", rows, pk=("arc_id", "check"))

    def checks(self, arc_ids: Iterable[str] | None = None) -> list[CheckResult]:
        rows = self.db["checks"].rows
        wanted = set(arc_ids) if arc_ids is not None else None
        return [
            CheckResult(
                arc_id=r["arc_id"],
                check=r["check"],
                passed=bool(r["passed"]),
                detail=r["detail"] or "",
            )
            for r in rows
            if wanted is None or r["arc_id"] in wanted
        ]

    # -- runs --------------------------------------------------------------------------------
    def start_run(self, command: str, params: dict) -> int:
        with self.db.conn:
            table = self.db["runs"].insert(
                {
                    "command": command,
                    "params": json.dumps(params, default=str, sort_keys=True),
                    "started_at": now(),
                    "status": "running",
                }
            )
        return table.last_pk

    def finish_run(self, run_id: int, status: str) -> None:
        with self.db.conn:
            self.db["runs"].update(run_id, {"finished_at": now(), "status": status})
