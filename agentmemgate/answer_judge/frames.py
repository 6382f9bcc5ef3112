"""Steps 4 to 6 of the version 2 rules: the frame of one occurrence of a labelled value.

``scope_of`` gathers the words around the occurrence (step 4: LEFT, NEAR, RIGHT, BEYOND, ...);
``FRAME_RULES`` then lists the rules of step 5 in the order the rule file's header gives them, and
``read_frame`` applies the first that gives a reading. Each rule is a function
``(Scope) -> Reading | None``, testable alone; whether a reading asserts its value (step 6) is
decided with it. Every word a rule looks for is in the rule file (``Cues``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from ._clauses import Clause, Reading
from ._tokens import is_value_token, names_a_value, past_form, value_token
from .cues import Cues


# -- step 4: the scope of one occurrence ----------------------------------------------------------
@dataclass
class Scope:
    """One occurrence of value ``vi`` at token ``ti`` of clause ``cl`` and the words around it.
    The strings are token strings (values as placeholders); what a rule derives from them
    (``role``, ``verb``, ...) is computed once, when a rule first asks."""

    c: Cues
    vi: int
    cl: Clause
    ti: int
    clauses: list[Clause]  # the clauses of its sentence
    ci: int  # the index of ``cl`` among them
    prev_vi: int | None  # the token index of the value before it in the clause
    earlier: list[Reading]  # the readings of the clause so far
    left: str  # the clause before it
    near: str  # the words since the previous value (what frames this one)
    right: str  # the words after it (see ``scope_of``)
    whole: str  # the clause
    later: str  # the clauses after it in the sentence
    beyond: str  # the rest of the sentence, when it names no other value
    opens: bool  # only glue, openers and break words before it: it opens its clause
    next_value: int  # the token index of the next value in the clause (or the clause's length)

    @cached_property
    def glue(self) -> set[str]:
        return self.c.sets["coordinators"] | self.c.sets["determiners"]

    @cached_property
    def near_tail(self) -> list[str]:
        return self.near.split()

    @cached_property
    def verb(self) -> str:
        return governing_verb(self.c, self.near)[0]

    @cached_property
    def role(self) -> str:
        """``source`` (the value a change leaves), ``target`` (the value it moves to) or
        ``state`` (see ROLE in the header)."""
        c, rx, near = self.c, self.c.rx, self.near
        if (
            self.prev_vi is not None
            and near.strip() in c.sets["source_then_target"]
            and self.earlier
            and self.earlier[-1].role == "source"
        ):
            return "target"
        core = list(self.near_tail)
        while core and core[-1] in c.sets["noun_determiners"]:
            core.pop()
        last3 = " ".join(core[-3:])
        sm = [x for x in rx["source"].finditer(last3) if last3.endswith(x.group(0))]
        joined = " ".join(core)
        if [x for x in rx["replaced_by"].finditer(joined) if joined.endswith(x.group(0))]:
            return "target"  # "X was replaced by Y"
        if sm and (
            sm[-1].group(0) not in c.sets["source_needs_change"]
            or rx["change_words"].search(self.left)
        ):
            return "source"
        if rx["target"].search(near):
            return "target"
        return "state"

    @cached_property
    def plan_cue(self) -> str | None:
        """A plan cue in LEFT, or a plan_after cue in RIGHT that is not a product's plan."""
        c, nt = self.c, self.near_tail
        m = plan_before(c, self.left)
        if not m and self.role != "source" and (m2 := c.rx["plan_after"].search(self.right)):
            m = m2.group(0)
            # "switched to a Mint plan", "on a Kaiser plan": the product's plan, not an intention
            if (
                c.rx["service_nouns"].fullmatch(m)
                and self.right.split()[:1] == [m]
                and (
                    self.verb in c.change_past
                    or nt[-1:]
                    and nt[-1] in c.sets["service_articles"]
                    or nt[-1:]
                    and nt[-1] in c.sets["service_preps"]
                    or (
                        len(nt) >= 2
                        and nt[-2] in c.sets["service_preps"]
                        and nt[-1] in c.sets["determiners"]
                    )
                )
            ):
                m = None
        return m

    @cached_property
    def last_known(self) -> re.Match | None:
        return self.c.rx["last_known"].search(self.left)

    def reading(self, frame: str, cue: str, asserted: bool, role: str = "state") -> Reading:
        return Reading(self.vi, frame, role, cue, asserted, 0, 0)

    def change_not_made(self, frame: str, cue: str) -> Reading:
        """A change not made leaves its source current ("wants to move from X", "never left
        X"): asserted only for a source."""
        return self.reading(frame, cue, self.role == "source", self.role)


