"""The records every room exchanges: arc specs, rendered arcs, check results.

These pydantic models are the contract between generate -> validate -> audit -> export; the
``data.jsonl`` export is ``Arc.export_record()`` one per line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from .errors import BadInput

# Which splits, factors and levels a benchmark has is its design's to say (``design/``; the
# paper's is ``design/paper/design.toml``). What every design shares:
#
# A correction arc's outcome: the user states a value as a fact and later says, with corrective
# intent, that the statement was wrong when it was made.
CORRECTION_OUTCOME = "correction"
# The corrective discourse markers whose presence makes a correction "marked" (whole words or
# phrases, case-insensitive). An unmarked correction says the earlier statement was wrong in
# plain words and uses none of these.
CORRECTION_MARKER_PHRASES = (
    "actually",
    "sorry",
    "oops",
    "whoops",
    "wait",
    "in fact",
    "i meant",
    "scratch that",
    "my bad",
    "my mistake",
    "correction",
    "to correct",
    "let me correct",
    "i misspoke",
    "i should have said",
)


# The gate's evidence types (paper, A.6) and the commit/hold routing: shared by the statement
# sets (corpora), the classifiers (classify) and evidence-type audits (annotate_app).
EVIDENCE_TYPES = ("speculation", "completed_event", "explicit_correction", "other")
HOLD_CLASSES = ("speculation",)
COMMIT_CLASSES = ("completed_event", "explicit_correction", "other")

_EVIDENCE_ALIASES = {
    "speculative": "speculation",
    "spec": "speculation",
    "speculation": "speculation",
    "hedge": "speculation",
    "plan": "speculation",
    "completed_event": "completed_event",
    "completed": "completed_event",
    "event": "completed_event",
    "completion": "completed_event",
    "explicit_correction": "explicit_correction",
    "correction": "explicit_correction",
    "corrective": "explicit_correction",
    "other": "other",
}


def normalize_evidence_type(label: object) -> str | None:
    """'Speculative', 'completed event', 'correction' -> canonical names; None if unknown."""
    if label is None:
        return None
    s = re.sub(r"[\s\-]+", "_", str(label).strip().lower().strip(" .:'\"`*"))
    return _EVIDENCE_ALIASES.get(s)


def check_evidence_type(label: object, where: str) -> str:
    norm = normalize_evidence_type(label)
    if norm is None:
        raise BadInput(
            f"{where}: unknown evidence type {label!r}; choose one of: {', '.join(EVIDENCE_TYPES)}"
        )
    return norm


class FieldSpec(BaseModel):
    """The one profile-store field an arc tracks; value-free by construction."""

    model_config = ConfigDict(extra="forbid")
    entity: Literal["user"] = "user"
    attribute: str
    description: str
    probe_question: str

    @field_validator("attribute")
    @classmethod
    def _snake_case(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", v):
            raise ValueError(f"attribute {v!r} is not snake_case")
        return v

    def leaked_values(self, values: list[str]) -> list[str]:
        """Label values that appear in the field text (the paper's value-free check)."""
        text = " ".join([self.attribute.replace("_", " "), self.description, self.probe_question])
        norm = normalize_text(text)
        return [
            v
            for v in values
            if v and normalize_text(v) and _contains_words(norm, normalize_text(v))
        ]


_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1 << 16)  # pure; the planner and the checks normalize the same values often
def normalize_text(s: str) -> str:
    """Lower-case, turn punctuation into spaces, squeeze whitespace: tolerant matching."""
    s = s.lower().replace("\u2019", "'")
    s = _PUNCT.sub(" ", s)
    return _SPACES.sub(" ", s).strip()


def _contains_words(haystack: str, needle: str) -> bool:
    # Both are normalized (word characters and single spaces), so a whole-word match is a
    # space-delimited substring: no regex to compile per value.
    return f" {needle} " in f" {haystack} "


