"""The reply an LLM generator must produce (``ArcDraft``, ``CorrectionDraft``: pydantic models the
model's structured output is validated against) and its conversion to an ``Arc``, checked."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .. import __version__
from ..design import Design
from ..schema import (
    Arc,
    ArcSpec,
    Provenance,
    Session,
    Turn,
    TurnRef,
)
from .llm_checks import arc_problems


# -- the reply the model must produce ----------------------------------------------------------
class DraftTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    text: str


class DraftSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: str
    turns: list[DraftTurn]


class DraftRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: int
    turn: int


class ArcDraft(BaseModel):
    """A generated conversation with its key turns, before conversion to ``Arc``."""

    model_config = ConfigDict(extra="forbid")
    sessions: list[DraftSession]
    initial_turn: DraftRef
    plan_turn: DraftRef
    outcome_turn: DraftRef | None
    pending_turn: DraftRef | None


class CorrectionDraft(BaseModel):
    """A generated correction arc: the initial statement, the reported change (corrected changes
    only) and the correction turn."""

    model_config = ConfigDict(extra="forbid")
    sessions: list[DraftSession]
    initial_turn: DraftRef
    change_turn: DraftRef | None
    correction_turn: DraftRef


def draft_schema(spec: ArcSpec) -> type[BaseModel]:
    return CorrectionDraft if spec.correction is not None else ArcDraft


# -- draft -> arc, and the checks --------------------------------------------------------------
def to_arc(
    spec: ArcSpec,
    draft: ArcDraft | CorrectionDraft,
    *,
    generator: str,
    prompt_sha256: str,
    kind: str = "LLM",
    structured_output: str | None = None,
    design: Design | None = None,
) -> tuple[Arc | None, list[str]]:
    """Convert a draft to an ``Arc``; (None, problems) when it cannot be one for this spec (the
    checks are ``design``'s: the paper's by default)."""
    problems: list[str] = []
    if spec.correction is not None and not isinstance(draft, CorrectionDraft):
        return None, ["a correction arc needs initial_turn, change_turn and correction_turn"]
    if len(draft.sessions) != len(spec.session_dates):
        problems.append(f"expected {len(spec.session_dates)} sessions, got {len(draft.sessions)}")
    sessions: list[Session] = []
    for i, s in enumerate(draft.sessions):
        try:
            date = dt.date.fromisoformat(s.date.strip())
        except ValueError:
            problems.append(f"session {i} date {s.date!r} is not YYYY-MM-DD")
            continue
        sessions.append(Session(date=date, turns=[Turn(role=t.role, text=t.text) for t in s.turns]))
    if isinstance(draft, CorrectionDraft):
        change = draft.change_turn if spec.correction.target == "change" else None  # type: ignore[union-attr]
        if spec.correction.target == "change" and change is None:  # type: ignore[union-attr]
            problems.append("change_turn is null; this log needs the reported change")
        refs: dict[str, DraftRef | None] = {
            "initial_turn": draft.initial_turn,
            "plan_turn": change or draft.correction_turn,
            "outcome_turn": draft.correction_turn,
            "pending_turn": None,
            "correction_turn": draft.correction_turn,
        }
    else:
        refs = {
            "initial_turn": draft.initial_turn,
            "plan_turn": draft.plan_turn,
            "outcome_turn": draft.outcome_turn,
            "pending_turn": draft.pending_turn,
        }
    if spec.outcome == "control" and refs["outcome_turn"] is None:
        refs["outcome_turn"] = refs["plan_turn"]  # the one completed-change turn is both
    for name, ref in refs.items():
        if ref is not None and not (
            0 <= ref.session < len(draft.sessions)
            and 0 <= ref.turn < len(draft.sessions[ref.session].turns)
        ):
            problems.append(
                f"{name} points to session {ref.session} turn {ref.turn}, which does not exist"
            )
    if problems:
        return None, problems
    turn_refs = {k: TurnRef(session=v.session, turn=v.turn) if v else None for k, v in refs.items()}
    outcome = turn_refs["outcome_turn"]
    try:
        arc = Arc(
            spec=spec,
            sessions=sessions,
            initial_turn=turn_refs["initial_turn"],
            plan_turn=turn_refs["plan_turn"],
            outcome_turn=outcome,
            pending_turn=turn_refs["pending_turn"],
            correction_turn=turn_refs.get("correction_turn"),
            expected_value_after_session=spec.expected_timeline(
                outcome.session if outcome else None, turn_refs["plan_turn"].session
            ),
            provenance=Provenance(
                generator=generator,
                generator_kind=kind,
                prompt_sha256=prompt_sha256,
                seed=spec.plan_seed,
                toolkit_version=__version__,
                structured_output=structured_output,
            ),
        )
    except ValidationError as e:
        return None, [f"reply cannot form an arc: {e.errors()[0].get('msg')}"]
    return arc, arc_problems(arc, design)
