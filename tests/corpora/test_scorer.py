"""The learned stage-2 scorer (scorer.vN.json): loading, features, what it keeps and the values it
gives, and ``amg mine hedges --miner offline-scorer`` end to end on the fixture."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora import (
    Conversation,
    CorpusSession,
    CorpusTurn,
    RuleExtractor,
    load_corpus,
    mine_hedges,
    scan_conversation,
)
from agentmemgate.corpora.accuracy import measured
from agentmemgate.corpora.scorer import SCORER_DIR, features, load_scorer
from agentmemgate.errors import BadInput

from .paths import LOCOMO


def _candidates(*texts: str, corpus: str = "locomo"):
    turns = [
        CorpusTurn(index=k, speaker="Ann", text=t, ref=f"D1:{k + 1}", mined=True)
        for k, t in enumerate(texts)
    ]
    conv = Conversation(
        corpus=corpus,
        conversation_id="c",
        speakers=["Ann", "Bo"],
        sessions=[CorpusSession(index=0, session_id="session_1", date=None, turns=turns)],
    )
    return scan_conversation(conv).candidates


def test_packaged_scorer_loads_with_its_provenance():
    scorer = load_scorer()
    data = json.loads((SCORER_DIR / f"scorer.v{scorer.version}.json").read_text())
    assert scorer.ref == f"scorer.v{data['version']}" and len(scorer.sha256) == 64
    assert scorer.threshold == data["threshold"] and len(scorer.weights) == len(data["weights"])
    assert 0 < scorer.threshold < 1
    # the cross-validated dev figures travel with the weights
    for part in ("locomo", "longmemeval"):
        assert {"precision", "recall"} <= set(scorer.measured[part])


def test_unknown_version_and_malformed_file_are_one_line_errors(tmp_path):
    with pytest.raises(BadInput, match="No stage-2 scorer version 99"):
        load_scorer(99)
    bad = tmp_path / "mine.json"
    bad.write_text('{"weights": {}}')
    with pytest.raises(BadInput, match="mine.json: not a stage-2 scorer"):
        load_scorer(path=str(bad))


def test_features_name_the_turn_its_cue_sentences_and_cues():
    (cand,) = _candidates("Nice weather. I'm thinking of adopting a dog.")
    f = features(cand)
    assert {"corpus:locomo", "w:nice", "b:adopting_a", "cw:adopting", "cb:a_dog"} <= f
    assert "cw:weather" not in f  # not in a cue sentence
    assert {f"cue:{c}" for c in cand.prefilter_cues} <= f
    assert {f"cue:{c.split(':')[0]}" for c in cand.prefilter_cues} <= f


def test_a_scorer_that_reads_the_rules_sees_their_verdict(tmp_path):
    """``train.py --reads-rules`` makes a scorer whose features include what the rules decided;
    the miner hands it their verdict. A weight on it moves the probability, and the sets it
    learnt from leave the held-out pool measured for it."""
    from agentmemgate.corpora.devset import unseen_folders
    from agentmemgate.corpora.prefilter import load_lexicon

    plan, promise = _candidates(
        "I'm thinking of adopting a rescue dog next year.", "I'm gonna keep it up!"
    )
    rules = RuleExtractor()
    kept, dropped = rules._rules(plan), rules._rules(promise)
    assert kept.kept and not dropped.kept
    assert {"r:kept=True", f"r:attr={kept.attribute}"} <= features(plan, kept)
    assert {"r:kept=False", f"r:why={dropped.reject_reason}"} <= features(promise, dropped)
    assert not any(f.startswith("r:") for f in features(plan))
    data = json.loads((SCORER_DIR / "scorer.v1.json").read_text())
    data |= {
        "reads_rules": True,
        "tuned_on_sets": {"locomo": ["dev", "heldout2"]},
        "weights": {"r:kept=False": -50.0},
        "intercept": 10.0,
    }
    own = tmp_path / "scorer.json"
    own.write_text(json.dumps(data))
    scorer = load_scorer(path=str(own))
    assert scorer.reads_rules and scorer.tuned_on_sets == {"locomo": ("dev", "heldout2")}
    miner = RuleExtractor(scorer=scorer)
    assert miner.extract(plan).kept and not miner.extract(promise).kept
    from agentmemgate.corpora._rules import load_rules

    v2 = load_rules(2)
    data["rules"] = f"rules.v2:{v2.sha256[:12]}"
    own.write_text(json.dumps(data))
    load_scorer.cache_clear()
    learnt_on_v2 = load_scorer(path=str(own))
    assert RuleExtractor(v2, scorer=learnt_on_v2).extract(plan).kept
    with pytest.raises(BadInput, match=r"learnt from the verdicts of rules\.v2:.*not rules\.v3"):
        RuleExtractor(load_rules(3), scorer=learnt_on_v2)
    names = lambda part: [f.name for f in unseen_folders("x", load_lexicon(2), part, scorer)]
    assert names("locomo") == ["heldout3", "heldout4"]
    assert names("longmemeval") == ["heldout2", "heldout3", "heldout4"]


def test_it_keeps_a_plan_and_drops_a_continuation():
    scorer = load_scorer()
    plan, promise = _candidates(
        "I'm thinking of adopting a rescue dog next year.", "I'm gonna keep it up!"
    )
    assert scorer.keeps(scorer.probability(plan))
    assert not scorer.keeps(scorer.probability(promise))
    rejected = RuleExtractor(scorer=scorer).extract(promise)
    assert not rejected.kept and rejected.reject_reason.startswith("scorer: ")


def test_kept_values_name_an_object_never_a_bare_verb():
    scorer = load_scorer()
    assert scorer.names_object("adopting a child") and scorer.names_object("a dance studio")
    assert not scorer.names_object("pass") and not scorer.names_object("head out")
    rx = RuleExtractor(scorer=scorer)
    cands = [c for conv in load_corpus(LOCOMO) for c in scan_conversation(conv).candidates]
    kept = [e for e in map(rx.extract, cands) if e.kept]
    assert kept
    for e in kept:
        assert e.plan_value is None or scorer.names_object(e.plan_value), e
        assert e.attribute and e.hedge_level


def test_a_plan_the_rules_do_not_name_gets_the_attribute_its_words_point_to():
    scorer = load_scorer()
    assert scorer.name("a new tripod") == "purchase"
    assert scorer.name("some yoga classes") in scorer.names_order
    assert scorer.name("xyz qwv") == "unspecified"


def test_mining_with_the_scorer_is_its_own_miner_with_its_own_figures(ws, tmp_path):
    out = tmp_path / "h.jsonl"
    s = mine_hedges(ws, LOCOMO, corpus="locomo", miner="offline-scorer", out=out)
    rules = mine_hedges(ws, LOCOMO, corpus="locomo")
    assert (s.miner, rules.miner) == ("offline-scorer", "offline-rules")
    assert s.prefilter_hits == rules.prefilter_hits  # the same stage 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["miner"] for r in rows} == {"offline-scorer"}
    assert sum(bool(r["kept"]) for r in rows) == s.hedges
    run = next(
        r
        for r in ws.db["runs"].rows_where("command = ?", ["mine hedges"], order_by="rowid")
        if "offline-scorer" in r["params"]
    )
    scorer = load_scorer()
    assert f"{scorer.ref}:{scorer.sha256[:12]}" in run["params"]
    # the summary states the held-out figures stored for exactly these files
    from agentmemgate.corpora._rules import load_rules
    from agentmemgate.corpora.prefilter import load_lexicon

    entry = measured(load_lexicon(), load_rules(), scorer=scorer)
    assert entry is not None, "re-run devsets/hedges/measure.py --set unseen --scorer 1 --save"
    p = entry["parts"]["locomo"]["precision"]
    assert f"(precision): {p['k']}/{p['n']} =" in "\n".join(s.lines())


def test_cli_help_names_the_scorer_miner():
    result = CliRunner().invoke(app, ["mine", "hedges", "--help"])
    assert result.exit_code == 0 and "offline-scorer" in result.output
