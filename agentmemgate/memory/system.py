"""The contract between a memory system and the evaluation protocol (``agentmemgate.evaluate``).

A memory system is anything that reads a conversation one user turn at a time and can be asked,
at any moment, for the current value of a profile field. The paper's pipelines (``memory.gate``)
implement it; so can a wrapper around another product. The protocol only ever sends a system what
a real assistant would see -- the user turn, the turns before it, the session date and the frozen,
value-free fields -- never an arc's labels (level, outcome, plan value, turn roles in the design).

Events are what a system reports about its own writes, so the protocol can compute staging,
promotion and over-holding without looking inside the system, and so a trace can be read turn by
turn. Systems that cannot report events (black-box products) are scored from their answers instead
(``amg eval answers``).
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..schema import FieldSpec


class FieldKey(BaseModel):
    """A profile-store key (entity, attribute): one slot, one current value."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    entity: str = "user"
    attribute: str

    @classmethod
    def of(cls, field: FieldSpec) -> FieldKey:
        return cls(entity=field.entity, attribute=field.attribute)


class ContextTurn(BaseModel):
    """A turn before the one being processed (assistant turns included), with its session."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["user", "assistant"]
    text: str
    session: int = Field(ge=0)
    date: dt.date


class UserTurn(BaseModel):
    """The user message a system processes. ``t`` orders writes (validity intervals use it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    session: int = Field(ge=0)
    turn: int = Field(ge=0)  # index within its session (user and assistant turns counted)
    date: dt.date  # the session's date
    t: int = Field(ge=0)  # position in the whole conversation, 0-based, all turns counted


class ExtractedTuple(BaseModel):
    """What an extractor proposed: (entity, attribute, value) and the span it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    entity: str = "user"
    attribute: str
    value: str
    span: str = ""


EventKind = Literal[
    "committed",  # written as the field's current value (gate off, or not speculation)
    "corrected",  # committed as a correction: the old value's interval is marked never valid
    "staged",  # held outside the store with resolution predicates (invisible to reads)
    "plan_committed",  # plan-typed baseline: written as a plan-typed value, masked from reads
    "promoted",  # a staged item moved into the store (its confirm predicate held)
    "discarded",  # a staged item dropped (its abandon predicate held)
    "refreshed",  # plan-typed baseline: a masked plan turned into a fact (refresh-confirm)
    "dropped_no_field",  # an extracted tuple that matched no field: nothing written or staged
]


class MemoryEvent(BaseModel):
    """One write decision, with the pipeline details that led to it (for traces and measures)."""

    model_config = ConfigDict(extra="forbid")
    kind: EventKind
    t: int  # the user turn that caused it
    key: FieldKey | None = None  # None for dropped_no_field
    value: str | None = None
    extracted: ExtractedTuple | None = None  # the tuple behind a write or a drop
    matched_by_retry: bool = False  # the plan-frame retry found the field
    evidence_type: str | None = None  # classifier argmax (gated systems)
    probs: dict[str, float] | None = None
    confirm_when: str | None = None  # staged items: the resolution predicates written at staging
    abandon_when: str | None = None
    detail: str = ""


class ValueInterval(BaseModel):
    """A value a field held over [t_begin, t_end); ``never_valid`` after a correction."""

    model_config = ConfigDict(extra="forbid")
    value: str
    t_begin: int
    t_end: int | None = None  # None while current
    never_valid: bool = False
    plan: bool = False  # plan-typed baseline: a masked plan entry
    via: Literal["commit", "correction", "promotion", "refresh"] = "commit"  # how it got there


class FieldState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: FieldKey
    current: str | None  # what a read returns (None: the system abstains)
    history: list[ValueInterval] = []


class StagedState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: FieldKey
    value: str
    confirm_when: str
    abandon_when: str
    staged_at: int
    status: Literal["pending", "promoted", "discarded"] = "pending"
    resolved_at: int | None = None


class StoreSnapshot(BaseModel):
    """The whole memory at one moment: serializable, comparable, printable in a trace."""

    model_config = ConfigDict(extra="forbid")
    t: int  # taken after this turn position (-1: before the first turn)
    fields: list[FieldState] = []
    staged: list[StagedState] = []


class SystemInfo(BaseModel):
    """How reports name a system and which of its parts are rules, models or oracles."""

    model_config = ConfigDict(extra="forbid")
    name: str  # e.g. "literal-gated"
    description: str
    gated: bool  # stages speculation (promotion/discard measures apply)
    ungated_twin: str | None = None  # the same pipeline with the gate off (overhead, differences)
    components: dict[
        str, str
    ] = {}  # stage -> implementation, e.g. {"extractor": "offline-gazetteer.v1"}
    offline: bool = True  # every component is an offline rule (reports say so)
    oracle: bool = False  # some component reads ground truth (reports name it an oracle)


class MemorySystem(ABC):
    """One conversation's memory. The protocol makes a fresh instance per arc (via a factory)."""

    info: SystemInfo

    @abstractmethod
    def begin(self, fields: list[FieldSpec]) -> None:
        """Start a conversation with this frozen, value-free field set (one field per arc here)."""

    @abstractmethod
    def process_turn(self, turn: UserTurn, context: list[ContextTurn]) -> list[MemoryEvent]:
        """Read one user turn (context: every earlier turn, oldest first) and apply its writes."""

    @abstractmethod
    def read(self, key: FieldKey) -> str | None:
        """The field's current value as an assistant would see it; None when there is none."""

    @abstractmethod
    def snapshot(self, t: int) -> StoreSnapshot:
        """The store and the staged items now (``t``: the last turn position processed)."""

    @property
    @abstractmethod
    def calls(self) -> int:
        """Component calls made so far in this conversation, one per would-be model call (an
        offline component counts the same as its LLM twin; cache hits count): the overhead
        measure compares these between a gated system and its ungated twin."""


SystemFactory = Callable[..., MemorySystem]
"""``factory()`` makes a fresh system for one conversation. Oracle ablations (``info.oracle``) are
the one exception to blindness: the protocol calls ``factory(truth={attribute: [initial value,
plan value]})`` for them, and every report names them as oracles."""
