"""Whether an arc's turns agree with its own state timeline (the structural check
``structure.consistency``).

An arc knows what became of its plan (``spec.outcome``) and where (its plan and outcome turns), so
it knows the plan's state at every sentence: pending until its outcome, then done or dropped (a
control's change is done from its report on). This check reads every sentence after the plan
statement in that light and fails the arc at the first one that disagrees: a plan reported done
or dropped while it is pending, an abandoned plan later in use, a confirmed change later denied or
called pending, an assistant reply that answers a state the user is not in ("still time" after a
slip, congratulations on a switch that was called off), a date or deadline that no earlier turn
gave, a day cited as ahead that has passed. The reason names the turn and quotes the sentence.

The cues and rules are data (``consistency.v1.toml``); a design extends them with the file its
``[files] consistency`` names. They run on every arc however it was made: built offline, written
by an LLM generator (which re-asks on a failure) or imported. What they catch, and what they
wrongly flag, is measured on planted defects (``devsets/timeline``).
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from ..design import Problem
from ..schema import Arc, normalize_text
from ..text import MONTH_NUMBERS, MONTHS, WEEKDAYS, nearest_date
from ..text import sentences as split_sentences

RULES_PATH = Path(__file__).with_name("consistency.v1.toml")
STATES = ("pending", "slipped", "done", "dropped")
ROLES = ("user", "assistant")
RULE_KEYS = (
    "name",
    "role",
    "states",
    "any",
    "none",
    "about_plan",
    "about_value",
    "names_plan",
    "asserted",
    "say",
)
_SPACES = re.compile(r"\s+")
_CLAUSE = re.compile(
    r"[,;:()]|\s(?:and|but|because|so|while|although|though|then|now that|since|after|as)\s|\s-\s"
)
_MONTH_RX = "|".join(MONTHS)
_DAY_RX = "|".join(WEEKDAYS)
_ABS_DATE = re.compile(
    rf"\b(?:(?P<mon>{_MONTH_RX})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_MONTH_RX})\b)"
)
_ORDINAL_DAY = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b")
_WEEKDAY = re.compile(rf"\b(?:(this|next|last|on|by|before|until|till|for|from)\s+)?({_DAY_RX})\b")
_WEEKDAY_CITE = re.compile(
    rf"\b(?:set|booked|scheduled|planned|slated|penciled|pencilled|on|had it)\s+(?:in\s+)?for\s+"
    rf"(?:this\s+|next\s+|last\s+)?({_DAY_RX})\b|\b(?:my|the|your|that)\s+({_DAY_RX})\s+"
    r"(?:date|deadline|switch|move|start|plan)\b"
)
_IN_N = re.compile(r"\bin\s+(a|one|two|three|four|five|six|\d+)\s+(day|week)s?\b")
_DIGIT = re.compile(r"\d")
_ANY_DAY = re.compile(rf"\d|tomorrow|today|tonight|yesterday|end of|{_DAY_RX}")
_NUMBER = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


class RulesError(ValueError):
    """A consistency rules file that cannot be used (the message names the file and key)."""


@dataclass(frozen=True)
class Rule:
    name: str
    role: str
    states: tuple[str, ...]
    any: tuple[str, ...]
    none: tuple[str, ...] = ()
    about_plan: bool = False
    about_value: bool = False
    names_plan: bool = False
    asserted: bool = False
    say: str = ""


@dataclass(frozen=True, eq=False)
class Rules:
    """Cue categories (regular expressions, ``{plan}`` and ``{initial}`` filled per arc) and rules."""

    sha256: str
    patterns: dict[str, tuple[str, ...]]
    rules: tuple[Rule, ...]
    sources: tuple[str, ...] = ()

    @property
    def matcher(self) -> _Matcher:
        return _matcher(self)


def _norm(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if "  " in text or "\n" in text or "\t" in text:
        text = _SPACES.sub(" ", text)
    return text.strip()


def _compile(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("(?<![\\w'])(?:" + "|".join(f"(?:{p})" for p in patterns) + ")(?!\\w)")


PLAN_TOKEN, INITIAL_TOKEN = "xplanvaluex", "xinitialvaluex"


class _Matcher:
    """The categories compiled once per rules file; an arc's plan and initial value are matched
    through tokens that ``prep`` puts in their place (``{plan}``, ``{initial}`` in a cue)."""

    def __init__(self, rules: Rules):
        self.rx = {
            cat: _compile(
                tuple(
                    p.replace("{plan}", PLAN_TOKEN).replace("{initial}", INITIAL_TOKEN)
                    for p in pats
                )
            )
            for cat, pats in rules.patterns.items()
        }

    def first(self, cat: str, text: str) -> re.Match | None:
        found = self.all(cat, text)
        return found[0] if found else None

    def all(self, cat: str, text: str) -> list[re.Match]:
        # Small talk and replies recur across arcs: each (category, sentence) is scanned once.
        return _scan(self, cat, text)

    def names_plan(self, text: str) -> bool:
        return PLAN_TOKEN in text

    def about_plan(self, text: str) -> bool:
        return self.names_plan(text) or self.first("plan_ref", text) is not None

    def asserted(self, text: str, m: re.Match) -> bool:
        """Whether the cue at ``m`` asserts a fact: no negation or irrealis word before it in its
        clause ("I haven't switched", "if I switch", "I'll switch")."""
        start = 0
        for c in _CLAUSE.finditer(text[: m.start()]):
            start = c.end()
        before = text[start : m.start()]
        return not (self.first("negation", before) or self.first("irrealis", before))


@lru_cache(maxsize=1 << 16)
def _scan(m: _Matcher, cat: str, text: str) -> list[re.Match]:
    rx = m.rx.get(cat)
    return list(rx.finditer(text)) if rx is not None else []


@lru_cache(maxsize=64)
def _matcher(rules: Rules) -> _Matcher:
    return _Matcher(rules)


def _replace_words(text: str, said: str, token: str) -> str:
    """``text`` with every whole-word occurrence of ``said`` replaced by ``token``."""
    out, i = [], 0
    while (j := text.find(said, i)) >= 0:
        end = j + len(said)
        whole = (j == 0 or not text[j - 1].isalnum()) and (
            end == len(text) or not text[end].isalnum()
        )
        out.append(text[i:j] + (token if whole else said))
        i = end
    return "".join(out) + text[i:]


@lru_cache(maxsize=4096)
def _value_rx(value: str) -> re.Pattern | None:
    """A value's words as they may appear in a sentence (any punctuation or space between)."""
    words = normalize_text(value).split()
    if not words:
        return None
    return re.compile(r"(?<![\w])" + r"[\W_]+".join(map(re.escape, words)) + r"(?![\w])")


