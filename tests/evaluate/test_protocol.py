"""What a system under test is sent: user turns in order, earlier turns as context, nothing else."""

from agentmemgate.evaluate.protocol import new_system, run_arc
from agentmemgate.memory.system import ContextTurn, UserTurn

from .doubles import ScriptedSystem, factory, info, make_arc

ARC = make_arc(
    "secret-abandoned-id",
    "abandoned",
    [
        ["I use Pandora.", "Noted.", "I might switch to Deezer.", "Okay."],
        ["Any tips?", "Some.", "Decided against Deezer.", "Got it."],
    ],
    plan=(0, 2),
    outcome_turn=(1, 2),
)


def test_system_sees_user_turns_with_all_earlier_turns_as_context():
    seen: list = []
    system = ScriptedSystem({}, info("spy", gated=False), seen=seen)
    trace = run_arc(system, ARC)
    assert seen[0] == ("begin", [ARC.spec.field])
    turns = [x for x in seen if x[0] == "turn"]
    assert [t.text for _, t, _ in turns] == [
        "I use Pandora.",
        "I might switch to Deezer.",
        "Any tips?",
        "Decided against Deezer.",
    ]
    _, last, context = turns[-1]
    assert isinstance(last, UserTurn) and (last.session, last.turn, last.t) == (1, 2, 6)
    assert last.date == ARC.sessions[1].date
    assert [c.text for c in context] == [
        "I use Pandora.",
        "Noted.",
        "I might switch to Deezer.",
        "Okay.",
        "Any tips?",
        "Some.",
    ]
    assert all(isinstance(c, ContextTurn) for c in context)
    # Nothing that names the arc, its labels or the design's turn roles is ever sent.
    sent = repr(seen)
    for leak in ("secret", "abandoned", "outcome", "plan_value", "core", "weakly_hedged"):
        assert leak not in sent
    assert len(trace.snapshots) == 2 and trace.snapshots[-1].t == 7  # after each session
    assert trace.user_messages == 4


def test_field_given_is_value_free():
    seen: list = []
    run_arc(ScriptedSystem({}, info("spy", gated=False), seen=seen), ARC)
    field = seen[0][1][0]
    assert not field.leaked_values(ARC.spec.label_values)


def test_oracle_factories_alone_are_told_the_truth():
    got = {}

    def make(**kw):
        got.update(kw)
        return ScriptedSystem({}, oracle_info)

    oracle_info = info("oracle-x", gated=True, oracle=True)
    new_system(make, oracle_info, ARC)
    assert got == {"truth": {"music_app": ["Pandora", "Deezer"]}}
    got.clear()
    new_system(factory({}, info("plain", gated=False)), info("plain", gated=False), ARC)
    assert got == {}


def test_turns_shared_by_systems_on_one_arc_carry_nothing_from_one_to_the_next():
    """``run_eval`` builds an arc's turns once for every system: a system that rewrites the
    context list it was given changes nothing for the next system, and the turns are frozen."""
    import pytest
    from pydantic import ValidationError

    from agentmemgate.evaluate.protocol import arc_turns

    class Vandal(ScriptedSystem):
        def process_turn(self, turn, context):
            out = super().process_turn(turn, context)
            context.clear()
            context.append(ContextTurn(role="user", text="planted", session=0, date=turn.date))
            return out

    turns = arc_turns(ARC)
    run_arc(Vandal({}, info("vandal", gated=False)), ARC, turns=turns)
    seen: list = []
    shared = run_arc(ScriptedSystem({}, info("spy", gated=False), seen=seen), ARC, turns=turns)
    alone: list = []
    fresh = run_arc(ScriptedSystem({}, info("spy", gated=False), seen=alone), ARC)
    assert seen == alone and "planted" not in repr(seen)
    assert shared.model_dump() == fresh.model_dump()
    first_user = next(u for steps in turns for u, _ in steps if u is not None)
    with pytest.raises(ValidationError):
        first_user.text = "changed"
