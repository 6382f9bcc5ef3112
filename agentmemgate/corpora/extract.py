"""Stage 2: from a prefilter hit, keep a speculative statement (span, attribute, value, hedge level)
or reject it. Two interchangeable extractors: offline rules (``rules.vN.toml``) and an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol

from ..errors import BadInput
from ..text import sentence_spans, tokens
from ._rules import Rules, load_rules
from .model import Candidate, Extraction
from .scorer import Scorer

OFFLINE_MINER = "offline-rules"  # the rules alone decide (rules.vN.toml)
OFFLINE_SCORED = "offline-scorer"  # the learned scorer decides, the rules name (scorer.vN.json)
_TRAILING = re.compile(
    r"(?:\s+(?:and|or|but|so|the|a|an|to|for|with|in|on|at|of|my|our|as|too|soon|"
    r"now|then|next|this|that|there|some|maybe|probably|eventually|someday))+$",
    re.IGNORECASE,
)


class Extractor(Protocol):
    """What mining needs from stage 2: a name to mark results with, and a batch call."""

    name: str
    kind: str  # "offline rules" or "LLM"

    def extract_many(
        self,
        candidates: list[Candidate],
        on_result: Callable[[Candidate, Extraction | None, str | None], None],
    ) -> None:
        """Call ``on_result(candidate, extraction, error)`` once per candidate, as each finishes."""


_CLAUSE_END = re.compile(r"[;:!?\u2014\u2013]|,\s*(?:but|so|and|because|though)\b|\s-\s")
_CLAUSE = re.compile(r",\s*(?:but|and|so)\s+|\s+-\s+|\s*\u2014\s*")
# Words between a plan cue and what the plan is about ("I might |really have to| move to Denver")
_LEADING = re.compile(
    r"^\s*(?:(?:to|be|that|of|about|have|has|need|needs|definitely|really|just|probably|also|"
    r"even|actually|finally|eventually|maybe|perhaps|able|so|still|soon|one day|someday)\b\s*)+",
    re.IGNORECASE,
)
_REASON = re.compile(r"\b(?:since|because|as)\s+(?=(?:i|we)\b|i'm\b|we're\b)", re.IGNORECASE)


def _declarative_part(question: str) -> str | None:
    """A statement inside a question: the clause before ", but ..." ("I'm leaning towards the
    Godox V1, but how does it compare?") or a reason clause ("Could you suggest neighborhoods,
    since I'm planning to move to Denver?"); None if there is none."""
    parts = _CLAUSE.split(question, maxsplit=1)
    if len(parts) == 2 and parts[0].strip():
        return parts[0]
    m = _REASON.search(question)
    return question[m.end() :] if m else None


def clean_value(raw: str) -> str:
    value = re.sub(r"\s+", " ", raw).strip(" \t,.;:!?\"'()")
    value = _TRAILING.sub("", value).strip(" ,.;:")
    return " ".join(value.split()[:8])


def hedge_level(sentence: str, rules: Rules) -> str:
    """The paper's hedge level of a kept plan, by name (``Rules.hedge_level``)."""
    return rules.hedge_level(sentence)


class RuleExtractor:
    """Deterministic stage 2: the first cue sentence naming an attribute change with a value.

    With a ``scorer`` (``scorer.vN.json``), the learned scorer decides whether a hit is kept, and
    the rules only read its attribute, value and hedge level (``_describe``)."""

    kind = "offline rules"

    def __init__(self, rules: Rules | None = None, scorer: Scorer | None = None):
        self.rules = rules or load_rules()
        self.scorer = scorer
        own = f"{self.rules.ref}:{self.rules.sha256[:12]}"
        if scorer is not None and scorer.reads_rules and scorer.rules not in (None, own):
            raise BadInput(
                f"{scorer.ref} learnt from the verdicts of {scorer.rules}, not {own}: "
                "score with those rules"
            )
        self.name = OFFLINE_MINER if scorer is None else OFFLINE_SCORED

    @property
    def ref(self) -> str:
        """What answered, for provenance: the rules file, and the scorer file if one decides."""
        ref = f"{self.rules.ref}:{self.rules.sha256[:12]}"
        if self.scorer is not None:
            ref += f"+{self.scorer.ref}:{self.scorer.sha256[:12]}"
        return ref

    def extract(self, cand: Candidate) -> Extraction:
        if cand.model_only:
            # A turn only stage 1's turn model passed (cues.v3 on) has no cue sentence to read a
            # plan from, and neither the rules nor scorer.v1 were made on such turns: on the
            # tuning conversations the rules kept them at half their usual precision. They are
            # there for a model miner, which reads the whole turn.
            sentences = cand.cue_sentences() or [cand.turn_text]
            return Extraction(kept=False, text=sentences[0], reject_reason="no plan cue")
        if self.scorer is None:
            return self._rules(cand)
        verdict = self._rules(cand) if self.scorer.reads_rules else None
        p = self.scorer.probability(cand, verdict)
        if not self.scorer.keeps(p):
            sentences = cand.cue_sentences() or [cand.turn_text]
            return Extraction(
                kept=False,
                text=sentences[0],
                reject_reason=f"scorer: {p:.2f} below {self.scorer.threshold:g}",
            )
        return self._describe(cand)

    def _describe(self, cand: Candidate) -> Extraction:
        """A hit the scorer keeps: the rules' attribute and value when they find a plan whose
        value names an object; else the words after the plan cue of a cue sentence, when they
        name one; else no value (never a bare verb). A plan the rules do not name gets the
        attribute its value's words point to (the scorer file's ``names``)."""
        found = self._rules(cand)
        if found.kept and self.scorer.names_object(found.plan_value or ""):
            return self._named(found)
        sentences = cand.cue_sentences() or [cand.turn_text]
        for s in sentences:
            value = self._after_cue(s, cand.prefilter_cues)
            if value:
                level = hedge_level(s, self.rules)
                return self._named(
                    Extraction(kept=True, text=s, plan_value=value, hedge_level=level)
                )
        s = found.text if found.kept else sentences[0]
        return Extraction(
            kept=True, text=s, attribute="unspecified", hedge_level=hedge_level(s, self.rules)
        )

    def _named(self, ext: Extraction) -> Extraction:
        if ext.attribute not in (None, "unspecified"):
            return ext
        return ext.model_copy(update={"attribute": self.scorer.name(ext.plan_value or "")})

    def _after_cue(self, sentence: str, cues: list[str]) -> str | None:
        """The clause after the last hedge or intention cue of ``sentence`` ("thinking about
        |getting a dog|"), if it names an object."""
        low = sentence.lower().replace("\u2019", "'")
        ends = []
        for cue in cues:
            category, _, surface = cue.partition(":")
            if category in ("hedge", "intention", "weak") and surface:
                for m in re.finditer(rf"\b{re.escape(surface)}\b", low):
                    ends.append(m.end())
        for end in sorted(ends):
            rest = sentence[end:]
            stop = _CLAUSE_END.search(rest)
            value = clean_value(_LEADING.sub("", rest[: stop.start()] if stop else rest))
            value = value.rstrip(" ,.;:")
            if self.rules.acceptable_value(value) and self.scorer.names_object(value):
                return value
        return None

    def _rules(self, cand: Candidate) -> Extraction:
        sentences = cand.cue_sentences() or [cand.turn_text]
        reasons = []
        for s in self._with_antecedents(cand, sentences):
            question = s.rstrip(" \t\"')\u201d\u2019").endswith("?")
            if question and (self.rules.question_openers is None or self.rules.opens_request(s)):
                # v1 rejects every question; v2 still reads a declarative clause before ", but ..."
                head = _declarative_part(s) if self.rules.question_openers is not None else None
                if head is None:
                    reasons.append("question")
                    continue
                s, question = head, False
            if self.rules.negated.matches(s):
                reasons.append("negated plan")
                continue
            found = self._match(s, speaker_only=question)
            if isinstance(found, str):
                reasons.append(found)
                continue
            if found:
                attribute, value = found
                return Extraction(
                    kept=True,
                    text=s,
                    attribute=attribute,
                    plan_value=value or None,
                    hedge_level=hedge_level(s, self.rules),
                )
            reasons.append("question" if question else "no attribute change")
        specific = [r for r in reasons if r not in ("no attribute change", "question")]
        if specific:  # v3: say what the plan found is not, rather than that none was found
            reason = specific[0]
        else:
            reason = "no attribute change" if "no attribute change" in reasons else reasons[0]
        return Extraction(kept=False, text=sentences[0], reject_reason=reason)

    def _with_antecedents(self, cand: Candidate, sentences: list[str]) -> Iterator[str]:
        """The cue sentences, each followed (v2 rules) by the sentence before it when it points
        back ("Maybe that's an option." after "One idea was to join a local organization.")."""
        if self.rules.antecedents is None:
            yield from sentences
            return
        spans = sentence_spans(cand.turn_text)
        starts = [a for a, _ in spans]
        for (a, _), s in zip(cand.cue_spans or [(0, 0)], sentences):
            yield s
            i = starts.index(a) if a in starts else -1
            if i > 0 and self.rules.antecedents.matches(s):
                yield cand.turn_text[spans[i - 1][0] : spans[i - 1][1]]

    def _match(self, s: str, speaker_only: bool) -> tuple[str, str] | str | None:
        """(attribute, value) of the first pattern that matches; else, with v3's plan checks, the
        reason the plans found are not kept (a one-off event, a change already made, ...)."""
        rejected = None
        for i, (attribute, pattern) in enumerate(self.rules.attributes):
            for m in pattern.finditer(s):
                before = s[: m.start()]
                if self.rules.about_someone_else(before):
                    continue
                if (
                    speaker_only or i in self.rules.speaker_only
                ) and not self.rules.speaker_subject(before):
                    continue
                raw = m.groupdict().get("value") or m.groupdict().get("value2") or ""
                value = clean_value(raw)
                attribute = next(
                    (a for g, a in self.rules.renames.get(i, {}).items() if m.group(g) is not None),
                    self.rules.attributes[i][0],
                )
                if not self.rules.acceptable_value(value):
                    continue
                if raw:
                    fuller = self._fuller(s, m, value)
                    value = fuller if self.rules.acceptable_value(fuller) else value
                if self.rules.checks is None:
                    if i in self.rules.verb_first and self.rules.names_no_object(value):
                        value = ""  # kept, but a bare verb is no plan value
                    return self._name(attribute, value), value
                problem = self._check(s, m.start(), m.end(), attribute, value)
                if problem is None:
                    return self._name(attribute, value), value
                rejected = rejected or problem
        return rejected

    def _fuller(self, s: str, m: re.Match, value: str) -> str:
        """v6: the value read on from the words after it, where its last word is only a
        quantity ("a pair" of X), a request (recommendations on X), or the thing a replace or
        upgrade frame gives up (replacing A with B: B). Values accepted already: no keep
        decision changes."""
        rules = self.rules
        group = "value" if m.groupdict().get("value") is not None else "value2"
        rest = s[m.end(group) :]
        last = value.split()[-1].lower() if value else ""
        if rules.after_of and last in rules.of_heads:
            more = rules.after_of.match(rest)
            if more:
                return clean_value(f"{value} of {more.group('value')}")
        if rules.after_request and value.lower() in rules.request_heads:
            more = rules.after_request.match(rest)
            if more:
                return clean_value(more.group("value"))
        if rules.after_swap and m.group(0).lower().startswith(rules.swap_frames):
            more = rules.after_swap.match(rest)
            if more:
                return clean_value(more.group("value"))
        return value

    def _check(self, s: str, start: int, end: int, attribute: str, value: str) -> str | None:
        """v3: why a matched plan is not the speaker's own lasting change, or None if it is."""
        checks = self.rules.checks
        a = max((m.end() for m in _CLAUSE_END.finditer(s, 0, start)), default=0)
        b = next((m.start() for m in _CLAUSE_END.finditer(s, end)), len(s))
        clause, lead = s[a:b], s[a:start]
        if any(a == 0 for a, _, _, _ in checks.not_plans.find(tokens(value))):
            return "not a plan (small talk, an offer or a vague wish)"
        if attribute == "unspecified" and not checks.object_words(value):
            return "no object (a bare verb)"
        if checks.completed.matches(lead):
            return "a completed change"
        if checks.under_way.matches(lead):
            return "a change under way"
        if checks.one_off.matches(clause):
            return "a one-off event"
        return None

    def _name(self, attribute: str, value: str) -> str:
        """A plan the patterns could not name gets the attribute its words point to (a rules
        file's ``[names]``; v2 has none)."""
        if attribute != "unspecified" or self.rules.names is None:
            return attribute
        found = {cat for _, _, cat, _ in self.rules.names.find(tokens(value))}
        return next((c for c in self.rules.names_order if c in found), attribute)

    def extract_many(
        self,
        candidates: list[Candidate],
        on_result: Callable[[Candidate, Extraction | None, str | None], None],
    ) -> None:
        for cand in candidates:
            on_result(cand, self.extract(cand), None)
