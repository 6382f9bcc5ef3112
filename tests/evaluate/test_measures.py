"""The measures on hand-built arcs whose right answers are worked out by hand (comments give the
turn positions t: every turn counts, assistant turns included)."""

from __future__ import annotations

import pytest

from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.evaluate.measures import score_trace
from agentmemgate.evaluate.protocol import run_arc
from agentmemgate.evaluate.truth import Correction, truth_of

from .doubles import ScriptedSystem, info, make_arc

UNGATED = info("toy-ungated", gated=False)
GATED = info("toy-gated", gated=True, twin="toy-ungated")

# t0 u "I use Pandora"  t2 u plan  t4 u small talk | session 1: t6 u abandonment. End read at t8.
ABANDONED = make_arc(
    "a1",
    "abandoned",
    [
        [
            "I use Pandora for music.",
            "Noted.",
            "I might switch to Deezer.",
            "Sure.",
            "Any podcast tips?",
            "Try one.",
        ],
        ["I decided against Deezer, staying with Pandora.", "Got it."],
    ],
    plan=(0, 2),
    outcome_turn=(1, 0),
)
# t0 initial, t2 plan | session 1: t4 still-pending mention. End read at t6.
OPEN = make_arc(
    "o1",
    "open",
    [
        ["I use Pandora.", "Noted.", "Maybe Deezer someday.", "Okay."],
        ["Still thinking about Deezer.", "No rush."],
    ],
    plan=(0, 2),
    pending=(1, 0),
)
# t0 initial, t2 plan | t4 pending mention, t6 small talk | t8 confirmation.
CAME_TRUE = make_arc(
    "c1",
    "came_true",
    [
        ["I use Pandora.", "Noted.", "Thinking of Deezer.", "Okay."],
        ["Still on the fence about Deezer.", "Fine.", "Random question.", "Answer."],
        ["I switched to Deezer!", "Nice."],
    ],
    plan=(0, 2),
    outcome_turn=(2, 0),
)
# t0 initial | session 1: t2 the completed change.
CONTROL = make_arc(
    "k1",
    "control",
    [["I use Pandora.", "Noted."], ["I switched to Deezer last week.", "Great."]],
    plan=(1, 0),
    outcome_turn=(1, 0),
)
# Held-out structure: the plan ends session 0 (t2), the outcome opens session 1 (t4): no read
# lies strictly between them, so pending contamination does not apply.
HELDOUT = make_arc(
    "h1",
    "abandoned",
    [
        ["I use Pandora.", "Noted.", "I might switch to Deezer.", "Okay."],
        ["Decided against Deezer.", "Got it."],
    ],
    plan=(0, 2),
    outcome_turn=(1, 0),
    split="heldout",
    pending_window=False,
)


def score(arc, script, system_info, correction=None):
    judge = get_value_judge("offline")
    trace = run_arc(ScriptedSystem(script, system_info), arc)
    return score_trace(
        trace,
        truth_of(arc, correction),
        system_info,
        lambda v, ref: judge.same(arc.spec.field, v, ref),
    ), trace


def test_plan_stored_then_discarded_by_a_confirmation_commit():
    # Ungated: Deezer is committed at t2, so the read as t4 arrives gives Deezer (inside the
    # window 2 < t < 6); the abandonment re-commits Pandora at t6, so the end is right.
    s, trace = score(
        ABANDONED,
        {0: [("commit", "Pandora")], 1: [("commit", "Deezer")], 3: [("commit", "Pandora")]},
        UNGATED,
    )
    assert [r for _, r in trace.reads()] == [None, "Pandora", "Deezer", "Deezer", "Pandora"]
    assert s.values == {
        "pending_contamination": True,
        "end_contamination": False,
        "task_accuracy": True,
    }  # no gate measures for an ungated system
    assert s.why["pending_contamination"] == "read 'Deezer' (the plan value) as turn s0 t4 arrived"


