"""The rules of the offline classifier v2, one function each, in the order of its data file's header.

A rule reads one scope of a sentence (a change verb, a cue, or the sentence) and returns a
``Reading`` (a class, a weight and why) or None when it does not apply. ``RULES`` lists them by
the header's steps; in each line the first rule with a reading decides that scope. Steps 1, 3
and 7 (which cues stand, dates, reason clauses) are read into the sentence before any rule runs
(``_scoped_sentence``); a reading in a reason clause counts ``reason_factor`` of its weight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from ._scoped_sentence import BARE, OPERATORS, SOFT, Sentence, Span, blocked, verb_forms
from .classes import EVIDENCE_TYPES

SPEC, DONE, CORR, OTHER = EVIDENCE_TYPES
OTHER_CUES = frozenset({"preference", "habit", "request", "gratitude"})


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence for a class: what fired, where, and how much it adds."""

    sentence: int
    cls: str
    weight: float
    rule: str
    surface: str
    weak: bool = False  # evidence with no change verb: the statement keeps only its strongest


class Reading(NamedTuple):
    """What a rule reads in its scope, before the reason-clause factor."""

    cls: str
    weight: float
    rule: str
    span: Span | None = (
        None  # the cue read: shown, and in a reason clause or not (None: weighed already)
    )
    weak: bool = False


NOTHING = Reading(OTHER, 0.0, "nothing counts")  # decides its scope and adds no evidence


class _Before(NamedTuple):
    """What stands before a past form, back to its subject (step 2, past readings)."""

    negated: bool
    have: bool
    modal_have: bool  # a [recall_modals] word right before "have"
    j: int  # the subject's index (-1: none)
    subject: str


class Scope:
    """What a rule reads: a sentence and in it a change verb or a cue (``sp``), or the whole
    sentence (``sp`` None). What several verb rules ask is answered once, on first use."""

    def __init__(self, s: Sentence, sp: Span | None = None):
        self.s, self.sp, self.w = s, sp, s.lex.w

    @cached_property
    def forms(self) -> set[str]:
        return verb_forms(self.sp)

    @cached_property
    def governor(self) -> Span | None:
        """The operator governing this change verb (only base, third-person and -ing forms have one)."""
        return self.s.governors.get(id(self.sp))

    @cached_property
    def subject(self) -> str:
        return self.s.verb_subject(self.sp, self.governor)

    @cached_property
    def subject_factor(self) -> float:
        return self.w["other_subject_weight"] if self.subject == "other" else 1.0

    @cached_property
    def past(self) -> bool:
        return bool(self.forms & {"past", "participle"})

    @cached_property
    def before(self) -> _Before:
        s, lex = self.s, self.s.lex
        words = s.words
        j = self.sp.a - 1
        negated = have = modal_have = False
        while j >= 0 and words[j] in lex.skip:
            if words[j] in lex.negations:
                negated = True
            if words[j] in lex.have:
                have = True
                if j > 0 and words[j - 1] in lex.recall_modals:
                    modal_have = True
            j -= 1
        return _Before(negated, have, modal_have, j, words[j] if j >= 0 else "")

    @cached_property
    def prev_index(self) -> int:
        """Index of the word before the verb, adverbs skipped (-1: none)."""
        return self.s.left(self.sp.a, self.s.lex.adverbs)

    @cached_property
    def prev_word(self) -> str:
        return self.s.words[self.prev_index] if self.prev_index >= 0 else ""


Rule = Callable[[Scope], "Reading | None"]


# -- step 2: a change verb's reading --------------------------------------------------------------
def governed_by_you(c: Scope) -> Reading | None:
    """GOVERNED with "you" as the subject ("if you switch"): nothing counts."""
    if c.governor is not None and c.subject == "second":
        return NOTHING
    return None


def declined_change(c: Scope) -> Reading | None:
    """UNREALIZED: governed, after an abandon cue, or with a negation between the operator and the
    verb or right before a firm operator ("I won't switch"; after a hedge it changes nothing)."""
    op = c.governor
    if op is not None and (
        c.s.abandoned(c.sp) or (c.s.negated_between(op, c.sp) and not op.cats & SOFT)
    ):
        return Reading(
            SPEC, c.w["unrealized"] * c.subject_factor, "declined change: not real", c.sp
        )
    return None


