"""The offline classifier from version 2 on: cues read in their scope (``evidence_cues.v2.toml``).

v1 adds up cue words wherever they stand; v2 reads which verb a cue governs and in which clause it
stands, so "I just need to find the time" is not a completed event and "The plan is to switch to
X on Friday, November 15" is a plan. The rules are code; every cue, weight and word list is data
in the TOML file, whose header documents the rules in order (this module follows that order).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..corpora.statements import Statement
from ..text import PhraseMatcher, sentence_spans, tokens
from .classes import EVIDENCE_TYPES, Distribution

SPEC, DONE, CORR, OTHER = EVIDENCE_TYPES
OPERATORS = ("hedge", "epistemic", "deliberation", "intention", "modal", "conditional")
SOFT = ("hedge", "epistemic", "deliberation")  # a negation under these leaves the change uncertain
FORMS = ("base", "third", "ing", "past", "participle")
_DO = frozenset({"do", "don", "does", "doesn", "did", "didn"})
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "this",
                          "that", "these", "those", "some", "any", "its"})
_NEGATOR_SUBJECTS = frozenset({"nothing", "nobody", "none", "neither"})
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9})
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_DATE_PATTERNS = [
    (re.compile(rf"\b({_MONTH_RE})\.?\s+{_DAY}\b{_YEAR}", re.I), "md"),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH_RE})\b\.?{_YEAR}", re.I), "dm"),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "iso"),
]
_RELATIVE_WEEKDAY = re.compile(rf"\b(this|next|coming|last)\s+(?:{'|'.join(_WEEKDAYS)})\b", re.I)
_IN_N = re.compile(r"\bin\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of)"
                   r"\s+(?:days?|weeks?|months?|years?)\b", re.I)
_SINCE_TIME = re.compile(rf"^since\s+(?:{_MONTH_RE}|\d|last|then|the\s+\w+\s+of|early|{'|'.join(_WEEKDAYS)})",
                         re.I)
_BREAK = re.compile(r"[,;:()\u2014\u2013]|\s-\s")


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence for a class: what fired, where, and how much it adds."""

    sentence: int
    cls: str
    weight: float
    rule: str
    surface: str
    weak: bool = False  # evidence with no change verb: the statement keeps only its strongest


@dataclass
class _Span:
    a: int
    b: int
    cats: set[str]
    surface: str


