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

from ..corpora._phrases import PhraseMatcher, tokens
from ..corpora.prefilter import split_sentences
from ..corpora.statements import Statement
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
                self.verb_lemma[word] = parts[0]
        self.matcher = PhraseMatcher(entries)
        self.segment_words = frozenset(syn["segment_words"])
        self.reason_words = frozenset(w for w in syn["reason"] if " " not in w)
        self.barrier_words = frozenset(syn["scope_barrier"])
        self.prospective = frozenset(syn["prospective"])
        self.be = frozenset(syn["be"])
        self.have = frozenset(syn["have"])
        self.first = frozenset(syn["first_person"])
        self.second = frozenset(syn["second_person"])
        self.third = frozenset(syn["other_subject"])
        self.adverbs = frozenset(syn["adverbs"])
        self.openers = frozenset(syn["openers"])
        self.negations = frozenset(w for w in cues["negation"] if " " not in w)
        self._skip = self.be | self.have | _DO | self.adverbs | self.negations

    # -- the classifier interface ------------------------------------------------------------
    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        s = self.scores(statement.text, statement.date)
        top = max(s.values())
        exp = {c: math.exp((v - top) / self.temperature) for c, v in s.items()}
        return Distribution(probs=exp, method="lexicon")

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
        words = [w for _, w in toks]
        n = len(words)
        spans = self._spans(toks, text, day)
        cat_at: list[set[str]] = [set() for _ in range(n)]
        for sp in spans:
            for i in range(sp.a, sp.b):
                cat_at[i] |= sp.cats
        seg = self._segments(text, toks, spans)
        reason = self._reason_region(text, toks, seg, spans)
        barrier = self._barriers(text, toks, spans, reason)
        question = text.rstrip(" \t\"')\u201d\u2019").endswith("?")
        negated_sentence = any("negation" in c for c in cat_at)
        pending_sentence = any("pending" in c for c in cat_at)

        ops = [sp for sp in spans if sp.cats & set(OPERATORS)]
        verbs = [sp for sp in spans if any(c.startswith("verb:") for c in sp.cats)]
        out: list[Evidence] = []

        def add(cls: str, weight: float, rule: str, sp: _Span | None, at: int) -> None:
            if reason[at]:
                weight *= self.w["reason_factor"]
                rule += " (in a reason clause)"
            if weight:
                out.append(Evidence(k, cls, weight, rule, sp.surface if sp else ""))

        def in_seg(i: int, cat: str) -> list[_Span]:
            return [sp for sp in spans if cat in sp.cats and seg[sp.a] == seg[i]]

        def future_near(i: int) -> bool:
            return bool(in_seg(i, "future_time"))

        governing: set[int] = set()  # ids of operators that govern a verb
        for v in verbs:
            forms = {c.split(":")[1] for c in v.cats if c.startswith("verb:")}
            op = self._governor(v, ops, words, barrier, forms)
            if op is not None and forms & {"base", "third", "ing"}:
                governing.add(id(op))
                if self._subject(op.a, words) == "second":
                    continue
                if self._abandoned(v, spans, seg):
                    add(OTHER, self.w["declined"], "declined change", v, v.a)
                elif self._negated_between(op, v, words, cat_at) and not op.cats & set(SOFT):
                    add(OTHER, self.w["declined"], "declined change", v, v.a)
                else:
                    add(SPEC, self.w["governed_change"], f"change under {_name(op)}", v, v.a)
                continue
            if forms & {"past", "participle"}:
                out += self._past(k, v, words, spans, seg, reason, pending_sentence, add, future_near)
                continue
            if self._abandoned(v, spans, seg):
                add(OTHER, self.w["declined"], "declined change", v, v.a)
                continue
            before = self._left(v.a, words, self.adverbs)
            if "ing" in forms and before >= 0 and words[before] in self.be and words[before] != "been":
                w = self.w["scheduled_change"] if future_near(v.a) else self.w["futurate"]
                add(SPEC, max(w, self.w["futurate"]), "futurate progressive", v, v.a)
            elif "ing" in forms and before >= 0 and words[before] in self.prospective:
                add(SPEC, self.w["prospective_gerund"], "prospective gerund", v, v.a)
            elif future_near(v.a):
                add(SPEC, self.w["scheduled_change"], "change with a future time", v, v.a)
            elif in_seg(v.a, "present_state") or any(words[i] == "now" for i in range(n) if seg[i] == seg[v.a]):
                add(DONE, self.w["present_state"], "present state", v, v.a)

        # Clauses with no change verb (header 4).
        verb_segs = {seg[v.a] for v in verbs}
        bare = 0.0
        cont = 0.0
        for op in ops:
            if id(op) in governing or op.cats <= {"epistemic", "conditional"}:
                continue
            if op.cats & {"epistemic", "conditional"} and not op.cats & {"hedge", "deliberation",
                                                                         "intention", "modal"}:
                continue
            subj = self._subject(op.a, words)
            after = [sp for sp in spans if sp.a >= op.b and sp.a <= op.b + 4
                     and sp.cats & {"continuation", "discourse"} and not _blocked(op.b, sp.a, barrier)]
            if after:
                if subj != "second":
                    cont = max(cont, self.w["continuation"])
                continue
            w = self.w["bare_operator"] * (1.0 if op.cats & {"hedge", "deliberation"} else self.w["modal_weight"])
            if self._negated_op(op, words, cat_at) and not op.cats & set(SOFT):
                continue
            w *= {"second": 0.0, "other": self.w["other_subject_weight"]}.get(subj, 1.0)
            if reason[op.a]:
                w *= self.w["reason_factor"]
            bare = max(bare, w)
        if bare:
            out.append(Evidence(k, SPEC, bare, "operator with no change verb", ""))
        for sp in spans:
            if "discourse" in sp.cats and not any(o.a <= sp.a <= o.b + 4 for o in ops):
                cont = max(cont, self.w["continuation"])
        if "pending" in str(cat_at) and negated_sentence:
            for sp in spans:
                if sp.surface == "yet" and seg[sp.a] not in verb_segs and any(
                        "negation" in cat_at[i] for i in range(n) if seg[i] == seg[sp.a]):
                    add(SPEC, self.w["pending_bare"], "negation with 'yet'", sp, sp.a)
                    break
        for sp in spans:
            if "completion_idiom" in sp.cats and not future_near(sp.a):
                add(DONE, self.w["completion_idiom"], "completion idiom", sp, sp.a)
        if not verbs:
            op_segs = {seg[o.a] for o in ops}
            for sp in spans:
                if "past_time" in sp.cats and seg[sp.a] not in op_segs and not future_near(sp.a):
                    add(DONE, self.w["past_time_alone"], "past time, no change verb", sp, sp.a)
                    break
            for sp in spans:
                if sp.surface == "now" and seg[sp.a] not in op_segs and not question and not future_near(sp.a):
                    add(DONE, self.w["now_state"], "'now' in a present-tense clause", sp, sp.a)
                    break
        # Corrections (header 5).
        for sp in spans:
            if "correction" in sp.cats:
                add(CORR, self.w["correction"], "corrective marker", sp, sp.a)
        weak = [sp for sp in spans if "correction_weak" in sp.cats]
        if weak:
            w = self.w["correction_weak_negated"] if negated_sentence else self.w["correction_weak"]
            add(CORR, w, "weak corrective marker" + (" with a negation" if negated_sentence else ""),
                weak[0], weak[0].a)
        # Other (header 6).
        other = sum(self.w["other_cue"] * (self.w["reason_factor"] if reason[sp.a] else 1.0)
                    for sp in spans if sp.cats & {"preference", "habit", "request", "gratitude"})
        speculates = any(e.cls == SPEC for e in out)
        if question and not speculates:
            other += self.w["question"]
        other = min(self.w["other_cap"], other)
        other = max(other, cont)
        if other:
            out.append(Evidence(k, OTHER, other, "non-revisionary cues" + (" (question)" if question and not speculates else ""), ""))
        return out

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
        if cat in ("intention",) and words[a:b] == ["going", "to"]:
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

    def _governor(self, v: _Span, ops: list[_Span], words: list[str], barrier: list[bool],
                  forms: set[str]) -> _Span | None:
        """The nearest operator before the verb in its scope; for a subject gerund, also after."""
        for op in sorted((o for o in ops if o.b <= v.a), key=lambda o: -o.b):
            if not _blocked(op.b, v.a + 1, barrier):
                return op
            break
        if "ing" in forms and self._opens(v.a, words):
            for op in (o for o in ops if o.a >= v.b):
                if not _blocked(v.b, op.a + 1, barrier):
                    return op
        return None

    def _opens(self, i: int, words: list[str]) -> bool:
        j = i - 1
        while j >= 0 and (words[j] in self.openers or words[j] in _DETERMINERS):
            j -= 1
        return j < 0

    def _left(self, i: int, words: list[str], skip: frozenset[str]) -> int:
        """Index of the first word left of ``i`` not in ``skip`` (-1 at the sentence start)."""
        j = i - 1
        while j >= 0 and words[j] in skip:
            j -= 1
        return j

    def _subject(self, i: int, words: list[str]) -> str:
        """'first' (or none: a subjectless plan), 'second' or 'other' for the word before ``i``."""
        j = self._left(i, words, self._skip)
        if j < 0 or words[j] in self.first or words[j] in self.openers or words[j] in self.segment_words:
            return "first"
        if words[j] in self.second:
            return "second"
        return "other"

    def _negated_op(self, op: _Span, words: list[str], cat_at: list[set[str]]) -> bool:
        if "'t" in words[op.a:op.b] and op.cats & {"modal"}:
            return True
        j = op.a - 1
        while j >= 0 and words[j] in self._skip:
            if words[j] in self.negations and "negation" in cat_at[j]:
                return True
            j -= 1
        return False

    def _negated_between(self, op: _Span, v: _Span, words: list[str], cat_at: list[set[str]]) -> bool:
        if self._negated_op(op, words, cat_at):
            return True
        return any("negation" in cat_at[i] for i in range(op.b, v.a))

    def _abandoned(self, v: _Span, spans: list[_Span], seg: list[int]) -> bool:
        return any("abandon" in sp.cats and sp.b <= v.a and seg[sp.a] == seg[v.a] or
                   "abandon" in sp.cats and sp.b <= v.a and v.a - sp.b <= 3 for sp in spans)

    def _past(self, k, v, words, spans, seg, reason, pending_sentence, add, future_near):
        """Past and participle readings (header 2, last two bullets)."""
        j = v.a - 1
        negated = have = modal_have = False
        while j >= 0 and words[j] in self._skip:
            if words[j] in self.negations:
                negated = True
            if words[j] in self.have:
                have = True
                if j > 0 and words[j - 1] in {"might", "may", "must", "could", "would", "should",
                                              "'d", "probably"}:
                    modal_have = True
            j -= 1
        subject = words[j] if j >= 0 else ""
        if subject in _NEGATOR_SUBJECTS:
            negated = True
        if negated:
            if have or pending_sentence:
                add(SPEC, self.w["pending_change"], "negated completion: not yet", v, v.a)
            else:
                add(OTHER, self.w["declined"], "negated past: no change", v, v.a)
            return []
        if modal_have:
            add(OTHER, self.w["hedged_recall"], "hedged recall (modal + have)", v, v.a)
            return []
        if future_near(v.a):
            add(SPEC, self.w["scheduled_change"], "past form beside a future time: scheduled", v, v.a)
            return []
        if j < 0 or subject in self.first or subject in self.openers or subject in self.segment_words \
                or seg[j] != seg[v.a]:
            bonus = sum(1 for sp in spans if seg[sp.a] == seg[v.a]
                        and sp.cats & {"completion_adverb", "past_time"})
            w = self.w["completed_change"] + self.w["completion_bonus"] * min(2, bonus)
            add(DONE, w, "past change, first person" if subject in self.first else "past change", v, v.a)
        else:
            add(DONE, self.w["completed_other_subject"], "past change, another subject", v, v.a)
        return []


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
    for k, (a, b) in enumerate(split_sentences(text)):
        out += clf.sentence_evidence(k, text[a:b], day)
    return tuple(out)


@lru_cache(maxsize=4096)
def _scores(clf: ScopedLexiconClassifier, text: str, day: dt.date | None) -> tuple[tuple[str, float], ...]:
    """Revisionary classes sum their evidence; other takes its strongest sentence (header)."""
    s = dict(clf.priors)
    other_by_sentence: dict[int, float] = {}
    for e in _evidence(clf, text, day):
        if e.cls == OTHER:
            other_by_sentence[e.sentence] = other_by_sentence.get(e.sentence, 0.0) + e.weight
        else:
            s[e.cls] += e.weight
    s[OTHER] += max(other_by_sentence.values(), default=0.0)
    return tuple(s.items())
