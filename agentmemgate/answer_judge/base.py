"""The answer judge's question, verdict and interface (``registry`` resolves judge specs).

An answer judge reads one free-text answer to a field's probe question and says which values it
asserts as the user's current value. It is named like every judge: ``offline`` (heuristic rules,
labelled so in every report) or ``provider:model`` through the LLM layer. Judges are the scorer,
not the system under test: the offline rules may look for the arc's labelled values; the LLM
answer judge is shown only the field, question and answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec
from ..validate.judges import Judge, JudgeInfo

ANSWER_CUES_DIR = Path(__file__).parent  # the offline rule files, answer_cues.vN.toml


class AnswerQuestion(BaseModel):
    """One answer to a field's probe question. ``candidates`` (the arc's labelled values) are read
    by the offline rules only; the LLM rubric never renders them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: str
    description: str
    probe_question: str
    answer: str
    candidates: tuple[str, ...] = ()


class AnswerVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asserted: list[str]  # values stated as the user's current value (empty: none)
    rationale: str


class AnswerJudge(ABC):
    spec: str = ""
    family: str = ""
    heuristic: bool = False
    rubric: str = ""
    rubric_sha256: str = ""

    @abstractmethod
    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        """What ``q.answer`` asserts; raise ``llm.CallFailed`` when no valid verdict could be had."""

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(spec=self.spec, family=self.family, heuristic=self.heuristic)

    def usage(self) -> dict[str, int]:
        return {}


class ValueComparer(Protocol):
    """What the dev-set measure needs of the scorer's equivalence judge (``evaluate``'s
    ``ValueJudge``): whether two values are the same, and which judge and rubric said so."""

    judge: Judge

    @property
    def rubric(self) -> str: ...

    def same(self, field: FieldSpec, value: str | None, reference: str) -> bool: ...
