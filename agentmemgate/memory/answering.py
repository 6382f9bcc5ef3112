"""The black-box contract: a memory system known by what it answers, not by what it writes.

Products (Mem0, Graphiti), long-context assistants and plug-ins that cannot report write events
meet this contract instead of ``system.MemorySystem``: the protocol gives a fresh instance one
conversation, session by session in order, and after every session asks it the field's probe
question. Its answers are read by the evaluation's answer judge (``answer_judge``), which
decides what each asserts as the user's current value (paper, Appendix A.7).

Blindness is the same as for component systems: a system sees the turns with their roles, the
session dates, the probe question and an opaque namespace -- never an arc id, split, level,
outcome, labelled value or turn role in the design.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .system import SystemInfo


class SessionTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["user", "assistant"]
    text: str


class SessionInput(BaseModel):
    """One session as the user had it: its turns in order and the session's date."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    index: int = Field(ge=0)  # 0-based position of the session in the conversation
    date: dt.date
    turns: tuple[SessionTurn, ...]


class Retrieved(BaseModel):
    """One memory a system retrieved to answer, as the system presents it (kept for traces)."""

    model_config = ConfigDict(extra="forbid")
    text: str
    score: float | None = None
    valid_at: str | None = None  # graph facts: when the fact became true (ISO 8601)
    invalid_at: str | None = None  # ... and when it stopped being true
    meta: dict[str, Any] = {}


class ProbeAnswer(BaseModel):
    """What a system answered to the probe question after one session."""

    model_config = ConfigDict(extra="forbid")
    answer: str
    retrieved: list[Retrieved] = []


class AnsweringSystem(ABC):
    """One conversation's memory, asked questions after each session."""

    info: SystemInfo

    @abstractmethod
    def begin(self, namespace: str) -> None:
        """Start a conversation; ``namespace`` is opaque and unique to it (a product's user or
        group id), so nothing of another conversation can be retrieved."""

    @abstractmethod
    def ingest(self, session: SessionInput) -> None:
        """Take in one session (every turn with its role; the session date as message time)."""

    @abstractmethod
    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        """Answer ``question`` as asked on ``date`` from what has been ingested so far."""

    def close(self) -> None:
        """Release what ``begin`` opened (embedded stores, clients). Called once per conversation."""

    def store_snapshot(self) -> list[dict[str, Any]] | None:
        """Everything the system's store holds for this conversation now, one JSON-native dict
        per record as the product keeps it (Mem0: a memory's ``memory`` and times; Graphiti: an
        edge's relation ``name``, ``fact``, ``valid_at``, ``invalid_at``, ``expired_at``); the
        protocol calls it after each answer, and a store reader of the evaluation reads it for
        the field's value. None (the default): no store to read (the system is scored from its
        answers alone)."""
        return None

    def plan(self, sessions: list[SessionInput], question: str, date: dt.date) -> bool | None:
        """A dry run of ``answer`` after ``sessions`` were ingested, on a system ``begin`` never
        started: count its model call on the model's planned tally (``Model.plan``) without
        making it or changing anything; whether a call would be made. None (the default): the
        system cannot say, e.g. a product whose calls depend on what its store extracted."""
        return None

    @property
    def calls(self) -> int:
        """Model calls made so far in this conversation (0 when unknown)."""
        return 0


AnsweringFactory = Callable[[], AnsweringSystem]
"""``factory()`` makes a fresh answering system for one conversation."""

__all__ = [
    "AnsweringFactory",
    "AnsweringSystem",
    "ProbeAnswer",
    "Retrieved",
    "SessionInput",
    "SessionTurn",
]
