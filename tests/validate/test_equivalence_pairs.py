"""Equivalence pairs: construction, borderline over-sampling, the string judge, the family rule."""

from __future__ import annotations

import pytest

from agentmemgate.errors import SameFamilyJudge
from agentmemgate.validate.judges import EquivalenceQuestion, get_judge
from agentmemgate.validate.pairs import (
    KINDS,
    build_pairs,
    equivalence_report,
    is_borderline,
    plan_equivalence_pairs,
    run_equivalence_pairs,
    sample_pairs,
)
from agentmemgate.validate.store import load_verdicts


@pytest.mark.parametrize(
    "a, b, equivalent",
    [
        ("The Ghost 14", "ghost 14.", True),  # case, punctuation, leading article
        ("Counter Culture, Hologram", "hologram counter culture", True),  # word order
        ("Ghost 14", "Ghost 15", False),
        (
            "Ghost 14",
            "thinking about switching to Ghost 14",
            False,
        ),  # a plan is not a current value
        ("oat milk", "almond milk", False),
    ],
)
def test_normalized_string_judge(a, b, equivalent):
    v = get_judge("offline").ask(
        EquivalenceQuestion(field="shoe", description="d", first=a, second=b)
    )
    assert v.equivalent is equivalent and 0 <= v.confidence <= 1 and v.rationale


def test_borderline_is_where_string_rules_and_meaning_can_part_ways():
    assert is_borderline("Ghost 14", "Ghost 15", "near_miss")
    assert not is_borderline("Ghost 14", "Pegasus 39", "near_miss")
    assert not is_borderline("Ghost 14", "the Ghost 14", "surface")
    assert is_borderline("Ghost 14", "I believe it's Ghost 14", "answer")
    assert is_borderline("Ghost 14", "might go with Ghost 14", "plan_worded")


def test_pairs_from_the_splits_and_over_sampled_borderline(tiny):
    arcs = list(tiny.arcs())
    pairs = build_pairs(arcs)
    assert set(p.kind for p in pairs) == set(KINDS)
    assert len({p.id for p in pairs}) == len(pairs)
    by_arc = {a.id: a for a in arcs}
    for p in pairs:
        s = by_arc[p.arc_id].spec
        if p.kind == "plan_vs_current":
            assert (p.reference, p.candidate, p.expected) == (
                s.initial_value,
                s.plan_value,
                "not_equivalent",
            )
        if p.kind == "near_miss":
            assert p.candidate not in s.label_values and p.field == s.field.attribute
    population_share = sum(p.borderline for p in pairs) / len(pairs)
    sample = sample_pairs(pairs, 40, 0.75, seed=3)
    assert len(sample) == 40 and sum(p.borderline for p in sample) == 30 > 40 * population_share
    assert sample_pairs(pairs, 40, 0.75, seed=3) == sample  # seeded
    assert len(sample_pairs(pairs, 10_000, 0.5, seed=0)) == len(pairs)
    default = sample_pairs(pairs, 20, None, seed=0)  # halfway between the population share and 1
    assert sum(p.borderline for p in default) == round(20 * (1 + population_share) / 2)


def test_one_family_only_is_reported_and_same_family_rejudge_refused(tiny):
    r = run_equivalence_pairs(tiny, ["core", "heldout", "controlled"], n=20, show_progress=False)
    assert r.pairs == 20 and r.agreement is None
    assert any("heuristic" in n for n in r.notes) and any("--rejudge" in n for n in r.notes)
    rows = load_verdicts(tiny, ["equivalence"])
    assert len(rows) == 20 and {tuple(x.options) for x in rows} == {
        ("reference", "candidate"),
        ("candidate", "reference"),
    }
    with pytest.raises(SameFamilyJudge, match="same family as the first judge offline"):
        run_equivalence_pairs(tiny, ["core"], rejudge="offline", n=5, show_progress=False)
    assert equivalence_report(tiny).pairs == 20  # the refused run changed nothing


def test_the_plan_counts_each_judges_calls_and_stores_nothing(tiny):
    calls = plan_equivalence_pairs(tiny, ["core"], rejudge="scripted:eq", n=5)
    assert calls == {"offline": 0, "scripted:eq": 5}  # the string judge makes no model call
    assert load_verdicts(tiny, ["equivalence"]) == []
    assert tiny.db["llm_calls"].count == 0
