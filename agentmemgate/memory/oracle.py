"""The oracle ablation: an extractor and a matcher that read the ground-truth values.

The one exception to blindness, named as an oracle in every ``SystemInfo`` (``oracle=True``):
the protocol builds these systems with ``factory(truth={attribute: [initial value, plan
value]})``. They isolate the gate: values are found and filed without error, so what remains is
classification, staging and the checker.

* extractor: the offline extractor (either style) with its gazetteer replaced by the truth
  values -- a sentence's value is a truth value it names (whole, or its longest capitalized run
  for long values), filed under the truth's attribute; roles, negation and plan framing follow
  the offline rules (a value under a negation is not asserted, so it is not extracted).
* matcher: accepts a field iff the tuple's value IS one of that field's truth values (so a
  plan-framed value is declined and reaches the field only through the plan-frame retry).
"""

from __future__ import annotations

import re

from ..schema import FieldSpec
from .extract import OfflineExtractor
from .gazetteer import Hit
from .profile_store import same_value
from .resolve import value_core
from .rules import offline_rules
from .system import ContextTurn, ExtractedTuple, UserTurn

Truth = dict[str, list[str]]


def check_truth(truth: object) -> Truth:
    if (
        not isinstance(truth, dict)
        or not truth
        or not all(
            isinstance(k, str)
            and isinstance(v, (list, tuple))
            and v
            and all(isinstance(x, str) and x for x in v)
            for k, v in truth.items()
        )
    ):
        raise ValueError("an oracle system needs truth={attribute: [initial value, plan value]}")
    return {k: list(v) for k, v in truth.items()}


class TruthValues:
    """A gazetteer of the truth values only (whole values first, then their capitalized cores)."""

    def __init__(self, truth: Truth):
        forms: list[tuple[str, str, str]] = []  # (surface pattern, canonical value, attribute)
        for attribute, values in truth.items():
            for v in values:
                forms.append((v, v, attribute))
        for attribute, values in truth.items():
            for v in values:
                core = value_core(v)
                if core != v and len(core) >= 3:
                    forms.append((core, v, attribute))
        self._forms = [
            (re.compile(rf"(?<![\w']){re.escape(f)}(?![\w'])", re.IGNORECASE), v, a)
            for f, v, a in forms
        ]

    def find(self, text: str) -> list[Hit]:
        taken: list[Hit] = []
        for rx, value, attribute in self._forms:
            for m in rx.finditer(text):
                a, b = m.span()
                if not any(a < h.end and h.start < b for h in taken):
                    taken.append(Hit(a, b, value, (attribute,)))
        return sorted(taken, key=lambda h: h.start)

    def noun_domains(self, text: str) -> dict[str, int]:
        return {}


def oracle_extractor_name(style: str) -> str:
    """Named as an oracle, with the hash of the offline rules it applies to the truth values."""
    return offline_rules().tag(f"extract-{style}").replace("offline-", "oracle-", 1)


class OracleExtractor:
    def __init__(self, truth: Truth, style: str = "literal"):
        self.truth = check_truth(truth)
        self._inner = OfflineExtractor(style, values=TruthValues(self.truth), patterns=False)
        self.style = style
        self.name = oracle_extractor_name(style)

    def extract(self, turn: UserTurn, context: list[ContextTurn]) -> list[ExtractedTuple]:
        return self._inner.extract(turn, context)


class OracleMatcher:
    def __init__(self, truth: Truth):
        self.truth = check_truth(truth)
        self.name = "oracle-match.v1"

    def match(self, tup: ExtractedTuple, fields: list[FieldSpec]) -> FieldSpec | None:
        for f in fields:
            if f.entity == tup.entity and any(
                same_value(tup.value, v) for v in self.truth.get(f.attribute, [])
            ):
                return f
        return None
