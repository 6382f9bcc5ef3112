"""Why a result looks surprising, read from the traces: the report's "why" notes.

Two results make a reader stop, and the tables alone cannot say why:

- a gated system contaminates plans its ungated twin keeps out. The traces show how each such
  plan value reached the gated store: which write put it there (a commit after the classifier
  called the statement something other than speculation, a promotion by the checker), whether
  the field was matched only through the plan-frame retry, and what the ungated twin did with
  the same turn (a pipeline without the retry drops a statement that matches no field). The
  retry brings plans to the gate, so the classifier's errors reach the store: the paper's
  trade-off between looser field matching and containment (Section 6.3).
- two systems are identical in every cell. The traces say whether they read the same value at
  every read and made the same writes at every turn, and where their pipelines differed on the
  way (an extractor that records plans as plans, matched through the retry, against one that
  extracts the value and matches directly).

Each note carries its counts, so a script can read them (``EvalReport.explanations``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..memory.profile_store import same_value
from ..text import counted
from .aggregate import CALLS, Difference
from .measures import ArcScore
from .trace import Trace
from .truth import Truth

WRITES = ("committed", "corrected", "promoted", "refreshed")
CONTAMINATION = ("pending_contamination", "end_contamination")

TraceOf = Callable[[str, str], Trace | None]  # (system, arc id) -> its stored trace
TruthOf = Callable[[str], Truth | None]  # arc id -> its truth


class Explanation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str  # "gated_contaminates_more" | "identical"
    systems: list[str]  # [system, the other one]
    splits: list[str]
    counts: dict[str, int]
    text: str


def _writes_plan(trace: Trace, plan: str) -> Any:
    """The first event that put the plan value into the store as current."""
    for tt in trace.turns:
        for e in tt.events:
            if e.kind in WRITES and e.key == trace.key and same_value(e.value, plan):
                return e
    return None


def _twin_at(trace: Trace | None, t: int) -> str:
    """What the ungated twin did with the statements of turn ``t``."""
    if trace is None:
        return "no trace"
    events = [e for tt in trace.turns if tt.t == t for e in tt.events]
    if not events:
        return "extracted nothing"
    if all(e.kind == "dropped_no_field" for e in events):
        return "matched no field"
    return "wrote " + ", ".join(repr(e.value) for e in events if e.value is not None)


def gated_contaminates_more(
    diffs: list[Difference],
    per_arc: dict[str, dict[str, dict[str, ArcScore]]],
    trace_of: TraceOf,
    truth_of: TruthOf,
    titles: dict[str, str] | None = None,
) -> list[Explanation]:
    """One note per gated system whose contamination (pending or at end) exceeds its ungated
    twin's on some split, over the arcs it contaminates and the twin does not."""
    out: list[Explanation] = []
    pairs: dict[tuple[str, str], list[str]] = {}
    for d in diffs:
        if d.kind == "gated_minus_ungated" and d.measure in CONTAMINATION and d.value > 0:
            splits = pairs.setdefault((d.system, d.baseline), [])
            if d.split not in splits:
                splits.append(d.split)
    for (gated, twin), splits in pairs.items():
        arcs: dict[str, str] = {}  # arc id -> split
        for split in splits:
            mine, theirs = per_arc[gated].get(split, {}), per_arc[twin].get(split, {})
            for arc_id, sc in mine.items():
                other = theirs.get(arc_id)
                if other is None:
                    continue
                if any(sc.values.get(m) and not other.values.get(m) for m in CONTAMINATION):
                    arcs[arc_id] = split
        how: Counter[str] = Counter()
        retry = twin_dropped = 0
        for arc_id in arcs:
            truth, trace = truth_of(arc_id), trace_of(gated, arc_id)
            e = _writes_plan(trace, truth.plan_value) if trace and truth else None
            if e is None:
                how["not found in the trace"] += 1
                continue
            if e.kind == "promoted":
                how["promoted by the checker before the plan came true"] += 1
            elif e.evidence_type:
                how[f"committed after the classifier called it {e.evidence_type}"] += 1
            else:
                how[f"{e.kind}"] += 1
            if e.matched_by_retry:
                retry += 1
                twin_dropped += _twin_at(trace_of(twin, arc_id), e.t) == "matched no field"
        n = len(arcs)
        by_split = Counter(arcs.values())
        text = (
            f"{gated} contaminates {counted(n, 'at-risk plan')} that its ungated twin {twin} "
            "keeps out ("
            + ", ".join(
                f"{by_split[s]} in {(titles or {}).get(s, s)}" for s in splits if by_split[s]
            )
            + "). How the plan value reached its store, from the traces: "
            + "; ".join(f"{k} {v}" for k, v in how.most_common())
            + "."
        )
        if retry:
            text += (
                f" {retry} of the {n} matched the field only through the plan-frame retry"
                + (
                    f"; at those turns {twin}, which runs no retry, matched no field and "
                    f"dropped the statement ({twin_dropped} of {retry})"
                    if twin_dropped
                    else ""
                )
                + ". The retry brings plans worded as plans to the gate, so the classifier's "
                "errors reach the store: the trade-off between looser field matching and "
                "containment (paper, Section 6.3)."
            )
        out.append(
            Explanation(
                kind="gated_contaminates_more",
                systems=[gated, twin],
                splits=splits,
                counts={"arcs": n, "via_retry": retry, "twin_matched_no_field": twin_dropped}
                | {k: v for k, v in how.items()},
                text=text,
            )
        )
    return out


