"""Opt-in: every LLM path against a real OpenAI-compatible server (llama-cpp-python, Ollama, vLLM).

Skipped unless ``AMG_TEST_BASE_URL`` is set (``AMG_TEST_MODEL`` names the model; default: the
first the server lists). See docs/how-to/models.md, "Run a small model on your own machine". A
tiny model is slow and often wrong: these tests assert that each command completes, that failures
are recorded with their reasons, that the exit status follows the rule (0 all done, 2 recorded
failures), and that a re-run asks nothing already answered -- not that the model is any good.
Figures (calls, seconds per call, valid at the first try) are printed; run with ``-s`` to see them.

    AMG_TEST_BASE_URL=http://127.0.0.1:8080/v1 .venv/bin/python -m pytest tests/test_real_server.py -s
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

BASE_URL = os.environ.get("AMG_TEST_BASE_URL", "")
pytestmark = pytest.mark.skipif(
    not BASE_URL, reason="set AMG_TEST_BASE_URL to run against a real server"
)
FIXTURES = Path(__file__).parent / "fixtures"
TIMEOUT = os.environ.get("AMG_TEST_TIMEOUT", "900")
STATEMENTS = [
    ("s1", "I might move to Seattle next year, my dad lives there."),
    ("s2", "I moved to Denver last month."),
    ("s3", "I love jazz."),
]


@pytest.fixture(scope="module")
def model() -> str:
    name = os.environ.get("AMG_TEST_MODEL")
    if not name:
        with urllib.request.urlopen(BASE_URL.rstrip("/") + "/models", timeout=30) as r:
            name = json.load(r)["data"][0]["id"]
    return f"openai:{name}"


def amg(*args: str):
    from agentmemgate.cli import app

    t0 = time.perf_counter()
    result = CliRunner().invoke(app, list(args))
    result.seconds = time.perf_counter() - t0
    assert "Traceback" not in result.output, result.output
    return result


def call_log(ws: Path) -> list[dict]:
    from agentmemgate.workspace import Workspace

    return list(Workspace(ws, create=False).db["llm_calls"].rows_where(order_by="id"))


def cached_keys(ws: Path) -> set[str]:
    from agentmemgate.workspace import Workspace

    return {r["key"] for r in Workspace(ws, create=False).db["llm_cache"].rows_where(select="key")}


def figures(name: str, ws: Path, seconds: float) -> dict:
    rows = call_log(ws)
    first: dict[str, str] = {}
    for r in rows:
        if r["status"] in ("ok", "invalid_output"):
            first.setdefault(r["cache_key"], r["status"])
    replies = [r for r in rows if r["status"] in ("ok", "invalid_output")]
    strategies = sorted({r["strategy"] for r in rows if r["strategy"]})
    out = {
        "path": name,
        "requests": len(rows),
        "replies": len(replies),
        "seconds_per_reply": round(seconds / len(replies), 1) if replies else None,
        "valid_first_try": f"{sum(s == 'ok' for s in first.values())}/{len(first)}",
        "strategies": strategies,
        "statuses": {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}},
    }
    print(f"\n[real server] {json.dumps(out)}")
    return out


def assert_exit(result, failures: int) -> None:
    assert result.exit_code == (2 if failures else 0), result.output


def assert_rerun_asks_nothing_answered(ws: Path, args: tuple[str, ...]) -> None:
    before_rows, before_keys = len(call_log(ws)), cached_keys(ws)
    again = amg(*args)
    assert again.exit_code in (0, 2), again.output
    new = call_log(ws)[before_rows:]
    assert not {r["cache_key"] for r in new} & before_keys  # only failed questions are asked again


def llm(model: str, *extra: str) -> tuple[str, ...]:
    return ("--base-url", BASE_URL, "--timeout", TIMEOUT, *extra)


def test_build_with_a_local_generator(tmp_path, model):
    ws = tmp_path / "ws"
    args = (
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--generator",
        model,
        *llm(model),
        "--max-attempts",
        "1",
        "--concurrency",
        "2",
        "--workspace",
        str(ws),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    r = amg(*args)
    from agentmemgate.workspace import Workspace

    w = Workspace(ws, create=False)
    arcs, failures = len(list(w.arcs("core"))), w.failures("core")
    failing_checks = {c.arc_id for c in w.checks() if not c.passed}
    print(
        f"\n[real server] build: {arcs} arcs rendered and passed the generator's checks, "
        f"{len(failures)} render failures"
    )
    for f in failures:
        print(f"  {f['id']}: {f['reason'][:300]}")
    assert arcs + len(failures) == 3
    assert all(f["reason"].strip() for f in failures)  # every failure says why
    assert_exit(r, len(failures) + len(failing_checks))
    figures("generate", ws, r.seconds)
    assert_rerun_asks_nothing_answered(ws, args)


def test_validate_with_a_local_judge(tmp_path, model):
    ws = str(tmp_path / "ws")
    assert (
        amg(
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
        ).exit_code
        == 0
    )
    args = (
        "validate",
        "--split",
        "core",
        "--judge",
        model,
        "--checks",
        "recovery,realism",
        *llm(model),
        "--workspace",
        ws,
        "--no-progress",
    )
    r = amg(*args)
    from agentmemgate.validate.store import load_verdicts
    from agentmemgate.workspace import Workspace

    rows = [
        v
        for v in load_verdicts(Workspace(ws, create=False), ["recovery", "realism"])
        if v.judge == model
    ]
    failed = [v for v in rows if not v.ok]
    print(f"\n[real server] validate: {sum(v.ok for v in rows)}/{len(rows)} verdicts parsed")
    from agentmemgate.validate.judges.verdicts import REALISM_CRITERIA

    # one recovery verdict, and one realism verdict per criterion, for each of the 3 arcs
    assert len(rows) == 3 + 3 * len(REALISM_CRITERIA) and all(v.error for v in failed)
    assert all(v.strategy for v in rows if v.ok)
    assert_exit(r, len({(v.task, v.item_id) for v in failed}))
    figures("judge", Path(ws), r.seconds)
    assert_rerun_asks_nothing_answered(Path(ws), args)


def test_mine_with_a_local_miner(tmp_path, model):
    ws = tmp_path / "ws"
    args = (
        "mine",
        "hedges",
        str(FIXTURES / "locomo_sample.json"),
        "--miner",
        model,
        "--limit",
        "1",
        *llm(model),
        "--workspace",
        str(ws),
        "--no-progress",
    )
    r = amg(*args)
    from agentmemgate.workspace import Workspace

    failures = list(Workspace(ws, create=False).db["mined_failures"].rows)
    assert "LLM calls:" in r.output and all(f["error"] for f in failures)
    if failures:
        assert "Stage-2 failures" in r.output
    assert_exit(r, len(failures))
    figures("mine", ws, r.seconds)
    assert_rerun_asks_nothing_answered(ws, args)


@pytest.fixture
def statement_set(tmp_path):
    ws = str(tmp_path / "ws")
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps({"id": i, "text": t}) for i, t in STATEMENTS))
    assert amg("statements", "import", "s", str(f), "--workspace", ws).exit_code == 0
    return ws


@pytest.mark.parametrize("method", ["votes", "logprobs"])
def test_classify_with_a_local_model(statement_set, model, method):
    ws = statement_set
    args = (
        "classify",
        "--statements",
        "s",
        "--classifier",
        model,
        "--method",
        method,
        "--samples",
        "3",
        *llm(model),
        "--workspace",
        ws,
        "--no-progress",
    )
    r = amg(*args)
    from agentmemgate.classify import stored
    from agentmemgate.workspace import Workspace

    done = stored(Workspace(ws, create=False), "s")
    failed = len(STATEMENTS) - len(done)
    print(
        f"\n[real server] classify {method}: {len(done)}/{len(STATEMENTS)} distributions; "
        + "; ".join(f"{d.statement_id} {d.predicted} ({d.method})" for d in done)
    )
    if failed:
        assert "Failures (" in r.output
    if method == "votes":
        assert all(d.valid_votes and d.valid_votes >= 2 for d in done)
    assert_exit(r, failed)
    figures(f"classify-{method}", Path(ws), r.seconds)
    assert_rerun_asks_nothing_answered(Path(ws), args)


def test_label_with_a_local_model(statement_set, model):
    ws = statement_set
    args = (
        "statements",
        "label",
        "s",
        "--voters",
        model,
        "--votes",
        "1",
        *llm(model),
        "--workspace",
        ws,
        "--no-progress",
    )
    r = amg(*args)
    assert "Reference labels:" in r.output
    failed = "Votes that failed" in r.output
    assert_exit(r, failed)
    figures("label", Path(ws), r.seconds)
    assert_rerun_asks_nothing_answered(Path(ws), args)
