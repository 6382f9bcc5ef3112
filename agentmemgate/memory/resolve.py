"""Resolution: predicates written when an item is staged, and the checker run on every later turn.

Offline rules (``offline_rules.v1.toml [check]``):

* ``TemplatePredicateWriter`` fills two fixed sentences from the field's description, the staged
  value and the store's current value (the paper's example predicates, as a template).
* ``CueChecker`` does not read the predicate text; it decides from cues, on each sentence and
  each pair of adjacent sentences ("units") of the turn:
  - confirm: no abandonment cue anywhere in the turn, no not-done cue ("haven't", "still",
    "thinking") in the unit, and either the unit names the staged value (or its longest
    capitalized run, for long values) with a completion cue or a simple-past verb not followed by
    "to" ("picked up my refill at X": situational), or it refers to the plan obliquely ("the
    switch", "what I mentioned") with a completion cue ("went ahead with it");
  - abandon: an abandonment cue ("decided against", "sticking with", "not happening") in a unit
    that names the staged value, refers to the plan obliquely, or states another value of the
    same field (as the offline literal extractor reads the unit).
  Confirm is tested first (Algorithm 1, line 13); with neither, the item stays pending.

The LLM versions fill ``memory_predicates`` and ``memory_check``; the checker's prompt carries the
predicates written at staging, so the later turn is judged against them without re-extraction.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec, contains_value
from ._prompts import budget, component_name, memory_rubric
from .components import Predicates, Verdict, field_noun
from .extract import OfflineExtractor, format_turns
from .match import format_fields
from .profile_store import same_value
from .rules import cue_hits, offline_rules, sentences, tokens
from .system import ContextTurn, ExtractedTuple, StagedState, UserTurn


class TemplatePredicateWriter:
    def __init__(self) -> None:
        self.name = offline_rules().tag("predicates-template")

    def write(
        self,
        field: FieldSpec,
        tup: ExtractedTuple,
        value: str,
        current: str | None,
        context: list[ContextTurn],
    ) -> Predicates:
        noun = field_noun(field)
        keep = f"keeping {current}" if current else f"keeping their current {noun}"
        return Predicates(
            confirm_when=(
                f"the user reports that the change happened and their {noun} is now "
                f"{value}, said outright, in other words, by referring back to the plan "
                f"as done, or by describing using {value} as their {noun}. Considering, "
                f"planning or scheduling the change is not enough."
            ),
            abandon_when=(
                f"the user reports dropping the change to {value}: deciding against it, "
                f"cancelling it, {keep}, or choosing a different {noun} instead."
            ),
        )


def value_core(value: str) -> str:
    """The longest run of capitalized or numbered words ('the US Bank location ...' -> 'US Bank')."""
    runs, cur = [], []
    for w in value.split():
        bare = w.strip(".,;:!?()\"")
        if (
            bare
            and bare != "I"
            and (any(c.isupper() for c in bare) or any(c.isdigit() for c in bare))
        ):
            cur.append(bare)
        else:
            if cur:
                runs.append(" ".join(cur))
            cur = []
    if cur:
        runs.append(" ".join(cur))
    return max(runs, key=len) if runs else value


@lru_cache(maxsize=50_000)
def mentions(text: str, value: str) -> bool:
    if contains_value(text, value):
        return True
    core = value_core(value)
    return core != value and len(core) >= 3 and contains_value(text, core)


_UNITS: dict = {}  # rule file -> turn text -> what ``CueChecker._units`` read in it


class CueChecker:
    """The offline checker of the module docstring."""

    def __init__(self) -> None:
        self.rules = offline_rules()
        self._reader = OfflineExtractor("literal")
        self.name = self.rules.tag("check-cues")

    def _past(self, toks: list[tuple[int, str]]) -> bool:
        """A simple-past verb not followed by 'to' ('picked up', not 'decided to')."""
        ws = [w for _, w in toks] + [""]
        return any(
            ((len(w) > 4 and w.endswith("ed")) or w in self.rules.irregular_past)
            and ws[i + 1] != "to"
            for i, w in enumerate(ws[:-1])
        )

    def _units(self, text: str) -> tuple[bool, tuple[tuple[str, frozenset[str], bool], ...]]:
        """What the checker reads in a turn whatever the item (memoized per rule file: every
        pending item of every gated system is checked against the same turns): whether it has
        an abandonment cue, and per unit its text, cue categories and simple-past verb.
        Units: each sentence, and each pair of adjacent sentences ("Things changed. I use X now.")."""
        memo = _UNITS.setdefault(self.rules, {})
        found = memo.get(text)
        if found is None:
            sents = [s.text for s in sentences(text)]
            units = []
            for unit in sents + [f"{a} {b}" for a, b in zip(sents, sents[1:])]:
                toks = tokens(unit)
                units.append(
                    (
                        unit,
                        frozenset(c for _, _, c in cue_hits(self.rules.check, toks)),
                        self._past(toks),
                    )
                )
            dropping = "abandon" in {c for _, _, c in cue_hits(self.rules.check, tokens(text))}
            if len(memo) >= 5_000:  # 711 turns for all 506 built arcs
                memo.clear()
            found = memo[text] = (dropping, tuple(units))
        return found

    def check(
        self, item: StagedState, field: FieldSpec, turn: UserTurn, context: list[ContextTurn]
    ) -> Verdict:
        dropping, units = self._units(turn.text)
        verdict: Verdict = "neither"
        for unit, cats, past in units:
            named = mentions(unit, item.value)
            oblique = "oblique" in cats
            if (
                not dropping
                and "not_done" not in cats
                and (
                    (named and ("completion" in cats or past)) or (oblique and "completion" in cats)
                )
            ):
                return "confirm"
            if "abandon" in cats and verdict == "neither":
                other = any(
                    t.attribute == field.attribute and not same_value(t.value, item.value)
                    for t in self._reader.extract(turn.model_copy(update={"text": unit}), context)
                )
                if named or oblique or other:
                    verdict = "abandon"
        return verdict


# -- LLM versions -------------------------------------------------------------------------------
class PredicatesAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    confirm_when: str
    abandon_when: str


class CheckAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: Literal["confirm", "abandon", "neither"]


class LLMPredicateWriter:
    def __init__(self, model, rubric=None):
        self.model = model
        self.rubric = rubric or memory_rubric("memory_predicates")
        self.name = component_name(model, self.rubric)

    def prompt(
        self,
        field: FieldSpec,
        tup: ExtractedTuple,
        value: str,
        current: str | None,
        context: list[ContextTurn],
    ) -> str:
        return self.rubric.fill(
            fields=format_fields([field]),
            field=field.attribute,
            value=value,
            current=current if current is not None else "(nothing stored yet)",
            statement=tup.span or tup.value,
            context=format_turns(context, 2),
        )

    def write(
        self,
        field: FieldSpec,
        tup: ExtractedTuple,
        value: str,
        current: str | None,
        context: list[ContextTurn],
    ) -> Predicates:
        resp = self.model.complete(
            self.prompt(field, tup, value, current, context),
            schema=PredicatesAnswer,
            temperature=0.0,
            purpose="memory.predicates",
            **budget(self.model, "predicates"),
        )
        a: PredicatesAnswer = resp.parsed
        return Predicates(
            confirm_when=a.confirm_when.strip() or "(empty)",
            abandon_when=a.abandon_when.strip() or "(empty)",
        )


class LLMChecker:
    def __init__(self, model, rubric=None):
        self.model = model
        self.rubric = rubric or memory_rubric("memory_check")
        self.name = component_name(model, self.rubric)

    def prompt(
        self, item: StagedState, field: FieldSpec, turn: UserTurn, context: list[ContextTurn]
    ) -> str:
        return self.rubric.fill(
            fields=format_fields([field]),
            field=field.attribute,
            value=item.value,
            confirm_when=item.confirm_when,
            abandon_when=item.abandon_when,
            context=format_turns(context, 2),
            message=turn.text,
        )

    def check(
        self, item: StagedState, field: FieldSpec, turn: UserTurn, context: list[ContextTurn]
    ) -> Verdict:
        resp = self.model.complete(
            self.prompt(item, field, turn, context),
            schema=CheckAnswer,
            temperature=0.0,
            purpose="memory.check",
            **budget(self.model, "check"),
        )
        return resp.parsed.verdict


__all__ = [
    "CueChecker",
    "LLMChecker",
    "LLMPredicateWriter",
    "TemplatePredicateWriter",
    "mentions",
    "value_core",
]
