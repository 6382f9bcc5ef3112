"""Outcome linking: did a mined plan come true, get abandoned, or stay unresolved?

Reads later sessions of the same conversation (by date) for sentences by the same speaker that
mention the plan's value, then looks for abandonment cues first (they often repeat the plan's
words: "I'm not moving to Denver after all"), then confirmation cues -- unless the sentence is
itself hedged ("I've been using paper, but I'm still considering digital" restates the plan, it
does not confirm it). An unresolved plan that is
mentioned again later without either cue gets that mention as its ``outcome_ref`` ("pending
mention"): the plan is observably still open after the statement, which is what makes an at-risk
plan measurable in a pending window.
"""

from __future__ import annotations

from functools import lru_cache

from ..schema import _contains_words, contains_value, normalize_text
from ..text import sentence_spans, tokens
from ._rules import Rules, load_rules
from .model import Candidate, Conversation, Extraction, OutcomeLink

_FUNCTION_WORDS = frozenset(
    "a an the my our your his her their to of in at for on with some more new own another "
    "this that these those and or".split()
)


def key_words(value: str) -> list[str]:
    return [w for _, w in tokens(value) if w not in _FUNCTION_WORDS and len(w) > 1]


def mentions(sentence: str, value: str, keys: list[str] | None = None) -> bool:
    """The value verbatim (up to case and punctuation), or its head word and most content words."""
    if contains_value(sentence, value):
        return True
    keys = key_words(value) if keys is None else keys
    if not keys:
        return False
    words = {w for _, w in tokens(sentence)}
    return keys[-1] in words and sum(k in words for k in keys) / len(keys) >= 0.6


@lru_cache(maxsize=65536)
def _sentences(text: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(sentence, normalized sentence, its words) for each sentence of a turn, computed once:
    linking reads every later turn of a conversation for every kept plan (50-session LongMemEval_s
    haystacks made that quadratic in tokenizing)."""
    out = []
    for a, b in sentence_spans(text):
        sentence = text[a:b]
        out.append((sentence, normalize_text(sentence), frozenset(w for _, w in tokens(sentence))))
    return tuple(out)


def _mentions(norm: str, words: frozenset[str], norm_value: str, keys: list[str]) -> bool:
    """``mentions`` on a precomputed sentence."""
    if norm_value and norm_value in norm and _contains_words(norm, norm_value):
        return True
    if not keys:
        return False
    return keys[-1] in words and sum(k in words for k in keys) / len(keys) >= 0.6


def link_outcome(
    conv: Conversation, cand: Candidate, extraction: Extraction, rules: Rules | None = None
) -> OutcomeLink | None:
    """None for rejected candidates (nothing to link); a kept plan with no value to look for
    later is unresolved."""
    if not extraction.kept:
        return None
    if not extraction.plan_value:
        return OutcomeLink(outcome="unresolved")
    rules = rules or load_rules()
    value = extraction.plan_value
    keys = key_words(value)
    norm_value = normalize_text(value)
    ordered = conv.chronological()
    try:
        pos = next(i for i, s in enumerate(ordered) if s.index == cand.session_index)
    except StopIteration:
        return OutcomeLink(outcome="unresolved")
    pending_ref = None
    for session in ordered[pos + 1 :]:
        for turn in session.turns:
            if turn.speaker != cand.speaker:
                continue
            for sentence, norm, words in _sentences(turn.text):
                if not _mentions(norm, words, norm_value, keys):
                    continue
                cues = rules.outcome_cues(sentence)
                if "abandonment" in cues:
                    return OutcomeLink(
                        outcome="abandoned", outcome_ref=turn.ref, evidence="abandonment"
                    )
                if "confirmation" in cues and not rules.hedge_levels.matches(sentence):
                    return OutcomeLink(
                        outcome="came_true", outcome_ref=turn.ref, evidence="confirmation"
                    )
                pending_ref = pending_ref or turn.ref
    return OutcomeLink(
        outcome="unresolved",
        outcome_ref=pending_ref,
        evidence="pending mention" if pending_ref else None,
    )


def at_risk_measurable(outcome: str | None, outcome_ref: str | None) -> bool:
    """An at-risk plan (never came true) whose state is observable later in the conversation."""
    return outcome == "abandoned" or (outcome == "unresolved" and outcome_ref is not None)