def scope_of(
    c: Cues,
    cl: Clause,
    ti: int,
    clauses: list[Clause],
    ci: int,
    sentence_tail: list[str],
    prev_vi: int | None,
    earlier: list[Reading],
) -> Scope:
    """Step 4 for the value at token ``ti`` of clause ``cl`` (``sentence_tail``: the token
    strings of the sentence's clauses)."""
    left = cl.s(0, ti)
    near = cl.s((prev_vi + 1) if prev_vi is not None else 0, ti)
    # a coordinator with words between it and the value opens a new predicate ("declined
    # the X trial and kept going with Y"): what stands before it frames the earlier value
    nw = near.split()
    co = max((k for k, w in enumerate(nw[:-1]) if w in c.sets["coordinators"]), default=None)
    if co is not None and prev_vi is not None:
        near = " ".join(nw[co + 1 :])
    vpos = [j for j, t in enumerate(cl.toks) if t.kind == "v"]
    nxt = next_value = next((j for j in vpos if j > ti), len(cl.toks))
    right = cl.s(ti + 1, nxt)
    # coordinated subjects ("X and Y were both cancelled"): the predicate after the last one
    glue = c.sets["coordinators"] | c.sets["determiners"]
    while right and all(w in glue for w in right.split()) and nxt < len(cl.toks):
        j = nxt
        nxt = next((k for k in vpos if k > j), len(cl.toks))
        right = cl.s(j + 1, nxt)
    # a coordinator after the value opens another predicate ("X and plan to try Y")
    rw = right.split()
    cut = next((k for k, w in enumerate(rw) if w in c.sets["coordinators"]), None)
    if cut is not None:
        right = " ".join(rw[:cut])
    later = " ".join(sentence_tail[ci + 1 :])
    # the rest of the sentence after the value, when no other value is named there
    beyond = "" if any(j > ti for j in vpos) or names_a_value(later) else f"{cl.s(ti + 1)} {later}"
    if c.beyond_to_next_value and not beyond and not any(j > ti for j in vpos):
        # version 9 on: the clauses after it up to the first that names a value ("signed with X,
        # with a start date of June 2; until then, Y remains ...")
        upto = []
        for t in sentence_tail[ci + 1 :]:
            if names_a_value(t):
                break
            upto.append(t)
        beyond = f"{cl.s(ti + 1)} {' '.join(upto)}" if upto else ""
    opens = all(
        t.word in glue | c.sets["openers"] | c.sets["break_words"]
        for t in cl.toks[:ti]
        if t.kind == "w"
    )
    if opens and not right:
        # a subject before an appositive or a relative clause: its predicate is further on
        rel = None
        for nc in clauses[ci + 1 :]:
            first = nc.toks[0].word if nc.toks else ""
            if first in c.sets["relative"]:
                rel = rel or nc.s()
                continue
            if (
                any(t.kind == "v" for t in nc.toks)
                or first in c.sets["coordinators"]
                or (first in c.sets["break_words"] and first not in c.sets["time_subordinators"])
            ):
                break
            right = nc.s()
            break
        if not right and rel:
            right = rel
    return Scope(
        c,
        cl.toks[ti].value,
        cl,
        ti,
        clauses,
        ci,
        prev_vi,
        earlier,
        left,
        near,
        right,
        cl.s(),
        later,
        beyond,
        opens,
        next_value,
    )


# -- step 5: the rules, in the header's order ----------------------------------------------------
def question(s: Scope) -> Reading | None:
    """The sentence is a question back to the user."""
    if s.cl.question:
        return s.reading("question", "a question back to the user", False)
    return None


def choice(s: Scope) -> Reading | None:
    """ "X or Y", a choice cue in LEFT, a bare value beside a conflict cue, or one of several
    possibilities."""
    c, rx = s.c, s.c.rx
    if (
        s.prev_vi is not None
        and rx["or_before"].fullmatch(s.near.strip())
        and any(w in c.sets["choice_joins"] for w in s.near.split())
    ):
        return s.reading("choice", "one side of 'X or Y'", False)
    if s.next_value < len(s.cl.toks) and rx["or_after"].fullmatch(
        s.cl.s(s.ti + 1, s.next_value).strip()
    ):
        return s.reading("choice", "one side of 'X or Y'", False)
    m = rx["choice"].search(s.left)
    if m and (m.group(0) not in c.sets["choice_with_decision"] or rx["decision"].search(s.whole)):
        return s.reading("choice", f"'{m.group(0)}'", False)
    if (
        not s.left.strip()
        and not s.right.strip()
        and any(rx["conflict"].search(o.s()) for o in s.clauses)
    ):
        m = rx["conflict"].search(" ".join(o.s() for o in s.clauses))
        return s.reading("choice", f"'{m.group(0)}'", False)
    if (m := rx["possibility"].match(s.left)) and any(
        rx["possibility"].match(o.s()) and any(t.kind == "v" and t.value != s.vi for t in o.toks)
        for o in s.clauses
        if o is not s.cl
    ):
        return s.reading("choice", f"one of several possibilities ('{m.group(0)}')", False)
    return None


