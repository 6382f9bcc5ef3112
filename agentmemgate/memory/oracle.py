"""The oracle ablation: an extractor and a matcher that read the ground-truth values.

The one exception to blindness, named as an oracle in every ``SystemInfo`` (``oracle=True``):
the protocol builds these systems with ``factory(truth={attribute: [initial value, plan
value]})``. They isolate the gate: extraction and matching are (nearly) perfect, so what remains
is classification, staging and the checker.

* extractor: every truth value a sentence names (up to case and punctuation, or the value's
  longest capitalized run for long values), the last one per attribute and sentence, quoted as
  the truth spells it; the cautious style frames it as a plan (HEAD_plan, "considering X") when
  the sentence has plan cues and no completion cue (the offline extractor's cue lists).
* matcher: accepts a field iff the tuple's value IS one of that field's truth values (so a
  plan-framed value is declined and reaches the field only through the plan-frame retry).
"""

from __future__ import annotations

from ..schema import FieldSpec
from .extract import STYLES
from .resolve import mentions
from .rules import cue_hits, offline_rules, sentences, tokens
from .store import same_value
from .system import ContextTurn, ExtractedTuple, UserTurn

Truth = dict[str, list[str]]


def check_truth(truth: object) -> Truth:
    if not isinstance(truth, dict) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)
            for k, v in truth.items()):
        raise ValueError("an oracle system needs truth={attribute: [initial value, plan value]}")
    return {k: list(v) for k, v in truth.items()}


class OracleExtractor:
    def __init__(self, truth: Truth, style: str = "literal"):
        if style not in STYLES:
            raise ValueError(f"unknown extraction style {style!r}")
        self.truth = check_truth(truth)
        self.style = style
        self.rules = offline_rules()
        self.name = f"oracle-extract-{style}.v1"

    def extract(self, turn: UserTurn, context: list[ContextTurn]) -> list[ExtractedTuple]:
        out: list[ExtractedTuple] = []
        for sent in sentences(turn.text):
            low = sent.text.lower()
            cats = {c for _, _, c in cue_hits(self.rules.extract, tokens(sent.text))}
            plan = "plan" in cats and "completion" not in cats
            for attribute, values in self.truth.items():
                named = [(low.find(v.lower()) if v.lower() in low else len(low), v)
                         for v in values if mentions(sent.text, v)]
                if not named:
                    continue
                value = max(named)[1]
                if self.style == "cautious" and plan:
                    tup = ExtractedTuple(attribute=f"{attribute.split('_')[0]}_plan",
                                         value=f"considering {value}", span=sent.text)
                else:
                    tup = ExtractedTuple(attribute=attribute, value=value, span=sent.text)
                if tup not in out:
                    out.append(tup)
        return out


class OracleMatcher:
    def __init__(self, truth: Truth):
        self.truth = check_truth(truth)
        self.name = "oracle-match.v1"

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None:
        for f in fields:
            if f.entity == tup.entity and any(same_value(tup.value, v)
                                              for v in self.truth.get(f.attribute, [])):
                return f
        return None
