"""Field matching (accept or decline against the frozen, value-free fields) and the plan-frame retry.

A matcher sees the tuple and each field's name and description, nothing else (not the probe
question, not the conversation). Offline rules (``offline_rules.v1.toml [match]``):

* strict (``WordOverlapMatcher``): decline a tuple whose attribute contains a plan word
  (``grocery_plan``: a plan is not the field's current value, so it is another slot); otherwise
  accept the field sharing the most content words (light stemming, stop words ignored) with the
  attribute, if any.
* permissive (``PermissiveMatcher``, Section 6.3: a second call after a decline that files the
  tuple under any field tracking the same quantity): plan words are ignored rather than fatal,
  and the value's catalog attribute counts as a topic word ("Trader Joe's" is a grocery store).

The plan-frame retry (Section 4) is deterministic: strip plan words from the attribute
(``grocery_plan -> grocery``) and plan framing from the value (``"considering X" -> "X"``,
``offline_rules [retry]``) and resubmit to the same matcher, once, only when stripping changed
the attribute. Values filed by the retry or the permissive matcher are stored stripped, so the
store holds values, not plans; a tuple the first matcher accepts is stored as extracted.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec
from ._prompts import budget, component_name, memory_rubric
from .gazetteer import gazetteer
from .rules import OfflineRules, offline_rules, stem, words
from .system import ExtractedTuple


@lru_cache(maxsize=20_000)
def _topic(rules: OfflineRules, text: str) -> frozenset[str]:
    """Content-word stems of ``text`` (a pure function: memoized)."""
    return frozenset(stem(w) for w in words(text) if w not in rules.stop_words and len(w) > 1)


def field_words(rules: OfflineRules, field: FieldSpec) -> frozenset[str]:
    return _topic(rules, field.attribute) | _topic(rules, field.description)


def _best(
    rules: OfflineRules, topic: set[str], fields: list[FieldSpec], entity: str
) -> FieldSpec | None:
    best, score = None, 0
    for f in fields:
        if f.entity != entity:
            continue
        s = len(topic & field_words(rules, f))
        if s > score:
            best, score = f, s
    return best


class WordOverlapMatcher:
    """The strict offline matcher of the module docstring."""

    def __init__(self) -> None:
        self.rules = offline_rules()
        self.name = self.rules.tag("match-overlap")

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None:
        if any(w in self.rules.plan_words for w in words(tup.attribute)):
            return None
        return _best(self.rules, _topic(self.rules, tup.attribute), fields, tup.entity)


class PermissiveMatcher:
    """The permissive offline matcher: same quantity, plan framing or not."""

    def __init__(self) -> None:
        self.rules = offline_rules()
        self.name = self.rules.tag("match-permissive")

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None:
        topic = {w for w in _topic(self.rules, tup.attribute) if w not in self.rules.plan_words}
        value = strip_value(tup.value, self.rules)
        for hit in gazetteer().find(value):
            if hit.start == 0 and hit.end == len(value):
                for d in hit.domains:
                    topic |= _topic(self.rules, d)
        return _best(self.rules, topic, fields, tup.entity)


# -- the plan-frame retry ---------------------------------------------------------------------
@lru_cache(maxsize=50_000)
def strip_attribute(attribute: str, rules: OfflineRules | None = None) -> str:
    """``grocery_plan -> grocery``; the attribute unchanged when it has no plan word (or only)."""
    rules = rules or offline_rules()
    parts = [p for p in attribute.split("_") if p]
    kept = [p for p in parts if p.lower() not in rules.plan_words]
    return "_".join(kept) if kept else attribute


@lru_cache(maxsize=50_000)
def strip_value(value: str, rules: OfflineRules | None = None) -> str:
    """``"considering Trader Joe's" -> "Trader Joe's"`` (``offline_rules [retry]`` patterns)."""
    rules = rules or offline_rules()
    out = value.strip()
    changed = True
    while changed and out:
        changed = False
        for rx in rules.value_frames + rules.value_suffixes:
            new = rx.sub("", out, count=1).strip()
            if new != out and new:
                out, changed = new, True
    return out


def retry_tuple(tup: ExtractedTuple) -> ExtractedTuple | None:
    """The tuple the retry resubmits, or None when stripping leaves the attribute unchanged."""
    rules = offline_rules()
    attribute = strip_attribute(tup.attribute, rules)
    if attribute == tup.attribute:
        return None
    return tup.model_copy(update={"attribute": attribute, "value": strip_value(tup.value, rules)})


RETRY_NAME = f"plan-frame-retry.v1#{offline_rules().sha256[:8]}"


# -- LLM matchers -------------------------------------------------------------------------------
class MatchAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str | None


def format_fields(fields: list[FieldSpec]) -> str:
    return "\n".join(f"- {f.attribute}: {f.description}" for f in fields) or "(none)"


class LLMMatcher:
    """One model call per tuple (``memory_match``, or ``memory_match_permissive``)."""

    def __init__(self, model, *, permissive: bool = False, rubric=None):
        self.model = model
        self.permissive = permissive
        self.rubric = rubric or memory_rubric(
            "memory_match_permissive" if permissive else "memory_match"
        )
        self.name = component_name(model, self.rubric)

    def prompt(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> str:
        return self.rubric.fill(
            entity=tup.entity,
            attribute=tup.attribute,
            value=tup.value,
            fields=format_fields(fields),
        )

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None:
        if not fields:
            return None
        resp = self.model.complete(
            self.prompt(tup, fields),
            schema=MatchAnswer,
            temperature=0.0,
            purpose="memory.match.permissive" if self.permissive else "memory.match",
            **budget(self.model, "match"),
        )
        answer = (resp.parsed.field or "").strip().strip("`'\"").lower()
        for f in fields:
            if answer == f.attribute.lower() and f.entity == tup.entity:
                return f
        return None


__all__ = [
    "LLMMatcher",
    "PermissiveMatcher",
    "RETRY_NAME",
    "WordOverlapMatcher",
    "format_fields",
    "retry_tuple",
    "strip_attribute",
    "strip_value",
]