def replaced(s: Scope) -> Reading | None:
    """The first value of a clause as the subject of "replaced by" (left) or "has replaced"
    (a change made)."""
    if s.opens and s.prev_vi is None:
        if m := s.c.rx["replaced_by"].search(s.right):
            return s.reading("done", f"left ('{m.group(0)}')", False, "source")
        if (m := s.c.rx["replaces"].search(s.right)) and s.next_value < len(s.cl.toks):
            return s.reading("done", f"a change made ('{m.group(0)}')", True, "target")
    return None


def coordinated(s: Scope) -> Reading | None:
    """A value right after "and"/"or" takes the reading of the value before it; so does (version
    4 on) one after "and"/"or" and a gerund when the value before it was the object of a
    mentioned or planned gerund ("talked about giving X another go or trying Y")."""
    lw = s.left.split()
    gerund = (
        s.c.mention_gerund
        and len(lw) > 2
        and lw[-2] in s.c.sets["coordinators"]
        and lw[-1].endswith("ing")
        and s.near.strip() == lw[-1]
        and bool(s.earlier)
        and s.earlier[-1].frame in ("mention", "plan")
    )
    if (
        s.prev_vi is not None
        and (s.near.strip() in s.c.sets["coordinators"] or gerund)
        and s.earlier
        and s.earlier[-1].frame != "invalid"
    ):
        e = s.earlier[-1]
        return Reading(s.vi, e.frame, e.role, e.cue + " (coordinated)", e.asserted, 0, 0)
    return None


def kept(s: Scope) -> Reading | None:
    """The governing verb is a continuation ("stayed with X")."""
    if s.c.rx["continuation"].fullmatch(s.verb or "-"):
        return s.reading("current", f"kept ('{s.verb}')", True, "state")
    return None


def abandoned(s: Scope) -> Reading | None:
    """An abandoned cue in LEFT's last verb phrase or around the value."""
    c = s.c
    lw = s.left.split()
    vp_start = max(
        (
            i + 1
            for i, w in enumerate(lw)
            if w in c.sets["coordinators"] and not (i + 1 < len(lw) and is_value_token(lw[i + 1]))
        ),
        default=0,
    )
    if m := c.rx["abandoned"].search(" ".join(lw[vp_start:])) or c.rx["abandoned"].search(
        f"{s.near} {value_token(s.vi)} {s.right}"
    ):
        return s.change_not_made("abandoned", f"'{m.group(0)}'")
    return None


def declined(s: Scope) -> Reading | None:
    """A declined cue in NEAR, or declined_adjacent right before the value; under a plan cue
    the value a wished change would leave (current)."""
    c, nt = s.c, s.near_tail
    m = c.rx["declined"].search(s.near)
    if not m and nt and nt[-1] in c.sets["declined_adjacent"]:
        m = re.search(re.escape(nt[-1]) + "$", s.near)
    if m and s.role != "source":
        if p := plan_before(c, s.left):
            # "you wish you had Y instead of X": only wished, so X stays current
            return s.reading(
                "plan",
                f"'{p}' ... '{m.group(0)}': the value a wished change would leave",
                True,
                "source",
            )
        return s.reading("declined", f"'{m.group(0)}'", False)
    return None


def someone_else(s: Scope) -> Reading | None:
    """Another person is the clause's subject, or (version 4 on) a value opening its clause is
    described as another person's ("X is your sister's carrier")."""
    if who := other_person(s.c, s.left) or (s.opens and others_own(s.c, s.right)):
        return s.reading("someone_else", f"'{who}'", False, s.role)
    return None


def negated(s: Scope) -> Reading | None:
    """A negation within neg_reach words before the value, or opening RIGHT for a value that
    opens its clause."""
    c = s.c
    m = c.rx["negation"].search(" ".join(s.left.split()[-c.neg_reach :]))
    if not m and s.opens:
        m = c.rx["negation"].search(" ".join(s.right.split()[:3]))
    if m:
        return s.change_not_made("negated", f"'{m.group(0)}'")
    return None


