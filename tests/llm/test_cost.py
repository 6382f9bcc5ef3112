"""What calls cost: prices from genai-prices (bundled, offline), --price, the call log's cost
column and ``amg usage``."""

from __future__ import annotations

import json
import socket

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.errors import BadInput
from agentmemgate.llm import CallFailed, get_model
from agentmemgate.llm.cost import estimate_tokens, lookup, money, parse_price, price_data
from agentmemgate.llm.usage_log import usage_rows

from .llm_fakes import ANTHROPIC_KEY, OPENAI_KEY, FakeApi, anthropic_ok, openai_ok


class Verdict(BaseModel):
    label: str
    score: int


GOOD = {"label": "completed_event", "score": 2}


@pytest.fixture
def no_network(monkeypatch):
    """Price lookups must never need the network (no API is reachable where this runs)."""

    def refuse(*a, **k):
        raise AssertionError("a price lookup tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_known_openai_and_anthropic_models_are_priced_offline(no_network):
    mini = lookup("openai", "gpt-4o-mini")
    assert mini is not None and mini.source == "genai-prices" and mini.ref == "openai/gpt-4o-mini"
    # genai-prices lists gpt-4o-mini at $0.15 in / $0.60 out / $0.075 cached input per MTok
    assert mini.cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert mini.cost(1_000_000, 0, cached_tokens=500_000) == pytest.approx(0.1125)
    sonnet = lookup("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.ref.startswith("anthropic/")
    assert sonnet.cost(100_000, 10_000) == pytest.approx(0.3 + 0.15)  # $3 / $15 per MTok
    # batch prices come from the same database (50% at both providers); callers pass batch=True
    assert mini.cost(1_000_000, 1_000_000, batch=True) == pytest.approx(0.375)
    assert "genai-prices" in price_data() and "newest price change in effect 20" in price_data()


def test_unknown_models_have_no_price_unless_price_is_given(no_network):
    assert lookup("openai", "smollm2", base_url="http://127.0.0.1:8080/v1") is None
    assert lookup("openai", "no-such-model-xyz") is None
    assert lookup("scripted", "x") is None
    given = lookup("openai", "smollm2", base_url="http://127.0.0.1:8080/v1", override=(1.0, 2.0))
    assert given.source == "--price" and given.cost(1000, 500) == pytest.approx(0.002)
    # --price never overrides a listed price
    assert lookup("openai", "gpt-4o-mini", override=(9.0, 9.0)).source == "genai-prices"
    assert money(None) == "unknown" and money(0.0) == "$0.00"


@pytest.mark.parametrize("text", ["0.15", "a,b", "1,2,3", "-1,2", "nan,1", ""])
def test_bad_price_is_a_one_line_error(text):
    with pytest.raises(
        BadInput,
        match=r"^--price must be two numbers per million tokens, e\.g\. "
        r"--price 0\.15,0\.60",
    ):
        parse_price(text)
    assert parse_price(" 0.15 , 0.6 ") == (0.15, 0.6)


def test_estimate_is_characters_over_four():
    assert (
        estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    )


def test_call_log_stores_cost_per_call_and_null_when_unknown(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    api = FakeApi(openai_ok(GOOD, prompt_tokens=1000, completion_tokens=200, cached=400))
    m = get_model("openai:gpt-4o-mini", workspace=ws, http_client=api.client(), max_retries=0)
    m.complete("q1", schema=Verdict)
    row = list(ws.db["llm_calls"].rows)[-1]
    # 600 x 0.15 + 400 x 0.075 + 200 x 0.60, per million
    assert row["cost_usd"] == pytest.approx((600 * 0.15 + 400 * 0.075 + 200 * 0.6) / 1e6)
    assert m.usage.cost_usd == pytest.approx(row["cost_usd"])
    m.complete("q1", schema=Verdict)  # a cache hit costs nothing and logs no call
    assert ws.db["llm_calls"].count == 1

    local = get_model(
        "openai:smollm2",
        workspace=ws,
        base_url="http://127.0.0.1:8080/v1",
        http_client=FakeApi(openai_ok(GOOD)).client(),
        max_retries=0,
    )
    local.complete("q2", schema=Verdict)
    row = list(ws.db["llm_calls"].rows)[-1]
    assert row["cost_usd"] is None and row["input_tokens"] == 120  # unknown, never 0


def test_anthropic_cached_tokens_are_charged_at_the_cache_read_price(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    api = FakeApi(anthropic_ok(GOOD, input_tokens=1000, output_tokens=100, cache_read=10_000))
    m = get_model(
        "anthropic:claude-sonnet-4-5", workspace=ws, http_client=api.client(), max_retries=0
    )
    m.complete("q", schema=Verdict)
    row = list(ws.db["llm_calls"].rows)[-1]
    assert row["cost_usd"] == pytest.approx((1000 * 3 + 10_000 * 0.3 + 100 * 15) / 1e6)


def test_amg_usage_sums_by_command_model_and_purpose(tmp_path):
    from agentmemgate.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    rows = [  # hand-made call-log rows: two commands, two purposes, one unpriced call
        ("amg mine hedges", "anthropic", "claude-x", "mine.hedge_extract", 100, 10, 0, 0.001),
        ("amg mine hedges", "anthropic", "claude-x", "mine.hedge_extract", 300, 30, 100, 0.003),
        ("amg classify", "openai", "gpt-4o-mini", "classify.evidence_type", 50, 5, 0, None),
    ]
    for i, (cmd, fam, model, purpose, tin, tout, cached, cost) in enumerate(rows):
        ws.db["llm_calls"].insert(
            {
                "created_at": f"2026-11-{20 + i}T10:00:00+00:00",
                "command": cmd,
                "family": fam,
                "requested_model": model,
                "purpose": purpose,
                "attempt": 1,
                "status": "ok",
                "input_tokens": tin,
                "output_tokens": tout,
                "cached_tokens": cached,
                "cost_usd": cost,
            }
        )
    ws.db["llm_calls"].insert(
        {
            "created_at": "2026-11-23T10:00:00+00:00",
            "command": "amg classify",
            "family": "openai",
            "requested_model": "gpt-4o-mini",
            "purpose": "classify.evidence_type",
            "attempt": 1,
            "status": "http_429",
        }
    )  # an attempt that brought no reply
    r = usage_rows(ws)
    mine, cls = r["rows"]
    assert (
        mine["command"],
        mine["model"],
        mine["calls"],
        mine["input_tokens"],
        mine["cached_input_tokens"],
        mine["output_tokens"],
    ) == ("amg mine hedges", "anthropic:claude-x", 2, 400, 100, 40)
    assert mine["cost_usd"] == pytest.approx(0.004)
    assert (cls["calls"], cls["attempts"], cls["cost_usd"], cls["unpriced_calls"]) == (
        1,
        2,
        None,
        1,
    )
    assert r["total"]["cost_usd"] == pytest.approx(0.004) and r["total"]["unpriced_calls"] == 1
    assert [x["command"] for x in usage_rows(ws, since="2026-11-22")["rows"]] == ["amg classify"]

    runner = CliRunner()
    out = runner.invoke(app, ["usage", "--workspace", str(ws.path)])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "amg mine hedges",
        "  anthropic:claude-x  mine.hedge_extract: 2 calls, 400 in (100 cached), 40 out; $0.0040",
        "amg classify",
        "  openai:gpt-4o-mini  classify.evidence_type: 1 call (1 HTTP attempt without a reply), "
        "50 in (0 cached), 5 out; cost unknown (no price)",
        "total: 3 calls (4 HTTP attempts), 450 in (100 cached), 45 out; $0.0040 + 1 call "
        "without a price",
    ]
    data = json.loads(runner.invoke(app, ["usage", "--json", "--workspace", str(ws.path)]).output)
    assert data["total"]["calls"] == 3
    bad = runner.invoke(app, ["usage", "--since", "last week", "--workspace", str(ws.path)])
    assert bad.exit_code == 1 and bad.output.startswith("Error: --since must be a date")


def test_amg_usage_says_what_a_test_model_did_and_what_nothing_cost(tmp_path):
    """A test double makes no HTTP requests and is never charged; calls that brought no reply
    cost nothing; only replies without a price are of unknown cost."""
    from agentmemgate.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    model = get_model("scripted:demo", workspace=ws)
    model.respond_with(lambda r: "fine")
    for i in range(3):
        model.complete(f"q{i}", purpose="test.reply")
    model.respond_with(None)
    for i in range(2):
        with pytest.raises(CallFailed, match="no scripted reply left"):
            model.complete(f"r{i}", purpose="test.fail")
    ws.db["llm_calls"].insert_all(  # a server that never answered: two attempts, no reply
        {
            "created_at": "2026-11-23T10:00:00+00:00",
            "family": "openai",
            "requested_model": "gpt-4o-mini",
            "purpose": "test.down",
            "attempt": a,
            "status": "no_response",
        }
        for a in (1, 2)
    )
    out = CliRunner().invoke(app, ["usage", "--workspace", str(ws.path)])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[1:] == [
        "  scripted:demo  test.reply: 3 replies from the scripted test model (no HTTP), 3 in "
        "(0 cached), 3 out; $0.00",
        "  scripted:demo  test.fail: 0 replies and 2 failures from the scripted test model (no "
        "HTTP), 0 in (0 cached), 0 out; $0.00",
        "  openai:gpt-4o-mini  test.down: 0 calls (2 HTTP attempts without a reply), 0 in (0 "
        "cached), 0 out; $0.00",
        "total: 0 calls (2 HTTP attempts) and 3 replies and 2 failures from the scripted test "
        "model (no HTTP), 3 in (0 cached), 3 out; $0.00",
    ]
    data = json.loads(
        CliRunner().invoke(app, ["usage", "--json", "--workspace", str(ws.path)]).output
    )
    assert [(r["test_double"], r["cost_usd"], r["unpriced_calls"]) for r in data["rows"]] == [
        (True, 0.0, 0),
        (True, 0.0, 0),
        (False, 0.0, 0),
    ]
    assert (
        data["total"]["attempts"],
        data["total"]["http_attempts"],
        data["total"]["cost_usd"],
    ) == (7, 2, 0.0)


def test_commands_record_themselves_in_the_call_log(tmp_path):
    from pathlib import Path

    from agentmemgate.workspace import Workspace

    locomo = Path(__file__).parents[1] / "fixtures" / "locomo_sample.json"
    ws = tmp_path / "ws"
    get_model("scripted:cmd").respond_with(
        lambda r: {
            "keep": False,
            "span": None,
            "attribute": None,
            "plan_value": None,
            "hedge_level": None,
            "reason": "no plan here",
        }
    )
    r = CliRunner().invoke(
        app,
        [
            "mine",
            "hedges",
            str(locomo),
            "--miner",
            "scripted:cmd",
            "--price",
            "1,2",
            "--no-progress",
            "--workspace",
            str(ws),
        ],
    )
    assert r.exit_code == 0, r.output
    rows = usage_rows(Workspace(ws, create=False))["rows"]
    assert [(x["command"], x["model"], x["purpose"]) for x in rows] == [
        ("amg mine hedges", "scripted:cmd", "mine.hedge_extract")
    ]
    # the summary's cost line and the call log agree
    assert f"cost {money(rows[0]['cost_usd'])} (price from --price)" in r.output