# -- loading ------------------------------------------------------------------------------------
def parse_rules(data: dict, origin: str) -> tuple[dict[str, list[str]], list[Rule], list[Problem]]:
    """The cues and rules of one rules file, and its problems (one line each, naming the key)."""
    problems: list[Problem] = []
    cues: dict[str, list[str]] = {}
    for key in sorted(set(data) - {"cues", "rules"}):
        problems.append(Problem(origin, f"{key}", "unknown key (known keys: cues, rules)"))
    raw_cues = data.get("cues", {})
    if not isinstance(raw_cues, dict):
        problems.append(Problem(origin, "cues", "a table of category = [regular expressions]"))
        raw_cues = {}
    for cat, pats in raw_cues.items():
        if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
            problems.append(Problem(origin, f"cues.{cat}", "a list of regular expressions"))
            continue
        for i, p in enumerate(pats):
            try:
                re.compile(p.replace("{plan}", "x").replace("{initial}", "y"))
            except re.error as e:
                problems.append(
                    Problem(origin, f"cues.{cat}#{i + 1}", f"not a regular expression ({e})")
                )
        cues[cat] = pats
    rules: list[Rule] = []
    raw_rules = data.get("rules", [])
    if not isinstance(raw_rules, list):
        problems.append(Problem(origin, "rules", "a list of [[rules]] tables"))
        raw_rules = []
    for i, r in enumerate(raw_rules):
        key = f"rules#{i + 1}"
        if not isinstance(r, dict):
            problems.append(Problem(origin, f"{key}", "a table"))
            continue
        for k in sorted(set(r) - set(RULE_KEYS)):
            problems.append(
                Problem(origin, f"{key}.{k}", f"unknown key (known keys: {', '.join(RULE_KEYS)})")
            )
        if r.get("role") not in ROLES:
            problems.append(Problem(origin, f"{key}.role", "'user' or 'assistant'"))
        states = r.get("states", [])
        if not isinstance(states, list) or not states or set(states) - set(STATES):
            problems.append(Problem(origin, f"{key}.states", f"a list of {', '.join(STATES)}"))
            states = []
        if not r.get("any"):
            problems.append(Problem(origin, f"{key}.any", "the cue categories the rule looks for"))
        if not isinstance(r.get("name"), str) or not r.get("name"):
            problems.append(Problem(origin, f"{key}.name", "a name for the rule"))
        try:
            rules.append(
                Rule(
                    name=str(r.get("name", key)),
                    role=str(r.get("role", "user")),
                    states=tuple(states),
                    any=tuple(r.get("any", ())),
                    none=tuple(r.get("none", ())),
                    about_plan=bool(r.get("about_plan", False)),
                    about_value=bool(r.get("about_value", False)),
                    names_plan=bool(r.get("names_plan", False)),
                    asserted=bool(r.get("asserted", False)),
                    say=str(r.get("say", r.get("name", key))),
                )
            )
        except TypeError as e:  # pragma: no cover - a list where a string belongs, say
            problems.append(Problem(origin, f"{key}", f"{e}"))
    return cues, rules, problems


