"""`amg mine hedges`: offline and LLM stage 2, stored, resumable, exported with the license."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate import rubrics
from agentmemgate.cli import app
from agentmemgate.corpora import load_corpus, mine_hedges, mined_statements, source_key
from agentmemgate.errors import BadInput
from agentmemgate.llm import CallFailed, get_model

from .paths import LOCOMO, LONGMEMEVAL, REAL_LOCOMO, needs_real_locomo

runner = CliRunner()
FIELDS = {
    "id",
    "corpus",
    "conversation_id",
    "source_ref",
    "speaker",
    "date",
    "text",
    "context",
    "prefilter_cues",
    "kept",
    "attribute",
    "plan_value",
    "hedge_level",
    "outcome",
    "outcome_ref",
    "miner",
    "license",
    "turn_text",
    "session_id",
    "session_index",
    "turn_index",
    "text_span",
}


def test_offline_mining_summary_and_jsonl(ws, tmp_path):
    out = tmp_path / "hedges.jsonl"
    s = mine_hedges(ws, LOCOMO, corpus="locomo", out=out)
    assert (s.corpus, s.miner, s.conversations, s.turns_scanned) == (
        "locomo",
        "offline-rules",
        2,
        21,
    )
    assert s.prefilter_hits >= 3 and s.llm_calls == 0
    assert s.hedges >= 1 and s.came_true >= 1  # the dance studio
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == s.prefilter_hits
    assert all(FIELDS <= set(r) for r in rows)
    assert all(
        r["miner"] == "offline-rules" and r["license"].startswith("CC BY-NC 4.0") for r in rows
    )
    studio = next(r for r in rows if r["source_ref"] == "D1:6")
    assert studio["kept"] and studio["outcome"] == "came_true" and studio["outcome_ref"] == "D11:3"
    turns = {t.ref: t for t in load_corpus(LOCOMO)[0].sessions[0].turns}
    assert studio["context"] == [
        {"speaker": turns[r].speaker, "text": turns[r].text} for r in ("D1:4", "D1:5")
    ]  # the two turns before D1:6
    assert studio["text"] in turns["D1:6"].text and studio["date"] == "2023-01-20T16:04"
    # the record carries its evidence: the whole turn, where it sits, the span it was read from
    conv = load_corpus(LOCOMO)[0]
    for r in (r for r in rows if r["conversation_id"] == conv.conversation_id):
        session = conv.sessions[r["session_index"]]
        turn = session.turns[r["turn_index"]]
        assert (turn.ref, turn.text, turn.speaker) == (
            r["source_ref"],
            r["turn_text"],
            r["speaker"],
        )
        assert (r["session_id"], r["date"]) == (session.session_id, session.date)
        a, b = r["text_span"]
        assert r["turn_text"][a:b] == r["text"]
        # a cue is words of the turn, or the name of the turn model that passed it
        from agentmemgate.corpora.prefilter import load_lexicon

        model = [c for c in r["prefilter_cues"] if c.startswith("model:")]
        assert model in ([], [f"model:{load_lexicon().model.ref}"])
        cues = [c.split(":", 1)[1] for c in r["prefilter_cues"] if c not in model]
        assert all(c.rstrip("*").lower() in r["turn_text"].lower().replace("’", "'") for c in cues)
    lines = "\n".join(s.lines())
    for needle in (
        "Turns scanned: 21",
        "Prefilter hits:",
        "LLM calls: none (stage 2 by offline rules)",
        "Hedges:",
        "At-risk plans with a measurable outcome:",
    ):
        assert needle in lines


def test_summary_prints_the_stage_2_share_and_the_longmemeval_s_projection(ws):
    from agentmemgate.corpora.model import LONGMEMEVAL_S_USER_TURNS

    s = mine_hedges(ws, LONGMEMEVAL)
    lines = "\n".join(s.lines())
    assert f"Prefilter hits: {s.prefilter_hits}/{s.turns_scanned} user turns = " in lines
    projected = round(s.prefilter_hits / s.turns_scanned * LONGMEMEVAL_S_USER_TURNS)
    assert f"Projected stage-2 calls on LongMemEval_s: ~{projected:,} (" in lines
    assert all(len(line) <= 100 for line in s.lines())
    lo = mine_hedges(ws, LOCOMO)
    assert "turns = " in "\n".join(lo.lines()) and "Projected" not in "\n".join(lo.lines())


def test_the_projection_prints_for_an_s_file_too(ws, tmp_path):
    """A file named like LongMemEval_s may hold only some of its questions: project it as well."""
    s_file = tmp_path / "longmemeval_s_cleaned.json"
    s_file.write_bytes(LONGMEMEVAL.read_bytes())
    s = mine_hedges(ws, s_file)
    assert s.variant == "s" and "Projected stage-2 calls on LongMemEval_s" in "\n".join(s.lines())


def test_a_file_that_is_not_the_published_one_says_so_and_is_recorded(ws, tmp_path):
    from agentmemgate.corpora.public import PUBLIC
    from agentmemgate.hashing import sha256_file

    local = tmp_path / PUBLIC["locomo"].name  # the published name, other bytes
    local.write_bytes(LOCOMO.read_bytes())
    said = []
    s = mine_hedges(ws, local, echo=said.append)  # said as the run starts, not again at its end
    assert len(said) == 1 and "not the published file" in said[0] and s.source_lines == said
    assert not [line for line in s.lines() if line.startswith("Warning:")]
    quiet = mine_hedges(ws, local)  # with nobody told at the start, the summary says it
    assert [line for line in quiet.lines() if line.startswith("Warning:")] == said
    params = json.loads(list(ws.db["runs"].rows)[-1]["params"])
    assert params["sha256"] == sha256_file(local) and params["published_sha256"] is False
    fixture = mine_hedges(ws, LOCOMO)  # a name with no published sha256: nothing to warn about
    assert not [line for line in fixture.lines() if line.startswith("Warning:")]
    params = json.loads(list(ws.db["runs"].rows)[-1]["params"])
    assert params["published_sha256"] == "unknown" and params["sha256"] == sha256_file(LOCOMO)


def test_rerun_resumes_without_duplicates(ws):
    first = mine_hedges(ws, LONGMEMEVAL)
    again = mine_hedges(ws, LONGMEMEVAL)
    assert first.answered_before == 0 and again.answered_before == again.prefilter_hits
    assert f"Resumed: {again.prefilter_hits} of {again.prefilter_hits} candidates" in "\n".join(
        again.lines()
    )
    assert first.model_copy(update={"answered_before": again.answered_before}) == again
    key = source_key(LONGMEMEVAL)
    assert ws.db["mined_candidates"].count_where("source_key = ?", [key]) == first.prefilter_hits
    assert ws.db["mined_extractions"].count == first.prefilter_hits


def test_llm_stage_2_with_scripted_model(ws):
    model = get_model("scripted:miner")

    def answer(request):
        if "dance studio so I can teach" in request.prompt:
            return {
                "keep": True,
                "span": "I wanna start a dance studio",
                "attribute": "business",
                "plan_value": "dance studio",
                "hedge_level": "weakly_hedged",
                "reason": "a business plan",
            }
        if "Caroline" in request.prompt:  # a kept answer whose span is not in the turn
            return {
                "keep": True,
                "span": "I will open a bakery",
                "attribute": "business",
                "plan_value": "bakery",
                "hedge_level": "confident_no_date",
                "reason": "a firm plan",
            }
        return {
            "keep": False,
            "span": None,
            "attribute": None,
            "plan_value": None,
            "hedge_level": None,
            "reason": "no plan",
        }

    model.respond_with(answer)
    s = mine_hedges(ws, LOCOMO, miner="scripted:miner")
    assert s.miner == f"scripted:miner/{rubrics.load('hedge_extract').ref}"
    assert s.llm_calls == s.prefilter_hits == len(model.history) and s.llm_cached == 0
    rows = {m.source_ref: m for m in mined_statements(ws, source_key(LOCOMO), s.miner)}
    studio = rows["D1:6"]
    assert studio.kept and studio.text == "I wanna start a dance studio"
    assert (studio.outcome, studio.outcome_ref) == ("came_true", "D11:3")
    unusable = [m for m in rows.values() if m.reject_reason and "not verbatim" in m.reject_reason]
    assert unusable and not any(m.kept for m in unusable)
    prompt = model.history[0].prompt
    assert "strongly_hedged" in prompt and "Preceding turns" in prompt
    # the same run again is answered from the workspace cache: no new calls
    calls = len(model.history)
    assert mine_hedges(ws, LOCOMO, miner="scripted:miner").hedges == s.hedges
    assert len(model.history) == calls


def test_failed_calls_are_counted_and_retried_on_rerun(ws):
    model = get_model("scripted:flaky")
    no = {
        "keep": False,
        "span": None,
        "attribute": None,
        "plan_value": None,
        "hedge_level": None,
        "reason": "no plan",
    }
    model.enqueue(CallFailed("server error", kind="server_error"))
    model.respond_with(lambda r: no)
    first = mine_hedges(ws, LOCOMO, miner="scripted:flaky")
    assert first.errors == 1
    assert first.llm_calls == first.prefilter_hits - 1
    again = mine_hedges(ws, LOCOMO, miner="scripted:flaky")
    assert again.errors == 0 and again.llm_calls == again.prefilter_hits


def test_cli_mine_and_errors(tmp_path):
    ws = str(tmp_path / "ws")
    out = tmp_path / "o.jsonl"
    r = runner.invoke(
        app,
        [
            "mine",
            "hedges",
            "--corpus",
            "longmemeval",
            str(LONGMEMEVAL),
            "--out",
            str(out),
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 0, r.output
    assert "Turns scanned: 31" in r.output and "license: longmemeval MIT" in r.output
    assert out.read_text().count("\n") >= 1
    r = runner.invoke(
        app, ["mine", "hedges", "--corpus", "locomo", str(LONGMEMEVAL), "--workspace", ws]
    )
    assert r.exit_code == 1
    assert r.output.strip() == (
        "Error: longmemeval_sample.json: looks like a longmemeval file, "
        "not locomo (pass --corpus longmemeval or auto)"
    )
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    r = runner.invoke(app, ["mine", "hedges", str(bad), "--workspace", ws])
    assert r.exit_code == 1 and r.output.startswith("Error: bad.json: malformed JSON")
    assert "Traceback" not in r.output
    r = runner.invoke(app, ["mine", "hedges", str(LOCOMO), "--miner", "nope", "--workspace", ws])
    assert r.exit_code == 1 and "provider:model" in r.output


def test_own_lexicon_reruns_stage_1(ws, tmp_path):
    from agentmemgate.corpora.prefilter import LEXICON_DIR, load_lexicon

    base = mine_hedges(ws, LOCOMO, lexicon=LEXICON_DIR / "cues.v2.toml")
    narrow = tmp_path / "narrow.toml"
    text = (LEXICON_DIR / "cues.v2.toml").read_text()
    narrow.write_text(text.replace('"gonna",', ''))
    fewer = mine_hedges(ws, LOCOMO, lexicon=narrow)
    assert fewer.prefilter_hits == base.prefilter_hits - 1  # D5:22 "I'm not gonna give up ..."
    row = ws.db["mine_sources"].get(source_key(LOCOMO))
    assert row["lexicon"] == f"cues.v2:{load_lexicon(path=str(narrow)).sha256[:12]}"
    # a copy of the newest lexicon finds its turn model beside the packaged files
    own = tmp_path / "own.toml"
    own.write_text((LEXICON_DIR / f"{load_lexicon().ref}.toml").read_text())
    assert (
        mine_hedges(ws, LOCOMO, lexicon=own).prefilter_hits
        == mine_hedges(ws, LOCOMO).prefilter_hits
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 1\n")
    with pytest.raises(BadInput, match="bad.toml: not a cue lexicon"):
        mine_hedges(ws, LOCOMO, lexicon=bad)


@needs_real_locomo
def test_real_locomo_offline(ws):
    s = mine_hedges(ws, REAL_LOCOMO)
    assert (s.conversations, s.turns_scanned) == (10, 5882)
    assert 500 < s.prefilter_hits < 2000 and s.hedges > 10


class RecordingExtractor:
    """Offline rules, recording how many candidates each batch call was handed."""

    kind = "offline rules"

    def __init__(self):
        from agentmemgate.corpora import RuleExtractor

        self.rules = RuleExtractor()
        self.name = self.rules.name
        self.batches: list[int] = []

    def extract_many(self, candidates, on_result):
        self.batches.append(len(candidates))
        self.rules.extract_many(candidates, on_result)


def test_stage_2_streams_candidates_in_bounded_chunks(ws, monkeypatch):
    """A multi-GB source has ~200k hits: stage 2 must never hold them all in memory at once."""
    from agentmemgate.corpora import mining

    monkeypatch.setattr(mining, "STAGE2_CHUNK", 4)
    rec = RecordingExtractor()
    s = mine_hedges(ws, LONGMEMEVAL, extractor=rec)
    assert s.prefilter_hits > 8 and max(rec.batches) <= 4
    assert sum(rec.batches) == s.prefilter_hits  # every candidate answered exactly once
    assert ws.db["mined_extractions"].count == s.prefilter_hits
    rec.batches.clear()
    resumed = mine_hedges(ws, LONGMEMEVAL, extractor=rec)
    assert (
        resumed == s.model_copy(update={"answered_before": s.prefilter_hits}) and rec.batches == []
    )


def test_statements_before_stage_2_are_verbatim_spans(ws):
    """A candidate whose stage 2 failed is exported with a span of its turn, not a paraphrase."""
    model = get_model("scripted:down")
    model.respond_with(lambda r: CallFailed("server error", kind="server_error"))
    s = mine_hedges(ws, LONGMEMEVAL, miner="scripted:down")
    assert s.errors == s.prefilter_hits > 0
    by_ref = {}
    for conv in load_corpus(LONGMEMEVAL):
        for session in conv.sessions:
            by_ref.update({t.ref: t.text for t in session.turns})
    rows = list(mined_statements(ws, source_key(LONGMEMEVAL), s.miner))
    assert all(r.kept is None and r.text in by_ref[r.source_ref] for r in rows)
    assert any(r.text.count(". ") for r in rows)  # several cue sentences, still one verbatim span