class ScopedLexiconClassifier:
    """Reads cues in their scope (rules in the data file's header); probabilities by softmax."""

    kind = "evidence_type"
    family = "offline"

    def __init__(self, version: int, path: Path, raw: bytes):
        data = tomllib.loads(raw.decode("utf-8"))
        self.version = version
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.name = f"offline:lexicon.v{version}"
        self.rubric_ref = f"evidence_cues.v{version}"
        self.path = path
        self.temperature = float(data.get("temperature", 1.0))
        self._answers: dict[tuple, Distribution] = {}  # (text, date, temperature) -> answer
        self.priors = {c: float(data["priors"][c]) for c in EVIDENCE_TYPES}
        self.w = {k: float(v) for k, v in data["evidence"].items()}
        cues = data["cues"]
        syn = {k: list(v) for k, v in data["syntax"].items()}
        entries: dict[str, list[str]] = {k: list(v) for k, v in cues.items()}
        entries["conditional"] = syn["conditional"]
        entries["reason"] = [w for w in syn["reason"] if " " in w]  # one-word ones: segment_words
        self.verb_lemma: dict[str, str] = {}
        for row in data["change_verbs"]["forms"]:
            parts = row.split("|")
            if len(parts) != len(FORMS):
                raise ValueError(f"{path.name}: change verb {row!r} needs {len(FORMS)} forms")
            for form, word in zip(FORMS, parts):
                entries.setdefault(f"verb:{form}", []).append(word)
                self.verb_lemma[" ".join(w for _, w in tokens(word))] = parts[0]
        self.matcher = PhraseMatcher(entries)
        self.segment_words = frozenset(syn["segment_words"])
        self.reason_words = frozenset(w for w in syn["reason"] if " " not in w)
        self.barrier_words = frozenset(syn["scope_barrier"])
        self.prospective = frozenset(syn["prospective"])
        self.retrospective = frozenset(syn["retrospective"])
        self.light_verbs = frozenset(syn["light_verbs"])
        self.not_acquired = frozenset(syn["not_acquired"])
        self.activity = frozenset(data["change_verbs"].get("activity", []))
        self.recall_modals = frozenset({"might", "may", "must", "could", "would", "should", "'d",
                                        "probably"})
        self.be = frozenset(syn["be"])
        self.have = frozenset(syn["have"])
        self.first = frozenset(syn["first_person"])
        self.first_possessive = frozenset(syn["first_possessive"])
        self.second = frozenset(syn["second_person"])
        self.third = frozenset(syn["other_subject"])
        self.adverbs = frozenset(syn["adverbs"])
        self.openers = frozenset(syn["openers"])
        self.negations = frozenset(w for w in cues["negation"] if " " not in w)
        self._skip = self.be | self.have | _DO | self.adverbs | self.negations

    # -- the classifier interface ------------------------------------------------------------
    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        # A pure function of the text, the date and the temperature: the answer is memoized
        # (every gated system on an arc classifies the same spans) and each caller gets a copy.
        key = (statement.text, statement.date, self.temperature)
        d = self._answers.get(key)
        if d is None:
            s = self.scores(statement.text, statement.date)
            top = max(s.values())
            exp = {c: math.exp((v - top) / self.temperature) for c, v in s.items()}
            d = Distribution(probs=exp, method="lexicon")
            if len(self._answers) >= 20_000:
                self._answers.clear()
            self._answers[key] = d
        return d.model_copy(update={"probs": dict(d.probs)})

    def scores(self, text: str, date: str | None = None) -> dict[str, float]:
        return dict(_scores(self, text, _day(date)))

    def explain(self, text: str, date: str | None = None) -> list[Evidence]:
        """Every piece of evidence the statement produced (what ``scores`` adds up)."""
        return list(_evidence(self, text, _day(date)))

    # -- one sentence ------------------------------------------------------------------------
    def sentence_evidence(self, k: int, text: str, day: dt.date | None) -> list[Evidence]:
        toks = tokens(text)
        if not toks:
            return []
        sent = _Sentence(self, k, text, toks, day)
        for v in sent.verbs:
            self._verb(sent, v)
        self._no_verb(sent)
        self._corrections(sent)
        self._other(sent)
        return sent.out

    def _verb(self, s: "_Sentence", v: _Span) -> None:
        """Header 2: a change verb's reading from its form and what governs it."""
        forms = {c.split(":")[1] for c in v.cats if c.startswith("verb:")}
        op = self._governor(s, v, forms)
        if op is not None and forms & {"base", "third", "ing"}:
            s.governing.add(id(op))
            subj = self._verb_subject(s, v, op)
            if subj == "second":
                return
            factor = self.w["other_subject_weight"] if subj == "other" else 1.0
            if self._abandoned(s, v) or (self._negated_between(s, op, v) and not op.cats & set(SOFT)):
                s.add(SPEC, self.w["unrealized"] * factor, "declined change: not real", v, v.a)
            else:
                s.add(SPEC, self.w["governed_change"] * factor, f"change under {_name(op)}", v, v.a)
            return
        if forms & {"past", "participle"}:
            self._past(s, v)
            return
        if self._abandoned(s, v):
            s.add(SPEC, self.w["unrealized"], "abandoned change: not real", v, v.a)
            return
        if s.pending_negated:
            s.add(SPEC, self.w["pending_change"], "pending: a negation with 'yet'", v, v.a)
            return
        words = s.words
        before = self._left(v.a, words, self.adverbs)
        prev = words[before] if before >= 0 else ""
        activity = self.verb_lemma.get(v.surface) in self.activity
        if "ing" in forms and prev in self.be and prev not in {"been", "was", "were"}:
            if not activity:
                w = self.w["scheduled_change"] if s.future_near(v.a) else self.w["futurate"]
                s.add(SPEC, w, "futurate progressive", v, v.a)
        elif "ing" in forms and prev in self.prospective and self._speaker_attitude(s, before):
            s.add(SPEC, self.w["prospective_gerund"], "prospective gerund", v, v.a)
        elif s.future_near(v.a):
            s.add(SPEC, self.w["scheduled_change"], "change with a future time", v, v.a)
        elif s.in_seg(v.a, "present_state") or any(
                words[i] == "now" for i in range(len(words)) if s.seg[i] == s.seg[v.a]):
            s.add(DONE, self.w["present_state"], "present state", v, v.a)

    def _past(self, s: "_Sentence", v: _Span) -> None:
        """Header 2, past and participle readings."""
        words = s.words
        j = v.a - 1
        negated = have = modal_have = False
        while j >= 0 and words[j] in self._skip:
            if words[j] in self.negations:
                negated = True
            if words[j] in self.have:
                have = True
                if j > 0 and words[j - 1] in self.recall_modals:
                    modal_have = True
            j -= 1
        subject = words[j] if j >= 0 else ""
        if negated or subject in _NEGATOR_SUBJECTS:
            if have or s.pending:
                s.add(SPEC, self.w["pending_change"], "negated completion: not yet", v, v.a)
            else:
                s.add(SPEC, self.w["unrealized"], "negated past: no change happened", v, v.a)
        elif modal_have:
            s.add(OTHER, self.w["hedged_recall"], "hedged recall (modal + have)", v, v.a)
        elif s.future_near(v.a):
            s.add(SPEC, self.w["scheduled_change"], "past form beside a future time: scheduled", v, v.a)
        elif (j < 0 or subject in self.first or subject in self.openers
              or subject in self.segment_words or s.seg[j] != s.seg[v.a]):
            bonus = sum(1 for sp in s.spans if s.seg[sp.a] == s.seg[v.a]
                        and sp.cats & {"completion_adverb", "past_time"})
            w = self.w["completed_change"] + self.w["completion_bonus"] * min(2, bonus)
            s.add(DONE, w, "past change, first person" if subject in self.first else "past change", v, v.a)
        else:
            s.add(DONE, self.w["completed_other_subject"], "past change, another subject", v, v.a)

    def _no_verb(self, s: "_Sentence") -> None:
        """Header 4: operators that govern no change verb, pending, idioms, past time, 'now'."""
        words, spans = s.words, s.spans
        bare = 0.0
        rule, weak = "", False
        for op in s.ops:
            if id(op) in s.governing or not op.cats & {"hedge", "deliberation", "intention", "modal"}:
                continue
            subj = self._subject(op.a, words, s.seg)
            if subj == "first" and op.b < len(words) and words[op.b] in self.second | self.third:
                subj = "second" if words[op.b] in self.second else "other"  # "Maybe you have"
            if any(op.b <= sp.a <= op.b + 4 and sp.cats & {"continuation", "discourse"}
                   and not _blocked(op.b, sp.a, s.barrier) for sp in spans):
                if subj != "second":
                    s.cont = max(s.cont, self.w["continuation"])
                continue
            if self._negated_op(s, op) and not op.cats & set(SOFT):
                continue
            cls = next(c for c in ("hedge", "deliberation", "intention", "modal") if c in op.cats)
            w, why = self.w[f"bare_{cls}"], f"{cls} with no change verb"
            if cls != "modal" and self._action_follows(s, op):
                w, why = max(w, self.w["governed_action"]), f"{cls} over another verb"
            if any(op.b <= sp.a and not _blocked(op.b, sp.a, s.barrier)
                   for sp in spans if "future_time" in sp.cats):
                w, why = max(w, self.w["bare_with_future"]), f"{cls} with a future time"
            w *= {"second": 0.0, "other": self.w["other_subject_weight"]}.get(subj, 1.0)
            if s.reason[op.a]:
                w *= self.w["reason_factor"]
                why += " (in a reason clause)"
            if w > bare:
                bare, rule, weak = w, f"{why} '{op.surface}'", why.startswith("modal with no change verb")
        if bare:
            s.out.append(Evidence(s.k, SPEC, bare, rule, "", weak=weak))
        for sp in spans:
            if "discourse" in sp.cats and not any(o.a <= sp.a <= o.b + 4 for o in s.ops):
                s.cont = max(s.cont, self.w["continuation"])
        verb_segs = {s.seg[v.a] for v in s.verbs}
        if s.pending and s.negated:
            for sp in spans:
                if sp.surface == "yet" and s.seg[sp.a] not in verb_segs and any(
                        "negation" in s.cat_at[i] for i in range(len(words)) if s.seg[i] == s.seg[sp.a]):
                    s.add(SPEC, self.w["pending_bare"], "negation with 'yet'", sp, sp.a, weak=True)
                    break
        for sp in spans:
            if "completion_idiom" in sp.cats and not s.future_near(sp.a):
                s.add(DONE, self.w["completion_idiom"], "completion idiom", sp, sp.a)
        if s.verbs:
            return
        op_segs = {s.seg[o.a] for o in s.ops}
        for sp in spans:
            if "past_time" in sp.cats and s.seg[sp.a] not in op_segs and not s.future_near(sp.a):
                s.add(DONE, self.w["past_time_alone"], "past time, no change verb", sp, sp.a)
                break
        for sp in spans:
            if sp.surface == "now" and s.seg[sp.a] not in op_segs and not s.question \
                    and not s.future_near(sp.a):
                s.add(DONE, self.w["now_state"], "'now' in a present-tense clause", sp, sp.a)
                break

    def _corrections(self, s: "_Sentence") -> None:
        """Header 5."""
        for sp in s.spans:
            if "correction" in sp.cats:
                s.add(CORR, self.w["correction"], "corrective marker", sp, sp.a)
        weak = [sp for sp in s.spans if "correction_weak" in sp.cats]
        if weak:
            w = self.w["correction_weak_negated"] if s.negated else self.w["correction_weak"]
            s.add(CORR, w, "weak corrective marker" + (" with a negation" if s.negated else ""),
                  weak[0], weak[0].a)

    def _other(self, s: "_Sentence") -> None:
        """Header 6: one 'other' figure per sentence, capped."""
        other = sum(self.w["other_cue"] * (self.w["reason_factor"] if s.reason[sp.a] else 1.0)
                    for sp in s.spans if sp.cats & {"preference", "habit", "request", "gratitude"})
        asks = s.question and not any(e.cls == SPEC for e in s.out)
        if asks:
            other += self.w["question"]
        other = max(min(self.w["other_cap"], other), s.cont)
        if other > 0:
            s.out.append(Evidence(s.k, OTHER, other,
                                  "non-revisionary cues" + (" (question)" if asks else ""), ""))

    # -- helpers -----------------------------------------------------------------------------
    def _spans(self, toks, text: str, day: dt.date | None) -> list[_Span]:
        """Longest non-overlapping cue spans (equal spans keep all their categories), plus dates."""
        words = [w for _, w in toks]
        found: dict[tuple[int, int], _Span] = {}
        for a, b, cat, surface in self.matcher.find(toks):
            if not self._keep(cat, a, b, words, text, toks):
                continue
            sp = found.setdefault((a, b), _Span(a, b, set(), surface))
            sp.cats.add(cat)
        for a, b, cat in self._dates(text, toks, day):
            sp = found.setdefault((a, b), _Span(a, b, set(), " ".join(words[a:b])))
            sp.cats = {cat}
        taken = [False] * len(words)
        out = []
        for sp in sorted(found.values(), key=lambda s: (-(s.b - s.a), s.a)):
            if any(taken[sp.a:sp.b]):
                continue
            for i in range(sp.a, sp.b):
                taken[i] = True
            out.append(sp)
        return sorted(out, key=lambda s: s.a)

    def _keep(self, cat: str, a: int, b: int, words: list[str], text: str, toks) -> bool:
        """Readings a bare word list cannot tell apart: 'may' the month, 'going to' a place,
        'd' as 'had', 'since' + a time."""
        nxt = words[b] if b < len(words) else ""
        prev = words[a - 1] if a > 0 else ""
        if words[a] == "may" and b == a + 1 and (nxt[:1].isdigit() or prev[:1].isdigit()
                                                 or prev in {"in", "of", "since", "early", "late",
                                                             "mid", "last", "this", "next"}):
            return False
        if cat.startswith("verb:") and words[b - 1] in {"a", "an"} and nxt in self.not_acquired:
            return False
        if cat.startswith("verb:past") and prev in _DETERMINERS:  # "my left hand"
            return False
        if words[a:b] == ["going", "to"]:  # the future, not a trip: "I'm going to switch"
            j = a - 1
            while j >= 0 and words[j] in self.adverbs:
                j -= 1
            if j < 0 or words[j] not in self.be | {"probably", "maybe", "not", "never", "'t"}:
                return False
            if nxt in _DETERMINERS or (b < len(toks) and text[toks[b][0]:toks[b][0] + 1].isupper()):
                return False
        if cat == "modal" and words[a:b] == ["'d"]:
            if nxt in {"had", "been", "gotten", "already", "never"} or nxt.endswith("ed"):
                return False
        return True

    def _dates(self, text: str, toks, day: dt.date | None):
        """Future- and past-time spans from explicit dates (header 3), as token ranges."""
        def span(m: re.Match) -> tuple[int, int]:
            idx = [i for i, (s, _) in enumerate(toks) if m.start() <= s < m.end()]
            return (idx[0], idx[-1] + 1) if idx else (0, 0)

        for m in _RELATIVE_WEEKDAY.finditer(text):
            a, b = span(m)
            if b > a:
                yield a, b, "past_time" if m.group(1).lower() == "last" else "future_time"
        for m in _IN_N.finditer(text):
            a, b = span(m)
            if b > a:
                yield a, b, "future_time"
        if day is None:
            return
        for rx, kind in _DATE_PATTERNS:
            for m in rx.finditer(text):
                when = _date_of(m, kind, day)
                a, b = span(m)
                if when is None or b <= a or when == day:
                    continue
                yield a, b, "future_time" if when > day else "past_time"

    def _segments(self, text: str, toks, spans: list[_Span]) -> list[int]:
        out, seg = [], 0
        prev_end = 0
        for i, (start, w) in enumerate(toks):
            if i and (_BREAK.search(text, prev_end, start) or w in self.segment_words):
                seg += 1
            out.append(seg)
            prev_end = start + len(w)
        for sp in spans:  # a multi-word cue never straddles two segments
            for i in range(sp.a + 1, sp.b):
                out[i] = out[sp.a]
        return out

    def _reason_region(self, text: str, toks, seg: list[int], spans: list[_Span]) -> list[bool]:
        """Tokens inside a reason or concessive clause (header 7)."""
        words = [w for _, w in toks]
        n = len(words)
        starts = {sp.a for sp in spans if "reason" in sp.cats}
        starts |= {i for i, w in enumerate(words) if w in self.reason_words}
        starts = {i for i in starts
                  if not (words[i] == "since" and _SINCE_TIME.match(text[toks[i][0]:]))
                  and not (words[i] == "while" and i + 1 < n and words[i + 1].endswith("ing"))}
        out = [False] * n
        for i in sorted(starts):
            fronted = i == 0 or all(w in self.openers for w in words[:i])
            j = i
            while j < n:
                if j > i and (words[j] in self.barrier_words or (fronted and seg[j] != seg[i]
                                                                 and words[j] not in self.reason_words)):
                    break
                if j > i and _semicolon(text, toks, j):
                    break
                out[j] = True
                j += 1
        return out

    def _barriers(self, text: str, toks, spans: list[_Span], reason: list[bool]) -> list[bool]:
        """barrier[i]: an operator before token i does not reach i or anything after it."""
        words = [w for _, w in toks]
        out = [False] * len(words)
        for i, w in enumerate(words):
            if w in self.barrier_words and not any(sp.a <= i < sp.b and sp.b - sp.a > 1 for sp in spans):
                out[i] = True
            elif i and _semicolon(text, toks, i):
                out[i] = True
            elif i and reason[i] and not reason[i - 1]:
                out[i] = True
        return out

    def _governor(self, s: "_Sentence", v: _Span, forms: set[str]) -> _Span | None:
        """The nearest operator before the verb in its scope; for a subject gerund, also after."""
        before = [o for o in s.ops if o.b <= v.a]
        if before:
            op = max(before, key=lambda o: o.b)
            if not _blocked(op.b, v.a + 1, s.barrier):
                return op
        if "ing" in forms and self._opens(v.a, s.words, s.seg):
            for op in (o for o in s.ops if o.a >= v.b):
                if not _blocked(v.b, op.a + 1, s.barrier):
                    return op
        return None

    def _opens(self, i: int, words: list[str], seg: list[int]) -> bool:
        """Whether only openers and determiners precede token ``i`` in its segment."""
        j = i - 1
        while j >= 0 and seg[j] == seg[i] and (words[j] in self.openers or words[j] in _DETERMINERS
                                               or words[j] in self.segment_words):
            j -= 1
        return j < 0 or seg[j] != seg[i]

    def _left(self, i: int, words: list[str], skip: frozenset[str]) -> int:
        """Index of the first word left of ``i`` not in ``skip`` (-1 at the sentence start)."""
        j = i - 1
        while j >= 0 and words[j] in skip:
            j -= 1
        return j

    def _subject(self, i: int, words: list[str], seg: list[int] | None = None) -> str:
        """The nearest pronoun before ``i`` in its segment: 'first', 'second' or 'other'; with no
        pronoun, 'first' (a subjectless plan: "Thinking of moving", "The plan is to ...")."""
        j = i - 1
        while j >= 0 and (seg is None or seg[j] == seg[i]):
            w = words[j]
            if w in self.first or w in self.first_possessive:
                return "first"
            if w in self.second:
                return "second"
            if w in self.third:
                return "other"
            j -= 1
        return "first"

    def _verb_subject(self, s: "_Sentence", v: _Span, op: _Span) -> str:
        """A pronoun right before the verb is its subject ("if you switch"); else the operator's
        (a subject gerund governed from after it has the speaker as its subject)."""
        if op.a >= v.b:
            return "first"
        j = self._left(v.a, s.words, self._skip)
        if j >= op.b:
            w = s.words[j]
            if w in self.first:
                return "first"
            if w in self.second:
                return "second"
            if w in self.third:
                return "other"
        return self._subject(op.a, s.words, s.seg)

    def _negated_op(self, s: "_Sentence", op: _Span) -> bool:
        if "'t" in s.words[op.a:op.b] and "modal" in op.cats:
            return True
        j = op.a - 1
        while j >= 0 and s.words[j] in self._skip:
            if s.words[j] in self.negations and "negation" in s.cat_at[j]:
                return True
            j -= 1
        return False

    def _negated_between(self, s: "_Sentence", op: _Span, v: _Span) -> bool:
        return self._negated_op(s, op) or any("negation" in s.cat_at[i] for i in range(op.b, v.a))

    def _abandoned(self, s: "_Sentence", v: _Span) -> bool:
        return any("abandon" in sp.cats and sp.b <= v.a and (s.seg[sp.a] == s.seg[v.a] or v.a - sp.b <= 3)
                   for sp in s.spans)

    def _speaker_attitude(self, s: "_Sentence", prep: int) -> bool:
        """Whether the preposition at ``prep`` closes a speaker's attitude ("I'm undecided about",
        "we're set on"): a first-person subject and a form of "be" within four words before it,
        and no backward-looking word ("congrats on", "proud of")."""
        window = s.words[max(0, prep - 5):prep]
        if any(w in self.retrospective for w in window):
            return False
        for i, w in enumerate(window[:-1]):
            if w in self.first and window[i + 1] in self.be:
                return True
        return False

    def _action_follows(self, s: "_Sentence", op: _Span) -> bool:
        """Whether a verb stands right after the operator: "-ing" after a deliberation cue
        ("considering scheduling"), the verb of "to" ("want to volunteer")."""
        j = op.b
        while j < len(s.words) and s.words[j] in self.adverbs:
            j += 1
        if j >= len(s.words) or s.cat_at[j] or _blocked(op.b, j + 1, s.barrier):
            return False
        w = s.words[j]
        if w in self.light_verbs:
            return False
        if s.words[op.b - 1] == "to":
            return w not in _DETERMINERS and w not in self.first | self.second | self.third \
                and not w.startswith("'")
        return len(w) > 4 and w.endswith("ing")


