"""``amg generate --generator openai:MODEL --batch``: arcs rendered from one batch (real OpenAI
SDK over a mock Batch API); a failed request is recorded as a render failure and a re-run renders
it from a new batch."""

from __future__ import annotations

import openai
from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from reference_drafts import reference_responder
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import Request
from agentmemgate.workspace import Workspace

runner = CliRunner()


def test_generate_batch_renders_every_arc_and_retries_failures_on_a_re_run(tmp_path, monkeypatch):
    broken = {"on": True}

    def answer(cid, body):
        prompt = body["messages"][-1]["content"]
        if broken["on"] and answer.seen == 0:
            answer.seen += 1
            return ("error", 500, "The server had an error")
        return reference_responder(Request(prompt=prompt))

    answer.seen = 0
    api = OpenAIBatchApi(answer)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    args = [
        "generate",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--generator",
        "openai:gpt-test",
        "--batch",
        "--no-progress",
        "--workspace",
        str(tmp_path / "ws"),
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output  # one render failure, recorded
    assert "failed 1" in r.output and "request errored" in r.output
    n = len(api.lines["batch_1"])
    assert n == 3 and api.created == 1
    assert len(list(Workspace(tmp_path / "ws").arcs("core"))) == n - 1
    broken["on"] = False
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == 2 and len(api.lines["batch_2"]) == 1
    assert len(list(Workspace(tmp_path / "ws").arcs("core"))) == n
