"""The Anthropic adapter through the real SDK client: forced tool use, retries, errors, tokens."""

from __future__ import annotations

import httpx2
import pytest
from pydantic import BaseModel

from agentmemgate.errors import MissingApiKey
from agentmemgate.llm import CallFailed, FatalProviderError, get_model

from .llm_fakes import ANTHROPIC_KEY, FakeApi, all_text, anthropic_error, anthropic_ok


class Verdict(BaseModel):
    label: str
    score: int


GOOD = {"label": "completed_event", "score": 2}


@pytest.fixture
def model_for(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)

    def make(api: FakeApi, **options):
        options.setdefault("max_retries", 2)
        return get_model("anthropic:claude-test", workspace=ws, http_client=api.client(), **options)

    return make


def statuses(ws) -> list[str]:
    return [r["status"] for r in ws.db["llm_calls"].rows_where(order_by="id")]


def test_forced_tool_use_and_cache_aware_token_counts(ws, model_for):
    api = FakeApi(
        anthropic_ok(GOOD, input_tokens=30, output_tokens=25, cache_read=2000, cache_write=100)
    )
    r = model_for(api).complete("Classify.", system="You label.", schema=Verdict)
    assert r.parsed == Verdict(**GOOD)
    assert (r.model, r.family) == ("claude-test-20250101", "anthropic")
    # Anthropic's input_tokens excludes cache reads/writes; ours is the whole input
    assert (r.input_tokens, r.output_tokens, r.cached_tokens) == (2130, 25, 2000)
    body = api.bodies()[0]
    assert body["tool_choice"] == {"type": "tool", "name": "record_Verdict"}
    assert body["tools"][0]["input_schema"]["required"] == ["label", "score"]
    assert body["system"] == "You label."
    assert (
        api.requests[0].headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    )  # sent, never stored
    assert "temperature" not in body  # API version 2026-10-21 rejects sampling parameters
    row = next(ws.db["llm_calls"].rows)
    assert (row["input_tokens"], row["cached_tokens"], row["status"]) == (2130, 2000, "ok")


def test_reply_without_the_tool_is_asked_again(ws, model_for):
    api = FakeApi(
        anthropic_ok(None, text="Sure! It is speculation.", stop_reason="end_turn"),
        anthropic_ok(GOOD),
    )
    assert model_for(api).complete("x", schema=Verdict).parsed.score == 2
    assert statuses(ws) == ["invalid_output", "ok"]


def test_schema_invalid_tool_input_is_asked_again(ws, model_for):
    api = FakeApi(anthropic_ok({"label": "x"}), anthropic_ok(GOOD))
    assert model_for(api).complete("x", schema=Verdict).parsed == Verdict(**GOOD)
    assert len(api.requests) == 2


def test_429_honours_retry_after(ws, model_for):
    api = FakeApi(
        anthropic_error(
            429, "rate_limit_error", "Number of requests exceeded", headers={"retry-after": "0.05"}
        ),
        anthropic_ok(GOOD),
    )
    model_for(api).complete("x", schema=Verdict)
    assert 0.05 <= api.times[1] - api.times[0] < 0.3
    assert statuses(ws) == ["http_429", "ok"]


def test_overloaded_529_then_success(ws, model_for):
    api = FakeApi(
        anthropic_error(529, "overloaded_error", "Overloaded", headers={"retry-after-ms": "10"}),
        anthropic_ok(GOOD),
    )
    model_for(api).complete("x", schema=Verdict)
    assert statuses(ws) == ["http_529", "ok"]


def test_401_is_immediate_and_keyless(ws, model_for):
    api = FakeApi(
        anthropic_error(401, "authentication_error", f"invalid x-api-key {ANTHROPIC_KEY}")
    )
    with pytest.raises(FatalProviderError) as e:
        model_for(api).complete("x")
    assert "ANTHROPIC_API_KEY" in str(e.value) and ANTHROPIC_KEY not in str(e.value)
    assert len(api.requests) == 1
    assert ANTHROPIC_KEY not in all_text(ws)


def test_credit_exhausted_is_fatal(ws, model_for):
    api = FakeApi(anthropic_error(402, "billing_error", "Your credit balance is too low"))
    with pytest.raises(FatalProviderError, match="credit"):
        model_for(api).complete("x")


def test_refusal_stop_reason(ws, model_for):
    api = FakeApi(anthropic_ok(None, text="I can't help with that.", stop_reason="refusal"))
    with pytest.raises(CallFailed) as e:
        model_for(api).complete("x", schema=Verdict)
    assert e.value.kind == "refusal"
    assert statuses(ws) == ["refused"]


def test_timeout_then_success(ws, model_for):
    api = FakeApi(httpx2.ConnectTimeout("connect timed out"), anthropic_ok(GOOD))
    assert model_for(api).complete("x", schema=Verdict).parsed.score == 2
    assert statuses(ws) == ["no_response", "ok"]


def test_missing_key_names_the_variable():
    with pytest.raises(MissingApiKey, match="set ANTHROPIC_API_KEY or use the offline backend"):
        get_model("anthropic:claude-sonnet-4-5")
