"""The version 2 reader of the offline answer rules: ``judge_answer`` gives the values an answer
asserts and why, by the steps of the rule file's header, in its order.

Step 1 ``_structure`` (units), steps 2-3 ``_clauses`` (values, sentences, clauses), steps 4-6
``frames`` (the scope and frame of each occurrence, a table of rules), step 7 ``_reading``
(anaphors), steps 8-9 here and in ``_others`` (the answer as a whole, other values). The rules
are code; every word they look for is data (``cues``). The header of ``answer_cues.v2.toml``
names ``agentmemgate/evaluate/answer_reader.py``, where this reader lived when it was released.
"""

from __future__ import annotations

import re

from ._clauses import Reading, value_forms
from ._others import beside_names, other_value
from ._reading import read_units
from ._structure import Unit, read_structure
from ._tokens import tokenize
from .cues import Cues

_FRAME_WORDS = {
    "invalid": "in a record marked no longer valid ({cue})",
    "question": "only inside a question back to the user",
    "choice": "one side of a choice ({cue})",
    "abandoned": "a dropped or declined idea ({cue})",
    "declined": "the value not chosen ({cue})",
    "someone_else": "someone else's ({cue})",
    "described": "described, not stated as the user's ({cue})",
    "other_purpose": "{cue}",
    "negated": "negated ({cue})",
    "offer": "an offer ({cue})",
    "pending": "pending, not yet arrived or started ({cue})",
    "future_start": "a future start ({cue})",
    "plan": "a plan, wish or option ({cue})",
    "mention": "only mentioned ({cue})",
    "ended": "ended ({cue})",
    "past": "a past value ({cue})",
    "done": "{cue}",
    "current": "{cue}",
}


def describe(r: Reading, value: str, unit_kind: str) -> str:
    """The rationale's words for the reading that decided a value."""
    where = {
        "memory": "a memory line",
        "fact": "a graph fact",
        "relation": "a graph relation",
        "prose": "the answer",
    }[unit_kind]
    what = _FRAME_WORDS[r.frame].format(cue=r.cue)
    if r.role == "source" and r.asserted:
        what = f"the value a {r.frame} change would leave, so still current ({r.cue})"
    elif r.role == "source" and r.frame == "done":
        what = f"the value left ({r.cue})"
    verdict = "asserted" if r.asserted else "not asserted"
    return f"'{value}' in {where}: {what} -> {verdict}"


def field_stems(cues: Cues, *texts: str) -> frozenset[str]:
    """Content words of the field's name, description and question (step 8)."""
    words = set()
    for t in texts:
        words |= {
            w[:5]
            for w in re.findall(r"[a-z]{3,}", t.replace("_", " ").lower())
            if w not in cues.sets["field_stopwords"]
        }
    return frozenset(words)


def _other_purpose(readings: list[Reading], field_words: frozenset[str]) -> None:
    """Step 8 (a): a value for another purpose than the field's, beside one for it."""
    fits = {r.value for r in readings if r.purpose and r.purpose & field_words}
    elsewhere = {r.value for r in readings if r.purpose and not r.purpose & field_words} - fits
    if fits and elsewhere:
        for r in readings:
            if (
                r.value in elsewhere
                and r.asserted
                and not (r.frame == "done" and r.role == "target")
            ):
                r.asserted, r.frame = False, "other_purpose"
                r.cue = "a purpose other than the field's, beside a value for it"


def _bare_head_left(cues: Cues, units: list[Unit], readings: list[Reading]) -> None:
    """Step 8 (b): a bare value opening a prose sentence ("X (you moved to Y in March).", "X -
    you switched to Y") is the value left when a later clause of that sentence reports a change
    made to another value, and no [frames] also cue says both are held."""
    glue = cues.sets["determiners"] | cues.sets["openers"]
    for r in readings:
        if not (r.asserted and r.frame == "current" and r.where and units[r.unit].kind == "prose"):
            continue
        cl, ti = r.where
        if (
            cl.index != 0
            or any(t.kind == "w" and t.word not in glue for t in cl.toks)
            or sum(t.kind == "v" for t in cl.toks) != 1
        ):
            continue
        for r2 in readings:
            if r2.value == r.value or r2.unit != r.unit or not r2.where or not r2.asserted:
                continue
            cl2, _ = r2.where
            if (
                cl2.sentence == cl.sentence
                and cl2.index > 0
                and r2.frame == "done"
                and r2.role == "target"
                and not cues.rx["also"].search(cl2.s())
            ):
                r.asserted, r.frame = False, "past"
                r.cue = f"the value left by the change the answer reports ({r2.cue})"
                break


def _conclusion(units: list[Unit], readings: list[Reading]) -> None:
    """Step 8: when the answer draws its own conclusion, only what it concludes is asserted."""
    drawn = {
        r.value for r in readings if r.conclusion and r.asserted and units[r.unit].kind == "prose"
    }
    if drawn:
        for r in readings:
            if units[r.unit].kind == "prose" and r.asserted and r.value not in drawn:
                r.asserted, r.frame, r.cue = False, "past", "not what the answer concludes"


def _deciding(units: list[Unit], mine: list[Reading]) -> Reading | None:
    """Step 8: the reading that asserts a value (any record; in prose, the last asserting one
    that no later occurrence ends), or None."""
    decided = None
    for r in mine:
        kind = units[r.unit].kind
        if kind != "prose":
            if r.asserted:
                decided = decided or r
            continue
        if r.asserted:
            decided = r
        elif (
            decided is not None
            and units[decided.unit].kind == "prose"
            and r.order > decided.order
            and (r.frame == "ended" or (r.frame == "done" and r.role == "source"))
        ):
            decided = None  # the narrative itself ends it later on
    return decided


def judge_answer(
    cues: Cues, answer: str, values: tuple[str, ...], field_words: frozenset[str] = frozenset()
) -> tuple[list[str], str]:
    """(asserted values, rationale): steps 1-9 of the rules file."""
    values = tuple(dict.fromkeys(v for v in values if v.strip()))
    units, records = read_structure(cues, answer)
    forms = value_forms(cues, values)
    readings = read_units(cues, units, forms)
    asserted: list[str] = []
    reasons: list[str] = []
    if field_words:
        _other_purpose(readings, field_words)
    _bare_head_left(cues, units, readings)
    _conclusion(units, readings)
    for vi, value in enumerate(values):
        mine = sorted((r for r in readings if r.value == vi), key=lambda r: r.order)
        if not mine:
            continue
        decided = _deciding(units, mine)
        shown = decided or mine[-1]
        if decided is None:
            # the reading that decided: the first one that is not merely a mention
            shown = next((r for r in mine if r.frame not in ("mention",)), mine[0])
        reasons.append(describe(shown, value, units[shown.unit].kind))
        if decided is not None:
            asserted.append(value)
    if asserted:  # step 9: a name joined to a value stated as current
        for name in beside_names(cues, [r for r in readings if r.asserted]):
            asserted.append(name)
            reasons.append(f"'{name}' is stated as current beside it and is neither labelled value")
    if not asserted:
        other = other_value(cues, units, records, forms, field_words)
        if other:
            asserted.append(other)
            reasons.append(f"'{other}' is stated as current and is neither labelled value")
    if not reasons:
        toks = " ".join(t.word for t in tokenize(answer, cues.contractions))
        m = cues.rx["no_answer"].search(toks)
        return [], (
            f"Says it does not know ('{m.group(0)}')."
            if m
            else "Names none of the arc's values and no other current value the rules can find."
        )
    return asserted, "; ".join(dict.fromkeys(reasons)) + "."