def governed_change(c: Scope) -> Reading | None:
    """GOVERNED: an operator before the verb in its scope ("I might switch")."""
    if c.governor is not None:
        return Reading(
            SPEC,
            c.w["governed_change"] * c.subject_factor,
            f"change under {_name(c.governor)}",
            c.sp,
        )
    return None


def pending_completion(c: Scope) -> Reading | None:
    """PENDING: a negated perfect, or a negated past form beside "yet"/"still" ("I have not
    switched", "still haven't moved")."""
    b = c.before
    if c.past and (b.negated or b.subject in c.s.lex.negator_subjects) and (b.have or c.s.pending):
        return Reading(SPEC, c.w["pending_change"], "negated completion: not yet", c.sp)
    return None


def negated_past(c: Scope) -> Reading | None:
    """UNREALIZED: a past form under a negation, or with a negating subject ("I never switched",
    "nothing changed")."""
    b = c.before
    if c.past and (b.negated or b.subject in c.s.lex.negator_subjects):
        return Reading(SPEC, c.w["unrealized"], "negated past: no change happened", c.sp)
    return None


def hedged_recall(c: Scope) -> Reading | None:
    """A modal right before "have" and a past form ("I might have switched"): other."""
    if c.past and c.before.modal_have:
        return Reading(OTHER, c.w["hedged_recall"], "hedged recall (modal + have)", c.sp)
    return None


def past_with_future_time(c: Scope) -> Reading | None:
    """A past form with a future time in its scope: scheduled."""
    if c.past and c.s.future_near(c.sp.a):
        return Reading(
            SPEC, c.w["scheduled_change"], "past form beside a future time: scheduled", c.sp
        )
    return None


def completed_change(c: Scope) -> Reading | None:
    """A past form whose subject is the speaker or that opens its clause: completed, plus
    completion_bonus per completion adverb or past time in its segment (at most two)."""
    if not c.past:
        return None
    s, lex, (_, _, _, j, subject) = c.s, c.s.lex, c.before
    v = c.sp
    if (
        j < 0
        or subject in lex.first
        or subject in lex.openers
        or subject in lex.segment_words
        or s.seg[j] != s.seg[v.a]
    ):
        bonus = sum(
            1
            for sp in s.spans
            if s.seg[sp.a] == s.seg[v.a] and sp.cats & {"completion_adverb", "past_time"}
        )
        w = c.w["completed_change"] + c.w["completion_bonus"] * min(2, bonus)
        return Reading(
            DONE, w, "past change, first person" if subject in lex.first else "past change", v
        )
    return None


def completed_other_subject(c: Scope) -> Reading | None:
    """A past form with another subject ("my rent went up")."""
    if c.past:
        return Reading(DONE, c.w["completed_other_subject"], "past change, another subject", c.sp)
    return None


def abandoned_change(c: Scope) -> Reading | None:
    """UNREALIZED: after an abandon cue ("gave up on switching")."""
    if c.s.abandoned(c.sp):
        return Reading(SPEC, c.w["unrealized"], "abandoned change: not real", c.sp)
    return None


def pending_change(c: Scope) -> Reading | None:
    """PENDING: in a sentence with a negation and "yet" ("No news on switching yet")."""
    if c.s.pending_negated:
        return Reading(SPEC, c.w["pending_change"], "pending: a negation with 'yet'", c.sp)
    return None


def futurate_progressive(c: Scope) -> Reading | None:
    """An -ing form right after "am/is/are" ("I'm switching to X"); scheduled with a future time;
    nothing for an activity verb ("I'm learning Spanish")."""
    lex = c.s.lex
    if "ing" in c.forms and c.prev_word in lex.be and c.prev_word not in lex.past_be:
        if lex.verb_lemma.get(c.sp.surface) in lex.activity:
            return NOTHING
        w = c.w["scheduled_change"] if c.s.future_near(c.sp.a) else c.w["futurate"]
        return Reading(SPEC, w, "futurate progressive", c.sp)
    return None


def prospective_gerund(c: Scope) -> Reading | None:
    """An -ing form after a [prospective] preposition closing a speaker's attitude ("I'm undecided
    about moving")."""
    if (
        "ing" in c.forms
        and c.prev_word in c.s.lex.prospective
        and c.s.speaker_attitude(c.prev_index)
    ):
        return Reading(SPEC, c.w["prospective_gerund"], "prospective gerund", c.sp)
    return None


