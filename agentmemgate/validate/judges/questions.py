"""What a judge is shown: the only inputs a judge ever receives.

These views are built from an arc by ``blind_recovery`` / ``realism_question``; they have no field
that could carry an arc id, split, factor, intended level, outcome, field or turn marker, so
nothing a blind judge must not see can reach its prompt (LLM judges render exactly these).
"""

from __future__ import annotations

import hashlib
import random

from pydantic import BaseModel, ConfigDict

from ...design import Design, paper_design
from ...schema import Arc


class ChatTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: str  # "user" | "assistant"
    text: str


class ChatSession(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    date: str  # ISO date
    turns: tuple[ChatTurn, ...]


class LevelOption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    level: str
    definition: str


class RecoveryQuestion(BaseModel):
    """Blind difficulty recovery: the dated sessions' text and the levels to choose among."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sessions: tuple[ChatSession, ...]
    options: tuple[LevelOption, ...]


class RealismQuestion(BaseModel):
    """Realism: the conversation, with the plan statement pointed out (the 'motivated' criterion)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sessions: tuple[ChatSession, ...]
    plan_session: int
    plan_turn: int


class EquivalenceQuestion(BaseModel):
    """Two values for one field, in an order shuffled per pair and judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: str
    description: str
    first: str
    second: str


Question = RecoveryQuestion | RealismQuestion | EquivalenceQuestion


def chat_sessions(arc: Arc) -> tuple[ChatSession, ...]:
    return tuple(
        ChatSession(
            date=s.date.isoformat(),
            turns=tuple(ChatTurn(role=t.role, text=t.text) for t in s.turns),
        )
        for s in arc.sessions
    )


def transcript(sessions: tuple[ChatSession, ...], mark: tuple[int, int] | None = None) -> str:
    """Plain dated transcript; ``mark`` (session, turn) prefixes one turn with '>>' (realism only)."""
    out = []
    for si, s in enumerate(sessions):
        out.append(f"Session {si + 1} ({s.date})")
        for ti, t in enumerate(s.turns):
            arrow = ">> " if mark == (si, ti) else ""
            out.append(f"{arrow}{'User' if t.role == 'user' else 'Assistant'}: {t.text}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def option_seed(arc_id: str, seed: int = 0) -> int:
    """The recorded per-arc seed of the option order (stable across runs and judges)."""
    return int(hashlib.sha256(f"amg-options:{seed}:{arc_id}".encode()).hexdigest()[:8], 16)


def shuffled_levels(factor: str, seed: int, design: Design | None = None) -> list[str]:
    """``factor``'s levels in ``design`` (default: the paper's), in the order ``seed`` gives."""
    levels = list((design or paper_design()).levels(factor))
    random.Random(seed).shuffle(levels)
    return levels


def blind_recovery(
    arc: Arc,
    seed: int,
    sessions: tuple[ChatSession, ...] | None = None,
    design: Design | None = None,
) -> RecoveryQuestion:
    """The blind view of ``arc`` for difficulty recovery: its factor's levels in ``design``
    (default: the paper's) with their definitions, in the order ``seed`` gives (``sessions``:
    ``chat_sessions(arc)`` when the caller has built them already)."""
    design = design or paper_design()
    factor = arc.spec.factor
    return RecoveryQuestion(
        sessions=chat_sessions(arc) if sessions is None else sessions,
        options=tuple(
            LevelOption(level=lv, definition=design.definition(factor, lv))
            for lv in shuffled_levels(factor, seed, design)
        ),
    )


def realism_question(arc: Arc) -> RealismQuestion:
    return RealismQuestion(
        sessions=chat_sessions(arc),
        plan_session=arc.plan_turn.session,
        plan_turn=arc.plan_turn.turn,
    )