def joined(s: Scope) -> Reading | None:
    """A value opening its clause before a joined_by cue ("X hired you"): a change made, or a
    future start when a future_start cue follows before the next value."""
    if s.opens and (m := s.c.rx["joined_by"].search(s.right)):
        upto = []
        for nc in s.clauses[s.ci + 1 :]:
            if any(t.kind == "v" for t in nc.toks):
                break
            upto.append(nc.s())
        if f := s.c.rx["future_start"].search(" ".join([s.right] + upto)):
            # "X hired you, but your start date is next month"
            return s.reading(
                "future_start", f"'{m.group(0)}', then '{f.group(0)}'", False, "target"
            )
        return s.reading("done", f"a change made ('{m.group(0)}')", True, "target")
    return None


def offer(s: Scope) -> Reading | None:
    """An offer cue in NEAR or RIGHT; a source whose first RIGHT words hold it left the offer."""
    rx = s.c.rx
    if m := rx["offer"].search(f"{s.near} {s.right}"):
        if s.role == "source" and rx["offer"].search(" ".join(s.right.split()[:3])):
            # "cancelled a X trial": what was left is the offer, not a value the user had
            return s.reading("offer", f"'{m.group(0)}' (the offer itself was left)", False, s.role)
        return s.change_not_made("offer", f"'{m.group(0)}'")
    return None


def pending(s: Scope) -> Reading | None:
    """A pending cue in NEAR or RIGHT (not a habit), or a passive progressive in RIGHT; a source
    whose first RIGHT words hold it left the order itself."""
    rx = s.c.rx
    if m := (
        pending_cue(s.c, f"{s.near} {s.right}")
        or ((pp := rx["pending_passive"].search(s.right)) and pp.group(0))
        # version 9 on: "in the middle of moving from X to Y" holds Y too
        or (s.c.pending_target and s.role == "target" and pending_cue(s.c, s.left))
    ):
        if s.role == "source" and rx["pending"].search(" ".join(s.right.split()[:3])):
            return s.reading("pending", f"'{m}' (the order itself was left)", False, s.role)
        return s.change_not_made("pending", f"'{m}'")
    return None


def future_start(s: Scope) -> Reading | None:
    """A future_start cue in NEAR or RIGHT; a dated_start cue before a future time; a
    change_present verb with a future time or its subject; a change made with a future start in
    BEYOND."""
    c, rx = s.c, s.c.rx
    m = rx["future_start"].search(f"{s.near} {s.right}")
    cue = m.group(0) if m else None
    if not cue and (d := rx["dated_start"].search(s.right)):
        if rx["future_time"].search(" ".join(s.right[d.end() :].split()[:3])):
            cue = d.group(0)  # "enrolled in X starting January"
    nt = s.near_tail
    if (
        not cue
        and s.verb in c.sets["change_present"]
        and (
            rx["future_time"].search(s.whole)
            or (len(nt) >= 2 and nt[-2] in c.sets["change_present_subjects"])
        )
    ):
        cue = s.verb  # "you start at X"
    if not cue and s.verb in c.change_past and s.role != "source":
        m = rx["future_start"].search(s.beyond)  # "signed with X ... and start on Monday"
        if not m and any(w in c.sets["change_present"] for w in s.beyond.split()):
            m = rx["future_time"].search(s.beyond)  # "closed on a house in X and move in next week"
        cue = m.group(0) if m else None
    if cue:
        return s.change_not_made("future_start", f"'{cue}'")
    return None


def current_until_end(s: Scope) -> Reading | None:
    """A value opening its clause before a future_end verb is current until then."""
    if s.opens and (
        m := s.c.rx["future_end"].match(
            " ".join(w for w in s.right.split() if w not in s.c.sets["skip"])
        )
    ):
        # "when the X policy renews", "until X expires"
        return s.reading("current", f"current until it ends ('{m.group(0)}')", True, "source")
    return None


def _came_true(c: Cues, text: str) -> re.Match | None:
    """The first came_true cue in ``text``; from version 10 on, not one a negation just before
    denies ("hasn't happened yet")."""
    for m in c.rx["came_true"].finditer(text):
        before = " ".join(text[: m.start()].split()[-2:])
        if not (c.came_true_negated and c.rx["negation"].search(before)):
            return m
    return None


def _plan_outcome(s: Scope, cue: str) -> Reading:
    """A plan, unless the sentence says it came true (done) or was dropped (abandoned)."""
    rx = s.c.rx
    if done := _came_true(s.c, s.later) or _came_true(s.c, s.right):
        return s.reading(
            "done",
            f"a plan ('{cue}') that came true ('{done.group(0)}')",
            s.role != "source",
            s.role,
        )
    if ab := rx["abandoned"].search(s.right) or rx["abandoned"].search(s.later):
        return s.change_not_made("abandoned", f"a plan ('{cue}') dropped ('{ab.group(0)}')")
    return s.change_not_made("plan", f"'{cue}'")


