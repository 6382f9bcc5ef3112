"""The pipeline's swappable stages, as typed interfaces (inspect_ai style: each testable alone).

A memory pipeline (``memory.gate``) is composed of one of each:

* ``Extractor``: user turn + context -> proposed tuples (entity, attribute, value, source span);
  it labels no statement types and tracks no outcomes (paper, Section 3).
* ``Matcher``: one tuple + the frozen value-free fields -> the field it fills, or None. It sees the
  tuple and each field's name and description only.
* the evidence-type classifier: ``classify.Classifier`` (reused, not redefined here), fed the
  tuple's source span and up to two preceding turns.
* ``PredicateWriter``: at staging time, the two resolution predicates of a staged item.
* ``Checker``: a later user turn + one staged item -> confirm, abandon or neither.

Every stage has an offline rule implementation and an LLM one; ``name`` is what
``SystemInfo.components`` records (rule file or rubric version and hash included).
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec
from .system import ContextTurn, ExtractedTuple, StagedState, UserTurn

Verdict = Literal["confirm", "abandon", "neither"]


class Predicates(BaseModel):
    """Natural-language resolution conditions written when an item is staged."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    confirm_when: str
    abandon_when: str


class Extractor(Protocol):
    name: str

    def extract(self, turn: UserTurn, context: list[ContextTurn]) -> list[ExtractedTuple]: ...


class Matcher(Protocol):
    name: str

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None: ...


class PredicateWriter(Protocol):
    name: str

    def write(
        self,
        field: FieldSpec,
        tup: ExtractedTuple,
        value: str,
        current: str | None,
        context: list[ContextTurn],
    ) -> Predicates: ...


class Checker(Protocol):
    name: str

    def check(
        self, item: StagedState, field: FieldSpec, turn: UserTurn, context: list[ContextTurn]
    ) -> Verdict: ...


def field_noun(field: FieldSpec) -> str:
    """'The user's current grocery store.' -> 'grocery store' (falls back to the attribute)."""
    import re

    m = re.match(r"^\s*the user'?s\s+(?:current\s+)?(.+?)\.?\s*$", field.description, re.I)
    return m.group(1) if m else field.attribute.replace("_", " ")
