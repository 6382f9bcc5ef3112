"""``amg build --batch``: the generator's and the judges' calls through the providers' batch APIs
(the real OpenAI and Anthropic SDKs over mock batch endpoints), in waves; --no-wait's exit 2
and a re-run that collects the stored batches instead of submitting again; no export until
every call is answered."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import anthropic
import openai
import pytest
from llm.batch_fakes import AnthropicBatchApi, OpenAIBatchApi
from llm.llm_fakes import ANTHROPIC_KEY, OPENAI_KEY
from reference_drafts import reference_responder
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import Request
from agentmemgate.workspace import Workspace

runner = CliRunner()


class Generator:
    """Answers every arc prompt with the reference draft; the first prompt of the first arc it
    sees gets a draft with a session missing (the renderer's checks fail it: a re-ask)."""

    def __init__(self):
        self.broken: str | None = None

    def __call__(self, cid: str, body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        draft = reference_responder(Request(prompt=prompt))
        if self.broken is None:
            self.broken = prompt
        if prompt == self.broken:
            draft["sessions"] = draft["sessions"][:-1]
        return draft


def judge(cid: str, params: dict) -> dict:
    """The judges' answers: the first level listed (recovery); pass and pass (realism)."""
    if params["tool_choice"]["name"] == "record_RealismAnswer":
        ok = {"verdict": "pass", "rationale": "Reads like a real chat."}
        return {
            "natural": ok,
            "motivated": ok,
            "consistent": {"verdict": "pass", "rationale": "Every turn fits the timeline."},
        }
    prompt = params["messages"][-1]["content"]
    level = re.findall(r"^- (\w+): ", prompt.split("Options (in no particular order):")[1], re.M)[0]
    return {"level": level, "rationale": "The first option listed."}


@pytest.fixture
def apis(monkeypatch):
    gen = OpenAIBatchApi(
        Generator(), states=("validating", "validating", "in_progress", "completed")
    )
    jud = AnthropicBatchApi(judge, polls_until_ended=2)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: gen.client())
    monkeypatch.setattr(anthropic, "DefaultHttpxClient", lambda *a, **k: jud.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    return gen, jud


def args(tmp_path) -> list[str]:
    return [
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--generator",
        "openai:gpt-test",
        "--judge",
        "anthropic:claude-test",
        "--batch",
        "--no-progress",
        "--workspace",
        str(tmp_path / "ws"),
        "--out",
        str(tmp_path / "out"),
    ]


def test_build_batch_no_wait_then_a_re_run_collects_in_waves(tmp_path, apis):
    gen, jud = apis
    r = runner.invoke(app, args(tmp_path) + ["--no-wait"])
    assert r.exit_code == 2, r.output
    assert "submitted; re-run to collect (3 requests in 1 batch still running)" in r.output
    assert "Traceback" not in r.output
    assert gen.created == 1 and jud.created == 0 and len(gen.lines["batch_1"]) == 3
    assert not (tmp_path / "out").exists()  # nothing exported while calls are out
    ws = Workspace(tmp_path / "ws", create=False)
    assert list(ws.db.query("select status from runs")) == [{"status": "batches pending"}]

    r = runner.invoke(app, args(tmp_path))
    assert r.exit_code == 0, r.output
    # wave 1: every arc's first draft (the stored batch, collected, not submitted again);
    # wave 2: the re-ask of the draft that failed its checks, and the judges of the two arcs
    # rendered; wave 3: the judges of the re-asked arc
    assert gen.created == 2 and [len(gen.lines[b]) for b in ("batch_1", "batch_2")] == [3, 1]
    assert jud.created == 2 and [len(jud.reqs[b]) for b in ("msgbatch_01", "msgbatch_02")] == [4, 2]
    reask = gen.lines["batch_2"][0]["body"]["messages"][-1]["content"]
    assert re.search(r"expected \d sessions, got \d", reask)  # the problem is sent back
    assert "rendered now: 3, already done: 0, render failures: 0" in r.output
    assert "asked now 6: 6 answered, 0 judge failures; already stored 0" in r.output
    assert "exported to" in r.output
    assert sum(1 for _ in (tmp_path / "out" / "core" / "data.jsonl").open()) == 3
    # the cost lines: every call through a batch
    assert (
        "openai:gpt-test: 4 calls; cost unknown: no price for this model; pass --price IN,OUT "
        "(sent through a batch API)"
    ) in r.output
    ws = Workspace(tmp_path / "ws", create=False)
    assert [x["status"] for x in ws.db.query("select status from runs order by id")] == [
        "batches pending",
        "ok",
    ]
    assert (
        ws.db.execute(
            "select count(*) from llm_calls where batch = 1 and status = 'ok'"
        ).fetchone()[0]
        == 10
    )
    assert ws.db.execute("select count(*) from llm_calls where batch is not 1").fetchone()[0] == 0
    assert not [x for x in gen.requests if x.url.path.endswith("/chat/completions")]
    assert not [x for x in jud.requests if x.url.path.endswith("/v1/messages")]
    # the validation report's cost lines count the judges' batch calls (the call log records
    # their command)
    rep = runner.invoke(
        app,
        [
            "report",
            "validation",
            "--split",
            "core",
            "--workspace",
            str(tmp_path / "ws"),
            "--out-dir",
            str(tmp_path / "rep"),
        ],
    )
    assert rep.exit_code == 0, rep.output
    assert "anthropic:claude-test: 6 calls (6 through a batch API), 240 input tokens" in rep.output
    # a third run: everything is stored; nothing is submitted
    r = runner.invoke(app, args(tmp_path))
    assert r.exit_code == 0, r.output
    assert gen.created == 2 and jud.created == 2
    assert "rendered now: 0, already done: 3" in r.output


def test_build_batch_with_offline_generator_and_judges_is_a_one_line_error(tmp_path):
    r = runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--batch",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 1
    assert r.output == (
        "Error: --batch applies to model calls; this run uses no model (name one, "
        "e.g. openai:MODEL)\n"
    )
    assert not (tmp_path / "ws").exists()
    r = runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--no-wait",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 1 and r.output == "Error: --no-wait goes with --batch\n"


def test_build_batch_with_only_llm_judges_batches_the_judging(tmp_path, apis):
    _, jud = apis
    r = runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--judge",
            "anthropic:claude-test",
            "--batch",
            "--no-progress",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 0, r.output
    # the template renderer makes no call; the judges' 6 (3 realism, 3 recovery) go in one batch
    assert jud.created == 1 and len(jud.reqs["msgbatch_01"]) == 6
    assert not [x for x in jud.requests if x.url.path.endswith("/v1/messages")]
    assert "rendered now: 3, already done: 0, render failures: 0" in r.output
    assert "asked now 6: 6 answered, 0 judge failures; already stored 0" in r.output
    assert re.search(r"exported to \S+: core 3\n", r.output)
    assert (
        "anthropic:claude-test: 6 calls; cost unknown: no price for this model; pass --price "
        "IN,OUT (sent through a batch API)"
    ) in r.output
    # what the user gets: the three arcs, and a manifest that counts them and hashes its files
    core = tmp_path / "out" / "core"
    arcs = [json.loads(line) for line in (core / "data.jsonl").read_text().splitlines()]
    manifest = json.loads((core / "manifest.json").read_text())
    assert manifest["counts"] == {
        "arcs": 3,
        "cells": {"outcome/abandoned": 1, "outcome/came_true": 1, "outcome/open": 1},
    }
    assert len(arcs) == 3 and len({a["id"] for a in arcs}) == 3
    assert {
        name: hashlib.sha256((core / name).read_bytes()).hexdigest() for name in manifest["files"]
    } == manifest["files"]
    assert set(manifest["files"]) == {"README.md", "data.jsonl", "turns.parquet"}
    ws = Workspace(tmp_path / "ws", create=False)
    assert [
        tuple(x)
        for x in ws.db.execute(
            "select purpose, count(*) from llm_calls where batch = 1 and status = 'ok' group by 1"
        )
    ] == [("judge.realism", 3), ("judge.recovery", 3)]


def test_build_batch_at_a_server_without_the_batch_api_is_refused_before_any_work(tmp_path):
    for flags in (
        ["--generator", "openai:smollm2", "--base-url", "http://127.0.0.1:9/v1"],
        ["--judge", "openai:smollm2", "--judge-base-url", "http://127.0.0.1:9/v1"],
    ):
        r = runner.invoke(
            app,
            [
                "build",
                "--split",
                "core",
                "--n-per-cell",
                "1",
                *flags,
                "--batch",
                "--workspace",
                str(tmp_path / "ws"),
                "--out",
                str(tmp_path / "out"),
            ],
        )
        assert r.exit_code == 1
        assert r.output == (
            "Error: --batch: openai:smollm2 at 127.0.0.1:9 does not serve the "
            "OpenAI Batch and Files API (GET http://127.0.0.1:9/v1/batches?limit=1 "
            "got no answer: Connection refused): run without --batch, or batch "
            "through a gateway that serves it (e.g. a LiteLLM proxy)\n"
        )
        assert not (tmp_path / "ws").exists() and not (tmp_path / "out").exists()


def test_build_batch_interrupted_while_polling_then_a_re_run_collects(tmp_path, apis):
    """Ctrl-C (or a kill) while the batch runs: the batch stays at the provider and in the
    workspace; the re-run collects it instead of submitting again (library call, as the CLI)."""
    from agentmemgate.pipeline import build

    gen, _ = apis
    handler = gen.handler
    polls = {"n": 0}

    def interrupting(request):
        if request.method == "GET" and "/batches/" in request.url.path and polls["n"] == 0:
            polls["n"] += 1
            raise KeyboardInterrupt
        return handler(request)

    gen.handler = interrupting
    kw = dict(
        split="core",
        n_per_cell=1,
        generator="openai:gpt-test",
        batch=True,
        poll_interval=0,
        show_progress=False,
    )
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "ws", tmp_path / "out", **kw)
    ws = Workspace(tmp_path / "ws", create=False)
    assert [r["status"] for r in ws.db.query("select status from runs")] == ["batches pending"]
    assert [(b["id"], b["collected_at"]) for b in ws.db["llm_batches"].rows] == [("batch_1", None)]
    s = build(tmp_path / "ws", tmp_path / "out", **kw)
    assert gen.created == 2  # batch_1 collected; batch_2 is the re-ask of the failed draft
    assert s.generate.rendered_now == 3 and s.export is not None


@pytest.mark.parametrize(
    "command",
    [
        [
            "generate",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--generator",
            "openai:smollm2",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        [
            "mine",
            "hedges",
            str(Path(__file__).parent / "fixtures" / "natural_locomo.json"),
            "--miner",
            "openai:smollm2",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    ],
)
def test_every_batch_command_refuses_a_server_without_the_batch_api_before_any_work(
    tmp_path, command
):
    """The model is refused as it is made (``--batch`` is known from the start), so a command
    that creates its workspace leaves none behind."""
    r = runner.invoke(app, [*command, "--batch", "--workspace", str(tmp_path / "ws")])
    assert r.exit_code == 1
    assert r.output.startswith(
        "Error: --batch: openai:smollm2 at 127.0.0.1:9 does not serve the "
        "OpenAI Batch and Files API"
    )
    assert not (tmp_path / "ws").exists()


def test_eval_batch_refusal_stores_no_run(tmp_path):
    ws = tmp_path / "ws"
    assert (
        runner.invoke(
            app,
            [
                "build",
                "--split",
                "core",
                "--n-per-cell",
                "1",
                "--no-progress",
                "--workspace",
                str(ws),
                "--out",
                str(tmp_path / "out"),
            ],
        ).exit_code
        == 0
    )
    for command in (
        [
            "eval",
            "run",
            "--system",
            "full-context",
            "--model",
            "openai:smollm2",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        [
            "validate",
            "equivalence-pairs",
            "--judge",
            "openai:smollm2",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    ):
        r = runner.invoke(app, [*command, "--batch", "--workspace", str(ws)])
        assert r.exit_code == 1 and "does not serve the OpenAI Batch" in r.output, r.output
    db = Workspace(ws, create=False).db
    assert db["eval_runs"].count == 0 and db["eval_systems"].count == 0
    assert db["validation_runs"].count == 1  # the build's own, no equivalence run
