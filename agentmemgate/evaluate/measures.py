"""The paper's measures (Section 4, Appendix A.2), per arc, from a trace and the arc's truth.

Each function returns ``{measure: bool}`` for the measures that apply to the arc and nothing for
those that do not (pending contamination on an arc without a pending window, promotion for an
ungated system): a measure that does not apply is absent, never 0. Every "is this the plan
value" question goes through ``same`` (the fixed equivalence judge), never string equality.
Aggregation (k/n, Wilson intervals, levels, differences) lives in ``aggregate``.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, model_serializer

from ..memory.system import MemoryEvent, SystemInfo
from .trace import Trace
from .truth import Truth

# JSON names, in report order (the paper's measures; corrections, the among-staged discard rate,
# black-box exposure and premature writes are the extras this room adds).
MEASURES = (
    "pending_contamination",
    "end_contamination",
    "premature_write",
    "task_accuracy",
    "staged_at_plan_turn",
    "promoted",
    "promoted_among_staged",
    "discarded",
    "discarded_among_staged",
    "controls_committed",
    "over_holding",
    "corrections_applied",
    "exposure",
    "store_pending_contamination",
    "store_end_contamination",
    "store_answer_agreement",
    "calls_per_user_message",
)
GATE_MEASURES = (
    "staged_at_plan_turn",
    "promoted",
    "promoted_among_staged",
    "discarded",
    "discarded_among_staged",
    "over_holding",
)

Same = Callable[[str | None, str], bool]
"""``same(value, reference)``: does a read or answered value name the reference value? (None: no)."""


class CorrectionRead(BaseModel):
    """A correction arc's end read, kept so the report can compare a gated system with its
    ungated twin (the paper's control: both end with the same value)."""

    model_config = ConfigDict(extra="forbid")
    end: str | None
    # the store's history at the end marks an interval of the wrong value never valid (Figure 4)
    never_valid: bool = False


class ArcScore(BaseModel):
    """One system on one arc: which measures apply and their outcome, plus why (for the viewer)."""

    model_config = ConfigDict(extra="forbid")
    arc_id: str
    split: str
    factor: str
    level: str
    outcome: str
    values: dict[str, bool]  # measure -> outcome, only measures that apply
    why: dict[str, str] = {}
    calls: int = 0
    user_messages: int = 0
    correction: CorrectionRead | None = None  # correction arcs only

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler):
        data = handler(self)
        if isinstance(data, dict) and data.get("correction") is None:
            data.pop("correction", None)
        return data


def _for_field(
    events: list[MemoryEvent], trace: Trace, kinds: tuple[str, ...]
) -> list[MemoryEvent]:
    return [e for e in events if e.kind in kinds and e.key == trace.key]


def _at(trace: Trace, t: int) -> list[MemoryEvent]:
    return [e for tt in trace.turns if tt.t == t for e in tt.events]


def _when_read(truth: Truth, t: int) -> str:
    """When a read was taken: as a turn arrived, or at the end of the conversation."""
    return (
        "at the end of the conversation" if t >= truth.end_t else f"as turn {truth.turn(t)} arrived"
    )


