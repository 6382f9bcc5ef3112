"""Planted bad arcs: good offline arcs with one known defect each, and the check that must flag it.

Used by the offline realism tests and by the import tests.
"""

from __future__ import annotations

import datetime as dt

from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.schema import Arc, Turn, TurnRef


def _arc(split: str, outcome: str, i: int = 0, **where) -> Arc:
    specs = [s for s in plan_split(split, seed=0) if s.outcome == outcome]
    specs = [s for s in specs if all(getattr(s, k) == v for k, v in where.items())]
    return get_renderer("offline").render(specs[i])


def _renamed(arc: Arc, suffix: str) -> Arc:
    arc = arc.model_copy(deep=True)
    arc.spec.id = f"{arc.spec.id}-{suffix}"
    return arc


def _qa_pairs(arc: Arc) -> list[tuple[int, int]]:
    """(session, turn) of user small-talk questions that have an assistant reply."""
    keys = {
        (r.session, r.turn)
        for r in (arc.initial_turn, arc.plan_turn, arc.outcome_turn, arc.pending_turn)
        if r
    }
    return [
        (si, ti)
        for si, s in enumerate(arc.sessions)
        for ti, t in enumerate(s.turns)
        if t.role == "user" and "?" in t.text and (si, ti) not in keys and ti + 1 < len(s.turns)
    ]


def same_session_last_time() -> Arc:
    """'The thing I mentioned last time' one turn after the plan, in the plan's own session."""
    arc = _renamed(_arc("core", "came_true"), "planted-last-time")
    s, t = arc.plan_turn.session, arc.plan_turn.turn
    arc.sessions[s].turns[t + 2 : t + 2] = [
        Turn(role="user", text="Oh, and I went ahead with it, the thing I mentioned last time."),
        Turn(role="assistant", text="Good for you for following through on it."),
    ]
    for name in ("outcome_turn", "pending_turn"):
        ref = getattr(arc, name)
        if ref and ref.session == s and ref.turn > t:
            setattr(arc, name, TurnRef(session=s, turn=ref.turn + 2))
    return arc


def swapped_answers() -> Arc:
    """The answers to two small-talk questions swapped."""
    for i in range(20):
        arc = _arc("controlled", "open", i)
        pairs = _qa_pairs(arc)
        if len(pairs) >= 2:
            break
    arc = _renamed(arc, "planted-swapped")
    (s1, t1), (s2, t2) = pairs[:2]
    a, b = arc.sessions[s1].turns[t1 + 1], arc.sessions[s2].turns[t2 + 1]
    a.text, b.text = b.text, a.text
    return arc


def repeated_replies(n: int = 3) -> list[Arc]:
    """The same plan reply in ``n`` arcs of different domains."""
    out = []
    for i in range(n):
        arc = _renamed(_arc("heldout", "abandoned", i), "planted-repeated")
        arc.sessions[arc.plan_turn.session].turns[
            arc.plan_turn.turn + 1
        ].text = (
            "That sounds like a reasonable thing to consider. Anything specific holding you back?"
        )
        out.append(arc)
    return out


def decision_one_of_these_days() -> Arc:
    """'Decision made: I'm going to switch ... one of these days.'"""
    arc = _renamed(
        _arc("core", "open", plan_wording="confident_no_date"), "planted-one-of-these-days"
    )
    arc.turn(
        arc.plan_turn
    ).text = f"Decision made: I'm going to switch to {arc.spec.plan_value} one of these days."
    return arc


def reply_treats_a_decision_as_open() -> Arc:
    arc = _renamed(
        _arc("core", "abandoned", plan_wording="confident_no_date"), "planted-open-reply"
    )
    arc.turn(arc.plan_turn).text = f"I've decided: I'm going to switch to {arc.spec.plan_value}."
    arc.sessions[arc.plan_turn.session].turns[
        arc.plan_turn.turn + 1
    ].text = "Both options have their merits. What's holding you back?"
    return arc


def present_since_the_weekend() -> Arc:
    """'I browse the web in Opera since the weekend.'"""
    arc = _renamed(_arc("core", "came_true"), "planted-since")
    arc.turn(
        arc.outcome_turn
    ).text = f"Thought I'd mention it: I use {arc.spec.plan_value} since the weekend."
    return arc


def wrong_weekday() -> Arc:
    """A scheduled date whose weekday is wrong for the session's year."""
    arc = _renamed(
        _arc("controlled", "open", plan_wording="scheduled_with_date"), "planted-weekday"
    )
    said = arc.sessions[arc.plan_turn.session].date
    day = said + dt.timedelta(days=10)
    wrong = (day + dt.timedelta(days=1)).strftime("%A")
    text = f"I'm going to switch to {arc.spec.plan_value} on {wrong}, {day:%B} {day.day}."
    arc.turn(arc.plan_turn).text = text
    return arc


def change_dated_before_the_plan() -> Arc:
    arc = _renamed(_arc("core", "came_true"), "planted-early-change")
    said = arc.sessions[arc.plan_turn.session].date
    now = arc.sessions[arc.outcome_turn.session].date
    weeks = (now - said).days // 7 + 2
    arc.turn(
        arc.outcome_turn
    ).text = f"It's official, I switched to {arc.spec.plan_value} {weeks} weeks ago."
    return arc


def planted() -> dict[str, tuple[list[Arc], str]]:
    """name -> (arcs, the offline realism check that must flag them)."""
    return {
        "same-session last time": ([same_session_last_time()], "time_references"),
        "swapped answers": ([swapped_answers()], "qa_relevance"),
        "reply repeated across arcs": (repeated_replies(), "repetition"),
        "decision made one of these days": ([decision_one_of_these_days()], "frame_consistency"),
        "reply treats a decision as open": (
            [reply_treats_a_decision_as_open()],
            "frame_consistency",
        ),
        "present with since": ([present_since_the_weekend()], "tense_agreement"),
        "wrong weekday": ([wrong_weekday()], "time_references"),
        "change dated before the plan": ([change_dated_before_the_plan()], "time_references"),
    }


def good_arcs() -> list[Arc]:
    return [
        _arc(split, outcome, i)
        for split, outcome in (
            ("core", "came_true"),
            ("core", "open"),
            ("heldout", "abandoned"),
            ("heldout", "control"),
            ("controlled", "came_true"),
        )
        for i in range(2)
    ]