def scheduled_change(c: Scope) -> Reading | None:
    """A future time in the verb's scope ("I start at Acme next month")."""
    if c.s.future_near(c.sp.a):
        return Reading(SPEC, c.w["scheduled_change"], "change with a future time", c.sp)
    return None


def present_state(c: Scope) -> Reading | None:
    """A present_state cue or "now" in the verb's segment ("as of May I subscribe to X")."""
    s, v = c.s, c.sp
    if s.in_seg(v.a, "present_state") or any(
        s.words[i] == "now" for i in range(len(s.words)) if s.seg[i] == s.seg[v.a]
    ):
        return Reading(DONE, c.w["present_state"], "present state", v)
    return None


# -- step 4: operators with no change verb, pending, idioms, past time, "now" -------------------
def bare_operator(c: Scope) -> Reading | None:
    """The strongest operator that governs no change verb (none that a continuation follows or a
    negation before a firm operator cancels); modal-only evidence is weak."""
    s, w = c.s, c.w
    bare, rule, weak = 0.0, "", False
    for op, continued in s.free_ops:
        if continued or (s.negated_op(op) and not op.cats & SOFT):
            continue
        cls = next(k for k in BARE if k in op.cats)
        x, why = w[f"bare_{cls}"], f"{cls} with no change verb"
        if cls != "modal" and s.action_follows(op):
            x, why = max(x, w["governed_action"]), f"{cls} over another verb"
        if any(
            op.b <= sp.a and not blocked(op.b, sp.a, s.barrier)
            for sp in s.spans
            if "future_time" in sp.cats
        ):
            x, why = max(x, w["bare_with_future"]), f"{cls} with a future time"
        x *= {"second": 0.0, "other": w["other_subject_weight"]}.get(s.operator_subject(op), 1.0)
        if s.reason[op.a]:
            x *= w["reason_factor"]
            why += " (in a reason clause)"
        if x > bare:
            bare, rule, weak = (
                x,
                f"{why} '{op.surface}'",
                why.startswith("modal with no change verb"),
            )
    return Reading(SPEC, bare, rule, None, weak) if bare else None


def pending_bare(c: Scope) -> Reading | None:
    """A negation with "yet" and no change verb in its segment (weak)."""
    s = c.s
    if not (s.pending and s.negated):
        return None
    verb_segs = {s.seg[v.a] for v in s.verbs}
    for sp in s.spans:
        if (
            sp.surface == "yet"
            and s.seg[sp.a] not in verb_segs
            and any(
                "negation" in s.cat_at[i] for i in range(len(s.words)) if s.seg[i] == s.seg[sp.a]
            )
        ):
            return Reading(SPEC, c.w["pending_bare"], "negation with 'yet'", sp, weak=True)
    return None


def completion_idiom(c: Scope) -> Reading | None:
    """A completion idiom with no future time in its scope ("pulled the trigger")."""
    if "completion_idiom" in c.sp.cats and not c.s.future_near(c.sp.a):
        return Reading(DONE, c.w["completion_idiom"], "completion idiom", c.sp)
    return None


def past_time_alone(c: Scope) -> Reading | None:
    """In a sentence with no change verb, a past time outside every operator's segment."""
    s = c.s
    if s.verbs:
        return None
    for sp in s.spans:
        if "past_time" in sp.cats and s.seg[sp.a] not in s.op_segs and not s.future_near(sp.a):
            return Reading(DONE, c.w["past_time_alone"], "past time, no change verb", sp)
    return None


def now_state(c: Scope) -> Reading | None:
    """In a sentence with no change verb and no question, "now" outside every operator's segment."""
    s = c.s
    if s.verbs:
        return None
    for sp in s.spans:
        if (
            sp.surface == "now"
            and s.seg[sp.a] not in s.op_segs
            and not s.question
            and not s.future_near(sp.a)
        ):
            return Reading(DONE, c.w["now_state"], "'now' in a present-tense clause", sp)
    return None


