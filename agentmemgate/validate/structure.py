"""Structural checks: properties every arc must have whatever rendered it.

Each check is a small function ``(arc) -> str | None`` returning a failure reason; ``check_arc``
runs them all. LLM generators run the same checks before accepting a reply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..schema import (
    CORRECTION_MARKER_PHRASES,
    Arc,
    CheckResult,
    TurnRef,
    contains_value,
    normalize_text,
)
from .consistency import consistency, rules_for

Check = Callable[[Arc], "str | None"]
CHECKS: dict[str, Check] = {}
# Checks that only correction arcs get (the corrections split): other arcs' results, and so
# their cards, are what they were before the split existed.
CORRECTION_CHECKS: dict[str, Check] = {}


def check(name: str, registry: dict[str, Check] | None = None) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        (CHECKS if registry is None else registry)[name] = fn
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
    for what, ref in (
        ("initial turn", arc.initial_turn),
        ("plan turn", arc.plan_turn),
        ("outcome turn", arc.outcome_turn),
        ("pending turn", arc.pending_turn),
        ("correction turn", arc.correction_turn),
    ):
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
    if o == "correction":
        c = arc.spec.correction
        if arc.correction_turn is None or arc.outcome_turn != arc.correction_turn:
            return "correction arc: the correction turn is its outcome turn"
        if c is not None and c.target == "initial" and arc.plan_turn != arc.correction_turn:
            return "correction of the initial value: the correction turn is also the plan turn"
        if c is not None and c.target == "change" and arc.plan_turn == arc.correction_turn:
            return "correction of a reported change: the change turn and the correction differ"
    elif arc.correction_turn is not None:
        return f"{o} arc has a correction turn"
    return None


@check("pending_window")
def pending_window(arc: Arc) -> str | None:
    """Core/controlled: the outcome (or pending mention) is in a later session than the plan, with
    at least one user turn between. Held-out (paper 5, 6.1, A.7): no user turn between, across a
    session boundary: the plan is the last user turn of its session and the outcome (or pending
    mention) the first user turn of the next, so a probe after the plan's session sees the plan
    before its outcome."""
    if arc.spec.outcome in ("control", "correction") or turn_refs(arc):
        return None
    later = arc.outcome_turn or arc.pending_turn
    if later is None:
        return "no outcome or pending turn"
    start, end = _position(arc, arc.plan_turn), _position(arc, later)
    if end <= start:
        return "outcome comes before the plan"
    between = [t for s in arc.sessions for t in s.turns][start + 1 : end]
    users_between = sum(t.role == "user" for t in between)
    if arc.spec.pending_window:
        if later.session <= arc.plan_turn.session:
            return "outcome is in the same session as the plan (no pending window)"
        if users_between < 1:
            return "no user turn between plan and outcome"
        return None
    plan_s = arc.plan_turn.session
    after_plan = sum(t.role == "user" for t in arc.sessions[plan_s].turns[arc.plan_turn.turn + 1 :])
    if after_plan:
        return (
            f"held-out plan must be the last user turn of its session ({after_plan} user "
            f"turn(s) follow it in session {plan_s})"
        )
    if later.session != plan_s + 1:
        return (
            f"held-out outcome must open the session after the plan's (plan in session {plan_s}, "
            f"outcome in session {later.session})"
        )
    if users_between:
        return (
            f"held-out outcome must be the first user turn of session {later.session} "
            f"({users_between} user turn(s) come before it)"
        )
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


# -- correction arcs ---------------------------------------------------------------------------
def _has_phrase(text: str, phrases) -> str | None:
    norm = f" {normalize_text(text)} "
    return next((p for p in phrases if f" {normalize_text(p)} " in norm), None)


# Words by which a turn says the value changed since (a new change), not that the earlier
# statement was wrong when made.
CHANGE_SINCE = (
    "now",
    "anymore",
    "any more",
    "no longer",
    "since then",
    "changed my mind",
    "switched again",
    "moved again",
    "changed again",
    "instead",
    "switched back",
    "moved back",
    "these days",
    "from now on",
    "recently",
    "finally",
    "going to",
    "plan to",
    "planning",
    "decided to",
)
# Words by which a turn says an earlier statement was wrong (one is needed besides the values).
WRONG_SAID = (
    "wrong",
    "wasn't right",
    "not right",
    "was not true",
    "wasn't true",
    "not true",
    "mistake",
    "misspoke",
    "mix up",
    "mixed up",
    "mixed something up",
    "misremembered",
    "never",
    "slip",
    "meant",
    "scratch",
    "correction",
    "confusing",
    "not",
    "didn't",
    "wasn't",
    "ignore",
    "fix",
    "correct",
)


def _corrected_ref(arc: Arc) -> TurnRef:
    c = arc.spec.correction
    return arc.initial_turn if c is not None and c.target == "initial" else arc.plan_turn


@check("correction_values", CORRECTION_CHECKS)
def correction_values(arc: Arc) -> str | None:
    """The correction names the corrected value and the wrong one; the statement it corrects
    gave the wrong value; the corrected value is not mentioned before the correction."""
    c, ref = arc.spec.correction, arc.correction_turn
    if c is None or ref is None or turn_refs(arc):
        return "no correction turn" if c is not None else None
    text = arc.turn(ref).text
    if not contains_value(text, c.value):
        return f"corrected value {c.value!r} not in the correction turn"
    if not contains_value(text, c.wrong_value):
        return f"the correction turn does not name the value it corrects ({c.wrong_value!r})"
    said = _corrected_ref(arc)
    if not contains_value(arc.turn(said).text, c.wrong_value):
        return f"the corrected statement (session {said.session} turn {said.turn}) does not say {c.wrong_value!r}"
    flat = [t for s in arc.sessions for t in s.turns]
    for i, t in enumerate(flat[: _position(arc, ref)]):
        if contains_value(t.text, c.value):
            return f"the corrected value {c.value!r} appears before the correction (turn {i})"
    return None


@check("correction_order", CORRECTION_CHECKS)
def correction_order(arc: Arc) -> str | None:
    """The correction follows the statement it corrects: later in the same session with at least
    one user turn between, or in a later session, as the cell says."""
    c, ref = arc.spec.correction, arc.correction_turn
    if c is None or ref is None or turn_refs(arc):
        return "no correction turn" if c is not None else None
    said = _corrected_ref(arc)
    a, b = _position(arc, said), _position(arc, ref)
    if b <= a:
        return "the correction comes before the statement it corrects"
    if c.target == "change" and _position(arc, arc.initial_turn) >= a:
        return "the reported change comes before the initial value"
    if c.timing == "same":
        if ref.session != said.session:
            return (
                f"same-session correction in session {ref.session}, the corrected statement "
                f"in session {said.session}"
            )
        between = [
            t for t in [t for s in arc.sessions for t in s.turns][a + 1 : b] if t.role == "user"
        ]
        if not between:
            return "no other user turn between the statement and its correction"
    elif ref.session <= said.session:
        return (
            f"later-session correction in session {ref.session}, not after the corrected "
            f"statement's session {said.session}"
        )
    return None


@check("correction_wording", CORRECTION_CHECKS)
def correction_wording(arc: Arc) -> str | None:
    """A marked correction has a corrective marker, an unmarked one none; either says the earlier
    statement was wrong, not that something changed since."""
    c, ref = arc.spec.correction, arc.correction_turn
    if c is None or ref is None or turn_refs(arc):
        return "no correction turn" if c is not None else None
    text = arc.turn(ref).text
    marker = _has_phrase(text, CORRECTION_MARKER_PHRASES)
    if c.marker == "marked" and marker is None:
        return "marked correction has no corrective marker (e.g. 'actually', 'sorry', 'I meant')"
    if c.marker == "unmarked" and marker is not None:
        return f"unmarked correction uses the corrective marker {marker!r}"
    if since := _has_phrase(text, CHANGE_SINCE):
        return f"the correction says something changed since ({since!r}), not that the statement was wrong"
    if _has_phrase(text, WRONG_SAID) is None:
        return "the correction does not say the earlier statement was wrong"
    return None


def cell_structure(arc: Arc, design) -> str | None:
    """An arc whose level sets its own structure (a structure factor, e.g. the number of
    sessions between the plan and its outcome) has it: a session count the level allows, and,
    with a pending window, the plan in the first session and its outcome (or the still-pending
    mention) in the last, so ``sessions - 2`` sessions lie between them."""
    sp = arc.spec
    st = design.structure_of(sp.split, _cell_of(design, sp))
    n = len(arc.sessions)
    if n not in st.sessions:
        return f"{n} sessions; level {sp.level!r} has {' or '.join(map(str, st.sessions))}"
    later = arc.outcome_turn or arc.pending_turn
    if st.pending_window and sp.outcome not in ("control", "correction") and later is not None:
        if arc.plan_turn.session != 0 or later.session != n - 1:
            between = later.session - arc.plan_turn.session - 1
            return (
                f"{between} session(s) between the plan (session {arc.plan_turn.session}) and "
                f"its outcome (session {later.session}); level {sp.level!r} has {n - 2}"
            )
    return None


def _cell_of(design, spec):
    split = design.splits.get(spec.split)
    return (
        next((c for c in split.cells if c.factor == spec.factor and c.level == spec.level), None)
        if split is not None
        else None
    )


def _sets_structure(arc: Arc, design) -> bool:
    """Only arcs of a level with its own structure get ``cell_structure`` (the paper's have
    none, so their checks are what they always were)."""
    cell = _cell_of(design, arc.spec) if design is not None else None
    return cell is not None and design.factors[cell.factor].level(cell.level).structure is not None


def check_arc(arc: Arc, design=None) -> list[CheckResult]:
    """Every structural check on one arc, passed or not (correction arcs: also theirs; arcs of a
    level that sets its own structure, given the ``design``: also ``cell_structure``)."""
    out = []
    checks = CHECKS | CORRECTION_CHECKS if arc.spec.correction is not None else CHECKS
    for name, fn in checks.items():
        problem = fn(arc)
        out.append(
            CheckResult(
                arc_id=arc.id,
                check=f"structure.{name}",
                passed=problem is None,
                detail=problem or "",
            )
        )
    problem = consistency(arc, rules_for(design))
    out.append(
        CheckResult(
            arc_id=arc.id,
            check="structure.consistency",
            passed=problem is None,
            detail=problem or "",
        )
    )
    if _sets_structure(arc, design):
        problem = cell_structure(arc, design)
        out.append(
            CheckResult(
                arc_id=arc.id,
                check="structure.cell_structure",
                passed=problem is None,
                detail=problem or "",
            )
        )
    return out


def check_arcs(arcs: Iterable[Arc], design=None) -> list[CheckResult]:
    return [r for arc in arcs for r in check_arc(arc, design)]
