"""What a judge answers, one model per task (LLM and heuristic judges alike)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

REALISM_CRITERIA: dict[str, str] = {
    "natural": "The conversation reads as natural human chat with an assistant.",
    "motivated": "The plan statement is motivated by its context.",
    "consistent": "Every turn agrees with the conversation's own timeline (no plan reported done "
    "while pending, no abandoned plan later in use, no change later denied, no reply to a state "
    "the user is not in, no date or deadline nobody gave); a failing verdict names the turns.",
}


class RecoveryVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: str
    rationale: str
    strategy: str | None = None  # how an LLM judge was asked for JSON (provenance)


class CriterionVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    passed: bool
    rationale: str


class RealismVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    criteria: dict[str, CriterionVerdict]
    strategy: str | None = None


class EquivalenceVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    equivalent: bool
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str
    strategy: str | None = None


Verdict = RecoveryVerdict | RealismVerdict | EquivalenceVerdict
