"""``amg eval run --natural SET --model openai:MODEL --batch``: the natural evaluation runs through
the same drive as ``eval run``, so its component calls go to the Batch API in waves (each item's
next turn in the next batch); --no-wait exits 2 and a re-run collects (the real OpenAI SDK over
a mock Batch API, answered by the memory room's scripted responder: the offline rules)."""

from __future__ import annotations

from pathlib import Path

import openai
from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from scripted_memory import scripted_responder
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora.natural import build_natural_set
from agentmemgate.evaluate import compute_report
from agentmemgate.llm import Request

FIXTURES = Path(__file__).parents[1] / "fixtures"
runner = CliRunner()


def _no_probs(x):
    """A trace without its evidence-type probabilities: a model classifier reports a one-word
    answer (probability 1), the offline lexicon a smoothed distribution."""
    if isinstance(x, dict):
        return {k: _no_probs(v) for k, v in x.items() if k != "probs"}
    return [_no_probs(v) for v in x] if isinstance(x, list) else x


def figures(ws, name: str):
    """The report's figures for ``name`` on the sets, and what the system did on every item:
    its reads, events and end state (the traces, system name aside)."""
    from agentmemgate.evaluate import store

    run_key = store.latest_systems(ws)[name]["run_key"]
    traces = {
        a: _no_probs(store.load_trace(ws, run_key, a).model_dump(exclude={"system"}))
        for a in store.stored_traces(ws, run_key)
    }
    return compute_report(ws).systems[name], traces


def test_natural_eval_batch_no_wait_then_collect_matches_the_offline_run(ws, monkeypatch):
    build_natural_set(
        ws, FIXTURES / "natural_longmemeval.json", "longmemeval", "lme", progress=False
    )  # 2 fielded items
    build_natural_set(ws, FIXTURES / "natural_locomo.json", "locomo", "loc", progress=False)
    base = [
        "eval",
        "run",
        "--natural",
        "lme",
        "--natural",
        "loc",
        "--system",
        "literal-gated",
        "--system",
        "cautious-gated",
        "--no-progress",
        "--workspace",
        str(ws.path),
    ]
    r = runner.invoke(app, base)
    assert r.exit_code == 0, r.output
    offline = {n: figures(ws, n) for n in ("literal-gated", "cautious-gated")}
    assert all(
        len(traces) == 3 and any(t["end_read"] == "Chicago" for t in traces.values())
        for _, traces in offline.values()
    )  # three fielded items; a value was stored

    api = OpenAIBatchApi(
        lambda cid, body: scripted_responder(Request(prompt=body["messages"][-1]["content"])),
        states=("validating", "validating", "in_progress", "completed"),
    )
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    args = base + ["--model", "openai:gpt-test", "--batch"]
    r = runner.invoke(app, args + ["--no-wait"])
    assert r.exit_code == 2, r.output
    assert "submitted; re-run to collect" in r.output and "Traceback" not in r.output
    submitted = api.created  # one batch per system's model: their first turns
    assert submitted >= 1
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created > submitted + 1  # waves: an item's next turn needs the last answer
    # the stored batches were collected, not sent again: no request went out twice
    ids = [x["custom_id"] for b in api.lines.values() for x in b]
    assert len(ids) == len(set(ids))
    assert not [x for x in api.requests if x.url.path.endswith("/chat/completions")]
    assert "openai:gpt-test: " in r.output and "(sent through a batch API)" in r.output
    llm = {n: figures(ws, f"{n}@openai:gpt-test") for n in offline}
    assert llm == offline  # the scripted responder applies the offline rules
    n_calls = ws.db.execute("select count(*) from llm_calls where batch = 1").fetchone()[0]
    assert n_calls == sum(len(v) for v in api.lines.values())
    # a re-run: everything stored, nothing submitted
    created = api.created
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == created


def test_natural_batch_and_dry_run_refusals(ws):
    build_natural_set(
        ws, FIXTURES / "natural_longmemeval.json", "longmemeval", "lme", progress=False
    )
    base = ["eval", "run", "--natural", "lme", "--workspace", str(ws.path)]
    r = runner.invoke(app, base + ["--batch"])
    assert r.exit_code == 1 and r.output.startswith("Error: --batch applies to model calls")
    r = runner.invoke(app, base + ["--model", "openai:gpt-4o-mini", "--dry-run"])
    assert r.exit_code == 1
    assert r.output.startswith("Error: --dry-run is not available with --natural yet")
