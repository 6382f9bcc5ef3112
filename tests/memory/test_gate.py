"""Algorithm 1 by hand: routing per evidence type, staging, promotion, discard, calls, the retry."""

from __future__ import annotations

import pytest

from agentmemgate.memory import (
    CueChecker,
    FieldKey,
    Gate,
    OfflineExtractor,
    TemplatePredicateWriter,
    WordOverlapMatcher,
    gate_info,
)

from .conftest import FIELD, ScriptedClassifier, conversation

KEY = FieldKey.of(FIELD)


def make(style="literal", gated=True, retry=False, answers=None, **kw):
    clf = ScriptedClassifier(answers)
    gate = Gate(
        gate_info("test", gated=gated),
        extractor=OfflineExtractor(style),
        matcher=WordOverlapMatcher(),
        classifier=clf,
        predicates=TemplatePredicateWriter(),
        checker=CueChecker(),
        gated=gated,
        retry=retry,
        **kw,
    )
    gate.begin([FIELD])
    return gate, clf


def run(gate, *texts):
    return [gate.process_turn(turn, ctx) for turn, ctx in conversation(*texts)]


@pytest.mark.parametrize(
    "label,kind,current",
    [
        ("speculation", "staged", "Safeway"),
        ("completed_event", "committed", "Aldi"),
        ("explicit_correction", "corrected", "Aldi"),
        ("other", "committed", "Aldi"),
    ],
)
def test_gate_on_routes_by_evidence_type(label, kind, current):
    gate, _ = make(answers={"Aldi": label})
    _, events = run(gate, "I buy my groceries at Safeway.", "I switched to Aldi.")
    (e,) = events
    assert (e.kind, e.value, e.evidence_type) == (kind, "Aldi", label)
    assert gate.read(KEY) == current
    history = gate.snapshot(2).fields[0].history
    assert history[0].never_valid is (label == "explicit_correction")
    if label == "speculation":
        (item,) = gate.snapshot(2).staged
        assert (item.value, item.status, item.staged_at) == ("Aldi", "pending", 2)
        assert "Aldi" in e.confirm_when and "Safeway" in e.abandon_when


def test_gate_off_commits_every_match_and_never_classifies():
    gate, clf = make(gated=False, answers={"Aldi": "speculation"})
    _, events = run(gate, "I buy my groceries at Safeway.", "I might switch to Aldi.")
    assert [e.kind for e in events] == ["committed"] and events[0].evidence_type is None
    assert gate.read(KEY) == "Aldi" and clf.seen == []


def test_promotion_happens_at_the_confirming_turn_and_only_for_earlier_items():
    gate, _ = make(answers={"might": "speculation"})
    out = run(
        gate,
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "How do I keep bread fresh?",
        "Well, I finally switched to Aldi last week.",
    )
    assert [e.kind for e in out[1]] == ["staged"]
    assert out[2] == []
    assert [e.kind for e in out[3]] == ["committed", "promoted"]
    promoted = out[3][1]
    assert (promoted.t, promoted.value) == (6, "Aldi")
    (item,) = gate.snapshot(6).staged
    assert (item.status, item.resolved_at) == ("promoted", 6)


def test_an_abandoned_plan_is_discarded_and_the_store_never_held_it():
    gate, _ = make(answers={"might": "speculation"})
    run(
        gate,
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "I decided against switching to Aldi, I'm sticking with Safeway.",
    )
    snap = gate.snapshot(4)
    assert snap.staged[0].status == "discarded"
    assert [iv.value for iv in snap.fields[0].history] == ["Safeway"]


def test_an_unresolved_plan_stays_pending_and_invisible():
    gate, _ = make(answers={"might": "speculation", "Still": "speculation"})
    run(
        gate,
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "Still haven't decided about Aldi.",
        "What's a good soup for winter?",
    )
    snap = gate.snapshot(6)
    assert snap.staged[0].status == "pending" and gate.read(KEY) == "Safeway"


def test_calls_count_one_per_would_be_model_call():
    gate, _ = make(answers={"might": "speculation"})
    run(
        gate,
        "I buy my groceries at Safeway.",  # extract 1 + match 1 + classify 1
        "I might switch to Aldi.",  # extract 1 + match 1 + classify 1 + predicates 1
        "How do I keep bread fresh?",  # extract 1 + check 1
        "Any soup ideas?",
    )  # extract 1 + check 1
    assert gate.calls == 3 + 4 + 2 + 2
    ungated, _ = make(gated=False)
    run(
        ungated,
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "How do I keep bread fresh?",
        "Any soup ideas?",
    )
    assert ungated.calls == 2 + 2 + 1 + 1