def test_the_read_at_the_outcome_turn_is_outside_the_pending_window():
    # The plan is committed only at t4 (the turn before the outcome): the only read that shows
    # it is the one taken as the outcome turn t6 arrives, which is not strictly before it.
    s, _ = score(
        ABANDONED,
        {0: [("commit", "Pandora")], 2: [("commit", "Deezer")], 3: [("commit", "Pandora")]},
        UNGATED,
    )
    assert s.values["pending_contamination"] is False


def test_gated_stage_then_discard():
    s, _ = score(
        ABANDONED, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")], 3: [("discard",)]}, GATED
    )
    assert s.values == {
        "pending_contamination": False,
        "end_contamination": False,
        "task_accuracy": True,
        "staged_at_plan_turn": True,
        "discarded": True,
        "discarded_among_staged": True,
    }


def test_gated_plan_that_misses_the_gate_and_is_committed():
    s, _ = score(ABANDONED, {0: [("commit", "Pandora")], 1: [("commit", "Deezer")]}, GATED)
    v = s.values
    assert v["pending_contamination"] and v["end_contamination"] and not v["task_accuracy"]
    assert v["staged_at_plan_turn"] is False
    assert v["discarded"] is True  # nothing held at the end (as the paper counts it)
    assert "discarded_among_staged" not in v  # it was never staged


