"""The offline realism checks: what string rules can honestly say about a conversation's form.

A lexicon judge cannot read for naturalness, so it does not claim to. It makes named checks it
can really make (``OFFLINE_REALISM_CHECKS``), each with its own verdict and a rationale that
points at the turn: whether replies take up their questions, whether references to earlier talk
and to dates are true, whether the same text repeats across the dataset, whether a turn's frames
contradict each other or the turn they answer, and whether tense agrees with the time words next
to it. Cues come from ``realism.v1.toml``, written independently of the offline renderer.

Repetition across the dataset needs the other arcs: ``RealismCorpus`` counts them once
(``HeuristicJudge.prepare``); without a corpus only repeats within the arc are checked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ...text import MONTH_NUMBERS, MONTHS, WEEKDAYS, nearest_date
from ...text import sentences as split_sentences
from ._lexicon import Lexicon, load_lexicon, normalize
from .questions import ChatSession, RealismQuestion
from .verdicts import CriterionVerdict

REALISM_LEXICON_PATH = Path(__file__).with_name("realism.v1.toml")

# Named checks of the offline judge (the LLM judges keep "natural" and "motivated").
OFFLINE_REALISM_CHECKS: dict[str, str] = {
    "qa_relevance": "Each assistant reply to a question shares content words with that question, "
    "and not two or more words more with another question of the conversation "
    "(lexical).",
    "time_references": "'Last time', 'like I said', 'still pending' point to an earlier session; "
    "weekdays match their dates; scheduled dates lie ahead of the session; a "
    "reported change is not dated before the plan (or the previous session).",
    "repetition": "No turn repeats within the conversation; no turn of 6+ words is shared with 2 "
    "or more other conversations; no assistant sentence occurs more than 8 times in "
    "the dataset.",
    "frame_consistency": "No turn combines contradictory frames (a firm decision 'one of these "
    "days', decided and undecided at once, 'no date' with a date), and no "
    "reply treats a decided plan as open, an open plan as done, or a done "
    "change as still ahead.",
    "tense_agreement": "No 'since <time>' without the perfect, no present perfect with a finished "
    "time ('I've switched yesterday'), no future with a past time or a past "
    "change with a future time in one clause.",
    "chat_form": "Turns have chat length (1-150 user words, 1-350 assistant words) and contain no "
    "placeholder or template text.",
    "motivated": "A reason cue near the plan statement, or a topic it shares with the user's "
    "earlier turns (lexical).",
}

MAX_USER_WORDS = 150
MAX_ASSISTANT_WORDS = 350
REPEATED_TURN_MIN_WORDS = 6
REPEATED_TURN_ARCS = 3  # a turn in this many conversations or more is a repeat
SENTENCE_MIN_WORDS = 1  # every sentence counts, "Got it." included
SENTENCE_LIMIT = 8  # an assistant sentence may occur at most this often in the dataset

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|because|so|while|although|though|then)\s")
_DATE = re.compile(
    r"(?:(?P<wd>"
    + "|".join(WEEKDAYS)
    + r"),?\s+(?:the\s+)?)?(?P<mon>"
    + "|".join(MONTHS)
    + r")\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b"
)
# A turn has a ``_DATE`` match exactly when it has one of this (the weekday before the month is
# optional), which starts with a month's first letter and so is found by a quick character scan.
_HAS_DATE = re.compile(r"(?:" + "|".join(MONTHS) + r")\s+\d{1,2}(?:st|nd|rd|th)?\b")
_DAYS = "|".join(WEEKDAYS)
_TOMORROW = re.compile(rf"\btomorrow,? (?:on )?({_DAYS})\b|\b({_DAYS}),? tomorrow\b")
_ON_WEEKDAY = re.compile(rf"\bon (?:{_DAYS})\b")
_NUM = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


# The cue categories a check needs before it looks closer (``Lexicon.has_any``: one scan).
_REFERENCE_CUES = ("back_reference", "still_open")
_FRAME_CUES = (
    "firm_decision",
    "undecided",
    "indefinite_time",
    "no_date",
    "future",
    "change_done",
    "abandon",
    "still_open",
)
_TENSE_CUES = ("since_time", "past_time", "future_time", "present_perfect")


def realism_lexicon() -> Lexicon:
    return load_lexicon(REALISM_LEXICON_PATH)


# -- text helpers ----------------------------------------------------------------------------------
def sentences(text: str) -> list[str]:
    return list(_sentences(text))


@lru_cache(maxsize=65536)
def _sentences(text: str) -> tuple[str, ...]:
    """Ends after . ! ? and a space only: no line breaks, titles or closing quotes."""
    return tuple(split_sentences(text, closers="", newlines=False, abbreviations=False))


def clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE.split(normalize(sentence)) if c.strip()]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Crude suffix stripping so 'tab' and 'tabs', 'come' and 'coming', 'run' and 'running' meet."""
    for suffix in ("ing", "ed", "es", "s", "e", "y"):
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]
            return word
    return word


