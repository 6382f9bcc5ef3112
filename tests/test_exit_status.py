"""One exit-status rule for every command: 0 all done; 2 finished with recorded failures (a re-run
retries them); 1 could not run (one line, ``Error: ...``). Every LLM command takes --timeout,
--max-tokens and --structured-output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from agentmemgate import rubrics
from agentmemgate.cli import app
from agentmemgate.llm import CallFailed, get_model

LOCOMO = Path(__file__).parent / "fixtures" / "locomo_sample.json"

runner = CliRunner()
LLM_COMMANDS = [
    ("build",),
    ("generate",),
    ("validate",),
    ("validate", "equivalence-pairs"),
    ("mine", "hedges"),
    ("statements", "label"),
    ("classify",),
]


def invoke(*args):
    r = runner.invoke(app, list(args))
    assert "Traceback" not in r.output, r.output
    return r


# An option that names a model makes a command an LLM command.
MODEL_OPTIONS = {
    "--generator",
    "--judge",
    "--rejudge",
    "--miner",
    "--voters",
    "--relabel",
    "--classifier",
    "--model",
}


def _commands(cmd=None, path=()):
    cmd = cmd or get_command(app)
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _commands(sub, path + (name,))


def test_every_llm_command_takes_the_llm_options():
    llm = {}
    for path, cmd in _commands():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        # reports, `statements sample --miner` and `eval check --judge` name stored results;
        # they call no model
        stored = (("statements", "sample"), ("eval", "check"))
        if opts & MODEL_OPTIONS and path[:1] != ("report",) and path not in stored:
            llm[path] = opts
    assert set(LLM_COMMANDS) | {("eval", "run"), ("eval", "answers")} <= set(llm)
    for path, opts in llm.items():
        missing = {
            "--timeout",
            "--max-tokens",
            "--structured-output",
            "--price",
            "--dry-run",
        } - opts
        assert not missing, f"amg {' '.join(path)} lacks {sorted(missing)}"


@pytest.fixture
def built(tmp_path):
    ws = str(tmp_path / "ws")
    r = invoke(
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--workspace",
        ws,
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    return ws


def _failing(name):
    get_model(f"scripted:{name}").respond_with(
        lambda r: CallFailed("server error (HTTP 503)", kind="server_error")
    )
    return f"scripted:{name}"


def _garbage(name):
    get_model(f"scripted:{name}").respond_with(lambda r: "- speculative: asserts a possible change")
    return f"scripted:{name}"


def test_generate_and_build(tmp_path):
    ws = str(tmp_path / "ws")
    bad = _failing("gen")
    r = invoke(
        "generate",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--generator",
        bad,
        "--workspace",
        ws,
        "--no-progress",
    )
    assert r.exit_code == 2 and "failed 3" in r.output and "server error (HTTP 503)" in r.output
    r = invoke(
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--generator",
        bad,
        "--workspace",
        ws,
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert r.exit_code == 2 and "render failures: 3" in r.output
    assert "nothing exported" in r.output and "exported to" not in r.output
    r = invoke("build", "--generator", "nope:x", "--workspace", ws)
    assert r.exit_code == 1 and r.output.startswith("Error:")


def test_validate_and_equivalence_pairs(built):
    r = invoke("validate", "--split", "core", "--workspace", built, "--no-progress")
    assert r.exit_code == 0, r.output
    bad = _failing("judge")
    r = invoke(
        "validate",
        "--split",
        "core",
        "--judge",
        bad,
        "--checks",
        "recovery",
        "--workspace",
        built,
        "--no-progress",
    )
    assert r.exit_code == 2 and "asked now 3: 0 answered, 3 judge failures" in r.output
    r = invoke(
        "validate",
        "equivalence-pairs",
        "--split",
        "core",
        "--n",
        "4",
        "--workspace",
        built,
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    r = invoke(
        "validate",
        "equivalence-pairs",
        "--split",
        "core",
        "--n",
        "4",
        "--judge",
        bad,
        "--name",
        "llm",
        "--workspace",
        built,
        "--no-progress",
    )
    assert r.exit_code == 2, r.output
    r = invoke("validate", "--judge", "bogus", "--workspace", built)
    assert r.exit_code == 1 and r.output.startswith("Error:")


def test_mine(tmp_path):
    ws = str(tmp_path / "ws")
    out = tmp_path / "h.jsonl"
    assert invoke("mine", "hedges", str(LOCOMO), "--workspace", ws, "--no-progress").exit_code == 0
    bad = _failing("miner")
    r = invoke(
        "mine",
        "hedges",
        str(LOCOMO),
        "--miner",
        bad,
        "--workspace",
        ws,
        "--out",
        str(out),
        "--no-progress",
    )
    assert r.exit_code == 2, r.output
    assert "Stage-2 failures:" in r.output and "server error (HTTP 503)" in r.output
    assert "LLM calls: " in r.output and "LLM calls: 0 this run" not in r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows and all(
        x["miner"] == f"{bad}/{rubrics.load('hedge_extract').ref}"
        and x["kept"] is None
        and x["reject_reason"].startswith("stage 2 failed: ")
        for x in rows
    )
    assert (
        invoke("mine", "hedges", str(tmp_path / "missing.json"), "--workspace", ws).exit_code == 1
    )


@pytest.fixture
def statements(tmp_path):
    ws = str(tmp_path / "ws")
    f = tmp_path / "s.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"id": f"s{i}", "text": t})
            for i, t in enumerate(
                ["I might move to Seattle.", "I moved to Denver.", "I love jazz."]
            )
        )
    )
    assert invoke("statements", "import", "s", str(f), "--workspace", ws).exit_code == 0
    return ws


def test_label_and_classify(statements):
    ws = statements
    r = invoke("classify", "--statements", "s", "--workspace", ws, "--no-progress")
    assert r.exit_code == 0, r.output
    bad = _garbage("echo")
    r = invoke(
        "classify",
        "--statements",
        "s",
        "--classifier",
        bad,
        "--method",
        "votes",
        "--samples",
        "1",
        "--workspace",
        ws,
        "--no-progress",
    )
    assert r.exit_code == 2 and "3 failed" in r.output and "invalid_output 3" in r.output
    assert "list item" in r.output  # the reason, not "re-run to retry"
    r = invoke(
        "statements",
        "label",
        "s",
        "--voters",
        bad,
        "--votes",
        "1",
        "--workspace",
        ws,
        "--no-progress",
    )
    assert r.exit_code == 2 and "Votes that failed: 3 (a re-run asks again)" in r.output
    r = invoke(
        "statements", "label", "s", "--voters", "offline", "--workspace", ws, "--no-progress"
    )
    assert r.exit_code == 0, r.output
    r = invoke("classify", "--statements", "nope", "--workspace", ws)
    assert r.exit_code == 1 and r.output.startswith("Error:")


def test_llm_options_without_a_model_are_refused(statements):
    r = invoke("classify", "--statements", "s", "--timeout", "30", "--workspace", statements)
    assert r.exit_code == 1 and "--timeout apply to model calls" in r.output
    r = invoke(
        "classify",
        "--statements",
        "s",
        "--classifier",
        "scripted:x",
        "--structured-output",
        "nonsense",
        "--workspace",
        statements,
    )
    assert r.exit_code != 0 and "Traceback" not in r.output