def plan(s: Scope) -> Reading | None:
    """A plan cue in LEFT or a plan_after cue in RIGHT."""
    return _plan_outcome(s, s.plan_cue) if s.plan_cue else None


def described(s: Scope) -> Reading | None:
    """A value that is its clause's subject, with a predicate that does not make it the user's
    ("X is cheaper")."""
    c = s.c
    subject = all(
        w in s.glue | c.sets["break_words"] | c.sets["sentence_adverbs"] for w in s.left.split()
    )
    rfirst = s.right.split()[0] if s.right else ""
    predicate = rfirst in c.sets["be_present"] | c.sets["have"] | c.sets["aux_past"] or (
        rfirst.endswith("s") and len(rfirst) > 3 and rfirst not in c.sets["skip"]
    )
    if (
        subject
        and predicate
        and s.role == "state"
        and not c.rx["user_complement"].search(s.right)
        and not c.rx["continuation"].search(s.right)
        and not past_cue(c, s.near, s.right, s.opens)
    ):
        return s.reading("described", f"'{s.right}'", False, s.role)
    return None


def plan_signs(s: Scope) -> Reading | None:
    """The rest of the plan rule, read after ``described``: an appraisal of a value opening its
    clause, a near_miss before a past form, a futurate change verb, a bare value beside a
    condition or after "then"."""
    c = s.c
    m = None
    rk = [w for w in s.right.split() if w not in c.sets["skip"]]
    if (
        s.opens
        and rk[:1]
        and rk[0] not in c.sets["clause_subjects"]
        and (ap := c.rx["appraisal"].search(" ".join(rk[:5])))
    ):
        m = ap.group(0)  # "X looks good to you", "X's free tier sounds good"
    if not m:
        lw = s.left.split()
        for k, w in enumerate(lw[:-1]):
            nx = lw[k + 1]
            if w in c.sets["near_miss"] and (
                nx in c.change_past or nx in c.sets["past_verbs"] or past_form(nx)
            ):
                m = f"{w} {nx}"  # "almost bought X": it did not happen
    m = m or futurate(c, s.left) or next_step(c, s.clauses, s.ci, s.left, s.right)
    return _plan_outcome(s, m) if m else None


def past_complement(s: Scope) -> Reading | None:
    """A value opening its clause whose RIGHT makes the user the subject of a past form
    ("X is where you were born"), or (version 4 on), after a complement_links word (or a
    role_links word after any value, or a relative_links word opening the next clause), of a
    plan cue within complement_reach words ("X is where you're thinking of moving", "with X as
    something you've been meaning to try", "X, which you said you'd like to try")."""
    c = s.c
    rw = s.right.split()
    linked = bool(rw) and (
        (s.opens and rw[0] in c.sets["complement_links"]) or rw[0] in c.sets["role_links"]
    )
    after_value = s.clauses[s.ci + 1] if not rw and s.ci + 1 < len(s.clauses) else None
    if after_value is not None and not any(t.kind == "v" for t in after_value.toks):
        nw = after_value.s().split()  # "X, which you said you'd like to try": its description
        if nw and nw[0] in c.sets["relative_links"]:
            rw, linked = nw, True
    if (s.opens or linked) and c.rx["user_complement"].search(" ".join(rw)):
        for k in range(len(rw) - 1):
            if s.opens and rw[k] in c.sets["subject_words"] and rw[k + 1] in c.sets["past_verbs"]:
                return s.reading("past", f"'{' '.join(rw[k : k + 3])}'", False, s.role)
            if linked and c.complement_reach and rw[k] in c.sets["subject_words"]:
                after = " ".join(rw[k + 1 : k + 1 + c.complement_reach])
                if m := c.rx["plan"].search(after):
                    return _plan_outcome(s, m.group(0))
    return None


def mention(s: Scope) -> Reading | None:
    """The direct object of a mention verb, or a value opening its clause before a
    mentioned_after cue."""
    if m := mention_verb(s.c, s.near):
        return s.reading("mention", f"'{m}'", False, s.role)
    if s.opens and (m := s.c.rx["mentioned_after"].match(s.right)):
        return s.reading("mention", f"'{m.group(0)}'", False, s.role)  # "X keeps coming up"
    return None