def _merge(files: list[tuple[str, bytes]]) -> tuple[Rules, list[Problem]]:
    patterns: dict[str, list[str]] = {}
    rules: list[Rule] = []
    problems: list[Problem] = []
    h = hashlib.sha256()
    for origin, data in files:
        h.update(hashlib.sha256(data).digest())
        try:
            raw = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            problems.append(Problem(origin, "", f"TOML syntax error: {e}"))
            continue
        cues, more, found = parse_rules(raw, origin)
        problems += found
        for cat, pats in cues.items():
            patterns.setdefault(cat, []).extend(pats)
        rules += more
    known = set(patterns)
    for r in rules:
        for cat in (*r.any, *r.none):
            if cat not in known:
                problems.append(
                    Problem(
                        files[-1][0],
                        f"rules ({r.name})",
                        f"unknown cue category {cat!r} (categories: {', '.join(sorted(known))})",
                    )
                )
    out = Rules(
        sha256=h.hexdigest(),
        patterns={c: tuple(p) for c, p in patterns.items()},
        rules=tuple(rules),
        sources=tuple(o for o, _ in files),
    )
    return out, problems


@cache
def builtin_rules() -> Rules:
    rules, problems = _merge([(RULES_PATH.name, RULES_PATH.read_bytes())])
    if problems:  # pragma: no cover - the released file is tested
        raise RulesError(str(problems[0]))
    return rules


def design_rules(design) -> tuple[Rules, list[Problem]]:
    """The built-in rules with those of the design's ``[files] consistency`` file, if it names one."""
    rel = getattr(getattr(design, "files", None), "consistency", None) if design else None
    if rel is None:
        return builtin_rules(), []
    cached = getattr(design, "_consistency", None)
    if cached is None:
        f = design.source.files.get(rel)
        if f is None:
            return builtin_rules(), [Problem(rel, "", "does not exist beside the design file")]
        cached = _merge([(RULES_PATH.name, RULES_PATH.read_bytes()), (f.origin, f.data)])
        design._consistency = cached
    return cached


def rules_for(design) -> Rules:
    rules, problems = design_rules(design)
    if problems:
        raise RulesError(str(problems[0]))
    return rules


