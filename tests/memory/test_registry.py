"""System names, options, SystemInfo, factories, and the paper's systems end to end on real arcs."""

from __future__ import annotations

import pytest

from agentmemgate.errors import BadInput
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.llm import ModelRef
from agentmemgate.memory import FieldKey, get_system, system_names
from agentmemgate.memory.conversation import user_turns

PAPER = ["literal-ungated", "literal-gated", "cautious-ungated", "cautious-gated"]


def test_names_cover_the_paper_systems():
    assert system_names() == PAPER + [
        "plan-typed-literal",
        "plan-typed-cautious",
        "plan-typed-literal-strict",
        "plan-typed-cautious-strict",
    ]


@pytest.mark.parametrize(
    "name,canon,twin,gated",
    [
        ("literal-gated", "literal-gated", "literal-ungated", True),
        ("cautious-gated", "cautious-gated", "cautious-ungated", True),
        ("cautious-gated[retry]", "cautious-gated", "cautious-ungated", True),
        ("cautious-gated[no-retry]", "cautious-gated[no-retry]", "cautious-ungated", True),
        ("cautious-ungated[retry]", "cautious-ungated[retry]", None, False),
        (
            "literal-gated[permissive, oracle]",
            "literal-gated[permissive,oracle]",
            "literal-ungated[permissive,oracle]",
            True,
        ),
        ("plan-typed-cautious-strict", "plan-typed-cautious-strict", "cautious-ungated", False),
        (
            "plan-typed-literal[oracle]",
            "plan-typed-literal[oracle]",
            "literal-ungated[oracle]",
            False,
        ),
    ],
)
def test_canonical_names_and_twins(name, canon, twin, gated):
    info, _ = get_system(name)
    assert (info.name, info.ungated_twin, info.gated) == (canon, twin, gated)


def test_info_labels_offline_rules_and_oracles():
    info, _ = get_system("cautious-gated")
    assert info.offline and not info.oracle
    assert info.components["extractor"].startswith("offline-extract-cautious.v1#")
    assert info.components["retry"].startswith("plan-frame-retry.v1#")
    assert info.components["classifier"] == "offline:lexicon.v2"
    assert {"matcher", "predicates", "checker", "routing", "store"} <= set(info.components)
    assert "offline rules" in info.description
    ungated, _ = get_system("literal-ungated")
    assert "classifier" not in ungated.components and ungated.components["retry"] == "off"
    oracle, _ = get_system("literal-gated[oracle]")
    assert oracle.oracle and "ORACLE" in oracle.description
    assert oracle.components["extractor"].startswith("oracle-extract-literal.v1#")


@pytest.mark.parametrize(
    "name,needle",
    [
        (
            "literal",
            "Unknown memory system 'literal'; did you mean 'literal-gated'?; choose one of: literal-ungated",
        ),
        ("cautious-gatd", "did you mean 'cautious-gated'?"),
        ("literal-gated[fast]", "Unknown option 'fast'"),
        ("cautious-gated[retry,no-retry]", "both on and off"),
        ("", "Unknown memory system ''"),
    ],
)
def test_unknown_names_and_options_are_one_line_errors(name, needle):
    with pytest.raises(BadInput) as e:
        get_system(name)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_offline_refuses_llm_options():
    with pytest.raises(BadInput, match="needs a model"):
        get_system("literal-gated", model=ModelRef.parse("offline", "http://127.0.0.1:8080/v1"))


def test_factories_keep_the_truth_for_oracles_only():
    _, plain = get_system("literal-gated")
    with pytest.raises(BadInput, match="not an oracle"):
        plain(truth={"gym": ["Equinox", "Crunch Fitness"]})
    _, oracle = get_system("literal-gated[oracle]")
    with pytest.raises(BadInput, match="truth="):
        oracle()
    with pytest.raises(BadInput):
        oracle(truth={"gym": "Equinox"})
    assert oracle(truth={"gym": ["Equinox", "Crunch Fitness"]}).info.oracle


def test_each_call_makes_a_fresh_system():
    _, factory = get_system("literal-gated")
    a, b = factory(), factory()
    assert a is not b and a.store is not b.store


@pytest.fixture(scope="module")
def arcs():
    r = get_renderer("offline")
    return {s.id: r.render(s) for s in plan_split("core", 0, n_per_cell=2)}


def _run(name, arc):
    info, factory = get_system(name)
    spec = arc.spec
    system = (
        factory(truth={spec.field.attribute: [spec.initial_value, spec.plan_value]})
        if info.oracle
        else factory()
    )
    system.begin([spec.field])
    events = []
    for turn, context in user_turns(arc.sessions):
        events += system.process_turn(turn, context)
        system.snapshot(turn.t).model_dump_json()  # serializable after every turn
    return system, events


@pytest.mark.parametrize(
    "name", system_names() + ["cautious-gated[no-retry]", "literal-gated[oracle,permissive]"]
)
def test_every_system_runs_every_core_arc(name, arcs):
    for arc in arcs.values():
        system, events = _run(name, arc)
        assert system.calls >= sum(1 for s in arc.sessions for t in s.turns if t.role == "user")
        for e in events:
            assert e.kind in (
                "committed",
                "corrected",
                "staged",
                "plan_committed",
                "promoted",
                "discarded",
                "refreshed",
                "dropped_no_field",
            )


def test_on_a_real_open_arc_ungated_literal_stores_the_plan_and_the_gate_does_not():
    """An open plan stated with a hedge the offline lexicon calls speculation."""
    r = get_renderer("offline")
    opens = [r.render(s) for s in plan_split("core", 0, n_per_cell=8) if s.outcome == "open"]
    arc = next(a for a in opens if any(e.kind == "staged" for e in _run("literal-gated", a)[1]))
    key = FieldKey.of(arc.spec.field)
    ungated, _ = _run("literal-ungated", arc)
    gated, events = _run("literal-gated", arc)
    assert ungated.read(key) == arc.spec.plan_value
    assert gated.read(key) == arc.spec.initial_value
    staged = next(e for e in events if e.kind == "staged")
    assert staged.value == arc.spec.plan_value
    assert gated.calls > ungated.calls


def test_the_same_arc_gives_the_same_trace(arcs):
    arc = next(iter(arcs.values()))
    a, ea = _run("cautious-gated", arc)
    b, eb = _run("cautious-gated", arc)
    assert ea == eb and a.snapshot(99) == b.snapshot(99)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(model="nonsense"), "use provider:model"),
        (dict(model="openai:gpt-x"), "No API key"),
        (dict(model="scripted:x", workspace="/nonexistent/ws"), "No workspace"),
        (dict(model="scripted:x", concurrency=0), "concurrency must be at least 1"),
        (dict(model="scripted:x", bogus=1), "Bad option 'bogus'"),
    ],
)
def test_bad_model_settings_are_one_line_errors(kwargs, needle):
    from agentmemgate.errors import AmgError

    with pytest.raises(AmgError) as e:
        get_system("literal-gated", **kwargs)
    assert needle in str(e.value) and "\n" not in str(e.value)
