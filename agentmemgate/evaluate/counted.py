"""The score that counts: which run, which judge and which arcs' stored scores a result is made
of. ``amg report eval``, ``amg eval show`` and the viewer all take their scores from here, so one
arc's score is the same wherever it is read.

- **The run**: each system name's latest run (``store.latest_systems``); an uploaded answer set,
  or an answering system's answers, under the run key of its ``eval_answer_sets`` row.
- **The judge**: the spec asked for; else the judge of the latest ``amg eval run``; else the
  judge used last (``offline`` in a workspace with none). Of that spec, each kind's key used last:
  ``equivalence`` scores component systems, and every system on natural items; ``answers``
  scores answering systems and answer sets on arcs.
- **The arcs**: a score counts only while the arc's stored text (its JSON, or the natural item's)
  is the text it was made on (``eval_scores.arc_sha256``): a rebuilt arc's old score is left out
  until a run scores the new text.

Everything here only reads: it runs on a ``Workspace`` and on the viewer's read-only reader
alike (anything with ``db``, a ``sqlite_utils.Database``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hashing import sha256_parts
from ..workspace import Workspace
from . import store
from .measures import ArcScore

NATURAL = "natural:"  # natural items are scored under "natural:SET:ITEM"
# A system's kind -> the kind of judge key its scores are stored under.
JUDGE_KIND = {"component": "equivalence", "answering": "answers", "answers": "answers"}


@dataclass(frozen=True)
class CountingJudge:
    """The judge whose scores count: its spec, and its ``eval_judges`` row of each kind (none
    when nothing was scored by that spec)."""

    spec: str
    rows: dict[str, dict] = field(default_factory=dict)  # kind -> its row, used last

    def key(self, kind: str) -> str | None:
        row = self.rows.get(kind)
        return row["judge_key"] if row else None


def counting_judge(ws: Workspace, spec: str | None = None) -> CountingJudge:
    """``spec``'s judge, or by default the latest run's (see the module docstring)."""
    judges = store.judges(ws)
    if spec is None:
        last = store.latest_run(ws)
        row = next((j for j in judges if last and j["judge_key"] == last["judge_key"]), None)
        spec = (row or (judges or [{"spec": "offline"}])[0])["spec"]
    rows: dict[str, dict] = {}
    for j in judges:
        if j["spec"] == spec:
            rows.setdefault(j["kind"], j)
    return CountingJudge(spec, rows)


@dataclass(frozen=True)
class SystemRun:
    """The run of one system name whose results count. ``kind``: ``component``, ``answering``
    (run by ``amg eval run``: products, baselines, plug-ins) or ``answers`` (uploaded by ``amg
    eval answers``); ``system``: its latest ``eval_systems`` row (``info`` parsed; None for an
    uploaded set); ``answer_set``: its ``eval_answer_sets`` row (None for a component system)."""

    name: str
    run_key: str
    kind: str
    system: dict | None
    answer_set: dict | None = None

    @property
    def judge_kind(self) -> str:
        return JUDGE_KIND[self.kind]


def system_runs(ws: Workspace) -> dict[str, SystemRun]:
    """Every system name with results -> its run: each name's latest run, and uploaded answer
    sets (component and answering systems first, in the order they last ran)."""
    out: dict[str, SystemRun] = {}
    for name, row in store.latest_systems(ws).items():
        out[name] = SystemRun(name, row["run_key"], row.get("kind") or "component", row)
    for name, s in store.answer_sets(ws).items():
        mine = out.get(name)
        if s.get("kind") == "system" and mine is not None:
            out[name] = SystemRun(name, s["run_key"], "answering", mine.system, s)
        elif s.get("kind") != "system":
            out[name] = SystemRun(name, s["run_key"], "answers", None, s)
    return out


def scores(ws: Workspace, run_key: str, judge_key: str, current: dict[str, str]) -> list[ArcScore]:
    """The scores of one run under one judge that count: those of arcs whose text is unchanged
    (``current``: arc id -> the sha256 of its stored text now)."""
    return [
        ArcScore.model_validate_json(s)
        for a, sha, s in store.stored_score_rows(ws, run_key, judge_key)
        if current.get(a) == sha
    ]


def current_sha(ws: Workspace, arc_id: str) -> str | None:
    """The sha256 of an arc's stored text now (``natural:SET:ITEM``: the natural item's), which
    a counted score was made on; None when there is no such arc."""
    if _is_natural(arc_id):
        _, set_name, item_id = arc_id.split(":", 2)
        row = ws.db.execute(
            "select sha256 from natural_items where set_name = ? and item_id = ?",
            [set_name, item_id],
        ).fetchone()
        return row[0] if row else None
    row = ws.db.execute("select json from arcs where id = ?", [arc_id]).fetchone()
    return sha256_parts(row[0]) if row else None


def _is_natural(arc_id: str) -> bool:
    return arc_id.startswith(NATURAL) and arc_id.count(":") >= 2


@dataclass(frozen=True)
class ArcResult:
    """One system's score on one arc as the report counts it. ``score`` is None when no score is
    stored under the counting judge, or when the one stored was made on other text (``stale``:
    the arc was rebuilt since; a re-run scores it again)."""

    judge: str
    score: ArcScore | None
    stale: bool = False


def score_key(
    run: SystemRun, judge: CountingJudge, natural: bool = False
) -> tuple[str, str] | None:
    """(run key, judge key) that ``run``'s counted scores are stored under; None when the judge
    scored nothing of its kind. ``natural``: on natural items every system is scored by the value
    judge (``amg eval run --natural``), under its latest run."""
    run_key, kind = run.run_key, run.judge_kind
    if natural:
        run_key, kind = (run.system or {}).get("run_key", run_key), "equivalence"
    key = judge.key(kind)
    return (run_key, key) if key else None


def arc_result(
    ws: Workspace, run: SystemRun, arc_id: str, judge: CountingJudge | None = None
) -> ArcResult:
    """``run``'s score on ``arc_id`` that counts (``judge``: ``counting_judge(ws)`` by default)."""
    judge = judge or counting_judge(ws)
    src = score_key(run, judge, _is_natural(arc_id))
    row = store.stored_score(ws, *src, arc_id) if src else None
    if row is None:
        return ArcResult(judge.spec, None)
    sha, raw = row
    if sha != current_sha(ws, arc_id):
        return ArcResult(judge.spec, None, stale=True)
    return ArcResult(judge.spec, ArcScore.model_validate_json(raw))


def counted_sql(id_expr: str, sha_expr: str, alias: str = "e") -> str:
    """SQL that holds when the ``eval_scores`` row ``alias`` is a counted score of the arc whose
    id is ``id_expr`` and whose current text has the sha256 ``sha_expr``; it takes two
    parameters, the run key and the judge key (``score_key``).
    For readers that page arcs in SQL (the viewer's measure filters)."""
    return (
        f"{alias}.run_key = ? and {alias}.arc_id = {id_expr} and {alias}.judge_key = ? and "
        f"{alias}.arc_sha256 = {sha_expr}"
    )


__all__ = [
    "ArcResult",
    "CountingJudge",
    "SystemRun",
    "arc_result",
    "counted_sql",
    "counting_judge",
    "current_sha",
    "score_key",
    "scores",
    "system_runs",
]