def ended(s: Scope) -> Reading | None:
    """An ended cue in RIGHT or ending NEAR."""
    rx = s.c.rx
    if m := rx["ended"].search(s.right) or rx["ended"].search(" ".join(s.near_tail[-3:])):
        return s.reading("ended", f"'{m.group(0)}'", False, s.role)
    return None


def past(s: Scope) -> Reading | None:
    """A past cue or a past form governing the value, unless a last_known cue stands in LEFT."""
    m = past_cue(s.c, s.near, s.right, s.opens)
    if m and not s.last_known:
        if s.role == "source":
            return s.reading("done", f"left ('{m}')", False, s.role)
        return s.reading("past", f"'{m}'", False, s.role)
    return None


def done(s: Scope) -> Reading | None:
    """A change made (the governing verb a change_past form; pending when BEYOND says it is not
    complete), or a source left."""
    if s.verb in s.c.change_past:
        if s.role == "source":
            return s.reading("done", f"left ('{s.verb}')", False, s.role)
        if m := not_completed(s.c, s.beyond):
            return s.reading("pending", f"a change not completed ('{m}')", False, s.role)
        return s.reading("done", f"a change made ('{s.verb}')", True, s.role)
    if s.role == "source":
        return s.reading(
            "done", f"left ('{s.near_tail[-1] if s.near_tail else ''}')", False, s.role
        )
    return None


def current(s: Scope) -> Reading:
    """Otherwise: stated as current."""
    return s.reading(
        "current", "stated as current" + (" (last known)" if s.last_known else ""), True, s.role
    )


Rule = Callable[[Scope], "Reading | None"]

# Step 5 of the rule file's header, in its order. The header's "plan" is two entries here:
# ``described`` yields to a plan cue (LEFT, RIGHT) but comes before the plan rule's other signs
# (an appraisal, a near miss, a futurate verb, a condition, "then"). The ROLE the header lists
# after ``replaced`` is ``Scope.role``, computed when a rule first needs it.
FRAME_RULES: tuple[tuple[str, Rule], ...] = (
    ("question", question),
    ("choice", choice),
    ("replaced", replaced),
    ("coordinated", coordinated),
    ("kept", kept),
    ("abandoned", abandoned),
    ("declined", declined),
    ("someone_else", someone_else),
    ("negated", negated),
    ("done (joined_by)", joined),
    ("offer", offer),
    ("pending", pending),
    ("future_start", future_start),
    ("current (future_end)", current_until_end),
    ("plan (cues)", plan),
    ("described", described),
    ("plan (other signs)", plan_signs),
    ("past (user_complement)", past_complement),
    ("mention", mention),
    ("ended", ended),
    ("past", past),
    ("done", done),
    ("current", current),
)


def read_frame(scope: Scope) -> Reading:
    """The reading of the first rule of ``FRAME_RULES`` that applies (``current`` always does)."""
    for _, rule in FRAME_RULES:
        if (r := rule(scope)) is not None:
            return r
    raise AssertionError("the last rule, current, always applies")


# -- what the rules look for ---------------------------------------------------------------------
def pending_cue(c: Cues, local: str) -> str | None:
    """A [frames] pending cue, unless it is a present-tense verb of the user's habit ("you
    order from X", a memory line "Ships with X"): a cue word not ending in -ed/-ing right
    after a subject word (adverbs between) or opening the clause."""
    for m in c.rx["pending"].finditer(local):
        g = m.group(0)
        if " " not in g and not g.endswith(("ed", "ing")):
            before = local[: m.start()].split()
            while before and before[-1] in c.sets["adverbs"]:
                before.pop()
            if before and before[-1] in c.sets["pending_possessives"]:
                return g  # version 6 on: "your application", "their order": a noun
            if not before or before[-1] in c.sets["subject_words"]:
                continue
        return g
    return None


def plan_before(c: Cues, left: str) -> str | None:
    """A plan cue before the value; a temporal subordinator ("when", "once") over a past
    form is a time, not a condition ("when you got X")."""
    for m in reversed(list(c.rx["plan"].finditer(left))):
        if m.group(0) in c.sets["temporal"]:
            after = left[m.end() :].split()
            if any(w in c.change_past or w in c.sets["past_verbs"] or past_form(w) for w in after):
                continue
        return m.group(0)
    return None