def test_still_held_abandoned_plan_is_not_discarded():
    s, _ = score(ABANDONED, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")]}, GATED)
    assert s.values["discarded"] is False and s.values["discarded_among_staged"] is False


def test_promotion_at_the_wrong_turn_does_not_count():
    # Staged at t2, promoted at t4 (a still-pending mention), not at the confirmation t8.
    s, _ = score(
        CAME_TRUE, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")], 2: [("promote",)]}, GATED
    )
    assert s.values["staged_at_plan_turn"] is True
    assert s.values["promoted"] is False and s.values["promoted_among_staged"] is False
    # reasons name turns as `amg eval show` does: t4 is session 1's turn 0, t8 session 2's
    assert s.why["promoted"] == "promoted at s1 t0, not the resolution turn s2 t0"
    assert s.values["task_accuracy"] is True  # the end value is right all the same
    assert "pending_contamination" not in s.values  # a came-true plan is not at risk


def test_promotion_at_the_resolution_turn():
    s, _ = score(
        CAME_TRUE, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")], 4: [("promote",)]}, GATED
    )
    assert s.values["promoted"] is True and s.values["promoted_among_staged"] is True


def test_unstaged_came_true_plan_has_no_among_staged_outcome():
    s, _ = score(CAME_TRUE, {0: [("commit", "Pandora")], 4: [("commit", "Deezer")]}, GATED)
    assert s.values["promoted"] is False and "promoted_among_staged" not in s.values
    assert s.values["task_accuracy"] is True  # a confirmation-commit


def test_open_plan_exposed_only_at_the_end():
    # Deezer is committed at the last user turn t4: every read during the conversation says
    # Pandora; only the end read (open plans: the window runs to the end) shows Deezer.
    s, trace = score(OPEN, {0: [("commit", "Pandora")], 2: [("commit", "Deezer")]}, UNGATED)
    assert [r for _, r in trace.reads()] == [None, "Pandora", "Pandora", "Deezer"]
    assert s.values == {
        "pending_contamination": True,
        "end_contamination": True,
        "task_accuracy": False,
    }
    assert s.why["pending_contamination"] == (
        "read 'Deezer' (the plan value) at the end of the conversation"
    )


def test_cautious_plan_phrasing_is_not_the_plan_value():
    s, _ = score(OPEN, {0: [("commit", "Pandora")], 1: [("commit", "considering Deezer")]}, UNGATED)
    assert s.values["pending_contamination"] is False and s.values["end_contamination"] is False
    assert s.values["task_accuracy"] is False  # the store no longer says Pandora either


def test_controls_committed_and_over_holding():
    held, _ = score(CONTROL, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")]}, GATED)
    assert held.values == {
        "task_accuracy": False,
        "controls_committed": False,
        "over_holding": True,
    }
    ok, _ = score(CONTROL, {0: [("commit", "Pandora")], 1: [("commit", "Deezer")]}, UNGATED)
    assert ok.values == {"task_accuracy": True, "controls_committed": True}
    wrong_value, _ = score(
        CONTROL, {0: [("commit", "Pandora")], 1: [("commit", "Spotify")]}, UNGATED
    )
    assert wrong_value.values["controls_committed"] is False


def test_correction_applied_only_where_the_arc_has_one():
    arc = make_arc(
        "r1",
        "open",
        [
            [
                "I use Pandora.",
                "Noted.",
                "Sorry, I misspoke: it's Spotify, not Pandora.",
                "Fixed.",
                "Might try Deezer.",
                "Okay.",
            ],
            ["Still thinking about Deezer.", "Sure."],
        ],
        plan=(0, 4),
        pending=(1, 0),
        initial_value="Spotify",
        expected=["Spotify", "Spotify"],
    )
    corr = Correction(t=2, value="Spotify")
    applied, _ = score(
        arc, {0: [("commit", "Pandora")], 1: [("correct", "Spotify")]}, UNGATED, corr
    )
    assert applied.values["corrections_applied"] is True and applied.values["task_accuracy"] is True
    missed, _ = score(arc, {0: [("commit", "Pandora")]}, UNGATED, corr)
    assert missed.values["corrections_applied"] is False
    none, _ = score(arc, {0: [("commit", "Pandora")], 1: [("correct", "Spotify")]}, UNGATED)
    assert "corrections_applied" not in none.values


def test_heldout_has_no_pending_measure():
    s, trace = score(
        HELDOUT,
        {0: [("commit", "Pandora")], 1: [("commit", "Deezer")], 2: [("commit", "Pandora")]},
        UNGATED,
    )
    assert trace.reads()[2] == (4, "Deezer")  # the plan is visible as the outcome turn arrives...
    assert "pending_contamination" not in s.values  # ...but there is no pending window
    assert s.values == {"end_contamination": False, "task_accuracy": True}


@pytest.mark.parametrize("arc", [ABANDONED, OPEN, CAME_TRUE, CONTROL, HELDOUT])
def test_calls_are_counted_per_user_turn(arc):
    s, trace = score(arc, {}, UNGATED)
    users = sum(t.role == "user" for sess in arc.sessions for t in sess.turns)
    assert s.user_messages == users and s.calls == users  # one call per turn, nothing staged


def test_a_came_true_plan_written_before_it_came_true_is_a_premature_write():
    # Deezer committed at the plan turn t2: the reads as t4 and t6 arrive give it while the plan
    # is still pending; it comes true at t8. Not contamination (the plan came true), counted apart.
    early, _ = score(CAME_TRUE, {0: [("commit", "Pandora")], 1: [("commit", "Deezer")]}, UNGATED)
    assert early.values == {"premature_write": True, "task_accuracy": True}
    assert early.why["premature_write"] == (
        "read 'Deezer' (the plan value) as turn s1 t0 arrived, before the plan came true at s2 t0"
    )
    # Committed only by the confirmation at t8: the read as t8 arrives is outside the window.
    on_time, _ = score(CAME_TRUE, {0: [("commit", "Pandora")], 4: [("commit", "Deezer")]}, UNGATED)
    assert on_time.values["premature_write"] is False
    # Staged at the plan turn and promoted at the outcome: invisible to reads while pending.
    gated, _ = score(
        CAME_TRUE, {0: [("commit", "Pandora")], 1: [("stage", "Deezer")], 4: [("promote",)]}, GATED
    )
    assert gated.values["premature_write"] is False


def test_premature_writes_do_not_apply_without_a_pending_window():
    # Abandoned and open plans are at risk (contamination); held-out structure has no read
    # between plan and outcome; controls are not plans.
    for arc, script in (
        (ABANDONED, {1: [("commit", "Deezer")]}),
        (OPEN, {1: [("commit", "Deezer")]}),
        (CONTROL, {1: [("commit", "Deezer")]}),
    ):
        s, _ = score(arc, script, UNGATED)
        assert "premature_write" not in s.values, arc.spec.outcome
