"""``amg validate --judge openai:MODEL --batch`` end to end: the real OpenAI SDK client over a mock
Batch API (files, batches, output file), --no-wait's exit status 2, and a re-run that collects."""

from __future__ import annotations

import re

import openai
import pytest
from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.validate.store import load_verdicts

runner = CliRunner()


def first_listed(cid: str, body: dict) -> dict:
    prompt = body["messages"][-1]["content"]
    level = re.findall(r"^- (\w+): ", prompt.split("Options (in no particular order):")[1], re.M)[0]
    return {"level": level, "rationale": "The first option listed."}


@pytest.fixture
def batch_api(monkeypatch):
    def install(api: OpenAIBatchApi) -> OpenAIBatchApi:
        monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
        return api

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    return install


ARGS = [
    "validate",
    "--split",
    "controlled",
    "--checks",
    "recovery",
    "--judge",
    "openai:gpt-4o-mini",
    "--no-progress",
    "--batch",
]


def test_validate_batch_end_to_end(tiny, batch_api):
    api = batch_api(OpenAIBatchApi(first_listed))
    r = runner.invoke(app, ARGS + ["--workspace", str(tiny.path)])
    assert r.exit_code == 0, r.output
    assert "submitted batch batch_1 (9 requests)" in r.output
    assert "blind level recovery (openai:gpt-4o-mini)" in r.output
    assert api.created == 1 and len(api.lines["batch_1"]) == 9
    assert len(load_verdicts(tiny, ["recovery"])) == 9
    assert (
        tiny.db.execute(
            "select count(*) from llm_calls where batch = 1 and status = 'ok'"
        ).fetchone()[0]
        == 9
    )
    assert not [x for x in api.requests if x.url.path.endswith("/chat/completions")]  # no live call


def test_validate_batch_no_wait_exits_2_and_a_re_run_collects(tiny, batch_api):
    api = batch_api(
        OpenAIBatchApi(
            first_listed, states=("validating", "validating", "in_progress", "completed")
        )
    )
    args = ARGS + ["--workspace", str(tiny.path)]
    r = runner.invoke(app, args + ["--no-wait"])
    assert r.exit_code == 2, r.output
    assert "submitted; re-run to collect (9 requests in 1 batch still running)" in r.output
    assert "Traceback" not in r.output
    assert len(load_verdicts(tiny, ["recovery"])) == 0
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == 1  # picked up, not submitted again
    assert len(load_verdicts(tiny, ["recovery"])) == 9


def test_batch_without_a_model_and_no_wait_without_batch_are_one_line_errors(tiny):
    r = runner.invoke(
        app, ["validate", "--split", "controlled", "--batch", "--workspace", str(tiny.path)]
    )
    assert r.exit_code == 1 and "Error: --batch applies to model calls" in r.output
    r = runner.invoke(
        app, ["validate", "--split", "controlled", "--no-wait", "--workspace", str(tiny.path)]
    )
    assert r.exit_code == 1 and "Error: --no-wait goes with --batch" in r.output


def test_equivalence_pairs_rejudged_by_anthropic_through_a_message_batch(tiny, monkeypatch):
    import anthropic
    from llm.batch_fakes import AnthropicBatchApi

    an = AnthropicBatchApi(
        lambda cid, params: {"verdict": "equivalent", "confidence": 0.8, "rationale": "Same value."}
    )
    monkeypatch.setattr(anthropic, "DefaultHttpxClient", lambda *a, **k: an.client())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-DONOTLEAK-0123456789")
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    r = runner.invoke(
        app,
        [
            "validate",
            "equivalence-pairs",
            "--n",
            "10",
            "--rejudge",
            "anthropic:claude-test",
            "--batch",
            "--no-progress",
            "--workspace",
            str(tiny.path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert an.created == 1 and len(an.reqs["msgbatch_01"]) == 10
    assert all(
        x["params"]["tool_choice"]["name"] == "record_EquivalenceAnswer"
        for x in an.reqs["msgbatch_01"]
    )
    assert "Agreement offline vs anthropic:claude-test" in r.output
    assert len(load_verdicts(tiny, ["equivalence"])) == 20  # both judges, every pair
