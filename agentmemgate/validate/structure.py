"""Structural checks: properties every arc must have whatever rendered it.

Each check is a small function ``(arc) -> str | None`` returning a failure reason; ``check_arc``
runs them all. LLM generators run the same checks before accepting a reply.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..schema import Arc, CheckResult, TurnRef, contains_value

Check = Callable[[Arc], "str | None"]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn

    return register


def _user_turn(arc: Arc, ref: TurnRef | None, what: str) -> str | None:
    if ref is None:
        return None
    if ref.session >= len(arc.sessions) or ref.turn >= len(arc.sessions[ref.session].turns):
        return f"{what} {ref.session}/{ref.turn} does not exist"
    if arc.turn(ref).role != "user":
        return f"{what} {ref.session}/{ref.turn} is not a user turn"
    return None


def _position(arc: Arc, ref: TurnRef) -> int:
    return sum(len(s.turns) for s in arc.sessions[: ref.session]) + ref.turn


@check("turn_refs")
def turn_refs(arc: Arc) -> str | None:
    for what, ref in (("initial turn", arc.initial_turn), ("plan turn", arc.plan_turn),
                      ("outcome turn", arc.outcome_turn), ("pending turn", arc.pending_turn)):
        if problem := _user_turn(arc, ref, what):
            return problem
    return None


@check("value_free_field")
def value_free_field(arc: Arc) -> str | None:
    leaked = arc.spec.field.leaked_values(arc.spec.label_values)
    return f"field mentions label value(s): {', '.join(leaked)}" if leaked else None


@check("roles_alternate")
def roles_alternate(arc: Arc) -> str | None:
    for i, s in enumerate(arc.sessions):
        if not s.turns:
            return f"session {i} has no turns"
        for j, t in enumerate(s.turns):
            expected = "user" if j % 2 == 0 else "assistant"
            if t.role != expected:
                return f"session {i} turn {j} is {t.role}, expected {expected}"
            if not t.text.strip():
                return f"session {i} turn {j} is empty"
    return None


@check("dates_increase")
def dates_increase(arc: Arc) -> str | None:
    dates = [s.date for s in arc.sessions]
    if [d.isoformat() for d in dates] != [d.isoformat() for d in arc.spec.session_dates]:
        return "session dates differ from the spec"
    for a, b in zip(dates, dates[1:]):
        if b <= a:
            return f"session date {b} does not come after {a}"
    return None


@check("initial_value_stated")
def initial_value_stated(arc: Arc) -> str | None:
    if turn_refs(arc):
        return "turn references are broken"
    if not contains_value(arc.turn(arc.initial_turn).text, arc.spec.initial_value):
        return f"initial value {arc.spec.initial_value!r} not in the initial turn"
    if _position(arc, arc.initial_turn) >= _position(arc, arc.plan_turn):
        return "initial value is stated after the plan"
    return None


@check("plan_value_in_plan_turn")
def plan_value_in_plan_turn(arc: Arc) -> str | None:
    if turn_refs(arc):
        return "turn references are broken"
    if not contains_value(arc.turn(arc.plan_turn).text, arc.spec.plan_value):
        return f"plan value {arc.spec.plan_value!r} not in the plan turn"
    return None


@check("outcome_structure")
def outcome_structure(arc: Arc) -> str | None:
    o = arc.spec.outcome
    if o in ("came_true", "abandoned") and arc.outcome_turn is None:
        return f"{o} arc has no outcome turn"
    if o == "open" and (arc.outcome_turn is not None or arc.pending_turn is None):
        return "open arc must have no outcome turn and a pending mention"
    if o == "control" and arc.outcome_turn != arc.plan_turn:
        return "control arc: the completed-change turn is both plan and outcome turn"
    return None


@check("pending_window")
def pending_window(arc: Arc) -> str | None:
    """Core/controlled: the outcome (or pending mention) is in a later session than the plan, with
    at least one user turn between. Held-out (paper 5, 6.1, A.7): no user turn between, across a
    session boundary: the plan is the last user turn of its session and the outcome (or pending
    mention) the first user turn of the next, so a probe after the plan's session sees the plan
    before its outcome."""
    if arc.spec.outcome == "control" or turn_refs(arc):
        return None
    later = arc.outcome_turn or arc.pending_turn
    if later is None:
        return "no outcome or pending turn"
    start, end = _position(arc, arc.plan_turn), _position(arc, later)
    if end <= start:
        return "outcome comes before the plan"
    between = [t for s in arc.sessions for t in s.turns][start + 1:end]
    users_between = sum(t.role == "user" for t in between)
    if arc.spec.pending_window:
        if later.session <= arc.plan_turn.session:
            return "outcome is in the same session as the plan (no pending window)"
        if users_between < 1:
            return "no user turn between plan and outcome"
        return None
    plan_s = arc.plan_turn.session
    after_plan = sum(t.role == "user" for t in arc.sessions[plan_s].turns[arc.plan_turn.turn + 1:])
    if after_plan:
        return (f"held-out plan must be the last user turn of its session ({after_plan} user "
                f"turn(s) follow it in session {plan_s})")
    if later.session != plan_s + 1:
        return (f"held-out outcome must open the session after the plan's (plan in session {plan_s}, "
                f"outcome in session {later.session})")
    if users_between:
        return (f"held-out outcome must be the first user turn of session {later.session} "
                f"({users_between} user turn(s) come before it)")
    return None


@check("timeline")
def timeline(arc: Arc) -> str | None:
    if outcome_structure(arc) or turn_refs(arc):
        return "outcome structure is broken"
    resolved = arc.outcome_turn.session if arc.outcome_turn else None
    expected = arc.spec.expected_timeline(resolved, arc.plan_turn.session)
    if arc.expected_value_after_session != expected:
        return f"expected values {arc.expected_value_after_session} != {expected}"
    return None


def check_arc(arc: Arc) -> list[CheckResult]:
    """Every structural check on one arc, passed or not."""
    out = []
    for name, fn in CHECKS.items():
        problem = fn(arc)
        out.append(CheckResult(arc_id=arc.id, check=f"structure.{name}", passed=problem is None,
                               detail=problem or ""))
    return out


def check_arcs(arcs: Iterable[Arc]) -> list[CheckResult]:
    return [r for arc in arcs for r in check_arc(arc)]
