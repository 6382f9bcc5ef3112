"""``amg statements label --batch`` and ``amg classify --batch``: OpenAI voters and an Anthropic
relabeler through the real SDKs over mock batch endpoints; independent votes share one batch."""

from __future__ import annotations

import json

import anthropic
import openai
from llm.batch_fakes import AnthropicBatchApi, OpenAIBatchApi
from llm.llm_fakes import ANTHROPIC_KEY, OPENAI_KEY
from typer.testing import CliRunner

from agentmemgate.classify import stored
from agentmemgate.cli import app
from agentmemgate.corpora import import_statements

from .test_classify_http import ROWS, _statement

runner = CliRunner()


def answer(cid, body):
    text = _statement(body)
    return "speculative" if "might" in text or "thinking" in text else "other"


def setup(ws, tmp_path, monkeypatch):
    f = tmp_path / "gold.jsonl"
    f.write_text("\n".join(json.dumps({"id": k, "text": t}) for k, (t, _) in ROWS.items()))
    import_statements(ws, "gold", f)
    oa, an = OpenAIBatchApi(answer), AnthropicBatchApi(answer)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: oa.client())
    monkeypatch.setattr(anthropic, "DefaultHttpxClient", lambda *a, **k: an.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    return oa, an


def test_statements_label_batch_votes_in_one_batch_and_relabel_by_anthropic(
    ws, tmp_path, monkeypatch
):
    oa, an = setup(ws, tmp_path, monkeypatch)
    r = runner.invoke(
        app,
        [
            "statements",
            "label",
            "gold",
            "--voters",
            "openai:gpt-test",
            "--votes",
            "3",
            "--relabel",
            "anthropic:claude-test",
            "--batch",
            "--no-progress",
            "--workspace",
            str(ws.path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert oa.created == 1 and len(oa.lines["batch_1"]) == 4 * 3  # all votes of all statements
    assert an.created == 1 and len(an.reqs["msgbatch_01"]) == 4
    assert not [q for q in oa.requests if q.url.path.endswith("/chat/completions")]
    assert not [q for q in an.requests if q.url.path.endswith("/v1/messages")]
    assert "Agreed: 4; disputed: 0" in r.output


def test_classify_batch_by_votes(ws, tmp_path, monkeypatch):
    oa, _ = setup(ws, tmp_path, monkeypatch)
    r = runner.invoke(
        app,
        [
            "classify",
            "--statements",
            "gold",
            "--classifier",
            "openai:gpt-test",
            "--method",
            "votes",
            "--samples",
            "3",
            "--batch",
            "--no-progress",
            "--workspace",
            str(ws.path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert oa.created == 1 and len(oa.lines["batch_1"]) == 12
    dists = {x.statement_id: x.probs for x in stored(ws, "gold")}
    assert len(dists) == 4
    assert max(dists["s0"], key=dists["s0"].get) == "speculation"