def content_stems(text: str, lex: Lexicon) -> frozenset[str]:
    return _content_stems(text, lex.stopwords)


@lru_cache(maxsize=65536)
def _content_stems(text: str, stopwords: frozenset[str]) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in _WORD.findall(normalize(text))
        if w not in stopwords and len(w) > 2 and not w.isdigit()
    )


def question_part(text: str, lex: Lexicon | None = None) -> str:
    """The sentences of a turn that ask something (end in '?'), phatic ('Got a minute?') and
    rhetorical ones ('Remember what I was weighing up?') aside: they ask for no answer. A question
    with fewer than two content words ('How do I fix it?') brings the sentence before it along."""
    return _question_part(text, lex or realism_lexicon())


@lru_cache(maxsize=65536)
def _question_part(text: str, lex: Lexicon) -> str:
    sents = sentences(text)
    out = []
    for i, s in enumerate(sents):
        if not s.rstrip().endswith("?") or lex.has("phatic", s) or lex.has("rhetorical", s):
            continue
        if i and len(content_stems(s, lex)) < 2 and not sents[i - 1].rstrip().endswith("?"):
            out.append(sents[i - 1])
        out.append(s)
    return " ".join(out)


def qa_overlap(question: str, reply: str, lex: Lexicon | None = None) -> set[str]:
    """Content-word stems a reply shares with the question part of the turn before it."""
    lex = lex or realism_lexicon()
    return content_stems(question_part(question, lex), lex) & content_stems(reply, lex)


@lru_cache(maxsize=65536)  # the corpus count and the repetition check key the same turns
def _key(text: str) -> str:
    return " ".join(_WORD.findall(normalize(text)))


def _where(si: int, ti: int) -> str:
    return f"session {si + 1} turn {ti + 1}"


