import datetime as dt

from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.schema import TurnRef
from agentmemgate.validate import check_arc


def _arc(split="core", outcome="came_true"):
    spec = next(s for s in plan_split(split, seed=0, n_per_cell=1) if s.outcome == outcome)
    return get_renderer("offline").render(spec)


def _failed(arc):
    return {r.check: r.detail for r in check_arc(arc) if not r.passed}


def test_clean_arc_passes():
    assert _failed(_arc()) == {}


def test_plan_value_missing_from_plan_turn_is_caught():
    arc = _arc()
    arc.turn(arc.plan_turn).text = "I might change something."
    assert "structure.plan_value_in_plan_turn" in _failed(arc)


def test_plan_value_match_tolerates_case_and_punctuation():
    arc = _arc("heldout")
    t = arc.turn(arc.plan_turn)
    t.text = t.text.replace(arc.spec.plan_value, arc.spec.plan_value.upper().replace(" ", ", "))
    assert "structure.plan_value_in_plan_turn" not in _failed(arc)


def test_pending_window_required_in_core():
    arc = _arc("core")
    # Move the outcome into the plan's session right after the plan: no pending window.
    s = arc.plan_turn.session
    turns = arc.sessions[s].turns
    outcome_text = arc.turn(arc.outcome_turn).text
    turns.insert(arc.plan_turn.turn + 2, turns[0].model_copy(update={"text": outcome_text}))
    turns.insert(arc.plan_turn.turn + 3, turns[1].model_copy())
    arc.outcome_turn = TurnRef(session=s, turn=arc.plan_turn.turn + 2)
    assert "structure.pending_window" in _failed(arc)



def test_heldout_plan_ends_its_session_and_outcome_opens_the_next():
    for outcome in ("came_true", "abandoned", "open"):
        held = _arc("heldout", outcome)
        later = held.outcome_turn or held.pending_turn
        assert later.session == held.plan_turn.session + 1 and later.turn == 0
        assert held.plan_turn.turn == len(held.sessions[held.plan_turn.session].turns) - 2
        assert "structure.pending_window" not in _failed(held)

    held = _arc("heldout")
    # A user turn after the plan in its own session: the plan no longer ends the session.
    turns = held.sessions[held.plan_turn.session].turns
    turns.insert(held.plan_turn.turn + 2, turns[0].model_copy(update={"text": "Unrelated chat?"}))
    turns.insert(held.plan_turn.turn + 3, turns[1].model_copy())
    assert "last user turn of its session" in _failed(held)["structure.pending_window"]

    held = _arc("heldout")
    # The outcome in the plan's own session, right after it (the old immediate structure).
    s, t = held.plan_turn.session, held.plan_turn.turn
    outcome_text = held.turn(held.outcome_turn).text
    held.sessions[s].turns[t + 2:t + 2] = [held.sessions[s].turns[0].model_copy(update={"text": outcome_text}),
                                           held.sessions[s].turns[1].model_copy()]
    held.outcome_turn = TurnRef(session=s, turn=t + 2)
    assert "structure.pending_window" in _failed(held)

    held = _arc("heldout")
    # Small talk before the outcome in the next session.
    nxt = held.sessions[held.outcome_turn.session].turns
    nxt[0:0] = [nxt[0].model_copy(update={"text": "A question first?"}), nxt[1].model_copy()]
    held.outcome_turn = TurnRef(session=held.outcome_turn.session, turn=2)
    assert "first user turn" in _failed(held)["structure.pending_window"]


def test_dates_roles_and_timeline():
    arc = _arc()
    arc.sessions[1].date = arc.sessions[0].date - dt.timedelta(days=1)
    arc.sessions[0].turns[1].role = "user"
    arc.expected_value_after_session[-1] = arc.spec.initial_value
    failed = _failed(arc)
    assert {"structure.dates_increase", "structure.roles_alternate", "structure.timeline"} <= set(failed)


def test_value_leak_into_field_is_caught():
    arc = _arc()
    arc.spec.field.probe_question = f"Does the user use {arc.spec.plan_value} currently?"
    assert "structure.value_free_field" in _failed(arc)
