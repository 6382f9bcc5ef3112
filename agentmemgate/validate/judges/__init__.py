"""Validation judges: blind difficulty recovery, realism and value equivalence.

``get_judge("offline")`` gives the heuristic judges (family ``offline-heuristic``);
``get_judge("provider:model")`` an LLM judge through the shared LLM layer.
"""

from .base import (
    OFFLINE_GENERATOR_FAMILY,
    OFFLINE_JUDGE,
    OFFLINE_JUDGE_FAMILY,
    Judge,
    JudgeInfo,
    check_families,
    generator_family,
)
from .questions import (
    EquivalenceQuestion,
    LevelOption,
    RealismQuestion,
    RecoveryQuestion,
    blind_recovery,
    option_seed,
    realism_question,
    shuffled_levels,
    transcript,
)
from .registry import get_judge, register_judge
from .verdicts import (
    REALISM_CRITERIA,
    CriterionVerdict,
    EquivalenceVerdict,
    RealismVerdict,
    RecoveryVerdict,
)

__all__ = [
    "OFFLINE_GENERATOR_FAMILY",
    "OFFLINE_JUDGE",
    "OFFLINE_JUDGE_FAMILY",
    "REALISM_CRITERIA",
    "CriterionVerdict",
    "EquivalenceQuestion",
    "EquivalenceVerdict",
    "Judge",
    "JudgeInfo",
    "LevelOption",
    "RealismQuestion",
    "RealismVerdict",
    "RecoveryQuestion",
    "RecoveryVerdict",
    "blind_recovery",
    "check_families",
    "generator_family",
    "get_judge",
    "option_seed",
    "realism_question",
    "register_judge",
    "shuffled_levels",
    "transcript",
]
