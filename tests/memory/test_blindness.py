"""A memory system under test receives fields, turns and context only: never an arc's labels."""

from __future__ import annotations

import pytest
from scripted_memory import scripted_responder

from agentmemgate.errors import BadInput
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.llm import get_model
from agentmemgate.memory import ContextTurn, UserTurn, get_system
from agentmemgate.memory.conversation import user_turns
from agentmemgate.schema import FieldSpec, contains_value


@pytest.fixture(scope="module")
def arcs():
    r = get_renderer("offline")
    return [
        r.render(s) for split in ("core", "heldout") for s in plan_split(split, 0, n_per_cell=1)
    ]


def test_prompts_carry_no_label_and_no_value_before_the_conversation_names_it(ws, arcs):
    """Every model request while processing turn k: no arc id, level, outcome or wording label,
    no probe question, and a label value only once some turn up to k has said it."""
    model = get_model("scripted:blind", workspace=ws).respond_with(scripted_responder)
    for name in ("literal-gated", "cautious-gated[permissive]", "plan-typed-cautious"):
        for arc in arcs:
            _, factory = get_system(name, model="scripted:blind", workspace=ws)
            system = factory()
            system.begin([arc.spec.field])
            said = ""
            for turn, context in user_turns(arc.sessions):
                said += " " + turn.text + " " + " ".join(c.text for c in context[-1:])
                start = len(model.history)
                system.process_turn(turn, context)
                for req in model.history[start:]:
                    labels = [
                        arc.id,
                        arc.spec.level,
                        arc.spec.outcome,
                        arc.spec.plan_wording,
                        arc.spec.confirmation_wording or "verbatim",
                        arc.spec.field.probe_question,
                    ]
                    # snake_case labels and ids never occur in chat; plain words ("open") may
                    assert not any(
                        lbl in req.prompt
                        for lbl in labels
                        if lbl and ("_" in lbl or "-" in lbl or " " in lbl)
                    )
                    for value in arc.spec.label_values:
                        if contains_value(req.prompt, value):
                            assert contains_value(said, value), (arc.id, req.purpose, value)


def test_components_are_called_with_turns_contexts_and_fields_only(arcs):
    seen: list[tuple] = []

    class Spy:
        def __init__(self, inner):
            self.inner, self.name = inner, inner.name

        def __getattr__(self, attr):
            fn = getattr(self.inner, attr)

            def call(*args):
                seen.append(args)
                return fn(*args)

            return call

    _, factory = get_system("literal-gated")
    arc = arcs[0]
    system = factory()
    system.extractor, system.matcher, system.checker = (
        Spy(system.extractor),
        Spy(system.matcher),
        Spy(system.checker),
    )
    system.predicates = Spy(system.predicates)
    system.begin([arc.spec.field])
    for turn, context in user_turns(arc.sessions):
        system.process_turn(turn, context)
    allowed = (UserTurn, FieldSpec, str, type(None))
    from agentmemgate.memory import ExtractedTuple, StagedState

    for args in seen:
        for a in args:
            items = a if isinstance(a, list) else [a]
            assert all(
                isinstance(x, allowed + (ContextTurn, ExtractedTuple, StagedState)) for x in items
            )
    assert seen


def test_the_conversation_view_takes_sessions_not_arcs(arcs):
    arc = arcs[0]
    turns = list(user_turns(arc.sessions))
    assert all(isinstance(t, UserTurn) for t, _ in turns)
    assert turns[-1][0].t == sum(len(s.turns) for s in arc.sessions) - 2
    with pytest.raises(AttributeError):
        list(user_turns(arc))  # an Arc is not a list of sessions


def test_only_oracles_take_the_truth():
    _, factory = get_system("cautious-gated")
    with pytest.raises(BadInput):
        factory(truth={"gym": ["Equinox", "Crunch Fitness"]})
