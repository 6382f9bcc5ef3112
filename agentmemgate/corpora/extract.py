"""Stage 2: from a prefilter hit, keep a speculative statement (span, attribute, value, hedge level)
or reject it. Two interchangeable extractors: offline rules (``rules.vN.toml``) and an LLM.
"""

from __future__ import annotations

import re
from typing import Callable, Protocol

from ..schema import HEDGE_LEVELS
from ._rules import Rules, load_rules
from .model import Candidate, Extraction

OFFLINE_MINER = "offline-rules"
_TRAILING = re.compile(r"(?:\s+(?:and|or|but|so|the|a|an|to|for|with|in|on|at|of|my|our|as|too|soon|"
                       r"now|then|next|this|that|there|some|maybe|probably|eventually|someday))+$",
                       re.IGNORECASE)


class Extractor(Protocol):
    """What mining needs from stage 2: a name to mark results with, and a batch call."""

    name: str
    kind: str  # "offline rules" or "LLM"

    def extract_many(self, candidates: list[Candidate],
                     on_result: Callable[[Candidate, Extraction | None, str | None], None]) -> None:
        """Call ``on_result(candidate, extraction, error)`` once per candidate, as each finishes."""


def clean_value(raw: str) -> str:
    value = re.sub(r"\s+", " ", raw).strip(" \t,.;:!?\"'()")
    value = _TRAILING.sub("", value).strip(" ,.;:")
    return " ".join(value.split()[:8])


def hedge_level(sentence: str, rules: Rules) -> str:
    cues = rules.hedge_levels.matches(sentence)
    if "strongly_hedged" in cues:
        return HEDGE_LEVELS[0]
    if "weakly_hedged" in cues:
        return HEDGE_LEVELS[1]
    return HEDGE_LEVELS[3] if rules.has_date(sentence) else HEDGE_LEVELS[2]


class RuleExtractor:
    """Deterministic stage 2: the first cue sentence naming an attribute change with a value."""

    kind = "offline rules"

    def __init__(self, rules: Rules | None = None):
        self.rules = rules or load_rules()
        self.name = OFFLINE_MINER

    def extract(self, cand: Candidate) -> Extraction:
        sentences = cand.cue_sentences() or [cand.turn_text]
        reasons = []
        for s in sentences:
            if s.rstrip().endswith("?"):
                reasons.append("question")
                continue
            if self.rules.negated.matches(s):
                reasons.append("negated plan")
                continue
            for attribute, pattern in self.rules.attributes:
                for m in pattern.finditer(s):
                    if self.rules.about_someone_else(s[:m.start()]):
                        continue
                    value = clean_value(m.group("value"))
                    if self.rules.acceptable_value(value):
                        return Extraction(kept=True, text=s, attribute=attribute, plan_value=value,
                                          hedge_level=hedge_level(s, self.rules))
            reasons.append("no attribute change")
        reason = "no attribute change" if "no attribute change" in reasons else reasons[0]
        return Extraction(kept=False, text=sentences[0], reject_reason=reason)

    def extract_many(self, candidates: list[Candidate],
                     on_result: Callable[[Candidate, Extraction | None, str | None], None]) -> None:
        for cand in candidates:
            on_result(cand, self.extract(cand), None)