class _Sentence:
    """One sentence, analysed once: tokens, cue spans, segments, reason region, scope barriers."""

    def __init__(self, clf: ScopedLexiconClassifier, k: int, text: str, toks, day: dt.date | None):
        self.k = k
        self.words = [w for _, w in toks]
        n = len(self.words)
        self.spans = clf._spans(toks, text, day)
        self.cat_at: list[set[str]] = [set() for _ in range(n)]
        for sp in self.spans:
            for i in range(sp.a, sp.b):
                self.cat_at[i] |= sp.cats
        self.seg = clf._segments(text, toks, self.spans)
        self.reason = clf._reason_region(text, toks, self.seg, self.spans)
        self.barrier = clf._barriers(text, toks, self.spans, self.reason)
        self.question = text.rstrip(" \t\"')\u201d\u2019").endswith("?")
        self.negated = any("negation" in c for c in self.cat_at)
        self.pending = any("pending" in c for c in self.cat_at)
        self.pending_negated = self.negated and any(
            "pending" in c and w == "yet" for c, w in zip(self.cat_at, self.words))
        self.ops = [sp for sp in self.spans if sp.cats & set(OPERATORS)]
        self.verbs = [sp for sp in self.spans if any(c.startswith("verb:") for c in sp.cats)]
        self.governing: set[int] = set()  # ids of operators that govern a change verb
        self.cont = 0.0  # continuation / discourse evidence for other
        self.out: list[Evidence] = []
        self._w = clf.w

    def add(self, cls: str, weight: float, rule: str, sp: _Span | None, at: int,
            weak: bool = False) -> None:
        if self.reason[at]:
            weight *= self._w["reason_factor"]
            rule += " (in a reason clause)"
        if weight:
            self.out.append(Evidence(self.k, cls, weight, rule, sp.surface if sp else "", weak))

    def in_seg(self, i: int, cat: str) -> list[_Span]:
        return [sp for sp in self.spans if cat in sp.cats and self.seg[sp.a] == self.seg[i]]

    def future_near(self, i: int) -> bool:
        """A future-time expression in the scope of token ``i``: its sentence, with no scope
        barrier between them."""
        return any("future_time" in sp.cats and not _blocked(min(i, sp.a) + 1, max(i, sp.a) + 1, self.barrier)
                   for sp in self.spans)


