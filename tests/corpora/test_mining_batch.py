"""``amg mine hedges --miner openai:MODEL --batch``: every stage-2 extraction in one batch (real
OpenAI SDK over a mock Batch API), stored like live answers; a re-run makes no call."""

from __future__ import annotations

import openai
from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

from .paths import LOCOMO

runner = CliRunner()


def answer(cid, body):
    prompt = body["messages"][-1]["content"]
    if "dance studio so I can teach" in prompt:
        return {
            "keep": True,
            "span": "I wanna start a dance studio",
            "attribute": "business",
            "plan_value": "dance studio",
            "hedge_level": "weakly_hedged",
            "reason": "a business plan",
        }
    return {
        "keep": False,
        "span": None,
        "attribute": None,
        "plan_value": None,
        "hedge_level": None,
        "reason": "no plan",
    }


def test_mine_hedges_batch(tmp_path, monkeypatch):
    api = OpenAIBatchApi(answer)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    args = [
        "mine",
        "hedges",
        str(LOCOMO),
        "--miner",
        "openai:gpt-test",
        "--batch",
        "--no-progress",
        "--workspace",
        str(tmp_path / "ws"),
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == 1
    ws = Workspace(tmp_path / "ws")
    hits = ws.db["mined_candidates"].count
    assert len(api.lines["batch_1"]) == hits == ws.db["mined_extractions"].count
    kept = list(ws.db.query("select text from mined_extractions where kept = 1"))
    assert kept == [{"text": "I wanna start a dance studio"}]
    sent = len(api.requests)
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert len(api.requests) == sent  # everything stored: nothing asked, nothing submitted