# -- dates --------------------------------------------------------------------------------------
def _weekday_dates(name: str, around: dt.date, span: int = 14) -> set[dt.date]:
    target = WEEKDAYS.index(name)
    return {
        around + dt.timedelta(days=k)
        for k in range(-span, span + 1)
        if (around + dt.timedelta(days=k)).weekday() == target
    }


def _abs_dates(text: str, today: dt.date) -> list[tuple[dt.date, str]]:
    if not _DIGIT.search(text):
        return []
    out = []
    for m in _ABS_DATE.finditer(text):
        mon = m.group("mon") or m.group("mon2")
        day = int(m.group("day") or m.group("day2"))
        d = nearest_date(today, MONTH_NUMBERS[mon], day)
        if d is not None:
            out.append((d, m.group(0)))
    for m in _ORDINAL_DAY.finditer(text):
        day = int(m.group(1))
        best = None
        for shift in (-1, 0, 1):
            y, mo = today.year, today.month + shift
            if mo < 1:
                y, mo = y - 1, 12
            elif mo > 12:
                y, mo = y + 1, 1
            if day <= calendar.monthrange(y, mo)[1]:
                cand = dt.date(y, mo, day)
                if best is None or abs((cand - today).days) < abs((best - today).days):
                    best = cand
        if best is not None:
            out.append((best, m.group(0)))
    return out


def _introduced(text: str, today: dt.date) -> set[dt.date]:
    """Every day a sentence said on ``today`` can be taken to name (leniently: a weekday names
    the one before and the one after)."""
    if not _ANY_DAY.search(text):
        return set()
    days = {d for d, _ in _abs_dates(text, today)}
    if "tomorrow" in text:
        days.add(today + dt.timedelta(days=1))
    if "today" in text or "tonight" in text:
        days.add(today)
    if "yesterday" in text:
        days.add(today - dt.timedelta(days=1))
    for m in _WEEKDAY.finditer(text):
        days |= _weekday_dates(m.group(2), today, 7)
    for m in _IN_N.finditer(text):
        g = m.group(1)
        n = int(g) if g.isdigit() else _NUMBER[g]
        days.add(today + dt.timedelta(days=n * (7 if m.group(2) == "week" else 1)))
    if re.search(r"\bend of (the|this) month\b", text):
        days.add(today.replace(day=calendar.monthrange(today.year, today.month)[1]))
    return days


# -- the check ----------------------------------------------------------------------------------
@dataclass
class _Sentence:
    session: int
    turn: int
    role: str
    text: str  # as the cues read it (``_Reader.prep``)
    raw: str
    date: dt.date
    near: str = ""  # the sentences before and after it in its turn (as the cues read them)


