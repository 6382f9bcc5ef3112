"""The judge interface and the cross-family rule (``registry`` resolves judge specs).

A judge is named like a model: ``offline`` (the heuristic judges) or ``provider:model`` (any model
the LLM layer knows, ``scripted:NAME`` included). Every judge belongs to a *family*; a judge from
the family that generated the arcs is refused unless the caller allows it, and reports say so.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, ConfigDict

from ...errors import SameFamilyJudge
from ...llm.ref import ModelRef
from ...llm.servers import normalize_family
from .questions import Question
from .verdicts import REALISM_CRITERIA, Verdict

OFFLINE_JUDGE = "offline"
OFFLINE_JUDGE_FAMILY = "offline-heuristic"
OFFLINE_GENERATOR_FAMILY = "offline-template"  # generate.offline.OfflineRenderer.family


class JudgeInfo(BaseModel):
    """How reports name a judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    spec: str
    family: str
    heuristic: bool


class Judge(ABC):
    """Answers the three validation questions (recovery, realism, equivalence)."""

    spec: str = ""
    family: str = ""
    heuristic: bool = False
    concurrency: int = 1  # how many questions may be in flight at once
    rubric_sha256: dict[str, str] = {}  # task -> sha256 of what defines the answer (rubric/lexicon)
    realism_criteria: dict[str, str] = REALISM_CRITERIA  # the criteria its realism verdicts carry

    def prepare(self, questions: list[Question]) -> None:
        """See every question of a run before the first is asked (judges that count over the
        dataset, such as the offline repetition check); a no-op for most judges."""

    @abstractmethod
    def ask(self, question: Question) -> Verdict:
        """Answer one question; raise ``llm.CallFailed`` when no valid answer could be had."""

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(spec=self.spec, family=self.family, heuristic=self.heuristic)

    def usage(self) -> dict[str, int]:
        return {}

    def would_call(self, question: Question) -> bool:
        """Whether answering ``question`` would make a model call (``--dry-run``; cache hits don't)."""
        return False

    def rubric_ref(self, task: str) -> str:
        return ""


def generator_family(generator: str) -> str:
    """The family a generator spec names by itself (``offline`` or ``provider:model``).

    Provenance does not record a base URL, so an ``openai:`` generator that ran against an
    OpenAI-compatible server cannot be told from OpenAI by its name alone: use
    ``validate.store.generator_families_of``, which reads the family the LLM layer logged.
    """
    if generator == OFFLINE_JUDGE:  # the offline renderer's provenance name
        return OFFLINE_GENERATOR_FAMILY
    return ModelRef.parse(generator).family


def check_families(
    judges: list[Judge],
    generator_families: set[str],
    allow_same_family: bool,
    what: str = "the generator",
) -> set[str]:
    """Refuse a judge from ``generator_families`` unless allowed; return the specs that are same-family.

    Families are compared as servers (``llm.servers``): localhost, 127.0.0.1 and [::1] are one.
    """
    gens = {normalize_family(f) for f in generator_families}
    same = {j.spec for j in judges if normalize_family(j.family) in gens}
    if same and not allow_same_family:
        j = next(j for j in judges if j.spec in same)
        raise SameFamilyJudge(
            f"Judge {j.spec} is from the same family as {what} ({j.family}); use a judge from "
            f"another family, or pass --allow-same-family (the report will say so)"
        )
    return same
