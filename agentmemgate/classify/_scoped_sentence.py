"""One sentence as the offline classifier v2 reads it, before any rule runs: its cue spans, segments,
reason clauses, scope barriers and dates, and the questions the rules ask about them.

Steps 1 (which cue readings stand: ``DROPS``), 3 (dates as future or past time) and 7 (reason
clauses) of the header of ``evidence_cues.v2.toml`` are read here; ``scoped_rules`` holds the
rules of steps 2, 4, 5 and 6. ``Lexicon`` is what both read from the data file.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..text import MONTH_ABBREVIATIONS, MONTH_NUMBERS, WEEKDAYS, PhraseMatcher, nearest_date, tokens

OPERATORS = ("hedge", "epistemic", "deliberation", "intention", "modal", "conditional")
SOFT = frozenset(
    {"hedge", "epistemic", "deliberation"}
)  # a negation under these leaves the change uncertain
FORMS = ("base", "third", "ing", "past", "participle")
GOVERNABLE = frozenset({"base", "third", "ing"})  # the forms an operator governs
BARE = ("hedge", "deliberation", "intention", "modal")  # operators that count with no change verb
_BARE = frozenset(BARE)

# Word lists the rules read that evidence_cues.v2.toml does not list: a file's [syntax] table may
# list each (a new version should); for a file that does not, v2's, from scoped_words.v2.toml
# (released files are never edited, so v2's own words are kept beside it).
SCOPED_WORDS_V2 = Path(__file__).with_name("scoped_words.v2.toml")
V2_SYNTAX: dict[str, list[str]] = tomllib.loads(SCOPED_WORDS_V2.read_text("utf-8"))["syntax"]

_MONTHS = MONTH_NUMBERS | MONTH_ABBREVIATIONS
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_DATE_PATTERNS = [
    (re.compile(rf"\b({_MONTH_RE})\.?\s+{_DAY}\b{_YEAR}", re.I), "md"),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH_RE})\b\.?{_YEAR}", re.I), "dm"),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "iso"),
]
_BREAK = re.compile(r"[,;:()\u2014\u2013]|\s-\s")


class Lexicon:
    """What the rules read from the data file: weights, word lists and the cue matcher."""

    def __init__(self, data: dict, file_name: str):
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
                raise ValueError(f"{file_name}: change verb {row!r} needs {len(FORMS)} forms")
            for form, word in zip(FORMS, parts):
                entries.setdefault(f"verb:{form}", []).append(word)
                self.verb_lemma[" ".join(w for _, w in tokens(word))] = parts[0]
        self.matcher = PhraseMatcher(entries)
        words = {k: syn.get(k, v) for k, v in V2_SYNTAX.items()}
        self.segment_words = frozenset(syn["segment_words"])
        self.reason_words = frozenset(w for w in syn["reason"] if " " not in w)
        self.barrier_words = frozenset(syn["scope_barrier"])
        self.prospective = frozenset(syn["prospective"])
        self.retrospective = frozenset(syn["retrospective"])
        self.light_verbs = frozenset(syn["light_verbs"])
        self.not_acquired = frozenset(syn["not_acquired"])
        self.activity = frozenset(data["change_verbs"].get("activity", []))
        self.be = frozenset(syn["be"])
        self.have = frozenset(syn["have"])
        self.first = frozenset(syn["first_person"])
        self.first_possessive = frozenset(syn["first_possessive"])
        self.second = frozenset(syn["second_person"])
        self.third = frozenset(syn["other_subject"])
        self.adverbs = frozenset(syn["adverbs"])
        self.openers = frozenset(syn["openers"])
        self.negations = frozenset(w for w in cues["negation"] if " " not in w)
        self.determiners = frozenset(words["determiners"])
        self.negator_subjects = frozenset(words["negator_subjects"])
        self.recall_modals = frozenset(words["recall_modals"])
        self.past_be = frozenset(words["past_be"])
        self.month_may_before = frozenset(words["month_may_before"])
        self.going_to_after = self.be | frozenset(words["going_to_after"])
        self.had_after_d = frozenset(words["had_after_d"])
        self.articles = frozenset(words["articles"])
        self.skip = self.be | self.have | frozenset(words["do"]) | self.adverbs | self.negations
        self.weekday_past = frozenset(words["weekday_past"])
        self.relative_weekday = re.compile(
            rf"\b({'|'.join(words['weekday_future'] + words['weekday_past'])})\s+(?:{'|'.join(WEEKDAYS)})\b",
            re.I,
        )
        self.in_n = re.compile(
            rf"\bin\s+(?:\d+|{'|'.join(words['in_n_counts'])})"
            rf"\s+(?:{'|'.join(u + 's?' for u in words['in_n_units'])})\b",
            re.I,
        )
        self.since_time = re.compile(
            rf"^since\s+(?:{_MONTH_RE}|\d|{'|'.join(words['since_time'])}"
            rf"|the\s+\w+\s+of|{'|'.join(WEEKDAYS)})",
            re.I,
        )


@dataclass
class Span:
    """A cue (or a date) over tokens ``a`` to ``b``, with every category its words belong to."""

    a: int
    b: int
    cats: set[str]
    surface: str


# -- step 1: cue readings a word list cannot tell apart ----------------------------------------
class Found:
    """One cue the matcher found (tokens ``a`` to ``b``), before step 1 decides whether its
    reading stands; ``prev`` and ``next`` are the words around it ("" at the sentence's ends)."""

    __slots__ = ("lex", "cat", "a", "b", "words", "text", "toks", "prev", "next")

    def __init__(
        self,
        lex: Lexicon,
        cat: str,
        a: int,
        b: int,
        words: list[str],
        text: str,
        toks: list[tuple[int, str]],
    ):
        self.lex, self.cat, self.a, self.b, self.words, self.text, self.toks = (
            lex,
            cat,
            a,
            b,
            words,
            text,
            toks,
        )
        self.prev = words[a - 1] if a > 0 else ""
        self.next = words[b] if b < len(words) else ""


def may_the_month(f: Found) -> bool:
    """'may' before or after a number, or after [month_may_before] ("in May"): the month."""
    return (
        f.words[f.a] == "may"
        and f.b == f.a + 1
        and (f.next[:1].isdigit() or f.prev[:1].isdigit() or f.prev in f.lex.month_may_before)
    )


def going_to_a_place(f: Found) -> bool:
    """'going to' is the future only after a form of "be" (or [going_to_after]), and not before a
    determiner or a capitalized name ("going to the gym", "going to Boston")."""
    if f.words[f.a : f.b] != ["going", "to"]:
        return False
    j = f.a - 1
    while j >= 0 and f.words[j] in f.lex.adverbs:
        j -= 1
    if j < 0 or f.words[j] not in f.lex.going_to_after:
        return True
    return f.next in f.lex.determiners or (
        f.b < len(f.toks) and f.text[f.toks[f.b][0] : f.toks[f.b][0] + 1].isupper()
    )


def d_as_had(f: Found) -> bool:
    """ "'d" before a past form ([had_after_d] or a word in -ed) is "had", not a modal."""
    return (
        f.cat == "modal"
        and f.words[f.a : f.b] == ["'d"]
        and (f.next in f.lex.had_after_d or f.next.endswith("ed"))
    )


def get_a_without_acquiring(f: Found) -> bool:
    """'get a' + a [not_acquired] word acquires nothing ("getting a bit tired")."""
    return (
        f.cat.startswith("verb:")
        and f.words[f.b - 1] in f.lex.articles
        and f.next in f.lex.not_acquired
    )


def past_form_as_adjective(f: Found) -> bool:
    """A past form after a determiner is an adjective ("my left hand")."""
    return f.cat.startswith("verb:past") and f.prev in f.lex.determiners


# Step 1, in the header's order: a found cue whose reading one of these drops is not a cue.
DROPS: tuple[Callable[[Found], bool], ...] = (
    may_the_month,
    going_to_a_place,
    d_as_had,
    get_a_without_acquiring,
    past_form_as_adjective,
)


def cue_spans(
    lex: Lexicon, toks: list[tuple[int, str]], text: str, day: dt.date | None
) -> list[Span]:
    """Longest non-overlapping cue spans (equal spans keep all their categories), plus dates."""
    words = [w for _, w in toks]
    found: dict[tuple[int, int], Span] = {}
    for a, b, cat, surface in lex.matcher.find(toks):
        f = Found(lex, cat, a, b, words, text, toks)
        for drop in DROPS:
            if drop(f):
                break
        else:
            sp = found.setdefault((a, b), Span(a, b, set(), surface))
            sp.cats.add(cat)
    for a, b, cat in date_spans(lex, text, toks, day):
        sp = found.setdefault((a, b), Span(a, b, set(), " ".join(words[a:b])))
        sp.cats = {cat}
    taken = [False] * len(words)
    out = []
    for sp in sorted(found.values(), key=lambda s: (-(s.b - s.a), s.a)):
        if any(taken[sp.a : sp.b]):
            continue
        for i in range(sp.a, sp.b):
            taken[i] = True
        out.append(sp)
    return sorted(out, key=lambda s: s.a)


# -- step 3: dates -------------------------------------------------------------------------------
def date_spans(lex: Lexicon, text: str, toks, day: dt.date | None):
    """Future- and past-time spans from explicit dates, as token ranges."""

    def span(m: re.Match) -> tuple[int, int]:
        idx = [i for i, (s, _) in enumerate(toks) if m.start() <= s < m.end()]
        return (idx[0], idx[-1] + 1) if idx else (0, 0)

    for m in lex.relative_weekday.finditer(text):
        a, b = span(m)
        if b > a:
            yield a, b, "past_time" if m.group(1).lower() in lex.weekday_past else "future_time"
    for m in lex.in_n.finditer(text):
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
        return nearest_date(day, month, d)
    except (ValueError, KeyError):
        return None


# -- segments, step 7 (reason clauses) and scope barriers ------------------------------------------
def segments(lex: Lexicon, text: str, toks, spans: list[Span]) -> list[int]:
    out, seg = [], 0
    prev_end = 0
    for i, (start, w) in enumerate(toks):
        if i and (_BREAK.search(text, prev_end, start) or w in lex.segment_words):
            seg += 1
        out.append(seg)
        prev_end = start + len(w)
    for sp in spans:  # a multi-word cue never straddles two segments
        for i in range(sp.a + 1, sp.b):
            out[i] = out[sp.a]
    return out


def reason_region(lex: Lexicon, text: str, toks, seg: list[int], spans: list[Span]) -> list[bool]:
    """Tokens inside a reason or concessive clause ("since" before a time and "while" before an
    -ing form open none)."""
    words = [w for _, w in toks]
    n = len(words)
    starts = {sp.a for sp in spans if "reason" in sp.cats}
    starts |= {i for i, w in enumerate(words) if w in lex.reason_words}
    starts = {
        i
        for i in starts
        if not (words[i] == "since" and lex.since_time.match(text[toks[i][0] :]))
        and not (words[i] == "while" and i + 1 < n and words[i + 1].endswith("ing"))
    }
    out = [False] * n
    for i in sorted(starts):
        fronted = i == 0 or all(w in lex.openers for w in words[:i])
        j = i
        while j < n:
            if j > i and (
                words[j] in lex.barrier_words
                or (fronted and seg[j] != seg[i] and words[j] not in lex.reason_words)
            ):
                break
            if j > i and _semicolon(text, toks, j):
                break
            out[j] = True
            j += 1
    return out


def barriers(lex: Lexicon, text: str, toks, spans: list[Span], reason: list[bool]) -> list[bool]:
    """barrier[i]: an operator before token i does not reach i or anything after it."""
    words = [w for _, w in toks]
    out = [False] * len(words)
    for i, w in enumerate(words):
        if w in lex.barrier_words and not any(sp.a <= i < sp.b and sp.b - sp.a > 1 for sp in spans):
            out[i] = True
        elif i and _semicolon(text, toks, i):
            out[i] = True
        elif i and reason[i] and not reason[i - 1]:
            out[i] = True
    return out


def verb_forms(v: Span) -> set[str]:
    return {c.split(":")[1] for c in v.cats if c.startswith("verb:")}


class Sentence:
    """One sentence, analysed once: tokens, cue spans, segments, reason region, scope barriers, the
    operator governing each change verb; and the evidence the rules find in it (``out``)."""

    def __init__(self, lex: Lexicon, k: int, text: str, toks, day: dt.date | None):
        self.lex = lex
        self.k = k
        self.words = [w for _, w in toks]
        n = len(self.words)
        self.spans = cue_spans(lex, toks, text, day)
        self.cat_at: list[set[str]] = [set() for _ in range(n)]
        for sp in self.spans:
            for i in range(sp.a, sp.b):
                self.cat_at[i] |= sp.cats
        self.seg = segments(lex, text, toks, self.spans)
        self.reason = reason_region(lex, text, toks, self.seg, self.spans)
        self.barrier = barriers(lex, text, toks, self.spans, self.reason)
        self.question = text.rstrip(" \t\"')\u201d\u2019").endswith("?")
        self.negated = any("negation" in c for c in self.cat_at)
        self.pending = any("pending" in c for c in self.cat_at)
        self.pending_negated = self.negated and any(
            "pending" in c and w == "yet" for c, w in zip(self.cat_at, self.words)
        )
        self.ops = [sp for sp in self.spans if sp.cats & set(OPERATORS)]
        self.verbs = [sp for sp in self.spans if any(c.startswith("verb:") for c in sp.cats)]
        self.governors: dict[int, Span] = {}  # id(change verb) -> the operator that governs it
        for v in self.verbs:
            forms = verb_forms(v)
            if forms & GOVERNABLE and (op := self.governor(v, forms)) is not None:
                self.governors[id(v)] = op
        self.governing = {id(op) for op in self.governors.values()}
        # operators that govern no change verb and count alone, each with whether a continuation
        # or discourse formula follows it (step 4)
        self.free_ops = [
            (op, self.continued(op))
            for op in self.ops
            if id(op) not in self.governing and op.cats & _BARE
        ]
        self.op_segs = {self.seg[o.a] for o in self.ops}
        self.out: list = []  # the evidence found so far (scoped_rules.Evidence)

    def in_seg(self, i: int, cat: str) -> list[Span]:
        return [sp for sp in self.spans if cat in sp.cats and self.seg[sp.a] == self.seg[i]]

    def future_near(self, i: int) -> bool:
        """A future-time expression in the scope of token ``i``: its sentence, with no scope
        barrier between them."""
        return any(
            "future_time" in sp.cats
            and not blocked(min(i, sp.a) + 1, max(i, sp.a) + 1, self.barrier)
            for sp in self.spans
        )

    def governor(self, v: Span, forms: set[str]) -> Span | None:
        """The nearest operator before the verb in its scope; for a subject gerund, also after."""
        before = [o for o in self.ops if o.b <= v.a]
        if before:
            op = max(before, key=lambda o: o.b)
            if not blocked(op.b, v.a + 1, self.barrier):
                return op
        if "ing" in forms and self.opens(v.a):
            for op in (o for o in self.ops if o.a >= v.b):
                if not blocked(v.b, op.a + 1, self.barrier):
                    return op
        return None

    def opens(self, i: int) -> bool:
        """Whether only openers and determiners precede token ``i`` in its segment."""
        words, seg, lex = self.words, self.seg, self.lex
        j = i - 1
        while (
            j >= 0
            and seg[j] == seg[i]
            and (
                words[j] in lex.openers
                or words[j] in lex.determiners
                or words[j] in lex.segment_words
            )
        ):
            j -= 1
        return j < 0 or seg[j] != seg[i]

    def left(self, i: int, skip: frozenset[str]) -> int:
        """Index of the first word left of ``i`` not in ``skip`` (-1 at the sentence start)."""
        j = i - 1
        while j >= 0 and self.words[j] in skip:
            j -= 1
        return j

    def subject(self, i: int) -> str:
        """The nearest pronoun before ``i`` in its segment: 'first', 'second' or 'other'; with no
        pronoun, 'first' (a subjectless plan: "Thinking of moving", "The plan is to ...")."""
        lex, words, seg = self.lex, self.words, self.seg
        j = i - 1
        while j >= 0 and seg[j] == seg[i]:
            w = words[j]
            if w in lex.first or w in lex.first_possessive:
                return "first"
            if w in lex.second:
                return "second"
            if w in lex.third:
                return "other"
            j -= 1
        return "first"

    def verb_subject(self, v: Span, op: Span) -> str:
        """A pronoun right before the verb is its subject ("if you switch"); else the operator's
        (a subject gerund governed from after it has the speaker as its subject)."""
        if op.a >= v.b:
            return "first"
        lex = self.lex
        j = self.left(v.a, lex.skip)
        if j >= op.b:
            w = self.words[j]
            if w in lex.first:
                return "first"
            if w in lex.second:
                return "second"
            if w in lex.third:
                return "other"
        return self.subject(op.a)

    def operator_subject(self, op: Span) -> str:
        """An operator's subject, or the pronoun right after it ("Maybe you have ...")."""
        subj = self.subject(op.a)
        if (
            subj == "first"
            and op.b < len(self.words)
            and self.words[op.b] in self.lex.second | self.lex.third
        ):
            subj = "second" if self.words[op.b] in self.lex.second else "other"
        return subj

    def negated_op(self, op: Span) -> bool:
        if "'t" in self.words[op.a : op.b] and "modal" in op.cats:
            return True
        j = op.a - 1
        while j >= 0 and self.words[j] in self.lex.skip:
            if self.words[j] in self.lex.negations and "negation" in self.cat_at[j]:
                return True
            j -= 1
        return False

    def negated_between(self, op: Span, v: Span) -> bool:
        return self.negated_op(op) or any("negation" in self.cat_at[i] for i in range(op.b, v.a))

    def abandoned(self, v: Span) -> bool:
        return any(
            "abandon" in sp.cats
            and sp.b <= v.a
            and (self.seg[sp.a] == self.seg[v.a] or v.a - sp.b <= 3)
            for sp in self.spans
        )

    def continued(self, op: Span) -> bool:
        """A [cues] continuation or discourse formula within four words after the operator."""
        return any(
            op.b <= sp.a <= op.b + 4
            and sp.cats & {"continuation", "discourse"}
            and not blocked(op.b, sp.a, self.barrier)
            for sp in self.spans
        )

    def speaker_attitude(self, prep: int) -> bool:
        """Whether the preposition at ``prep`` closes a speaker's attitude ("I'm undecided about",
        "we're set on"): a first-person subject and a form of "be" within four words before it,
        and no backward-looking word ("congrats on", "proud of")."""
        window = self.words[max(0, prep - 5) : prep]
        if any(w in self.lex.retrospective for w in window):
            return False
        for i, w in enumerate(window[:-1]):
            if w in self.lex.first and window[i + 1] in self.lex.be:
                return True
        return False

    def action_follows(self, op: Span) -> bool:
        """Whether a verb stands right after the operator: "-ing" after a deliberation cue
        ("considering scheduling"), the verb of "to" ("want to volunteer")."""
        lex, words = self.lex, self.words
        j = op.b
        while j < len(words) and words[j] in lex.adverbs:
            j += 1
        if j >= len(words) or self.cat_at[j] or blocked(op.b, j + 1, self.barrier):
            return False
        w = words[j]
        if w in lex.light_verbs:
            return False
        if words[op.b - 1] == "to":
            return (
                w not in lex.determiners
                and w not in lex.first | lex.second | lex.third
                and not w.startswith("'")
            )
        return len(w) > 4 and w.endswith("ing")


def blocked(start: int, end: int, barrier: list[bool]) -> bool:
    return any(barrier[i] for i in range(start, min(end, len(barrier))))


def _semicolon(text: str, toks, i: int) -> bool:
    prev = toks[i - 1]
    return ";" in text[prev[0] + len(prev[1]) : toks[i][0]]