def score_trace(trace: Trace, truth: Truth, info: SystemInfo, same: Same) -> ArcScore:
    v: dict[str, bool] = {}
    why: dict[str, str] = {}
    reads = trace.reads()
    end = trace.end_read
    plan = truth.plan_value

    if truth.at_risk:
        if truth.pending_window:
            # Reads strictly after the plan turn and before the outcome turn (the read taken as
            # the outcome turn arrives is not in the window); open plans: up to the end read.
            stop = truth.outcome_t if truth.outcome == "abandoned" else truth.end_t + 1
            hits = [(t, r) for t, r in reads if truth.plan_t < t < stop and same(r, plan)]
            v["pending_contamination"] = bool(hits)
            n_window = sum(1 for t, _ in reads if truth.plan_t < t < stop)
            why["pending_contamination"] = (
                f"read {hits[0][1]!r} (the plan value) " + _when_read(truth, hits[0][0])
                if hits
                else f"no read in the pending window ({n_window} read(s)) gave the plan value"
            )
        v["end_contamination"] = same(end, plan)
        why["end_contamination"] = f"end read {end!r}"

    if truth.outcome == "came_true" and truth.pending_window and truth.outcome_t is not None:
        # A plan that came true, but was in the store before it did: not contamination (the
        # value ends up right), yet every read in between answered from a plan as a fact.
        early = [(t, r) for t, r in reads if truth.plan_t < t < truth.outcome_t and same(r, plan)]
        v["premature_write"] = bool(early)
        why["premature_write"] = (
            f"read {early[0][1]!r} (the plan value) as turn {truth.turn(early[0][0])} arrived, "
            f"before the plan came true at {truth.turn(truth.outcome_t)}"
            if early
            else "no read between the plan and its outcome gave the plan value"
        )

    v["task_accuracy"] = same(end, truth.final_value)
    why["task_accuracy"] = f"end read {end!r}, expected {truth.final_value!r}"

    events = trace.events()
    if truth.outcome == "control":
        committed = [
            e
            for e in _for_field(_at(trace, truth.plan_t), trace, ("committed", "corrected"))
            if same(e.value, plan)
        ]
        v["controls_committed"] = bool(committed)
        why["controls_committed"] = (
            "committed the reported change at its turn"
            if committed
            else "the reported change was not committed at its turn"
        )

    if truth.correction is not None:
        c = truth.correction
        after = next((r for t, r in reads if t > c.t), end)
        v["corrections_applied"] = same(after, c.value)
        why["corrections_applied"] = (
            f"read after the correction: {after!r}, corrected value {c.value!r}"
        )

    if info.gated:
        staged_at_plan = _for_field(_at(trace, truth.plan_t), trace, ("staged",))
        if truth.is_plan:
            v["staged_at_plan_turn"] = bool(staged_at_plan)
            why["staged_at_plan_turn"] = (
                f"staged {staged_at_plan[0].value!r} at the plan turn"
                if staged_at_plan
                else "nothing staged at the plan turn"
            )
        if truth.outcome == "came_true":
            promos = _for_field(events, trace, ("promoted",))
            valid = [e for e in promos if e.t == truth.outcome_t]
            v["promoted"] = bool(valid)
            why["promoted"] = (
                "promoted at the resolution turn"
                if valid
                else f"promoted at {truth.turn(promos[0].t)}, not the resolution turn "
                f"{truth.turn(truth.outcome_t)}"
                if promos
                else "never promoted"
            )
            if staged_at_plan:
                v["promoted_among_staged"] = bool(valid)
                why["promoted_among_staged"] = "staged at the plan turn; " + why["promoted"]
        if truth.outcome == "abandoned":
            final = trace.snapshots[-1] if trace.snapshots else None
            pending = [
                s
                for s in (final.staged if final else [])
                if s.key == trace.key and s.status == "pending"
            ]
            promoted = _for_field(events, trace, ("promoted",))
            # As in the paper's Table 5: an abandoned plan is discarded by the end when nothing
            # for it is still held and nothing was promoted (a plan never staged holds nothing).
            v["discarded"] = not pending and not promoted
            why["discarded"] = (
                "still held at the end"
                if pending
                else "promoted although abandoned"
                if promoted
                else "nothing held at the end"
            )
            if staged_at_plan:
                dropped = _for_field(events, trace, ("discarded",))
                v["discarded_among_staged"] = bool(dropped) and not pending and not promoted
                why["discarded_among_staged"] = "staged at the plan turn; " + (
                    f"discarded by the checker at {truth.turn(dropped[0].t)}"
                    if v["discarded_among_staged"]
                    else why["discarded"]
                    if pending or promoted
                    else "never discarded by the checker"
                )
        if truth.outcome == "control":
            held = [e for e in _for_field(events, trace, ("staged",)) if e.t >= truth.plan_t]
            v["over_holding"] = bool(held)
            why["over_holding"] = (
                f"staged the completed change at {truth.turn(held[0].t)}"
                if held
                else "the completed change was not staged"
            )

    return ArcScore(
        arc_id=truth.arc_id,
        split=truth.split,
        factor=truth.factor,
        level=truth.level,
        outcome=truth.outcome,
        values=v,
        why=why,
        calls=trace.calls,
        user_messages=trace.user_messages,
        correction=_correction_read(trace, truth, end, same),
    )


def _correction_read(
    trace: Trace, truth: Truth, end: str | None, same: Same
) -> CorrectionRead | None:
    c = truth.correction
    if c is None:
        return None
    final = trace.snapshots[-1] if trace.snapshots else None
    marked = bool(
        final
        and c.wrong_value
        and any(
            h.never_valid and same(h.value, c.wrong_value)
            for f in final.fields
            if f.key == trace.key
            for h in f.history
        )
    )
    return CorrectionRead(end=end, never_valid=marked)