def test_the_same_plan_is_not_staged_twice():
    gate, _ = make(answers={"might": "speculation", "maybe": "speculation"})
    out = run(gate, "I buy my groceries at Safeway.", "I might switch to Aldi.", "Aldi, maybe.")
    assert [e.kind for e in out[2]] == ["staged"] and "not staged twice" in out[2][0].detail
    assert len(gate.snapshot(4).staged) == 1


def test_no_field_no_write():
    gate, _ = make()
    (events,) = run(gate, "I moved to Chicago last year.")
    assert [e.kind for e in events] == ["dropped_no_field"] and events[0].key is None
    assert gate.snapshot(0).fields[0].history == []


def test_cautious_plans_reach_the_gate_only_through_the_retry():
    texts = ("I buy my groceries at Safeway.", "I'm thinking about switching to Aldi.")
    without, _ = make("cautious", answers={"thinking": "speculation"})
    out = run(without, *texts)
    assert [e.kind for e in out[1]] == ["dropped_no_field"]
    assert out[1][0].extracted.attribute == "grocery_plan"
    with_retry, clf = make("cautious", retry=True, answers={"thinking": "speculation"})
    out = run(with_retry, *texts)
    (e,) = out[1]
    assert (e.kind, e.value, e.matched_by_retry) == ("staged", "Aldi", True)
    assert e.extracted.value == "considering Aldi"  # the tuple as extracted is kept in the event
    assert "thinking about switching" in clf.seen[-1].text  # the classifier saw the original span
    assert with_retry.calls == without.calls + 1 + 1 + 1  # retry match, classify, predicates


def test_gated_requires_its_components():
    with pytest.raises(ValueError):
        Gate(gate_info("x"), extractor=OfflineExtractor(), matcher=WordOverlapMatcher())


def test_the_module_docstring_example_runs():
    import re

    import agentmemgate.memory.gate as gate_module

    block = gate_module.__doc__.split("::", 1)[1]
    code = "\n".join(line[4:] for line in block.splitlines() if line.startswith("    "))
    lines = code.splitlines()
    namespace: dict = {}
    exec("\n".join(re.sub(r"\s+# .*$", "", ln) for ln in lines[:-3]), namespace)
    assert [e.kind for e in namespace["events"]] == ["staged"]
    gate, field = namespace["gate"], namespace["field"]
    assert gate.read(namespace["FieldKey"].of(field)) == "Safeway"
    assert "Aldi" in gate.snapshot(2).staged[0].confirm_when


def test_permissive_matcher_is_a_second_call_after_a_decline():
    from agentmemgate.memory import PermissiveMatcher

    texts = ("I buy my groceries at Safeway.", "I'm thinking about switching to Aldi.")
    strict, _ = make("cautious", answers={"thinking": "speculation"})
    run(strict, *texts)
    loose, _ = make("cautious", answers={"thinking": "speculation"}, permissive=PermissiveMatcher())
    out = run(loose, *texts)
    (e,) = out[1]
    assert (e.kind, e.value, e.matched_by_retry) == ("staged", "Aldi", False)
    assert loose.calls == strict.calls + 1 + 1 + 1  # permissive match, classify, predicates


def plan_typed(reading, answers):
    from agentmemgate.memory import PlanTypedMemory

    system = PlanTypedMemory(
        gate_info("pt", gated=False),
        extractor=OfflineExtractor("literal"),
        matcher=WordOverlapMatcher(),
        classifier=ScriptedClassifier(answers),
        reading=reading,
    )
    system.begin([FIELD])
    return system


@pytest.mark.parametrize(
    "reading,final,kinds",
    [
        ("refresh", "Aldi", ["refreshed"]),
        ("strict", "Safeway", []),
    ],
)
def test_plan_typed_masks_plans_and_resolves_them_only_under_refresh(reading, final, kinds):
    system = plan_typed(reading, {"might": "speculation"})
    out = run(
        system,
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "Update: I switched to Aldi.",
    )
    assert [e.kind for e in out[1]] == ["plan_committed"]
    assert system.read(KEY) == "Safeway" or reading == "refresh"
    assert [e.kind for e in out[2]] == kinds
    assert system.read(KEY) == final
    history = system.snapshot(4).fields[0].history
    assert [iv.plan for iv in history][:2] == [False, True]
    assert system.snapshot(4).staged == []  # no staging area
    assert system.calls == 3 + 3 + 3  # extract, match, classify per turn; nothing else


def test_plan_typed_commits_other_values_as_facts():
    system = plan_typed("strict", {"might": "speculation"})
    run(
        system, "I buy my groceries at Safeway.", "I might switch to Aldi.", "I switched to Kroger."
    )
    assert system.read(KEY) == "Kroger" and [iv.value for iv in system.store.open_plans(KEY)] == [
        "Aldi"
    ]