def continuation(c: Scope) -> float:
    """Step 4's evidence for other: an operator followed by a continuation or discourse formula
    ("I'll keep going", "I'll let you know"; not said of "you"), or a discourse formula alone."""
    s = c.s
    cont = 0.0
    for op, continued in s.free_ops:
        if continued and s.operator_subject(op) != "second":
            cont = max(cont, s.lex.w["continuation"])
    for sp in s.spans:
        if "discourse" in sp.cats and not any(o.a <= sp.a <= o.b + 4 for o in s.ops):
            cont = max(cont, s.lex.w["continuation"])
    return cont


# -- step 5: corrections ------------------------------------------------------------------------------
def correction(c: Scope) -> Reading | None:
    """A corrective marker ("scratch that")."""
    if "correction" in c.sp.cats:
        return Reading(CORR, c.w["correction"], "corrective marker", c.sp)
    return None


def weak_correction(c: Scope) -> Reading | None:
    """The first weak corrective marker ("actually"), stronger with a negation in the sentence."""
    s = c.s
    weak = [sp for sp in s.spans if "correction_weak" in sp.cats]
    if not weak:
        return None
    w = c.w["correction_weak_negated"] if s.negated else c.w["correction_weak"]
    return Reading(
        CORR, w, "weak corrective marker" + (" with a negation" if s.negated else ""), weak[0]
    )


# -- step 6: other -------------------------------------------------------------------------------------
def other(c: Scope) -> Reading | None:
    """Preference, habit, request and gratitude cues, and a question unless the sentence
    speculates (it reads the evidence found so far, so it comes last); at most other_cap, at least
    the sentence's continuation evidence."""
    s, w = c.s, c.w
    total = sum(
        w["other_cue"] * (w["reason_factor"] if s.reason[sp.a] else 1.0)
        for sp in s.spans
        if sp.cats & OTHER_CUES
    )
    asks = s.question and not any(e.cls == SPEC for e in s.out)
    if asks:
        total += w["question"]
    total = max(min(w["other_cap"], total), continuation(c))
    if total > 0:
        return Reading(OTHER, total, "non-revisionary cues" + (" (question)" if asks else ""))
    return None


# The rules by the header's steps. Each line: the step, what its rules read ("verb": each change
# verb; "sentence": the sentence once; a cue category: each cue of it) and the rules; for each
# scope the first rule with a reading decides.
RULES: tuple[tuple[str, str, tuple[Rule, ...]], ...] = (
    (
        "2",
        "verb",
        (
            governed_by_you,
            declined_change,
            governed_change,
            pending_completion,
            negated_past,
            hedged_recall,
            past_with_future_time,
            completed_change,
            completed_other_subject,
            abandoned_change,
            pending_change,
            futurate_progressive,
            prospective_gerund,
            scheduled_change,
            present_state,
        ),
    ),
    ("4", "sentence", (bare_operator,)),
    ("4", "sentence", (pending_bare,)),
    ("4", "completion_idiom", (completion_idiom,)),
    ("4", "sentence", (past_time_alone,)),
    ("4", "sentence", (now_state,)),
    ("5", "correction", (correction,)),
    ("5", "sentence", (weak_correction,)),
    ("6", "sentence", (other,)),
)


def read(s: Sentence) -> list[Evidence]:
    """Every rule over the sentence, in ``RULES`` order: its evidence."""
    whole = [Scope(s)]
    for _, unit, rules in RULES:
        if unit == "sentence":
            scopes = whole
        elif unit == "verb":
            scopes = [Scope(s, v) for v in s.verbs]
        else:
            scopes = [Scope(s, sp) for sp in s.spans if unit in sp.cats]
        for scope in scopes:
            for rule in rules:
                if (r := rule(scope)) is not None:
                    take(s, r)
                    break
    return s.out


def take(s: Sentence, r: Reading) -> None:
    """A reading as evidence: weighed by reason_factor in a reason clause (step 7); none at 0."""
    weight, rule = r.weight, r.rule
    if r.span is not None and s.reason[r.span.a]:
        weight *= s.lex.w["reason_factor"]
        rule += " (in a reason clause)"
    if weight:
        s.out.append(Evidence(s.k, r.cls, weight, rule, r.span.surface if r.span else "", r.weak))


def _name(op: Span) -> str:
    cat = next(c for c in OPERATORS if c in op.cats)
    return f"{cat} '{op.surface}'"