def _cells(block: dict) -> dict:
    """A report block without the overhead (calls differ between any two pipelines)."""
    out = {k: v for k, v in block.items() if k not in (CALLS, "by_level")}
    out["by_level"] = block.get("by_level", {})
    return out


def identical_pairs(results: dict[str, dict[str, dict]], names: list[str]) -> list[tuple[str, str]]:
    """Pairs of systems whose every cell (every split, measure and level; calls aside) is equal."""
    out = []
    for i, a in enumerate(names):
        ra = results.get(a) or {}
        if not ra:
            continue
        for b in names[i + 1 :]:
            rb = results.get(b) or {}
            if set(ra) != set(rb):
                continue
            if all(_cells(ra[s]) == _cells(rb[s]) for s in ra):
                out.append((a, b))
    return out


def _writes(trace: Trace) -> list[tuple]:
    return [
        (e.t, e.kind, e.value, e.evidence_type)
        for tt in trace.turns
        for e in tt.events
        if e.kind != "dropped_no_field"
    ]


def identical(
    a: str,
    b: str,
    per_arc: dict[str, dict[str, dict[str, ArcScore]]],
    components: set[str],
    trace_of: TraceOf,
) -> Explanation:
    """Why ``a`` and ``b`` agree in every cell: the same outcome per arc, and for component
    systems the same reads and writes, and where their pipelines differed on the way."""
    splits = [s for s in per_arc[a] if s in per_arc[b]]
    ids = [(s, i) for s in splits for i in per_arc[a][s] if i in per_arc[b][s]]
    same_outcome = sum(per_arc[a][s][i].values == per_arc[b][s][i].values for s, i in ids)
    n = len(ids)
    text = (
        f"{a} and {b} are identical in every cell. Per conversation they have the same "
        f"outcome on every measure in {same_outcome} of {n}"
        + ("" if same_outcome == n else " (the other conversations differ, and the counts agree)")
        + "."
    )
    counts = {"arcs": n, "same_outcome": same_outcome}
    if a in components and b in components:
        reads = writes = retry_a = retry_b = extracted = 0
        for _, i in ids:
            ta, tb = trace_of(a, i), trace_of(b, i)
            if ta is None or tb is None:
                continue
            reads += ta.reads() == tb.reads()
            writes += _writes(ta) == _writes(tb)
            ea = {
                (e.t, e.value): e
                for tt in ta.turns
                for e in tt.events
                if e.kind != "dropped_no_field"
            }
            eb = {
                (e.t, e.value): e
                for tt in tb.turns
                for e in tt.events
                if e.kind != "dropped_no_field"
            }
            for k in ea.keys() & eb.keys():
                x, y = ea[k], eb[k]
                retry_a += x.matched_by_retry and not y.matched_by_retry
                retry_b += y.matched_by_retry and not x.matched_by_retry
                extracted += bool(
                    x.extracted and y.extracted and x.extracted.value != y.extracted.value
                )
        counts |= {
            "same_reads": reads,
            "same_writes": writes,
            f"retry_only_{a}": retry_a,
            f"retry_only_{b}": retry_b,
            "different_extraction": extracted,
        }
        text += (
            f" From the traces: they read the same value at every read in {reads} of {n} and "
            f"made the same writes (kind, value and evidence type, turn by turn) in {writes} of {n}."
        )
        ways = []
        for x, y, k in ((b, a, retry_b), (a, b, retry_a)):
            if k:
                ways.append(
                    f"{x} matched {counted(k, 'write')} to the field only through the plan-frame "
                    f"retry (its extractor worded them as plans) where {y} matched them directly"
                )
        if extracted and not (retry_a or retry_b):
            ways.append(
                f"their extractors proposed different text for {counted(extracted, 'write')}"
            )
        if ways:
            text += " On the way to the field their pipelines differ: " + "; ".join(ways) + "."
            if writes == n:
                text += (
                    " Once matched, the same classifier and routing treat those statements the "
                    "same way, so the difference between them changes nothing that is stored."
                )
    return Explanation(kind="identical", systems=[a, b], splits=splits, counts=counts, text=text)


def explanations(
    results: dict[str, dict[str, dict]],
    per_arc: dict[str, dict[str, dict[str, ArcScore]]],
    diffs: list[Difference],
    names: list[str],
    components: set[str],
    trace_of: TraceOf,
    truth_of: TruthOf,
    titles: dict[str, str] | None = None,
) -> list[Explanation]:
    """Every note the report carries: gated systems above their twins, then identical pairs.
    ``titles``: split -> how the report names it."""
    out = gated_contaminates_more(diffs, per_arc, trace_of, truth_of, titles)
    for a, b in identical_pairs(results, [n for n in names if n in per_arc]):
        out.append(identical(a, b, per_arc, components, trace_of))
    return out


__all__ = ["Explanation", "explanations", "gated_contaminates_more", "identical", "identical_pairs"]
