"""Judge verdicts, validation runs and the arcs they judged, in the workspace database.

Verdict rows keep the hidden intended level beside the verdict (for reports); it is never part of
what a judge is asked. ``item_sha256`` ties a verdict to the exact arc text it judged, so a
rebuilt arc's old verdicts drop out of reports instead of being counted against new text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict

from .._sqlite import upsert_rows
from ..hashing import sha256_parts
from ..llm.servers import normalize_family
from ..schema import Arc
from ..workspace import Workspace, now

TASKS = ("recovery", "realism", "equivalence")


class VerdictRow(BaseModel):
    """One stored answer (status ``ok``) or judge failure (status ``failed``)."""

    model_config = ConfigDict(extra="forbid")
    task: str
    item_id: str
    criterion: str = ""
    judge: str
    family: str
    heuristic: bool
    same_family: bool = False
    split: str = ""
    factor: str = ""
    intended: str = ""
    verdict: str = ""
    confidence: float | None = None
    rationale: str = ""
    status: str = "ok"
    error: str = ""
    options: list[str] = []
    option_seed: int | None = None
    rubric: str = ""
    rubric_sha256: str = ""
    item_sha256: str = ""
    input_sha256: str = ""
    run_id: int | None = None
    strategy: str = ""  # the structured-output strategy of an LLM judge's answer

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def arcs_with_sha(ws: Workspace, splits: Iterable[str]) -> Iterator[tuple[Arc, str]]:
    """Arcs of ``splits`` in spec order, each with the sha256 of its stored JSON."""
    for split in splits:
        rows = ws.db.execute(
            "select arcs.json from arcs join specs on specs.id = arcs.id where arcs.split = ? "
            "order by specs.rowid",
            [split],
        ).fetchall()
        for (raw,) in rows:
            yield Arc.model_validate_json(raw), sha256_parts(raw)


def current_arc_shas(ws: Workspace, splits: Iterable[str]) -> dict[str, str]:
    """arc id -> sha256 of its stored JSON, without parsing the arcs (cheap, for reports)."""
    out: dict[str, str] = {}
    for split in splits:
        for arc_id, raw in ws.db.execute(
            "select id, json from arcs where split = ?", [split]
        ).fetchall():
            out[arc_id] = sha256_parts(raw)
    return out


def generator_families_of(ws: Workspace, generators: Iterable[str]) -> dict[str, set[str]]:
    """generator spec -> the model families that generated its arcs in this workspace.

    An ``openai:MODEL`` generator may have run at OpenAI or at any OpenAI-compatible server (its
    own family); the LLM layer logs the family of every generation call, so read it there. All
    families the name was used with count (the strict reading of the cross-family rule); with no
    logged call the spec's provider is the family.
    """
    from .judges import generator_family

    out: dict[str, set[str]] = {}
    for g in dict.fromkeys(generators):
        provider, sep, name = g.partition(":")
        found: set[str] = set()
        if sep and name:
            for table in ("llm_cache", "llm_calls"):
                found.update(
                    normalize_family(f)
                    for (f,) in ws.db.execute(
                        f"select distinct family from {table} where purpose = 'generate.arc' "
                        "and requested_model = ?",
                        [name],
                    ).fetchall()
                    if f == provider
                    or (provider == "openai" and f.startswith("openai-compatible:"))
                )
        out[g] = found or {generator_family(g)}
    return out


def save_verdicts(ws: Workspace, rows: Iterable[VerdictRow]) -> None:
    records = []
    stamp = now()  # one time for the batch (seconds resolution)
    for r in rows:
        d = r.model_dump()
        d.update(
            heuristic=int(r.heuristic),
            same_family=int(r.same_family),
            options=json.dumps(r.options),
            created_at=stamp,
        )
        records.append(d)
    if records:
        with ws.db.conn:
            upsert_rows(
                ws.db, "judge_verdicts", records, pk=("task", "item_id", "criterion", "judge")
            )


_TEXT_COLUMNS = (
    "criterion",
    "split",
    "factor",
    "intended",
    "verdict",
    "rationale",
    "error",
    "rubric",
    "rubric_sha256",
    "item_sha256",
    "input_sha256",
    "strategy",
)


def _row(d: dict) -> VerdictRow:
    d.pop("created_at", None)
    d["heuristic"], d["same_family"] = bool(d["heuristic"]), bool(d["same_family"])
    options = d["options"]
    d["options"] = json.loads(options) if options and options != "[]" else []
    for k in _TEXT_COLUMNS:
        d[k] = d[k] or ""
    return VerdictRow.model_validate(d)


def load_verdicts(
    ws: Workspace,
    tasks: Iterable[str] = TASKS,
    judges: Iterable[str] | None = None,
    splits: Iterable[str] | None = None,
) -> list[VerdictRow]:
    """Stored verdict rows of ``tasks`` (and ``judges``), in the order they were stored.

    ``splits``: only rows about arcs the workspace has in those splits now (recovery and realism
    items are arcs), so a report on one split does not parse every other split's verdicts.
    """
    tasks = list(tasks)
    where = f"task in ({','.join('?' * len(tasks))})"
    args: list = list(tasks)
    if judges is not None:
        judges = list(judges)
        if not judges:
            return []
        where += f" and judge in ({','.join('?' * len(judges))})"
        args += judges
    if splits is not None and ws._reads is not None:  # ``read_cache``: every split's rows once
        rows = ws.cached(("verdicts", where, tuple(args)), lambda: _select(ws, where, args))
        split_of = ws.cached(
            ("arc_splits",), lambda: dict(ws.db.execute("select id, split from arcs").fetchall())
        )
        wanted = set(splits)
        return [r for r in rows if split_of.get(r.item_id) in wanted]
    if splits is not None:
        splits = list(splits)
        where += (
            f" and item_id in (select id from arcs where split in ({','.join('?' * len(splits))}))"
        )
        args += splits
    return _select(ws, where, args)


def _select(ws: Workspace, where: str, args: list) -> list[VerdictRow]:
    cur = ws.db.execute(f"select * from judge_verdicts where {where} order by rowid", args)
    cols = [c[0] for c in cur.description]
    return [_row(dict(zip(cols, values))) for values in cur.fetchall()]


def answered(ws: Workspace, task: str, judge: str) -> dict[tuple[str, str], str]:
    """(item id, criterion) -> input sha of this judge's stored *answers* (failures are retried)."""
    return {
        (r["item_id"], r["criterion"] or ""): r["input_sha256"]
        for r in ws.db["judge_verdicts"].rows_where(
            "task = ? and judge = ? and status = 'ok'",
            [task, judge],
            select="item_id, criterion, input_sha256",
        )
    }


def start_validation_run(
    ws: Workspace,
    kind: str,
    splits: list[str],
    checks: list[str],
    judges: list[dict],
    allow_same_family: bool,
    generator_families: list[str],
    params: dict | None = None,
) -> int:
    with ws.db.conn:
        t = ws.db["validation_runs"].insert(
            {
                "kind": kind,
                "splits": json.dumps(splits),
                "checks": json.dumps(checks),
                "judges": json.dumps(judges),
                "allow_same_family": int(allow_same_family),
                "generator_families": json.dumps(sorted(generator_families)),
                "params": json.dumps(params or {}, sort_keys=True, default=str),
                "created_at": now(),
            }
        )
    return t.last_pk


def latest_run(ws: Workspace, kind: str) -> dict | None:
    rows = list(
        ws.db["validation_runs"].rows_where("kind = ?", [kind], order_by="id desc", limit=1)
    )
    if not rows:
        return None
    r = rows[0]
    for k in ("splits", "checks", "judges", "generator_families", "params"):
        r[k] = json.loads(r[k] or "null")
    r["allow_same_family"] = bool(r["allow_same_family"])
    return r