def _name(op: _Span) -> str:
    cat = next(c for c in OPERATORS if c in op.cats)
    return f"{cat} '{op.surface}'"


def _blocked(start: int, end: int, barrier: list[bool]) -> bool:
    return any(barrier[i] for i in range(start, min(end, len(barrier))))


def _semicolon(text: str, toks, i: int) -> bool:
    prev = toks[i - 1]
    return ";" in text[prev[0] + len(prev[1]):toks[i][0]]


def _day(date: str | None) -> dt.date | None:
    if not date:
        return None
    try:
        return dt.date.fromisoformat(str(date)[:10])
    except ValueError:
        return None


def _date_of(m: re.Match, kind: str, day: dt.date) -> dt.date | None:
    """The calendar date a match names; with no year, the reading nearest the statement's date."""
    try:
        if kind == "iso":
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if kind == "md":
            month, d, year = _MONTHS[m.group(1).lower()], int(m.group(2)), m.group(3)
        else:
            d, month, year = int(m.group(1)), _MONTHS[m.group(2).lower()], m.group(3)
        if year:
            return dt.date(int(year), month, d)
        options = []
        for y in (day.year - 1, day.year, day.year + 1):
            try:
                options.append(dt.date(y, month, d))
            except ValueError:
                pass
        return min(options, key=lambda x: abs((x - day).days)) if options else None
    except (ValueError, KeyError):
        return None


@lru_cache(maxsize=4096)
def _evidence(clf: ScopedLexiconClassifier, text: str, day: dt.date | None) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    for k, (a, b) in enumerate(sentence_spans(text)):
        out += clf.sentence_evidence(k, text[a:b], day)
    return tuple(out)


@lru_cache(maxsize=4096)
def _scores(clf: ScopedLexiconClassifier, text: str, day: dt.date | None) -> tuple[tuple[str, float], ...]:
    """Revisionary classes sum their evidence (weak evidence: only the strongest piece per class);
    other takes its strongest sentence (header, "Scores")."""
    s = dict(clf.priors)
    other_by_sentence: dict[int, float] = {}
    weak: dict[str, float] = {}
    for e in _evidence(clf, text, day):
        if e.cls == OTHER:
            other_by_sentence[e.sentence] = other_by_sentence.get(e.sentence, 0.0) + e.weight
        elif e.weak:
            weak[e.cls] = max(weak.get(e.cls, 0.0), e.weight)
        else:
            s[e.cls] += e.weight
    for c, w in weak.items():
        s[c] += w
    s[OTHER] += max(other_by_sentence.values(), default=0.0)
    return tuple(s.items())
