"""The miner's dev set (devsets/hedges): its labels load against the real corpora and the current
cue lexicon and rules meet their targets on it (a regression guard, not a tuning loop)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentmemgate.corpora.devset import (
    load_devset,
    load_devsets,
    measure,
    share_passed,
    unseen_folders,
)
from agentmemgate.errors import BadInput

from .paths import REAL_LOCOMO, REAL_LONGMEMEVAL, needs_real_corpora

DEVSET = Path(__file__).parents[2] / "devsets" / "hedges"


@pytest.fixture(scope="module")
def dev():
    return load_devset(DEVSET, REAL_LOCOMO, REAL_LONGMEMEVAL)


@needs_real_corpora
def test_every_turn_in_scope_is_labelled(dev):
    locomo = [t for t in dev.turns if t.part == "locomo"]
    lme = [t for t in dev.turns if t.part == "longmemeval"]
    assert len(locomo) == 1920
    assert {t.conversation_id for t in locomo} == {"conv-41", "conv-47", "conv-50"}
    assert len(lme) == 119 and len({t.conversation_id for t in lme}) == 12
    assert sum(t.label == "spec" for t in locomo) == 55
    assert sum(t.label == "spec" for t in lme) == 26


@needs_real_corpora
def test_current_lexicon_and_rules_meet_the_targets(dev):
    parts = {p.part: p for p in measure(dev).parts}
    lo, lme = parts["locomo"], parts["longmemeval"]
    assert lo.recall_spec.value >= 0.90 and lo.flagged.value <= 0.35
    assert lo.stage2_keep_spec.value >= 0.70 and lme.stage2_keep_spec.value >= 0.70
    assert lme.recall_spec.value >= 0.90
    assert share_passed(REAL_LONGMEMEVAL).value < 0.40


@needs_real_corpora
def test_held_out_set_loads_and_is_measured():
    """Figures only (no target): the held-out set exists to say how optimistic the dev ones are."""
    held = load_devset(DEVSET / "heldout", REAL_LOCOMO, REAL_LONGMEMEVAL)
    parts = {p.part: p for p in measure(held).parts}
    assert (parts["locomo"].turns, parts["locomo"].spec) == (247, 12)
    assert (parts["longmemeval"].turns, parts["longmemeval"].spec) == (61, 12)


@needs_real_corpora
def test_released_v1_figures_stay_reproducible(dev):
    from agentmemgate.corpora._rules import load_rules
    from agentmemgate.corpora.prefilter import load_lexicon

    first = replace(  # the conversations the v1 figures were measured on (conv-50 came later)
        dev,
        turns=[t for t in dev.turns if t.conversation_id != "conv-50"],
        conversations={
            **dev.conversations,
            "locomo": [c for c in dev.conversations["locomo"] if c.conversation_id != "conv-50"],
        },
    )
    parts = {p.part: p for p in measure(first, load_lexicon(1), load_rules(1)).parts}
    assert (parts["locomo"].recall_spec.k, parts["locomo"].flagged.k) == (42, 263)
    assert parts["locomo"].stage2_keep_spec.k == 5
    assert share_passed(REAL_LONGMEMEVAL, load_lexicon(1)).k == 420


@needs_real_corpora
def test_a_label_for_a_turn_the_corpus_lacks_is_named(tmp_path):
    for name in ("locomo.tsv", "longmemeval.tsv"):
        (tmp_path / name).write_text((DEVSET / name).read_text())
    with open(tmp_path / "locomo.tsv", "a") as f:
        f.write("conv-41\tD99:1\tspec\tno such turn\n")
    with pytest.raises(BadInput, match="conv-41:D99:1"):
        load_devset(tmp_path, REAL_LOCOMO, REAL_LONGMEMEVAL)


@needs_real_corpora
def test_held_out_sets_pool_and_the_stored_figures_are_their_measurement():
    """What `amg mine hedges` states is what measuring the pooled held-out sets gives, figure for
    figure, for every packaged lexicon; pooling adds up the sets' turns, and a set the lexicon's
    turn model was trained on is left out of that corpus's figures."""
    from agentmemgate.corpora._rules import load_rules
    from agentmemgate.corpora.accuracy import measured
    from agentmemgate.corpora.prefilter import load_lexicon

    for version in (2, 3):  # each lexicon with the rules released beside it
        lexicon = load_lexicon(version)
        stored = measured(lexicon, load_rules(version))
        assert stored is not None, "re-run devsets/hedges/measure.py --set unseen --save"
        seen = lexicon.model.tuned_on_sets if lexicon.model else {}
        for part in ("locomo", "longmemeval"):
            folders = unseen_folders(DEVSET, lexicon, part)
            assert not {f.name for f in folders} & set(seen.get(part, ()))
            alone = [load_devset(f, REAL_LOCOMO, REAL_LONGMEMEVAL) for f in folders]
            held = load_devsets(folders, REAL_LOCOMO, REAL_LONGMEMEVAL)
            p = next(p for p in measure(held, lexicon, load_rules(version)).parts if p.part == part)
            turns = [t for d in alone for t in d.turns if t.part == part]
            assert p.turns == len(turns)
            assert p.spec == sum(t.label == "spec" for t in turns)
            figures = {
                "prefilter_recall": p.recall_spec,
                "flagged": p.flagged,
                "precision": p.precision,
                "recall": p.recall,
            }
            got = {k: {"k": v.k, "n": v.n} for k, v in figures.items()}
            assert {k: stored["parts"][part][k] for k in figures} == got


@needs_real_corpora
def test_the_scorer_s_stored_held_out_figures_are_its_measurement():
    """`amg mine hedges --miner offline-scorer` states what measuring the pooled held-out sets with the packaged
    scorer gives; its cross-validated dev figures count every dev speculation turn."""
    from agentmemgate.corpora._rules import load_rules
    from agentmemgate.corpora.accuracy import measured
    from agentmemgate.corpora.prefilter import load_lexicon
    from agentmemgate.corpora.scorer import load_scorer

    scorer, lexicon = load_scorer(), load_lexicon()
    stored = measured(lexicon, load_rules(), scorer=scorer)
    assert stored is not None, "re-run devsets/hedges/measure.py --set unseen --scorer 1 --save"
    for part in ("locomo", "longmemeval"):
        held = load_devsets(unseen_folders(DEVSET, lexicon, part), REAL_LOCOMO, REAL_LONGMEMEVAL)
        p = next(p for p in measure(held, lexicon, scorer=scorer).parts if p.part == part)
        got = {"precision": p.precision, "recall": p.recall, "named": p.named}
        assert {k: stored["parts"][part][k] for k in got} == {
            k: {"k": v.k, "n": v.n} for k, v in got.items()
        }
    dev_parts = [
        load_devset(f, REAL_LOCOMO, REAL_LONGMEMEVAL) for f in (DEVSET, DEVSET / "heldout")
    ]
    for part in ("locomo", "longmemeval"):
        spec = sum(t.label == "spec" for d in dev_parts for t in d.turns if t.part == part)
        assert scorer.measured[part]["recall"]["n"] == spec
