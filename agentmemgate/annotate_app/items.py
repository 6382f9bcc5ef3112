"""The audit item: what an annotator's page may show, and what travels beside it but never to it.

``ItemDisplay`` is the whole of what the annotator page renders; it has no field that could hold a
reference label, a model or judge label, or an intended level. Those live in ``Reference`` and
``strata`` on ``SourceItem`` and are stored in other tables (see ``audits.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from ..workspace import Workspace

REFERENCE_SOURCES = ("design", "model", "judge", "human", "import")


class DisplayTurn(BaseModel):
    """One chat turn as shown: plain text only (rendered with ``st.text``, never as markdown)."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "other"] = "user"
    speaker: str = ""  # a corpus speaker name; empty -> the role is shown
    text: str
    date: str | None = None  # ISO date of the session the turn belongs to


class ValuePair(BaseModel):
    """Two values for one field, for equivalence audits (judge verdicts, stored vs labeled)."""

    model_config = ConfigDict(extra="forbid")
    field: str
    description: str | None = None
    a_name: str = "Value A"
    a: str
    b_name: str = "Value B"
    b: str


class AnswerShown(BaseModel):
    """A system's answer to a probe question, for answer_assertion audits (plain text, inert)."""

    model_config = ConfigDict(extra="forbid")
    question: str  # the question the system was asked
    text: str  # its answer


class ItemDisplay(BaseModel):
    """Everything the annotator page may render for one item, and nothing else."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)  # stable, derived from the source; used server-side only
    kind: Literal["statement", "conversation", "pair", "answer"]
    turns: list[DisplayTurn] = []
    target: int | None = None  # index into ``turns`` of the highlighted turn
    pair: ValuePair | None = None  # the two values (equivalence), or an answer's two options
    answer: AnswerShown | None = None  # kind "answer": the answer to judge against ``pair``
    question: str | None = None  # a per-item question (realism criterion)
    group: str | None = None  # a neutral sub-task name (e.g. the realism criterion), for reports

    @model_validator(mode="after")
    def _consistent(self) -> ItemDisplay:
        if self.target is not None and not 0 <= self.target < len(self.turns):
            raise ValueError(f"target {self.target} is not a turn index (0..{len(self.turns) - 1})")
        if self.kind in ("pair", "answer") and self.pair is None:
            raise ValueError(f"a {self.kind} item needs a pair")
        if self.kind == "answer" and self.answer is None:
            raise ValueError("an answer item needs an answer")
        if self.kind not in ("pair", "answer") and not self.turns:
            raise ValueError(f"a {self.kind} item needs turns")
        return self


class Reference(BaseModel):
    """A reference label (design label, model label, judge verdict); never shown to annotators."""

    model_config = ConfigDict(extra="forbid")
    label: str
    source: Literal["design", "model", "judge", "human", "import"] = "design"


class SourceItem(BaseModel):
    """What a source loader yields: the display, plus the hidden reference and sampling strata."""

    model_config = ConfigDict(extra="forbid")
    display: ItemDisplay
    reference: Reference | None = None
    strata: dict[str, str] = {}  # fields --stratify-by may name (split, level, ...); never shown

    @property
    def id(self) -> str:
        return self.display.id


@dataclass(frozen=True)
class SourceRequest:
    """What an item loader is asked for: ``arg`` is the part after ``PREFIX:`` (None if absent)."""

    workspace: Workspace
    arg: str | None
    task: str
    factor: str | None = None
    seed: int = 0  # the audit's --seed, for sources that shuffle what an item shows
    info: dict = dc_field(
        default_factory=dict
    )  # what the loader reports (kept in the audit params)