def _snip(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


class _Reader:
    """Reads one arc's sentences in order, keeping the plan's state and the days given so far."""

    def __init__(self, arc: Arc, rules: Rules):
        sp = arc.spec
        self.arc, self.rules = arc, rules
        self.m = rules.matcher
        values = [(sp.plan_value, PLAN_TOKEN), (sp.initial_value, INITIAL_TOKEN)]
        self.values = [
            (_norm(v), normalize_text(v), token)
            for v, token in sorted(values, key=lambda x: -len(x[0]))
            if normalize_text(v)
        ]

        self.sessions = {s.date for s in arc.sessions}
        later = arc.outcome_turn or arc.pending_turn
        self.outcome_turn = (later.session, later.turn) if later is not None else None
        self.days: set[dt.date] = set()  # the days turns have named so far
        self.deadline = False  # whether a deadline or day for the plan has been given
        self.problems: list[str] = []

    def earlier(self, day: dt.date) -> set[dt.date]:
        """The dates of sessions before ``day``: a weekday may name when an earlier talk was."""
        return {d for d in self.sessions if d < day}

    def may_name(self, text: str) -> bool:
        """Whether a turn may name a value or refer to the plan (a quick test on its words)."""
        low = _norm(text)
        return any(words.split()[0] in low for _, words, _ in self.values) or bool(
            self.m.first("plan_ref", low)
        )

    def shown(self, cue: str) -> str:
        """A cue as the sentence said it (the values back in place of their tokens)."""
        sp = self.arc.spec
        return cue.replace(PLAN_TOKEN, sp.plan_value).replace(INITIAL_TOKEN, sp.initial_value)

    def prep(self, text: str) -> str:
        """The sentence as the cues read it: lower case, straight quotes, the values as tokens."""
        text = _norm(text)
        for said, words, token in self.values:
            if said in text:  # as the value is written (the common case): no regex to compile
                text = _replace_words(text, said, token)
            if words.split()[0] in text and f" {words} " in f" {normalize_text(text)} ":
                text = _value_rx(said).sub(token, text)  # written otherwise (case, punctuation)
        return text

    def fail(self, s: _Sentence, why: str, rule: str) -> None:
        self.problems.append(
            f"session {s.session} turn {s.turn} ({s.role}) {why}: {_snip(s.raw)!r} [{rule}]"
        )

    # -- dates ------------------------------------------------------------------------------
    def learn_days(self, s: _Sentence, about: bool) -> None:
        self.days |= _introduced(s.text, s.date)
        if about and any(
            self.m.asserted(s.text, h)
            for cat in ("deadline_intro", "deadline_ref")
            for h in self.m.all(cat, s.text)
        ):
            self.deadline = True

    def dates(self, s: _Sentence, about: bool) -> bool:
        """The built-in date tests; True when the sentence failed one."""
        m = self.m
        cite = m.first("deadline_ref", s.text)
        if cite is None and (back := m.first("back_ref", s.text)) is not None:
            if m.first("deadline_word", s.text) or _ANY_DAY.search(s.text):
                cite = back
        reported = s.role == "user" and (
            (d := m.first("done", s.text)) is not None and m.asserted(s.text, d)
        )
        reschedule = s.role == "user" and m.first("reschedule", s.text) is not None
        if about or cite:
            for day, said in _abs_dates(s.text, s.date):
                if day in self.days | self.sessions or reschedule or (reported and day <= s.date):
                    continue
                if s.role == "assistant" or cite:
                    self.fail(
                        s, f"cites {said!r}, which no earlier turn gave", "date_not_introduced"
                    )
                    return True
            weekdays = [wm.group(1) or wm.group(2) for wm in _WEEKDAY_CITE.finditer(s.text)]
            if cite:
                weekdays += [wm.group(2) for wm in _WEEKDAY.finditer(s.text)]
            for name in weekdays:
                if (
                    not (_weekday_dates(name, s.date) & (self.days | self.earlier(s.date)))
                    and not reschedule
                ):
                    self.fail(
                        s,
                        f"cites {name.title()} as the plan's day, which no earlier turn gave",
                        "date_not_introduced",
                    )
                    return True
        if (
            cite
            and (m.first("deadline_word", s.text) or cite.re is m.rx.get("deadline_ref"))
            and not self.deadline
            and not reschedule
            and not _introduced(s.text, s.date)
        ):
            self.fail(
                s,
                f"cites a deadline or day ('{self.shown(cite.group(0))}') that no earlier turn gave",
                "date_not_introduced",
            )
            return True
        for day, said in _abs_dates(s.text, s.date):
            if m.first("slip", s.text) and day > s.date:
                self.fail(s, f"says {said!r}, still ahead of the session, slipped", "date_order")
                return True
            if (
                cite
                and re.search(r"\bstill\b", s.text)
                and day < s.date
                and not m.first("slip", s.text)
            ):
                self.fail(s, f"cites {said!r}, which has passed, as still ahead", "date_order")
                return True
        return False

    # -- rules ------------------------------------------------------------------------------
    def apply(self, s: _Sentence, state: str) -> None:
        m = self.m
        hits: dict[str, list[re.Match]] = {}  # each category scanned once per sentence
        for r in self.rules.rules:
            if r.role != s.role or state not in r.states:
                continue
            hit = next(
                (
                    h
                    for cat in r.any
                    for h in (
                        hits[cat] if cat in hits else hits.setdefault(cat, m.all(cat, s.text))
                    )
                    if not r.asserted or m.asserted(s.text, h)
                ),
                None,
            )
            if hit is None or any(m.first(c, s.text) for c in r.none):
                continue
            near = f"{s.text} {s.near}"
            if r.names_plan and not m.names_plan(near):
                continue
            if r.about_plan and not m.about_plan(near):
                continue
            if r.about_value and not (m.about_plan(near) or INITIAL_TOKEN in near):
                continue
            self.fail(s, r.say.replace("{cue}", self.shown(hit.group(0))), r.name)
            return


@lru_cache(maxsize=16384)
def _split(text: str) -> list[str]:
    return split_sentences(text, abbreviations=False)


def _resolution(m: _Matcher, sents: list[str], outcome: str) -> int:
    """The index of the outcome turn's sentence that resolves the plan (the last when no cue
    says which): the sentences before it lead up to the outcome and are not read."""
    want = ("drop",) if outcome == "abandoned" else ("done", "plan_ref")
    for i, t in enumerate(sents):
        if any(m.first(c, t) for c in want) or (outcome != "abandoned" and m.names_plan(t)):
            return i
    return next((i for i, t in enumerate(sents) if m.about_plan(t)), 0)


def consistency(arc: Arc, rules: Rules | None = None) -> str | None:
    """The first place ``arc``'s turns disagree with its timeline, or None."""
    sp = arc.spec
    if sp.outcome == "correction" or arc.plan_turn is None:
        return None
    rules = rules or builtin_rules()
    reader = _Reader(arc, rules)
    m = reader.m
    plan = (arc.plan_turn.session, arc.plan_turn.turn)
    out_ref = arc.outcome_turn if sp.outcome in ("came_true", "abandoned", "control") else None
    resolved = {"came_true": "done", "control": "done", "abandoned": "dropped"}.get(sp.outcome)
    state = "pending"
    answers_plan = False  # whether the user turn an assistant turn answers speaks of the plan
    for si, session in enumerate(arc.sessions):
        for ti, turn in enumerate(session.turns):
            here = (si, ti)
            if here < plan:  # before the plan: only the days a turn names
                if _ANY_DAY.search(turn.text.lower()):
                    for t in _split(turn.text):
                        reader.days |= _introduced(_norm(t), session.date)
                continue
            if turn.role == "assistant" and not answers_plan and not reader.may_name(turn.text):
                continue  # a reply to small talk that names neither value nor the change
            sents = _split(turn.text)
            norm = [reader.prep(t) for t in sents]
            if turn.role == "user":
                answers_plan = here in (plan, reader.outcome_turn) or any(
                    m.about_plan(t) or INITIAL_TOKEN in t for t in norm
                )
            start = 0
            if (
                here == plan and sp.outcome != "control"
            ):  # the plan statement gives the plan, its day or deadline
                for t in norm:
                    reader.learn_days(_Sentence(si, ti, "user", t, t, session.date), True)
                continue
            if out_ref is not None and here == (out_ref.session, out_ref.turn):
                start = _resolution(m, norm, sp.outcome) + 1
                for t in norm[:start]:
                    reader.learn_days(_Sentence(si, ti, turn.role, t, t, session.date), True)
                state = resolved or state
            for i in range(start, len(norm)):
                raw, t = sents[i], norm[i]
                near = " ".join(norm[max(0, i - 1) : i] + norm[i + 1 : i + 2])
                s = _Sentence(si, ti, turn.role, t, raw, session.date, near)
                about = m.about_plan(t)
                if turn.role == "assistant" and not (answers_plan or about or INITIAL_TOKEN in t):
                    continue  # a reply to small talk speaks of the small talk, not of the plan
                if not reader.dates(s, about):
                    reader.apply(s, state)
                reader.learn_days(s, about)
                if turn.role == "user" and state == "pending" and about and m.first("slip", t):
                    state = "slipped"
                if reader.problems:
                    return reader.problems[0]
    return None