def next_step(c: Cues, clauses: list[Clause], ci: int, left: str, right: str) -> str | None:
    """A bare value beside a clause of its sentence opened by a [frames] condition cue with no
    past form ("If the price drops, X."), or after "then" following a clause opened by a
    [frames] temporal word with no past form in the sentence so far ("X until the lease ends,
    then Y"): the step after the current one."""
    then = c.sets["then_words"]
    if (
        right.strip() and right.strip() not in [o.s() for o in clauses[ci + 1 : ci + 2]]
    ) or not all(
        w in c.sets["determiners"] | c.sets["sentence_adverbs"] | then for w in left.split()
    ):
        return None
    for oi, o in enumerate(clauses):  # "If the price drops, X." / "X, once your boss agrees."
        if (
            oi == ci
            or any(t.kind == "v" for t in o.toks)
            or any(x.lead == ";" for x in clauses[min(oi, ci) + 1 : max(oi, ci) + 1])
        ):
            continue
        ow = o.s()
        if (cm := c.rx["condition"].match(ow)) and not any(
            w in c.sets["past_verbs"] or past_form(w) for w in ow.split()
        ):
            return f"'{cm.group(0)}' ('{ow}')"
    if left.strip() not in then or right.strip():
        return None
    earlier = [cl.s() for cl in clauses[:ci]]
    if not any(e.split()[:1] and e.split()[0] in c.sets["temporal"] for e in earlier):
        return None
    if any(w in c.sets["past_verbs"] or past_form(w) for e in earlier for w in e.split()):
        return None
    return "then, after 'until'/'when'"


def futurate(c: Cues, left: str) -> str | None:
    """A futurate progressive of a change verb: "you're moving out of", "is switching to"."""
    w = left.split()
    for i in range(len(w) - 1):
        if w[i] in c.sets["be_finite"] and w[i + 1] in c.change_ing:
            return f"{w[i]} {w[i + 1]}"
    if w and w[0] in c.change_ing:  # a memory line "Moving to X in June"
        return w[0]
    return None


def mention_verb(c: Cues, near: str) -> str | None:
    """A [frames] mention verb whose direct object is the value ("talked about X"), or (version 4
    on: [frames] mention_gerund) a gerund with the value its object ("talked about trying X")."""
    words = near.split()
    j = len(words)
    while j > 0 and words[j - 1] in c.sets["determiners"]:
        j -= 1
    for n in (3, 2, 1):
        if j >= n and c.rx["mention"].fullmatch(tail := " ".join(words[j - n : j])):
            return tail
    if c.mention_gerund and j > 1 and words[j - 1].endswith("ing"):  # version 4 on
        for n in (3, 2, 1):  # "talked about giving X another go", "mentioned trying X"
            if j - 1 >= n and c.rx["mention"].fullmatch(tail := " ".join(words[j - 1 - n : j - 1])):
                return f"{tail} {words[j - 1]}"
    return None


def others_own(c: Cues, right: str) -> str | None:
    """A description after a form of "be" naming another person's thing ("is your sister's
    carrier"): the person (version 4 on: [frames] others_possessive)."""
    ends = c.rx.get("others_possessive")
    rw = right.split()
    if ends is None or not rw or rw[0] not in c.sets["be_present"]:
        return None
    i = 2 if rw[1:2] and rw[1] in c.sets["other_people_determiners"] else 1
    if i + 1 < len(rw) and rw[i] in c.sets["other_people"] and ends.fullmatch(rw[i + 1]):
        return " ".join(rw[1 : i + 2])
    return None


def other_person(c: Cues, left: str) -> str | None:
    """The clause's subject is another person ("your partner is with X"), with no "you"
    between it and the value."""
    words = left.split()
    for i, w in enumerate(words):
        if w in c.sets["other_people"] and not any(
            x in c.sets["subject_words"] | c.sets["user_possessives"] for x in words[i + 1 :]
        ):
            if i == 0 or words[i - 1] in c.sets["other_people_determiners"]:
                return " ".join(words[max(0, i - 1) : i + 1])
    return None


