"""The checks only generated text needs, beside the structural checks every arc must pass: the plan
turn of a non-control arc must not already assert the change, no markup or label leaks, true time
references. Each returns None or a one-line reason (``arc_problems`` collects them)."""

from __future__ import annotations

import re
from functools import lru_cache

from ..design import Design, paper_design
from ..schema import (
    Arc,
    normalize_text,
)
from ..validate.structure import check_arc


def arc_problems(arc: Arc, design: Design | None = None) -> list[str]:
    """Failed structural checks plus the generator-only checks, as one-line reasons."""
    design = design or paper_design()
    problems = [f"{r.check}: {r.detail}" for r in check_arc(arc, design) if not r.passed]
    for name, fn in GENERATOR_CHECKS.items():
        if (problem := fn(arc, design)) is not None:
            problems.append(f"generator.{name}: {problem}")
    return problems


_DONE = re.compile(
    r"\b(?:i|we)(?: ve| have| had)?(?: (?:already|just|finally|officially|recently|now))? "
    r"(?:(?P<idiom>made the (?:switch|move|change|jump)|went ahead with (?:it|the (?:switch|move|change)))"
    r"|switched|moved|changed|swapped|transferred|relocated|converted|upgraded|downgraded|bought"
    r"|purchased|joined|enrolled|signed up|started using|started at|started going to|went with)\b"
)
_NOW = re.compile(
    r"\b(?:i m|i am|we re|we are) now (?:using|at|with|on|in|living in|working at|"
    r"driving|running in|shopping at|going to)\b|\b(?:i|we) now (?:use|live|work|drive|"
    r"run|shop|go|have)\b"
)
_HYPOTHETICAL = {
    "if",
    "suppose",
    "imagine",
    "whether",
    "wonder",
    "would",
    "could",
    "might",
    "once",
    "until",
    "unless",
}


_CLAUSE_BREAK = {
    "and",
    "but",
    "or",
    "might",
    "may",
    "could",
    "would",
    "will",
    "maybe",
    "though",
    "although",
    "while",
    "then",
    "if",
    "try",
    "trying",
    "thinking",
    "considering",
}


def asserted_change(text: str, plan_value: str) -> str | None:
    """The phrase by which ``text`` already asserts the change to ``plan_value`` (a heuristic:
    a first-person completion verb whose object, within a few words, is the plan value)."""
    norm, value = normalize_text(text), normalize_text(plan_value).split()
    for pattern in (_DONE, _NOW):
        for m in pattern.finditer(norm):
            if set(norm[: m.start()].split()[-3:]) & _HYPOTHETICAL:
                continue
            if m.groupdict().get("idiom"):
                return m.group(0)
            following = norm[m.end() :].split()
            for i in range(min(len(following), 7)):
                if set(following[:i]) & _CLAUSE_BREAK:
                    break
                if following[i : i + len(value)] == value:
                    return m.group(0)
    return None


def no_premature_change(arc: Arc, design: Design | None = None) -> str | None:
    if arc.spec.outcome in ("control", "correction"):
        return None
    phrase = asserted_change(arc.turn(arc.plan_turn).text, arc.spec.plan_value)
    return (
        f"the plan turn already says the change happened ({phrase!r}); it must be a plan"
        if phrase
        else None
    )


# Names from the prompts themselves: the rubric's structures and the draft's turn fields.
STRUCTURE_NAMES = (
    "pending_window",
    "immediate_outcome",
    "next_session_outcome",
    "completed_change",
)
TURN_FIELDS = ("initial_turn", "plan_turn", "outcome_turn", "pending_turn")
CORRECTION_TURN_FIELDS = ("change_turn", "correction_turn")
# Wording factors: the prompt shows their levels as labels ("PLAN WORDING: weakly_hedged"), so a
# multi-word level is refused spaced out too ("weakly hedged"). Other factors' levels are not:
# spaced, they are what people say ("it came true", "two sessions").
_SPACED_ROLES = ("plan_wording", "confirmation_wording")


def label_names(design: Design) -> tuple[list[str], list[str]]:
    """(identifiers, phrases) generated text must not contain: every identifier with an
    underscore (the design's levels, factors and splits; the prompts' structures and turn
    fields), and the spaced forms of the wording levels and turn fields. A one-word name (a
    level ``open`` or ``conditional``, a split ``core``) is an English word and is allowed."""
    names = {*design.level_identifiers(), *STRUCTURE_NAMES, *TURN_FIELDS, *CORRECTION_TURN_FIELDS}
    spaced = {*TURN_FIELDS, "hedge_turn", "pending_window"}
    for f in design.factors.values():
        if f.role in _SPACED_ROLES:
            spaced |= {lv.name for lv in f.levels if not lv.control}
    return (
        sorted(n for n in names if "_" in n),
        sorted(n.replace("_", " ") for n in spaced if "_" in n),
    )


_FORMAT_LEAKS = (
    (re.compile(r"\[[A-Za-z][A-Za-z0-9 _/-]*\]"), "a bracketed tag"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9_-]*(?:\s[^>]*)?>"), "markup tag"),
    (re.compile(r"\*\*|__|(?m:^\s*#{1,6}\s)"), "markdown"),
    (re.compile(r"(?i)^\s*(?:user|assistant|human|ai|system)\s*:"), "a speaker prefix"),
    (re.compile(r"\{\{|\}\}"), "template braces"),
)


@lru_cache(maxsize=16)
def _compiled(
    identifiers: tuple[str, ...], phrases: tuple[str, ...]
) -> tuple[tuple[re.Pattern, str], ...]:
    names = [
        re.compile(r"(?i)\b(?:" + "|".join(re.escape(n) for n in group) + r")\b")
        for group in (identifiers, phrases)
        if group
    ]
    return (*((p, "a label name") for p in names), *_FORMAT_LEAKS)


def leak_patterns(design: Design | None = None) -> tuple[tuple[re.Pattern, str], ...]:
    """(pattern, what it finds) for every leak the generator check refuses under ``design``."""
    ids, phrases = label_names(design or paper_design())
    return _compiled(tuple(ids), tuple(phrases))


def label_leak(text: str, design: Design | None = None, *, patterns=None) -> str | None:
    """What ``text`` leaks (a label name of ``design``, a tag, markup ...), or None."""
    for pattern, what in patterns or leak_patterns(design):
        if m := pattern.search(text):
            return f"{what} ({m.group(0)!r})"
    return None


def no_label_leak(arc: Arc, design: Design | None = None) -> str | None:
    patterns = leak_patterns(design)
    for si, s in enumerate(arc.sessions):
        for ti, t in enumerate(s.turns):
            if leak := label_leak(t.text, patterns=patterns):
                return f"session {si} turn {ti} contains {leak}; write plain chat"
    return None


def true_time_references(arc: Arc, design: Design | None = None) -> str | None:
    """'Last time' and 'like I said' point to an earlier session; weekdays match dates; a
    scheduled date lies ahead; a reported change is not dated before the plan (offline check)."""
    from ..validate.judges._realism import realism_lexicon, time_references
    from ..validate.judges.questions import realism_question

    verdict = time_references(realism_question(arc), realism_lexicon())
    return None if verdict.passed else verdict.rationale


GENERATOR_CHECKS = {
    "no_premature_change": no_premature_change,
    "no_label_leak": no_label_leak,
    "true_time_references": true_time_references,
}
