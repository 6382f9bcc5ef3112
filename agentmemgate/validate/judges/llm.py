"""LLM judges: one rubric file per task, structured answers, every call through the LLM layer.

The prompt is rendered from the question alone (see ``questions``), so a blind judge cannot be
told more than the question holds. Answers are validated by pydantic schemas; recovery's schema
only admits the offered level names, and every rationale must be a real sentence (a reply that
copies the prompt's ``"<one sentence>"`` format example, or leaves it empty, is invalid), so an
invalid reply or an unknown level is re-asked by the LLM layer with the problem sent back and,
when the re-asks run out, raised as ``CallFailed`` (stored as a judge failure). Each task states
the output budget it needs; the strategy that produced an answer goes into its verdict row.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model, field_validator, model_validator

from ... import rubrics
from ...llm.ref import ModelRef
from ...llm.structured import Prose
from .base import Judge
from .questions import EquivalenceQuestion, Question, RealismQuestion, RecoveryQuestion, transcript
from .verdicts import (
    REALISM_CRITERIA,
    CriterionVerdict,
    EquivalenceVerdict,
    RealismVerdict,
    RecoveryVerdict,
)

TASK_RUBRICS = {
    "recovery": "judge_recovery",
    "realism": "judge_realism",
    "equivalence": "judge_equivalence",
}


# Output budgets (tokens): a short JSON object with one-sentence rationales.
MAX_TOKENS = {"recovery": 300, "realism": 600, "equivalence": 300}


class CriterionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: Literal["pass", "fail"]
    rationale: Prose


class ConsistencyAnswer(CriterionAnswer):
    """The consistency criterion names the turns that disagree when it fails."""

    turns: list[str] = []

    @model_validator(mode="after")
    def _named(self) -> ConsistencyAnswer:
        if self.verdict == "fail" and not [t for t in self.turns if t.strip()]:
            raise ValueError(
                "a failing 'consistent' verdict lists the turns that disagree in 'turns'"
            )
        return self

    @property
    def said(self) -> str:
        """The rationale as stored: with the turns it names."""
        turns = "; ".join(t.strip() for t in self.turns if t.strip())
        return f"{self.rationale} (turns: {turns})" if turns else self.rationale


class RealismAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    natural: CriterionAnswer
    motivated: CriterionAnswer
    consistent: ConsistencyAnswer


class EquivalenceAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: Literal["equivalent", "not_equivalent"]
    confidence: float
    rationale: Prose

    @field_validator("confidence")
    @classmethod
    def _unit(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("confidence must be between 0 and 1")
        return v


@cache
def recovery_schema(levels: tuple[str, ...]) -> type[BaseModel]:
    """``{"level": one of levels, "rationale": str}``; other level names fail validation."""
    return create_model(
        "RecoveryAnswer",
        __config__=ConfigDict(extra="forbid"),
        level=(Literal[levels], ...),
        rationale=(Prose, ...),
    )


class LLMJudge(Judge):
    heuristic = False

    def __init__(
        self,
        judge: str | ModelRef,
        *,
        workspace: Any = None,
        concurrency: int = 4,
        **options: Any,
    ):
        """``judge``: a model spec or a ``ModelRef``, whose base URL and options (``timeout``,
        ``max_tokens``, ``structured_output``, ...) go to the model; ``options`` add to them."""
        from ...errors import MissingApiKey
        from ...llm import get_model

        ref = ModelRef.parse(judge)
        spec = ref.spec
        try:
            self.model = get_model(ref, workspace=workspace, **options)
        except MissingApiKey as e:
            raise e.for_flag("--judge", f"judge {spec}") from None
        self.spec = spec
        self.family = self.model.family
        self.concurrency = concurrency
        self.rubrics = {task: rubrics.load(name) for task, name in TASK_RUBRICS.items()}
        self.rubric_sha256 = {task: r.sha256 for task, r in self.rubrics.items()}

    def rubric_ref(self, task: str) -> str:
        return self.rubrics[task].ref

    def usage(self) -> dict[str, int]:
        return self.model.usage.as_dict()

    def prompt(self, question: Question) -> str:
        """The exact prompt text a question becomes (what the provider receives)."""
        if isinstance(question, RecoveryQuestion):
            options = "\n".join(f"- {o.level}: {o.definition}" for o in question.options)
            return self.rubrics["recovery"].render(
                transcript=transcript(question.sessions), options=options
            )
        if isinstance(question, RealismQuestion):
            text = transcript(question.sessions, mark=(question.plan_session, question.plan_turn))
            criteria = "\n".join(f"- {k}: {v}" for k, v in REALISM_CRITERIA.items())
            return self.rubrics["realism"].render(transcript=text, criteria=criteria)
        return self.rubrics["equivalence"].render(
            field=question.field,
            description=question.description,
            value_1=question.first,
            value_2=question.second,
        )

    @staticmethod
    def schema(question: Question) -> type[BaseModel]:
        if isinstance(question, RecoveryQuestion):
            return recovery_schema(tuple(o.level for o in question.options))
        return RealismAnswer if isinstance(question, RealismQuestion) else EquivalenceAnswer

    def would_call(self, question: Question) -> bool:
        """Whether ``ask`` would make a model call; counts it in ``model.planned`` (dry runs)."""
        task = (
            "recovery"
            if isinstance(question, RecoveryQuestion)
            else "realism"
            if isinstance(question, RealismQuestion)
            else "equivalence"
        )
        return self.model.plan(
            self.prompt(question), schema=self.schema(question), max_tokens=MAX_TOKENS[task]
        )

    def ask(self, question: Question):
        prompt = self.prompt(question)
        if isinstance(question, RecoveryQuestion):
            r = self.model.complete(
                prompt,
                schema=self.schema(question),
                purpose="judge.recovery",
                max_tokens=MAX_TOKENS["recovery"],
            )
            return RecoveryVerdict(
                level=r.parsed.level, rationale=r.parsed.rationale, strategy=r.strategy
            )
        if isinstance(question, RealismQuestion):
            r = self.model.complete(
                prompt,
                schema=RealismAnswer,
                purpose="judge.realism",
                max_tokens=MAX_TOKENS["realism"],
            )
            return RealismVerdict(
                criteria={
                    c: CriterionVerdict(
                        passed=getattr(r.parsed, c).verdict == "pass",
                        rationale=getattr(getattr(r.parsed, c), "said", None)
                        or getattr(r.parsed, c).rationale,
                    )
                    for c in REALISM_CRITERIA
                },
                strategy=r.strategy,
            )
        assert isinstance(question, EquivalenceQuestion)
        r = self.model.complete(
            prompt,
            schema=EquivalenceAnswer,
            purpose="judge.equivalence",
            max_tokens=MAX_TOKENS["equivalence"],
        )
        a = r.parsed
        return EquivalenceVerdict(
            equivalent=a.verdict == "equivalent",
            confidence=a.confidence,
            rationale=a.rationale,
            strategy=r.strategy,
        )
