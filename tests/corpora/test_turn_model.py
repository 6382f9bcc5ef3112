"""The stage-1 turn model: a turn the cue rule misses can still reach stage 2, where the lexicon
says so, and only there."""

from __future__ import annotations

import pytest

from agentmemgate.corpora.extract import RuleExtractor
from agentmemgate.corpora.loaders import iter_conversations
from agentmemgate.corpora.prefilter import LEXICON_DIR, load_lexicon, scan_conversation, scan_turn
from agentmemgate.errors import BadInput

from .paths import LOCOMO

STUDIO = "Hi! Since we last spoke I am still working on the dance studio and things are looking up!"


def test_a_turn_only_the_model_passes_is_a_hit_in_peer_chat_only():
    lex = load_lexicon()
    assert lex.model is not None and lex.model.ref == "turns.v1"
    assert not scan_turn(STUDIO, load_lexicon(2), "locomo").hit  # no cue phrase in it
    scan = scan_turn(STUDIO, lex, "locomo")
    assert scan.hit and scan.cues == ["model:turns.v1"]
    assert lex.model.probability(STUDIO) >= lex.model.threshold
    # the sentence in the first person is the one handed on, not the greeting
    assert [STUDIO[a:b] for a, b in scan.spans] == [STUDIO[4:]]
    # LongMemEval is read by the cue rule alone
    assert "longmemeval" not in lex.model.corpora
    assert not scan_turn(STUDIO, lex, "longmemeval").hit


def test_a_cue_hit_is_unchanged_by_the_model():
    text = "I'm thinking about moving to Denver next year."
    assert scan_turn(text, load_lexicon(), "locomo") == scan_turn(text, load_lexicon(2), "locomo")


def test_the_offline_stage_2_leaves_model_only_hits_to_a_model_miner():
    """Neither the rules nor scorer.v1 were made on turns with no cue sentence: they reject them
    with a reason, so the offline miner keeps what it kept before the model widened stage 1."""
    convs = list(iter_conversations(LOCOMO, "locomo"))
    new = [c for conv in convs for c in scan_conversation(conv, load_lexicon()).candidates]
    old = {c.id for conv in convs for c in scan_conversation(conv, load_lexicon(2)).candidates}
    only_model = [c for c in new if c.id not in old]
    assert only_model and all(c.prefilter_cues == ["model:turns.v1"] for c in only_model)
    assert {c.id for c in new} >= old
    rules = RuleExtractor()
    for c in only_model:
        got = rules.extract(c)
        assert not got.kept and got.reject_reason == "no plan cue"


def test_a_lexicon_naming_a_model_with_other_bytes_is_refused(tmp_path):
    own = tmp_path / "own.toml"
    text = (LEXICON_DIR / "cues.v3.toml").read_text()
    sha = load_lexicon().model.sha256
    own.write_text(text.replace(sha, "0" * 64))
    with pytest.raises(BadInput, match=r"turns\.v1\.json: sha256 .* is not the 000000000000"):
        load_lexicon(path=str(own))


def test_a_lexicon_finds_its_own_model_file_beside_it(tmp_path):
    """A user's lexicon may name a model of their own, kept in the lexicon's folder."""
    import json

    model = json.loads((LEXICON_DIR / "turns.v1.json").read_text())
    model["threshold"] = 1.0  # passes nothing
    raw = json.dumps(model)
    (tmp_path / "turns.v1.json").write_text(raw)
    import hashlib

    sha = hashlib.sha256(raw.encode()).hexdigest()
    text = (LEXICON_DIR / "cues.v3.toml").read_text()
    own = tmp_path / "own.toml"
    own.write_text(text.replace(load_lexicon().model.sha256, sha))
    lex = load_lexicon(path=str(own))
    assert lex.model.sha256 == sha and not scan_turn(STUDIO, lex, "locomo").hit


