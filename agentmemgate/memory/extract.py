"""Extractors: the two styles of Section 4, as offline rules and as LLM prompts.

* literal (after Zep Graphiti's fact-triple extraction): records stated values directly, plans
  included -- "I might switch to Trader Joe's" gives (user, grocery_store, "Trader Joe's").
* cautious (after Mem0's fact extraction, which tracks plans and intentions as such): records
  plans as plans -- (user, grocery_plan, "considering Trader Joe's") -- and facts as facts.

The offline rules, per sentence of the user turn (cue lists: ``offline_rules.v1.toml [extract]``):

1. Values: gazetteer hits (every catalog value) plus a pattern for values the catalog does not
   know: a capitalized phrase right after a change verb ("switch to Zed Editor"). A value is
   filed under its catalog attribute; a value of several attributes, or a pattern value, takes the
   attribute whose noun words occur in the sentence or the two preceding turns (none: dropped).
2. Each value gets a role from the nearest cue ending at most 4 words before it in its clause,
   with no other value in between ("from X to Y": X departs, Y is plain):
   target ("switching to X"), departure ("from X", "instead of X": never recorded) or stay
   ("sticking with X"). A value after a negation in its clause ("decided against switching to
   X", "haven't moved to X") is not asserted and is never recorded; negations inside plan cues
   ("not sure", "can't decide") do not count.
3. One tuple per attribute and sentence: the last target if any, else the last other value (a
   value named in two sentences gives two tuples, one per span).
4. Plan or fact: the value's clause decides (a plan cue and no completion cue: plan; the reverse:
   fact; both: the cue nearest before the value); with neither, a target's change verb decides
   (base or -ing form, "switch to", "switching to": plan; past: fact), else the sentence (plan
   cues and no completion cue: plan).
5. literal records the value either way; cautious frames a plan as (HEAD_plan, "considering X"),
   or "planning to switch to X" when a firm-plan cue occurs, where HEAD is the first word of the
   catalog attribute (grocery_store -> grocery_plan).

The LLM extractors fill ``memory_extract_literal`` / ``memory_extract_cautious`` and ask for
tuples whose span is copied verbatim from the message (a span not found in it is replaced by the
whole message, never invented).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from ..corpora.llm_extract import find_verbatim
from ..schema import normalize_text
from ._prompts import budget, component_name, memory_rubric
from .gazetteer import Hit, gazetteer
from .rules import clause_ids, cue_hits, offline_rules, sentences, tokens
from .system import ContextTurn, ExtractedTuple, UserTurn

STYLES = ("literal", "cautious")
WINDOW = 4  # words between a role cue's end and the value it governs
_PATTERN_VALUE = re.compile(
    r"\s*((?:the\s+)?(?:[A-Z0-9][\w'&.+-]*)(?:\s+(?:of\s+|and\s+|&\s+)?[A-Z0-9][\w'&.+-]*)*)"
)
_PLACEHOLDER = "zzvalue{}zz"
_MEMO_CHARS = 20_000_000  # text held as keys by one rule file's memo before it is cleared


class _Memo(dict):
    """(style or "", text, the two turns before it) -> answer, cleared when its keys hold
    ``_MEMO_CHARS`` characters (about 2 MB for all 506 built arcs; long natural turns fill it
    sooner)."""

    chars = 0

    def put(self, key: tuple[str, str, tuple[str, ...]], value):
        size = len(key[1]) + sum(len(x) for x in key[2])
        self.chars += size
        if self.chars > _MEMO_CHARS:
            self.clear()
            self.chars = size
        self[key] = value
        return value


_MEMOS: dict[tuple, _Memo] = {}


@dataclass
class _Value:
    hit: Hit
    attribute: str | None
    token: int = -1
    role: str = "plain"  # target / departure / stay / plain
    negated: bool = False
    plan: bool = False
    firm: bool = False


class OfflineExtractor:
    """The rule extractor of the module docstring, in either style."""

    def __init__(self, style: str = "literal", *, values=None, patterns: bool = True):
        """``values``: a gazetteer to find values with (default: the catalog's); ``patterns``:
        also take capitalized phrases after change verbs as values."""
        if style not in STYLES:
            raise ValueError(f"unknown extraction style {style!r}")
        self.style = style
        self.rules = offline_rules()
        self.gazetteer = values or gazetteer()
        self.patterns = patterns
        self.name = self.rules.tag(f"extract-{style}")
        # The rules are a pure function of the text and the two turns before it, and only the
        # last step (framing a plan) depends on the style: with the catalog's gazetteer, the
        # analysis is shared by every extractor of the same rule file and the tuples by every
        # one of the same style (nine systems on one arc extract each turn in two styles). A
        # custom gazetteer (an oracle's truth values) is never memoized: its answers stay with
        # its own instance.
        self._memo = (
            _MEMOS.setdefault((patterns, self.rules, self.gazetteer), _Memo())
            if values is None
            else None
        )

    def extract(self, turn: UserTurn, context: list[ContextTurn]) -> list[ExtractedTuple]:
        memo = self._memo
        if memo is None:
            return self._frame(self._analysis(turn.text, " ".join(t.text for t in context[-2:])))
        near = tuple(t.text for t in context[-2:])  # what the rules read of the context
        key = (self.style, turn.text, near)
        found = memo.get(key)
        if found is None:
            plain = ("", turn.text, near)  # the style-free analysis
            analysis = memo.get(plain)
            if analysis is None:
                analysis = memo.put(plain, self._analysis(turn.text, " ".join(near)))
            found = memo.put(key, tuple(self._frame(analysis)))
        return list(found)  # ExtractedTuple is frozen: sharing the tuples is safe

    def _analysis(self, text: str, nearby: str) -> tuple:
        """Per sentence: its text and the (attribute, surface, plan, firm) of each value kept."""
        return tuple(
            (
                sent.text,
                tuple(
                    (v.attribute, v.hit.surface, v.plan, v.firm)
                    for v in self._analyse(sent.text, nearby)
                ),
            )
            for sent in sentences(text)
        )

    def _frame(self, analysis: tuple) -> list[ExtractedTuple]:
        out: list[ExtractedTuple] = []
        for span, values in analysis:
            for attribute, surface, plan, firm in values:
                if self.style == "cautious" and plan:
                    head = attribute.split("_")[0]
                    frame = "planning to switch to" if firm else "considering"
                    tup = ExtractedTuple(
                        attribute=f"{head}_plan", value=f"{frame} {surface}", span=span
                    )
                else:
                    tup = ExtractedTuple(attribute=attribute, value=surface, span=span)
                if tup not in out:
                    out.append(tup)
        return out

    # -- the rules ---------------------------------------------------------------------------
    def _values(self, text: str, nearby: str) -> list[_Value]:
        hits = list(self.gazetteer.find(text))
        toks = tokens(text)
        for a, b, cat in cue_hits(self.rules.extract, toks) if self.patterns else ():
            if cat != "target":
                continue
            end = toks[b - 1][0] + len(toks[b - 1][1])
            m = _PATTERN_VALUE.match(text, end)
            if (
                m
                and m.group(1)
                and m.group(1) not in ("I",)
                and not any(h.start < m.end(1) and m.start(1) < h.end for h in hits)
            ):
                hits.append(Hit(m.start(1), m.end(1), m.group(1), ()))
        values = []
        for h in sorted(hits, key=lambda h: h.start):
            attr = self._attribute(h, text, nearby)
            if attr is not None:
                values.append(_Value(h, attr))
        return values

    def _attribute(self, hit: Hit, text: str, nearby: str) -> str | None:
        if len(hit.domains) == 1:
            return hit.domains[0]
        nouns = self.gazetteer.noun_domains(text)
        if not nouns:
            nouns = self.gazetteer.noun_domains(nearby)
        pool = [d for d in nouns if not hit.domains or d in hit.domains]
        if not pool:
            return hit.domains[0] if hit.domains else None
        return max(pool, key=lambda d: (nouns[d], d))

    def _analyse(self, text: str, nearby: str) -> list[_Value]:
        values = self._values(text, nearby)
        if not values:
            return []
        masked, cut = [], 0
        for i, v in enumerate(values):
            masked.append(text[cut : v.hit.start])
            masked.append(_PLACEHOLDER.format(i))
            cut = v.hit.end
        masked.append(text[cut:])
        mtext = "".join(masked)
        toks = tokens(mtext)
        clauses = clause_ids(mtext, toks)
        index = {w: i for i, (_, w) in enumerate(toks)}
        for i, v in enumerate(values):
            v.token = index.get(_PLACEHOLDER.format(i), -1)
        value_tokens = [v.token for v in values]
        cues = cue_hits(self.rules.extract, toks)
        plan_spans = [(a, b) for a, b, c in cues if c == "plan"]
        negations = [
            (a, b)
            for a, b, c in cues
            if c == "negation" and not any(x <= a and b <= y for x, y in plan_spans)
        ]
        sentence_plan = any(c == "plan" for _, _, c in cues)
        sentence_done = any(c == "completion" for _, _, c in cues)
        firm = any(c == "firm_plan" for _, _, c in cues)
        past = self.rules.irregular_past
        for v in values:
            if v.token < 0:
                continue
            cl = clauses[v.token]
            v.negated = any(b <= v.token and clauses[a] == cl for a, b in negations)
            roles = [
                (b, b - a, c, a)
                for a, b, c in cues
                if c in ("target", "departure", "stay")
                and v.token - WINDOW <= b <= v.token
                and clauses[a] == cl
                and not any(b <= o < v.token for o in value_tokens)
            ]
            target_verb_past = True
            if roles:
                _, _, v.role, a = max(roles)
                if v.role == "target":
                    first = toks[a][1]
                    target_verb_past = first.endswith("ed") or first in past or first == "chose"
            in_clause = [
                (b, c) for a, b, c in cues if c in ("plan", "completion") and clauses[a] == cl
            ]
            kinds = {c for _, c in in_clause}
            if kinds == {"plan"}:
                v.plan = True
            elif kinds == {"completion"}:
                v.plan = False
            elif kinds:
                before = [(b, c) for b, c in in_clause if b <= v.token]
                v.plan = (max(before) if before else min(in_clause))[1] == "plan"
            elif v.role == "target":
                v.plan = not target_verb_past
            else:
                v.plan = sentence_plan and not sentence_done
            v.firm = firm
        chosen: dict[str, _Value] = {}
        for v in values:
            if v.negated or v.role == "departure":
                continue
            prev = chosen.get(v.attribute)
            if prev is None or v.role == "target" or prev.role != "target":
                chosen[v.attribute] = v
        return sorted(chosen.values(), key=lambda v: v.hit.start)


# -- LLM extractors ---------------------------------------------------------------------------
class ProposedTuple(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: str
    attribute: str
    value: str
    span: str


class ExtractionAnswer(BaseModel):
    """The JSON an extraction prompt asks for (validated; invalid replies are re-asked).

    Lenient about shapes a small model plainly means: a bare tuple object or a bare list is read
    as the list of tuples, and a tuple without ``entity`` or ``span`` gets "user" / "" (the span
    then falls back to the whole message). Anything else is invalid and re-asked.
    """

    model_config = ConfigDict(extra="forbid")
    tuples: list[ProposedTuple]

    @model_validator(mode="before")
    @classmethod
    def _plain_shapes(cls, data: Any) -> Any:
        if isinstance(data, list):
            data = {"tuples": data}
        elif isinstance(data, dict) and "tuples" not in data and "attribute" in data:
            data = {"tuples": [data]}
        if isinstance(data, dict) and isinstance(data.get("tuples"), list):
            data = {
                **data,
                "tuples": [
                    {"entity": "user", "span": "", **t} if isinstance(t, dict) else t
                    for t in data["tuples"]
                ],
            }
        return data


CONTEXT_TURNS = 4  # preceding turns shown to an LLM extractor
CONTEXT_CHARS = 600


def format_turns(context: list[ContextTurn], n: int, limit: int = CONTEXT_CHARS) -> str:
    if not context[-n:]:
        return "(none)"
    out = []
    for t in context[-n:]:
        text = t.text if len(t.text) <= limit else t.text[:limit].rstrip() + " [...]"
        out.append(f"[{t.role}, session {t.session}, {t.date.isoformat()}]: {text}")
    return "\n".join(out)


def snake(name: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", normalize_text(name)).strip("_")
    return s if re.match(r"[a-z]", s or "") else f"a_{s}" if s else ""


class LLMExtractor:
    """One model call per user turn under the style's rubric."""

    def __init__(self, model, style: str = "literal", rubric=None):
        if style not in STYLES:
            raise ValueError(f"unknown extraction style {style!r}")
        self.model = model
        self.style = style
        self.rubric = rubric or memory_rubric(f"memory_extract_{style}")
        self.name = component_name(model, self.rubric)

    def prompt(self, turn: UserTurn, context: list[ContextTurn]) -> str:
        return self.rubric.fill(
            date=turn.date.isoformat(),
            context=format_turns(context, CONTEXT_TURNS),
            message=turn.text,
        )

    def plan(self, turn: UserTurn, context: list[ContextTurn]) -> bool:
        """Count the call ``extract`` would make (dry runs, ``model.planned``)."""
        return self.model.plan(
            self.prompt(turn, context),
            schema=ExtractionAnswer,
            temperature=0.0,
            purpose=f"memory.extract.{self.style}",
            **budget(self.model, "extract"),
        )

    def extract(self, turn: UserTurn, context: list[ContextTurn]) -> list[ExtractedTuple]:
        resp = self.model.complete(
            self.prompt(turn, context),
            schema=ExtractionAnswer,
            temperature=0.0,
            purpose=f"memory.extract.{self.style}",
            **budget(self.model, "extract"),
        )
        out: list[ExtractedTuple] = []
        for p in resp.parsed.tuples:
            attribute, value = snake(p.attribute), p.value.strip()
            if not attribute or not value:
                continue
            span = find_verbatim(p.span, turn.text) or turn.text
            tup = ExtractedTuple(
                entity=snake(p.entity) or "user", attribute=attribute, value=value, span=span
            )
            if tup not in out:
                out.append(tup)
        return out
