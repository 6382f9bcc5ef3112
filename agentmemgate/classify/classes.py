"""The gate's evidence types (paper, A.6), the commit/hold routing, and a classifier's output.

Names match the audit room's label set (``speculation``, not the prompt's ``speculative``) so
reference labels, audits and classifier outputs compare directly.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..schema import (
    COMMIT_CLASSES,
    EVIDENCE_TYPES,
    HOLD_CLASSES,
    check_evidence_type,
    normalize_evidence_type,
)

__all__ = [
    "BINARY_CLASSES",
    "COMMIT_CLASSES",
    "EVIDENCE_TYPES",
    "HOLD_CLASSES",
    "Distribution",
    "check_label",
    "is_commit",
    "normalize_label",
]

# Defined with the other shared records (schema), so the statement sets need not import this room.
normalize_label = normalize_evidence_type
check_label = check_evidence_type
BINARY_CLASSES = ("commit", "hold")  # the two weaker rubrics answer yes/no -> commit/hold


def is_commit(label: str) -> bool:
    return label in COMMIT_CLASSES or label == "commit"


class Distribution(BaseModel):
    """One classifier answer for one statement: probabilities and how they were obtained."""

    model_config = ConfigDict(extra="forbid")
    probs: dict[str, float]  # over EVIDENCE_TYPES, or over BINARY_CLASSES for yes/no rubrics
    method: str  # "lexicon", "logprobs(top=20)", "votes(k=5)"
    detail: str = ""  # e.g. the unmapped logprob mass, or how many votes were valid
    valid_votes: int | None = None  # votes behind a vote-share distribution (None: not votes)
    p_commit: float = Field(ge=0.0, le=1.0, default=0.0)
    predicted: str = ""

    @model_validator(mode="after")
    def _derive(self) -> Distribution:
        total = sum(self.probs.values())
        if total <= 0:
            raise ValueError("a distribution needs positive mass")
        self.probs = {k: v / total for k, v in self.probs.items()}
        if set(self.probs) <= set(BINARY_CLASSES):
            self.p_commit = self.probs.get("commit", 0.0)
        else:
            self.p_commit = min(1.0, max(0.0, sum(self.probs.get(c, 0.0) for c in COMMIT_CLASSES)))
        order = EVIDENCE_TYPES + BINARY_CLASSES
        self.predicted = max(self.probs, key=lambda k: (self.probs[k], -order.index(k)))
        return self

    @property
    def routed_commit(self) -> bool:
        """The gate's decision: hold iff the argmax is speculation (or 'hold')."""
        return self.predicted not in HOLD_CLASSES + ("hold",)
