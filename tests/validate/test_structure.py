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
    held.sessions[s].turns[t + 2 : t + 2] = [
        held.sessions[s].turns[0].model_copy(update={"text": outcome_text}),
        held.sessions[s].turns[1].model_copy(),
    ]
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
    assert {"structure.dates_increase", "structure.roles_alternate", "structure.timeline"} <= set(
        failed
    )


def test_value_leak_into_field_is_caught():
    arc = _arc()
    arc.spec.field.probe_question = f"Does the user use {arc.spec.plan_value} currently?"
    assert "structure.value_free_field" in _failed(arc)


# -- correction arcs -----------------------------------------------------------------------
def _correction(level="initial_same_marked"):
    spec = next(s for s in plan_split("corrections", seed=0, n_per_cell=1) if s.level == level)
    return get_renderer("offline").render(spec)


def test_a_clean_correction_arc_passes_and_gets_its_own_checks():
    arc = _correction()
    assert _failed(arc) == {}
    names = {r.check for r in check_arc(arc)}
    assert {
        "structure.correction_values",
        "structure.correction_order",
        "structure.correction_wording",
    } <= names
    assert "structure.correction_values" not in {r.check for r in check_arc(_arc())}


def test_a_correction_without_the_corrected_value_is_caught():
    arc = _correction()
    t = arc.turn(arc.correction_turn)
    t.text = t.text.replace(arc.spec.correction.value, "the other one")
    assert "corrected value" in _failed(arc)["structure.correction_values"]


def test_a_corrected_value_said_before_the_correction_is_caught():
    arc = _correction()
    arc.sessions[0].turns[1].text += f" Or is it {arc.spec.correction.value}?"
    assert "appears before the correction" in _failed(arc)["structure.correction_values"]


def test_a_correction_before_the_statement_it_corrects_is_caught():
    arc = _correction("change_later_unmarked")
    arc.correction_turn = arc.outcome_turn = TurnRef(session=0, turn=0)
    failed = _failed(arc)
    assert "comes before the statement" in failed["structure.correction_order"]


def test_a_same_session_correction_in_a_later_session_is_caught():
    arc = _correction("initial_same_marked")
    later = _correction("initial_later_marked")
    arc.spec = arc.spec.model_copy(
        update={
            "level": "initial_later_marked",
            "correction": arc.spec.correction.model_copy(update={"timing": "later"}),
        }
    )
    assert "later-session correction" in _failed(arc)["structure.correction_order"]
    assert _failed(later) == {}


def test_marker_and_change_wording_are_checked():
    marked, unmarked = _correction("change_same_marked"), _correction("change_same_unmarked")
    c = marked.spec.correction
    marked.turn(
        marked.correction_turn
    ).text = f"I told you {c.wrong_value} earlier, and that was wrong. It is {c.value}."
    assert "no corrective marker" in _failed(marked)["structure.correction_wording"]
    u = unmarked.spec.correction
    unmarked.turn(
        unmarked.correction_turn
    ).text = f"Actually, I said {u.wrong_value} earlier, but it is {u.value}."
    assert "'actually'" in _failed(unmarked)["structure.correction_wording"]
    unmarked.turn(
        unmarked.correction_turn
    ).text = f"I said {u.wrong_value} earlier. I changed my mind and now use {u.value}."
    assert "changed since" in _failed(unmarked)["structure.correction_wording"]
