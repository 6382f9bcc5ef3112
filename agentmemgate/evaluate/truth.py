"""What the scorer knows about an arc: turn positions and labelled values, read from its fields.

The protocol never shows any of this to a system under test; only measures read it. Positions
are ``t`` values (0-based over every turn of the conversation, assistant turns included), the same
numbering ``UserTurn.t`` carries; what people read names them by session and turn (``turn``). Arc ids are opaque: nothing here parses one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..schema import Arc, FieldSpec, TurnRef, turn_labels


class Correction(BaseModel):
    """An explicit correction in an arc: at turn ``t`` the stored value must become ``value``.

    Arcs of the corrections split carry one (their ``correction_turn`` and
    ``spec.correction.value``); on the other splits ``corrections_applied`` is absent. A caller
    may pass one for a hand-built case."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    t: int
    value: str
    wrong_value: str | None = None  # what the corrected statement said


class Truth(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    arc_id: str
    split: str
    factor: str
    level: str
    outcome: str  # came_true | abandoned | open | control
    field: FieldSpec
    initial_value: str
    plan_value: str
    final_value: str  # expected_value_after_session[-1]: what the probe must find
    expected_after_session: tuple[str, ...]
    plan_t: int
    plan_session: int
    outcome_t: int | None  # came_true/abandoned: the resolution turn; controls: the change turn
    outcome_session: int | None
    pending_window: bool  # spec.pending_window: >= 1 read lies strictly between plan and outcome
    n_sessions: int
    end_t: int  # one past the last turn: where the end-of-conversation read sits
    correction: Correction | None = None
    labels: tuple[str, ...] = ()  # ``turn_label`` of each position, as reasons name turns

    def turn(self, t: int) -> str:
        """Position ``t`` as people read it (``s1 t2``; ``turn 7`` past what ``labels`` hold)."""
        return self.labels[t] if 0 <= t < len(self.labels) else f"turn {t}"

    @property
    def at_risk(self) -> bool:
        """A stated plan that never came true (abandoned, or still open at the end)."""
        return self.outcome in ("abandoned", "open")

    @property
    def is_plan(self) -> bool:
        return self.outcome not in ("control", "correction")


def position(arc: Arc, ref: TurnRef) -> int:
    return sum(len(s.turns) for s in arc.sessions[: ref.session]) + ref.turn


def truth_of(arc: Arc, correction: Correction | None = None) -> Truth:
    s = arc.spec
    out = arc.outcome_turn
    if correction is None and arc.correction_turn is not None and s.correction is not None:
        correction = Correction(
            t=position(arc, arc.correction_turn),
            value=s.correction.value,
            wrong_value=s.correction.wrong_value,
        )
    return Truth(
        arc_id=arc.id,
        split=s.split,
        factor=s.factor,
        level=s.level,
        outcome=s.outcome,
        field=s.field,
        initial_value=s.initial_value,
        plan_value=s.plan_value,
        final_value=arc.expected_value_after_session[-1],
        expected_after_session=tuple(arc.expected_value_after_session),
        plan_t=position(arc, arc.plan_turn),
        plan_session=arc.plan_turn.session,
        outcome_t=position(arc, out) if out else None,
        outcome_session=out.session if out else None,
        pending_window=s.pending_window,
        n_sessions=len(arc.sessions),
        end_t=sum(len(x.turns) for x in arc.sessions),
        correction=correction,
        labels=tuple(turn_labels(arc.sessions)),
    )