def contains_value(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` up to case and punctuation (not paraphrase)."""
    return _contains_words(normalize_text(text), normalize_text(value))


class TurnRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    session: int = Field(ge=0)
    turn: int = Field(ge=0)


def turn_label(session: int, turn: int) -> str:
    """A turn as people read it everywhere (``amg eval show``, the measures' reasons, the
    viewer): ``s1 t2`` is turn 2 of session 1, both counted from 0 as ``data.jsonl`` and
    ``turns.parquet`` count them."""
    return f"s{session} t{turn}"


def turn_labels(sessions: Iterable) -> list[str]:
    """``turn_label`` of every turn of a conversation (sessions with ``turns``), in order: the
    label of the turn at position ``t`` (a trace's ``t``, counted across the conversation)."""
    return [turn_label(si, ti) for si, s in enumerate(sessions) for ti in range(len(s.turns))]


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    text: str


class Session(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: dt.date
    turns: list[Turn]


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    generator: str
    generator_kind: str  # "offline template renderer" or "LLM"
    prompt_sha256: str
    seed: int
    toolkit_version: str
    structured_output: str | None = None  # LLM generators: how the model was asked for JSON


class CorrectionSpec(BaseModel):
    """A correction arc's cell and values: ``wrong_value`` is what the corrected statement said
    (the initial value, or a reported change's value), ``value`` the corrected one."""

    model_config = ConfigDict(extra="forbid")
    target: Literal["initial", "change"]
    timing: Literal["same", "later"]
    marker: Literal["marked", "unmarked"]
    wrong_value: str
    value: str

    @property
    def level(self) -> str:
        return f"{self.target}_{self.timing}_{self.marker}"

    @model_validator(mode="after")
    def _differ(self) -> CorrectionSpec:
        if normalize_text(self.wrong_value) == normalize_text(self.value):
            raise ValueError(f"a correction must change the value (both are {self.value!r})")
        return self


class ArcSpec(BaseModel):
    """What the planner decides for one conversation; a renderer realizes it as text."""

    model_config = ConfigDict(extra="forbid")
    id: str
    split: str  # a split of the design that planned it
    factor: str  # the factor its cell varies, and its level there
    level: str
    outcome: Literal["came_true", "abandoned", "open", "control", "correction"]
    field: FieldSpec
    domain: str  # catalog key of the attribute
    initial_value: str
    plan_value: str
    plan_wording: str  # the plan-wording level of the plan turn (the control level for controls)
    confirmation_wording: str | None = None  # for came_true arcs: the confirmation-wording level
    session_dates: list[dt.date]
    pending_window: bool  # core/controlled: outcome in a later session, after >=1 user turn
    seed: int  # this arc's rendering seed, derived from plan_seed
    plan_seed: int  # the build's --seed: the one number that reproduces the split
    # This arc's place among the build's arcs of its domain (all splits, in split order): the
    # offline renderer deals its data banks by it, so arcs of one domain do not repeat each other.
    domain_index: int = 0
    # Keyed designs: this arc's place in the off-topic small-talk stream, or -1 for no off-topic
    # exchange (the planner deals them so that none repeats before every one has been dealt).
    # Absent (None) for sequential designs, whose renderer derives it from ``domain_index``.
    off_topic: int | None = None
    # Correction arcs only (absent from the JSON of every other arc, so their stored and exported
    # bytes are what they were before the corrections split existed).
    correction: CorrectionSpec | None = None

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler):
        data = handler(self)
        if isinstance(data, dict):
            for key in ("correction", "off_topic"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ArcSpec:
        # Which splits, factors and levels exist is the design's to say (``Design.check_spec``).
        is_corr = self.outcome == CORRECTION_OUTCOME
        if is_corr != (self.correction is not None):
            raise ValueError(
                "a correction arc has outcome 'correction' and a correction block; "
                "no other arc has either"
            )
        if self.initial_value == self.plan_value:
            raise ValueError(
                f"initial_value and plan_value must differ (both are {self.initial_value!r})"
            )
        if self.correction is not None:
            c = self.correction
            if self.level != c.level:
                raise ValueError(
                    f"level {self.level!r} does not match the correction block ({c.level!r})"
                )
            wrong = self.initial_value if c.target == "initial" else self.plan_value
            if c.wrong_value != wrong:
                raise ValueError(
                    f"correction.wrong_value must be the corrected statement's value "
                    f"{wrong!r}, got {c.wrong_value!r}"
                )
            if c.target == "initial" and c.value != self.plan_value:
                raise ValueError(
                    "a correction of the initial value carries the corrected value as plan_value"
                )
            if c.target == "change" and c.value in (self.initial_value, self.plan_value):
                raise ValueError("a correction of a reported change names a third value")
        if any(b <= a for a, b in zip(self.session_dates, self.session_dates[1:])):
            raise ValueError("session dates must increase (sessions[].date, oldest first)")
        return self

    @property
    def label_values(self) -> list[str]:
        values = [self.initial_value, self.plan_value]
        if self.correction is not None and self.correction.value not in values:
            values.append(self.correction.value)
        return values

    def expected_timeline(self, outcome_session: int | None, plan_session: int) -> list[str]:
        """Current true value after each session, from the outcome and where it lands.

        Correction arcs (``outcome_session`` = the correction's session): the value the
        conversation supports at the end of each session -- the stated value until the
        correction, the corrected value from the correction's session on. That the stated value
        was wrong all along is what the store's never-valid mark records, not this timeline (a
        probe before the correction can only know what the user said)."""
        out = []
        for s in range(len(self.session_dates)):
            if self.correction is not None:
                c = self.correction
                if outcome_session is not None and s >= outcome_session:
                    out.append(c.value)
                elif c.target == "change" and s >= plan_session:
                    out.append(self.plan_value)
                else:
                    out.append(self.initial_value)
            elif self.outcome == "control":
                out.append(self.plan_value if s >= plan_session else self.initial_value)
            elif (
                self.outcome == "came_true" and outcome_session is not None and s >= outcome_session
            ):
                out.append(self.plan_value)
            else:
                out.append(self.initial_value)
        return out


class Arc(BaseModel):
    """A rendered conversation with its ground truth."""

    model_config = ConfigDict(extra="forbid")
    spec: ArcSpec
    sessions: list[Session]
    initial_turn: TurnRef
    plan_turn: TurnRef
    outcome_turn: TurnRef | None
    pending_turn: TurnRef | None = None  # open arcs: the later mention that the plan is pending
    expected_value_after_session: list[str]
    provenance: Provenance
    # Correction arcs: the turn that says the earlier statement was wrong (also the outcome turn;
    # for a corrected initial value also the plan turn). Absent from every other arc's JSON.
    correction_turn: TurnRef | None = None

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler):
        data = handler(self)
        if isinstance(data, dict) and data.get("correction_turn") is None:
            data.pop("correction_turn", None)
        return data

    @property
    def id(self) -> str:
        return self.spec.id

    def turn(self, ref: TurnRef) -> Turn:
        return self.sessions[ref.session].turns[ref.turn]

    def export_record(self) -> dict:
        """The ``data.jsonl`` row: flat, JSON-native, stable key order."""
        s = self.spec
        return {
            "id": s.id,
            "split": s.split,
            "factor": s.factor,
            "level": s.level,
            "outcome": s.outcome,
            "field": s.field.model_dump(),
            "initial_value": s.initial_value,
            "plan_value": s.plan_value,
            "plan_wording": s.plan_wording,
            "confirmation_wording": s.confirmation_wording,
            "sessions": [
                {"date": x.date.isoformat(), "turns": [t.model_dump() for t in x.turns]}
                for x in self.sessions
            ],
            "initial_turn": self.initial_turn.model_dump(),
            "plan_turn": self.plan_turn.model_dump(),
            "outcome_turn": self.outcome_turn.model_dump() if self.outcome_turn else None,
            "pending_turn": self.pending_turn.model_dump() if self.pending_turn else None,
            "expected_value_after_session": list(self.expected_value_after_session),
            "provenance": self.provenance.model_dump(),
        } | (
            {
                "correction": s.correction.model_dump(),
                "correction_turn": self.correction_turn.model_dump()
                if self.correction_turn
                else None,
            }
            if s.correction is not None
            else {}
        )


class CheckResult(BaseModel):
    """One structural (or judge) verdict on one arc."""

    model_config = ConfigDict(extra="forbid")
    arc_id: str
    check: str
    passed: bool
    detail: str = ""
