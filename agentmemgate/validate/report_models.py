"""What a validation report holds: the models ``report`` computes and ``_report_md`` renders."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..stats import Proportion
from .judges import JudgeInfo


class Ordinal(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order: list[str]
    exact: Proportion
    off_by_one: Proportion


class FactorRecovery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    k: int
    levels: list[str]
    confusion: dict[str, dict[str, int]]  # intended -> recovered -> count
    ordinal: Ordinal | None = None


class Recovery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    overall: Proportion
    by_factor: dict[str, FactorRecovery]


class JudgeBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: JudgeInfo
    same_family: bool
    recovery: Recovery
    realism: dict[str, Proportion]
    judge_failures: dict[str, int]


class Agreement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judges: list[str]
    task: str
    scope: str  # a factor, "all", or a realism criterion
    agreement: Proportion
    kappa: float | None


class FailingArc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arc_id: str
    split: str
    judge: str
    check: str
    intended: str = ""
    verdict: str
    rationale: str


class JudgeFailure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arc_id: str
    judge: str
    task: str
    error: str


class ValidationReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    splits: list[str]
    judges: list[JudgeInfo]
    primary_judge: str | None
    generator_families: list[str]
    same_family_judges: list[
        str
    ]  # judges that judged arcs of their own family (allowed explicitly)
    notes: list[str]
    recovery: Recovery
    realism: dict[str, Proportion]
    by_judge: dict[str, JudgeBlock]
    agreement: list[Agreement]
    failing_arcs: list[FailingArc]
    judge_failures: list[JudgeFailure]
    # the judges' calls, tokens and cost from the call log (``llm.cost.usage_rows``)
    model_calls: dict | None = None