def governing_verb(c: Cues, near: str) -> tuple[str, str]:
    """The verb governing a value and the auxiliary before it. From the value back to the
    last subject or coordinator in NEAR: the nearest known verb form (a form in the verb
    lists, "-ed", "-ing"), skipping [scope] skip words and unknown words (nouns: "tried a
    class at X"); with none known, the first word after that boundary ("Picks up ... at X").
    A form of "be"/"have" before a preposition or determiner is itself the verb ("were with
    X"); before another verb it is that verb's auxiliary ("'ve been at X")."""
    words = near.split()

    def known(w: str) -> bool:
        return w in c.verb_forms or past_form(w)

    # "you" right after a verb is its object ("your company switched you to X")
    start = max(
        (
            i + 1
            for i, w in enumerate(words)
            if (
                w in c.sets["subject_words"]
                and not (w in c.sets["object_pronouns"] and i and known(words[i - 1]))
            )
            or w in c.sets["coordinators"]
        ),
        default=0,
    )
    span = words[start:]
    aux_words = c.sets["be_present"] | c.sets["have"] | c.sets["aux_past"]

    def aux_of(i: int) -> str:
        k = i - 1
        while k >= 0 and span[k] in c.sets["adverbs"]:
            k -= 1
        return span[k] if k >= 0 and span[k] in aux_words else ""

    for i in range(len(span) - 1, -1, -1):
        w = span[i]
        if w in c.sets["skip"] or w in c.sets["adverbs"]:
            continue
        if w in aux_words:
            nxt = span[i + 1] if i + 1 < len(span) else ""
            if not nxt or nxt in c.sets["skip"]:
                return w, aux_of(i)
            continue
        if (
            w in c.verb_forms
            or c.rx["continuation"].fullmatch(w)
            or (len(w) > 4 and (w.endswith("ed") or w.endswith("ing")))
        ):
            return w, aux_of(i)
    for i, w in enumerate(span):
        if w in c.sets["adverbs"] or w in aux_words:
            continue
        return w, aux_of(i)
    return "", ""


def not_completed(c: Cues, beyond: str) -> str | None:
    """A later clause saying the change is not complete: a negation with a [frames]
    not_completed_words word, or with a change verb ("but hasn't ordered yet", "but haven't
    funded it")."""
    m = c.rx["negation"].search(beyond)
    if not m:
        return None
    rest = beyond[m.end() :].split()[:4]
    if any(w in c.sets["not_completed_words"] for w in beyond.split()) or any(
        w in c.change_past or w in c.sets["change_present"] or past_form(w) for w in rest
    ):
        return " ".join(beyond.split()[:6])
    return None


def past_cue(c: Cues, near: str, right: str, opens: bool) -> str | None:
    """A past value: a [frames] past cue before the value (or, for a value that opens its
    clause, after it), a past_after cue right after it when NEAR holds a past_verbs form and
    no change verb (version 4 on), or a past form of a non-change verb governing it."""
    pv = c.sets["past_verbs"]
    nw = near.split()
    if len(nw) == 1 and nw[0] in c.sets["span_openers"] and not right.strip():
        return nw[0]  # "you joined Y after X"
    m = c.rx["past"].search(" ".join(nw[-4:]))
    if (
        m
        and m.group(0) in c.sets["dating_past"]
        and any(w in c.change_ing for w in nw[nw.index(m.group(0)) + 1 :])
    ):
        m = None  # "before joining X": the time of a change made, not a past X
    if m:
        return m.group(0)
    for k in range(max(0, len(nw) - 6), len(nw)):
        if nw[k] in c.sets["span_openers"]:
            rest = nw[k + 1 :]
            u = next((i for i, w in enumerate(rest[:4]) if w in c.sets["time_units"]), None)
            if u is not None and len(rest) - u - 1 <= 1:
                return " ".join(nw[k:])  # "after four years at X": a span that has ended
    if m := c.rx["past_setting"].search(right):
        return m.group(0)  # "X outages at the old apartment"
    if opens or not near.strip():
        r = right.split()
        m2 = c.rx["past"].search(" ".join(r[:4]))
        if m2:
            return m2.group(0)
        j = 0
        while j < len(r) and r[j] in c.sets["skip"]:
            j += 1
        if (
            j < len(r)
            and (r[j] in pv or past_form(r[j]))
            and (r[j] not in c.change_past or r[j] in c.sets["left_verbs"])
        ):
            return r[j]  # "X was your old app"; "X dropped you", "X stopped serving ..."
    verb, aux = governing_verb(c, near)
    after = c.rx.get("past_after")  # version 4 on
    if after and (m := after.search(" ".join(right.split()[:3]))):
        nw = near.split()
        if any(w in c.sets["past_verbs"] for w in nw) and not any(
            w in c.change_past or w in c.change_ing for w in nw
        ):
            return m.group(0)  # "had knee surgery at X last year": an event, not a change
    words = near.split()
    if verb:
        j = words.index(verb)
        k = j - 1
        while k >= 0 and words[k] in c.sets["adverbs"]:
            k -= 1
        before = words[k] if k >= 0 else ""
        if aux in c.sets["be_present"]:
            return None
        if aux in c.sets["have"] and verb in c.sets["perfect_state"]:
            return None
        if verb in c.change_past or c.rx["continuation"].fullmatch(verb):
            return None
        # a regular past form is a past event only with its subject (or an auxiliary)
        # before it ("you visited X"); a memory line's opening participle is a state
        # ("Insured with X")
        if verb in pv or (past_form(verb) and (before in c.sets["subject_words"] or aux)):
            return verb
    return None
