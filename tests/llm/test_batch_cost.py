"""Batch prices in the cost figures: calls answered through a batch are costed at the batch price
(genai-prices' batch variant) in the run's usage and summary line, the call log, ``amg usage``;
a dry run with --batch estimates at batch prices and says so."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import get_model, run_concurrent
from agentmemgate.llm.batch import run_batched
from agentmemgate.llm.cost import cost_lines, lookup
from agentmemgate.llm.usage_log import usage_lines, usage_rows
from agentmemgate.run_context import run_context

from .batch_fakes import AnthropicBatchApi, OpenAIBatchApi
from .llm_fakes import ANTHROPIC_KEY, OPENAI_KEY


class Verdict(BaseModel):
    label: str
    score: int


def judge_all(model, n: int):
    def one(i):
        return model.complete(
            f"Judge item {i}.", schema=Verdict, purpose="test.batch", max_tokens=50
        ).parsed.score

    return list(run_concurrent(one, range(n), concurrency=2, progress=False))


# the mock batch replies report 100 prompt and 20 completion tokens each;
# gpt-4o-mini lists $0.15 in / $0.60 out per MTok live, half of it in a batch
LIVE = (100 * 0.15 + 20 * 0.60) / 1e6


@pytest.fixture
def command():
    with run_context(command="amg validate"):
        yield


def test_batch_calls_are_costed_at_the_batch_price_everywhere(ws, monkeypatch, command):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    api = OpenAIBatchApi(lambda cid, body: {"label": "ok", "score": 1})
    model = get_model("openai:gpt-4o-mini", workspace=ws, http_client=api.client(), max_retries=0)
    assert model.call_cost(100, 20) == pytest.approx(LIVE)
    run_batched(ws, lambda: judge_all(model, 4), poll_interval=0, show_progress=False)
    rows = list(ws.db.query("select * from llm_calls where batch = 1"))
    assert len(rows) == 4
    # the call log: the batch price, and the command (so usage and reports count these calls)
    assert all(r["cost_usd"] == pytest.approx(LIVE / 2) for r in rows)
    assert {r["command"] for r in rows} == {"amg validate"}
    # the run's own tally and its summary line
    assert model.usage.cost_usd == pytest.approx(4 * LIVE / 2)
    (line, tokens, prices) = cost_lines([model])
    assert line == (
        "openai:gpt-4o-mini: 4 calls; cost $0.000054 (sent through a batch API, at "
        "batch prices: 50% of the live price, $0.0001)"
    )
    assert tokens == "  400 input tokens (0 provider-cached), 80 output tokens"
    # amg usage sums the same figures and says which calls went through a batch
    report = usage_rows(ws)
    (r,) = report["rows"]
    assert (r["command"], r["calls"], r["batch_calls"]) == ("amg validate", 4, 4)
    assert r["cost_usd"] == pytest.approx(4 * LIVE / 2)
    assert usage_lines(report)[1] == (
        "  openai:gpt-4o-mini  test.batch: 4 calls (4 through a "
        "batch API), 400 in (0 cached), 80 out; $0.000054"
    )


def test_a_model_without_a_batch_price_keeps_its_live_price_and_says_so(ws, monkeypatch):
    # genai-prices has no batch variant for claude-3-haiku (it has one for claude-sonnet-4-5)
    assert not lookup("anthropic", "claude-3-haiku").has_batch_price()
    assert lookup("anthropic", "claude-sonnet-4-5").has_batch_price()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    api = AnthropicBatchApi(lambda cid, params: {"label": "ok", "score": 1})
    model = get_model(
        "anthropic:claude-3-haiku", workspace=ws, http_client=api.client(), max_retries=0
    )
    run_batched(ws, lambda: judge_all(model, 2), poll_interval=0, show_progress=False)
    live = model.call_cost(40, 10)
    assert live and model.usage.cost_usd == pytest.approx(2 * live)
    assert [r["cost_usd"] for r in ws.db.query("select cost_usd from llm_calls")] == pytest.approx(
        [live, live]
    )
    assert cost_lines([model])[0].endswith(
        "(sent through a batch API, at the live price: the price data has no batch price for "
        "this model)"
    )


runner = CliRunner()


def estimate(output: str, spec: str) -> float:
    line = next(x for x in output.splitlines() if x.startswith(f"{spec}: "))
    return float(line.split("estimated cost at most $")[1].split()[0])


def test_generate_dry_run_with_batch_is_half_the_live_estimate_for_openai(tmp_path):
    args = [
        "generate",
        "--split",
        "core",
        "--n-per-cell",
        "2",
        "--generator",
        "openai:gpt-4o-mini",
        "--dry-run",
        "--workspace",
        str(tmp_path / "ws"),
    ]
    live = runner.invoke(app, args)
    batch = runner.invoke(app, args + ["--batch"])
    assert live.exit_code == 0 and batch.exit_code == 0, live.output + batch.output
    assert "batch" not in live.output
    assert estimate(batch.output, "openai:gpt-4o-mini") == pytest.approx(
        estimate(live.output, "openai:gpt-4o-mini") / 2, abs=1e-4
    )
    assert (
        "(to be sent through a batch API, at batch prices: 50% of the live price, "
        f"${estimate(live.output, 'openai:gpt-4o-mini'):.4f})"
    ) in batch.output
    assert not (tmp_path / "ws").exists()  # a dry run leaves nothing behind


def test_dry_run_with_batch_refuses_what_the_real_run_would(tmp_path):
    ws = str(tmp_path / "ws")
    r = runner.invoke(
        app,
        [
            "generate",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--dry-run",
            "--batch",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 1 and r.output.startswith("Error: --batch applies to model calls")
    r = runner.invoke(
        app,
        [
            "generate",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--dry-run",
            "--batch",
            "--generator",
            "openai:smollm2",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 1 and "does not serve the OpenAI Batch and Files API" in r.output
    assert "Traceback" not in r.output