def _snip(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


# -- the corpus the repetition check needs --------------------------------------------------------
@dataclass
class RealismCorpus:
    """How often each turn and assistant sentence occurs over a set of conversations."""

    turn_arcs: Counter = field(default_factory=Counter)  # turn key -> conversations containing it
    sentences: Counter = field(default_factory=Counter)  # assistant sentence key -> occurrences
    n: int = 0
    digest: str = ""

    @classmethod
    def of(cls, conversations: Iterable[tuple[ChatSession, ...]]) -> RealismCorpus:
        c = cls()
        h = hashlib.sha256()
        for sessions in conversations:
            c.n += 1
            keys = set()
            for s in sessions:
                for t in s.turns:
                    h.update(t.text.encode("utf-8") + b"\0")
                    k = _key(t.text)
                    if len(k.split()) >= REPEATED_TURN_MIN_WORDS:
                        keys.add(k)
                    if t.role == "assistant":
                        for sent in sentences(t.text):
                            sk = _key(sent)
                            if len(sk.split()) >= SENTENCE_MIN_WORDS:
                                c.sentences[sk] += 1
            c.turn_arcs.update(keys)
            h.update(b"\1")
        c.digest = h.hexdigest()
        return c


# -- the checks ------------------------------------------------------------------------------------
def _ok(text: str) -> CriterionVerdict:
    return CriterionVerdict(passed=True, rationale=text)


def _fail(text: str) -> CriterionVerdict:
    return CriterionVerdict(passed=False, rationale=text)


def _turns(sessions: tuple[ChatSession, ...]):
    return [(si, ti, t) for si, s in enumerate(sessions) for ti, t in enumerate(s.turns)]


def qa_relevance(sessions: tuple[ChatSession, ...], lex: Lexicon) -> CriterionVerdict:
    flat = _turns(sessions)
    asked = [
        (i, q)
        for i, (_, _, t) in enumerate(flat)
        if t.role == "user" and (q := question_part(t.text, lex))
    ]
    if not asked:
        return _ok("No user turn asks a question, so there is no reply to check against one.")
    stems = {i: content_stems(q, lex) for i, q in asked}
    checked = 0
    for i, _ in asked:
        if i + 1 >= len(flat) or flat[i + 1][2].role != "assistant" or not stems[i]:
            continue  # no reply, or a question with no content word to take up
        checked += 1
        reply = content_stems(flat[i + 1][2].text, lex)
        own = stems[i] & reply
        si, ti, t = flat[i]
        if not own:
            return _fail(
                f"The reply in {_where(*flat[i + 1][:2])} shares no content word with the "
                f"question before it ('{_snip(question_part(t.text, lex))}')."
            )
        for j, _ in asked:
            other = stems[j] & reply
            if j != i and len(other) >= len(own) + 2:
                return _fail(
                    f"The reply in {_where(*flat[i + 1][:2])} fits the question in "
                    f"{_where(*flat[j][:2])} ({', '.join(sorted(other))}) better than its own "
                    f"({', '.join(sorted(own))})."
                )
    return _ok(
        f"Each of the {checked} replies to a question shares content words with that question "
        "and with no other question more."
    )


def _past_interval(expr: str, d: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days a past-time expression can mean, said on day ``d`` (None: not a known one)."""
    e = expr.strip()
    if e == "yesterday":
        return d - dt.timedelta(1), d - dt.timedelta(1)
    if e == "the day before yesterday":
        return d - dt.timedelta(2), d - dt.timedelta(2)
    if e in ("today", "this morning", "tonight", "earlier today"):
        return d, d
    if e in WEEKDAYS or e.startswith("on ") and e[3:] in WEEKDAYS:
        k = (d.weekday() - WEEKDAYS.index(e.split()[-1])) % 7 or 7
        return d - dt.timedelta(k), d - dt.timedelta(k)
    if e.startswith("last ") and e[5:] in WEEKDAYS:
        k = (d.weekday() - WEEKDAYS.index(e[5:])) % 7 or 7
        return d - dt.timedelta(k + 7), d - dt.timedelta(k)
    if e == "last week":
        start = d - dt.timedelta(d.weekday() + 7)
        return start, start + dt.timedelta(6)
    if e == "this week":
        return d - dt.timedelta(d.weekday()), d
    if e in ("last weekend", "over the weekend", "this weekend", "at the weekend"):
        sat = d - dt.timedelta((d.weekday() - 5) % 7)
        if e == "last weekend" and d.weekday() >= 5:
            sat -= dt.timedelta(7)
        return sat, min(d, sat + dt.timedelta(1))
    if e == "last month":
        end = d.replace(day=1) - dt.timedelta(1)
        return end.replace(day=1), end
    if e == "earlier this month":
        return d.replace(day=1), d
    if e in ("a few days ago", "a couple of days ago"):
        return d - dt.timedelta(6 if "few" in e else 3), d - dt.timedelta(2)
    if e in ("a couple of weeks ago", "a few weeks ago"):
        return d - dt.timedelta(35 if "few" in e else 18), d - dt.timedelta(
            10 if "couple" in e else 14
        )
    m = re.fullmatch(r"(\w+) (day|days|week|weeks|month|months) ago", e)
    if m and m.group(1) in _NUM | {str(i): i for i in range(1, 60)}:
        n = _NUM.get(m.group(1)) or int(m.group(1))
        unit = m.group(2).rstrip("s")
        days = n * {"day": 1, "week": 7, "month": 30}[unit]
        slack = {"day": 0, "week": 3, "month": 10}[unit]
        return d - dt.timedelta(days + slack), d - dt.timedelta(max(days - slack, 0))
    return None


_PAST_WHEN = re.compile(
    r"\b(yesterday|the day before yesterday|today|this morning|earlier today|last week|this week|"
    r"last weekend|over the weekend|this weekend|at the weekend|last month|earlier this month|"
    r"a few days ago|a couple of days ago|a couple of weeks ago|a few weeks ago|"
    r"(?:on |last )?(?:" + "|".join(WEEKDAYS) + r")|\w+ (?:days?|weeks?|months?) ago)\b"
)


_WITHIN = re.compile(r"\b(earlier|a minute ago|a few minutes ago|a moment ago|just now|before)\b")
_ACROSS = re.compile(
    r"last time|last (talked|spoke|chatted)|since we|when we (talked|spoke|chatted)"
)


def _within_session(sessions, si: int, ti: int, text: str, refs: list[str]) -> bool:
    """A back reference that points inside the session: it names a within-session time
    ("earlier", "a minute ago"), no part of it is a cross-session reference ("last time"), and
    the user spoke earlier in this session (a same-session correction says "what I said
    earlier")."""
    if not _WITHIN.search(text) or any(_ACROSS.search(r) for r in refs):
        return False
    return any(t.role == "user" for t in sessions[si].turns[:ti])


def time_references(q: RealismQuestion, lex: Lexicon) -> CriterionVerdict:
    sessions = q.sessions
    dates = []
    for s in sessions:
        try:
            dates.append(dt.date.fromisoformat(s.date))
        except ValueError:
            dates.append(None)
    plan_pos = (q.plan_session, q.plan_turn)
    for si, ti, t in _turns(sessions):
        text = normalize(t.text)
        if lex.has_any(_REFERENCE_CUES, text):  # most turns have neither: one scan, not two
            refs = lex.hits("back_reference", text)
            if refs and _within_session(sessions, si, ti, text, refs):
                refs = []  # "what I said earlier" after an earlier user turn of this session: true
            if refs and si == 0:
                return _fail(
                    f"{_where(si, ti)} says '{refs[0]}', but this is the first session: "
                    "there is no earlier conversation to refer to."
                )
            refs += lex.hits("still_open", text)
            if refs and t.role == "user" and si == q.plan_session and (si, ti) > plan_pos:
                return _fail(
                    f"{_where(si, ti)} says '{refs[0]}' about the plan, which was stated "
                    f"earlier in this same session ({_where(*plan_pos)})."
                )
        d = dates[si]
        if d is None:
            continue
        # A date or 'tomorrow' in a sentence is one in the turn (a sentence is a stretch of the
        # normalized turn between spaces): a turn with neither has no sentence to check.
        for sent in sentences(t.text) if "tomorrow" in text or _HAS_DATE.search(text) else ():
            s_norm = normalize(sent)
            for m in _DATE.finditer(s_norm):
                when = nearest_date(d, MONTH_NUMBERS[m["mon"]], int(m["day"]))
                if when is None:
                    return _fail(
                        f"{_where(si, ti)} names a date that does not exist ('{m.group(0)}')."
                    )
                if m["wd"] and WEEKDAYS[when.weekday()] != m["wd"]:
                    return _fail(
                        f"{_where(si, ti)} says '{m.group(0)}', but {when:%B} {when.day}, "
                        f"{when.year} is a {when:%A}."
                    )
                if lex.has("future", s_norm) and not lex.has("change_done", s_norm) and when < d:
                    return _fail(
                        f"{_where(si, ti)} plans something for '{m.group(0)}', which is before "
                        f"this session's date ({d.isoformat()})."
                    )
            if "tomorrow" in s_norm and (m := _TOMORROW.search(s_norm)):
                wd = m.group(1) or m.group(2)
                real = WEEKDAYS[(d + dt.timedelta(1)).weekday()]
                if wd != real:
                    return _fail(
                        f"{_where(si, ti)} calls {wd} 'tomorrow', but the day after "
                        f"{d.isoformat()} is a {real}."
                    )
        if t.role != "user" or not lex.has("change_done", text):
            continue
        if (si, ti) > plan_pos:
            anchor, what = dates[q.plan_session], "the plan was stated"
        elif (si, ti) == plan_pos and si > 0:
            anchor, what = dates[si - 1], "the previous session"
        else:
            continue
        if anchor is None:
            continue
        for sent in sentences(t.text):
            s_norm = normalize(sent)
            if not lex.has("change_done", s_norm):
                continue
            for m in _PAST_WHEN.finditer(s_norm):
                span = _past_interval(m.group(1), d)
                if span and span[1] < anchor:
                    return _fail(
                        f"{_where(si, ti)} dates the change '{m.group(1)}' (by "
                        f"{span[1].isoformat()} at the latest), before {what} "
                        f"({anchor.isoformat()})."
                    )
    return _ok(
        "References to earlier talk point to an earlier session, and the dates, weekdays and "
        "relative times agree with the session dates."
    )


def repetition(sessions: tuple[ChatSession, ...], corpus: RealismCorpus | None) -> CriterionVerdict:
    seen: dict[str, tuple[int, int]] = {}
    for si, ti, t in _turns(sessions):
        k = _key(t.text)
        if len(k.split()) >= 3 and k in seen:
            return _fail(f"{_where(si, ti)} repeats {_where(*seen[k])} word for word.")
        seen.setdefault(k, (si, ti))
    if corpus is None:
        return _ok(
            "No turn repeats within the conversation (no dataset given, so repeats across "
            "conversations were not counted)."
        )
    for si, ti, t in _turns(sessions):
        k = _key(t.text)
        if len(k.split()) >= REPEATED_TURN_MIN_WORDS and corpus.turn_arcs[k] >= REPEATED_TURN_ARCS:
            return _fail(
                f"{_where(si, ti)} ('{_snip(t.text)}') occurs word for word in "
                f"{corpus.turn_arcs[k]} of the {corpus.n} conversations."
            )
        if t.role == "assistant":
            for sent in sentences(t.text):
                sk = _key(sent)
                if len(sk.split()) >= SENTENCE_MIN_WORDS and corpus.sentences[sk] > SENTENCE_LIMIT:
                    return _fail(
                        f"The sentence '{_snip(sent)}' in {_where(si, ti)} occurs "
                        f"{corpus.sentences[sk]} times in the {corpus.n} conversations "
                        f"(limit {SENTENCE_LIMIT})."
                    )
    return _ok(
        f"No turn repeats within the conversation or across {REPEATED_TURN_ARCS - 1}+ others of "
        f"the {corpus.n}, and no assistant sentence occurs more than {SENTENCE_LIMIT} times."
    )


def frame_consistency(sessions: tuple[ChatSession, ...], lex: Lexicon) -> CriterionVerdict:
    flat = _turns(sessions)
    for i, (si, ti, t) in enumerate(flat):
        if t.role != "user":
            continue
        text = normalize(t.text)
        if not lex.has_any(_FRAME_CUES, text):
            continue  # no frame cue: nothing below can fire (a date alone needs 'future')
        firm, undecided = lex.hits("firm_decision", text), lex.hits("undecided", text)
        vague, nodate = lex.hits("indefinite_time", text), lex.hits("no_date", text)
        dated = [m.group(0) for m in _DATE.finditer(text)]
        where = _where(si, ti)
        if firm and vague:
            return _fail(
                f"{where} is a firm decision ('{firm[0]}') with an indefinite time ('{vague[0]}')."
            )
        if firm and undecided:
            return _fail(
                f"{where} is decided ('{firm[0]}') and undecided ('{undecided[0]}') at once."
            )
        if nodate and dated:
            return _fail(f"{where} says '{nodate[0]}' and names a date ('{dated[0]}').")
        if i + 1 >= len(flat) or flat[i + 1][2].role != "assistant":
            continue
        reply, rwhere = normalize(flat[i + 1][2].text), _where(*flat[i + 1][:2])
        committed = firm or (dated and lex.has("future", text))
        done = lex.hits("change_done", text)
        if committed and not undecided and (h := lex.hits("reply_open", reply)):
            return _fail(
                f"The reply in {rwhere} treats the decided plan in {where} as still open ('{h[0]}')."
            )
        if undecided and not firm and not done and (h := lex.hits("reply_done", reply)):
            return _fail(
                f"The reply in {rwhere} treats the undecided plan in {where} as done ('{h[0]}')."
            )
        if done and not lex.has("future", text) and (h := lex.hits("reply_ahead", reply)):
            return _fail(
                f"The reply in {rwhere} treats the change {where} reports as done "
                f"('{done[0]}') as still ahead ('{h[0]}')."
            )
        dropped = lex.hits("abandon", text) + lex.hits("still_open", text)
        if dropped and not done and (h := lex.hits("reply_done", reply)):
            return _fail(
                f"The reply in {rwhere} treats a plan that {where} calls dropped or open "
                f"('{dropped[0]}') as done ('{h[0]}')."
            )
    return _ok(
        "No turn combines contradictory commitment or time frames, and each reply fits the "
        "state of the plan it answers."
    )


def tense_agreement(sessions: tuple[ChatSession, ...], lex: Lexicon) -> CriterionVerdict:
    for si, ti, t in _turns(sessions):
        where = _where(si, ti)
        whole = normalize(t.text)
        if not lex.has_any(_TENSE_CUES, whole):
            continue  # no time word and no perfect: nothing to disagree
        for sent in sentences(t.text):
            s_norm = normalize(sent)
            since = lex.hits("since_time", s_norm)
            if since and not lex.has("perfect", s_norm):
                return _fail(
                    f"{where} has '{since[0]}' without the perfect ('{_snip(sent)}'): "
                    "'since <time>' needs 'have been' or 'have done'."
                )
            for c in clauses(sent):
                past, fut = lex.hits("past_time", c), lex.hits("future_time", c)
                if lex.has("future", c) and past and not lex.has("perfect_licensers", c):
                    return _fail(
                        f"{where} puts a future plan and a past time ('{past[0]}') in one "
                        f"clause ('{_snip(sent)}')."
                    )
                if lex.has("change_done", c) and fut and not lex.has("future", c):
                    return _fail(
                        f"{where} reports a past change with a future time ('{fut[0]}') in "
                        f"one clause ('{_snip(sent)}')."
                    )
                if lex.has("present_perfect", c) and not lex.has("perfect_licensers", c):
                    when = past or _ON_WEEKDAY.findall(c)
                    if when:
                        return _fail(
                            f"{where} uses the present perfect with a finished time "
                            f"('{when[0]}'): '{_snip(sent)}'."
                        )
    return _ok("Tense and aspect agree with the time words in every clause.")


def chat_form(sessions: tuple[ChatSession, ...], lex: Lexicon) -> CriterionVerdict:
    for si, ti, t in _turns(sessions):
        words = len(t.text.split())
        limit = MAX_USER_WORDS if t.role == "user" else MAX_ASSISTANT_WORDS
        if words == 0 or words > limit:
            return _fail(f"{_where(si, ti)} has {words} words (chat turns have 1-{limit}).")
        if hits := lex.hits("placeholder", t.text):
            return _fail(f"{_where(si, ti)} contains placeholder text '{hits[0]}'.")
    return _ok("Turn lengths are chat-like and no turn holds placeholder or template text.")


def check_realism(
    q: RealismQuestion, corpus: RealismCorpus | None = None, lex: Lexicon | None = None
) -> dict[str, CriterionVerdict]:
    """Every named offline check but 'motivated' (which lives with the recovery cues)."""
    lex = lex or realism_lexicon()
    return {
        "qa_relevance": qa_relevance(q.sessions, lex),
        "time_references": time_references(q, lex),
        "repetition": repetition(q.sessions, corpus),
        "frame_consistency": frame_consistency(q.sessions, lex),
        "tense_agreement": tense_agreement(q.sessions, lex),
        "chat_form": chat_form(q.sessions, lex),
    }