def test_an_llm_miner_is_told_a_model_only_hit_has_no_cue_phrase(ws):
    """The LLM miner reads the turns the model adds; its prompt says no cue phrase flagged them,
    and a cue hit's prompt is as before."""
    from agentmemgate.corpora import mine_hedges
    from agentmemgate.corpora.llm_extract import MODEL_ONLY
    from agentmemgate.llm import get_model

    no = dict.fromkeys(("span", "attribute", "plan_value", "hedge_level"))
    reply = {"keep": False, **no, "reason": "no plan here"}
    model = get_model("scripted:turns").respond_with(lambda r: reply)
    s = mine_hedges(ws, LOCOMO, miner="scripted:turns")
    prompts = [q.prompt for q in model.history]
    assert len(prompts) == s.prefilter_hits
    flagged = [p for p in prompts if MODEL_ONLY in p]
    studio = next(p for p in flagged if STUDIO in p.split("The turn (", 1)[1])
    assert f"- {STUDIO[4:]}\n{MODEL_ONLY}" in studio
    convs = list(iter_conversations(LOCOMO, "locomo"))
    only_model = sum(
        c.prefilter_cues == ["model:turns.v1"]
        for conv in convs
        for c in scan_conversation(conv, load_lexicon()).candidates
    )
    assert len(flagged) == only_model


def test_lexicon_model_mistakes_are_one_line_errors(tmp_path):
    text = (LEXICON_DIR / "cues.v3.toml").read_text()
    no_sha = tmp_path / "no_sha.toml"
    no_sha.write_text("\n".join(l for l in text.splitlines() if not l.startswith("sha256 = ")))
    with pytest.raises(BadInput, match=r"no_sha.toml: \[model\] needs file and sha256"):
        load_lexicon(path=str(no_sha))
    missing = tmp_path / "missing.toml"
    missing.write_text(text.replace('file = "turns.v1.json"', 'file = "turns.v9.json"'))
    with pytest.raises(BadInput, match=r"turns.v9.json: no such turn model \(looked in "):
        load_lexicon(path=str(missing))


def test_the_summary_names_the_turn_model_only_where_it_applies(ws):
    from agentmemgate.corpora import mine_hedges

    from .paths import LONGMEMEVAL

    assert "turn model" in "\n".join(mine_hedges(ws, LOCOMO).lines())
    assert "turn model" not in "\n".join(mine_hedges(ws, LONGMEMEVAL).lines())


@pytest.mark.parametrize(
    "change",
    [{"weights": [1.0]}, {"tuned_on_sets": ["dev"]}, {"corpora": "locomo"}],
)
def test_a_turn_model_with_a_malformed_field_is_named_not_a_traceback(tmp_path, change):
    import hashlib
    import json

    data = json.loads((LEXICON_DIR / "turns.v1.json").read_text()) | change
    raw = json.dumps(data)
    (tmp_path / "turns.v1.json").write_text(raw)
    sha = hashlib.sha256(raw.encode()).hexdigest()
    own = tmp_path / "own.toml"
    text = (LEXICON_DIR / "cues.v3.toml").read_text()
    own.write_text(text.replace(load_lexicon().model.sha256, sha))
    with pytest.raises(BadInput, match="turns.v1.json: not a turn model"):
        load_lexicon(path=str(own))


def test_a_dry_run_names_the_turn_model_only_where_it_applies(ws):
    from agentmemgate.corpora import plan_mine_hedges

    from .paths import LONGMEMEVAL

    assert "turn model" in "\n".join(plan_mine_hedges(ws, LOCOMO).prefilter)
    assert "turn model" not in "\n".join(plan_mine_hedges(ws, LONGMEMEVAL).prefilter)


def test_no_labelled_sets_is_a_one_line_error():
    from agentmemgate.corpora.devset import load_devsets

    with pytest.raises(BadInput, match="no labelled sets to read"):
        load_devsets([], LOCOMO, LOCOMO)
