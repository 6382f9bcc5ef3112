"""The OpenAI adapter through the real SDK client: structured output, retries, errors, tokens."""

from __future__ import annotations

import httpx2
import pytest
from pydantic import BaseModel

from agentmemgate.errors import MissingApiKey
from agentmemgate.llm import CallFailed, FatalProviderError, get_model

from .llm_fakes import OPENAI_KEY, FakeApi, all_text, openai_error, openai_ok


class Verdict(BaseModel):
    label: str
    score: int


GOOD = {"label": "speculation", "score": 3}


@pytest.fixture
def model_for(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def make(api: FakeApi, **options):
        options.setdefault("max_retries", 2)
        return get_model("openai:gpt-test", workspace=ws, http_client=api.client(), **options)

    return make


def calls(ws) -> list[dict]:
    return list(ws.db["llm_calls"].rows_where(order_by="id"))


def test_structured_success_uses_json_schema_and_counts_tokens(ws, model_for):
    api = FakeApi(openai_ok(GOOD, prompt_tokens=1200, completion_tokens=40, cached=1024))
    r = model_for(api).complete(
        "Classify this.", system="You label.", schema=Verdict, purpose="test", seed_key="vote-1"
    )
    assert r.parsed == Verdict(**GOOD)
    assert (r.model, r.requested_model, r.family) == ("gpt-test-2025-01-01", "gpt-test", "openai")
    assert (r.input_tokens, r.output_tokens, r.cached_tokens, r.cached) == (1200, 40, 1024, False)
    body = api.bodies()[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    assert body["messages"][0] == {"role": "system", "content": "You label."}
    assert isinstance(body["seed"], int)
    (row,) = calls(ws)
    assert (row["status"], row["http_status"], row["attempt"], row["purpose"]) == (
        "ok",
        200,
        1,
        "test",
    )
    assert (row["input_tokens"], row["output_tokens"], row["cached_tokens"]) == (1200, 40, 1024)
    assert row["resolved_model"] == "gpt-test-2025-01-01"


def test_invalid_json_is_asked_again_then_accepted(ws, model_for):
    api = FakeApi(
        openai_ok('{"label": "speculation", "sco'), openai_ok({"label": 5}), openai_ok(GOOD)
    )
    model = model_for(api)
    r = model.complete("Classify.", schema=Verdict)
    assert r.parsed.score == 3
    assert len(api.requests) == 3
    assert [c["status"] for c in calls(ws)] == ["invalid_output", "invalid_output", "ok"]
    assert "not valid JSON" in calls(ws)[0]["error"]
    assert model.usage.as_dict()["failures"] == 0


def test_invalid_json_every_time_is_a_clear_call_failure(ws, model_for):
    api = FakeApi(openai_ok("not json at all"))
    model = model_for(api, invalid_output_retries=1)
    with pytest.raises(CallFailed) as e:
        model.complete("Classify.", schema=Verdict)
    assert e.value.kind == "invalid_output"
    assert "no valid Verdict in 2 tries" in str(e.value)
    assert len(api.requests) == 2
    assert ws.db["llm_cache"].count == 0  # failures are never cached


def test_429_honours_retry_after(ws, model_for):
    api = FakeApi(
        openai_error(
            429, "Rate limit reached", code="rate_limit_exceeded", headers={"retry-after": "0.05"}
        ),
        openai_ok(GOOD),
    )
    r = model_for(api).complete("x", schema=Verdict)
    assert r.parsed.label == "speculation"
    gap = api.times[1] - api.times[0]
    assert 0.05 <= gap < 0.3  # the SDK's own backoff would wait at least 0.375 s
    rows = calls(ws)
    assert [(c["attempt"], c["status"], c["http_status"]) for c in rows] == [
        (1, "http_429", 429),
        (2, "ok", 200),
    ]
    assert rows[0]["retry_after_s"] == pytest.approx(0.05)


def test_500_then_success(ws, model_for):
    api = FakeApi(openai_error(500, "boom", headers={"retry-after-ms": "10"}), openai_ok(GOOD))
    assert model_for(api).complete("x", schema=Verdict).parsed.score == 3
    assert [c["status"] for c in calls(ws)] == ["http_500", "ok"]


def test_persistent_500_is_a_call_failure_after_the_sdk_retries(ws, model_for):
    api = FakeApi(openai_error(503, "overloaded", headers={"retry-after-ms": "1"}))
    with pytest.raises(CallFailed) as e:
        model_for(api, max_retries=2).complete("x", schema=Verdict)
    assert e.value.kind == "server_error"
    assert "after 3 attempts" in str(e.value)
    assert len(api.requests) == 3


def test_401_fails_at_once_with_a_clear_message_and_no_key(ws, model_for):
    api = FakeApi(
        openai_error(
            401,
            f"Incorrect API key provided: {OPENAI_KEY}.",
            code="invalid_api_key",
            etype="invalid_request_error",
        )
    )
    with pytest.raises(FatalProviderError) as e:
        model_for(api).complete("x", schema=Verdict)
    msg = str(e.value)
    assert "rejected the API key" in msg and "OPENAI_API_KEY" in msg
    assert OPENAI_KEY not in msg and "\n" not in msg
    assert len(api.requests) == 1
    assert calls(ws)[0]["status"] == "http_401"
    assert OPENAI_KEY not in all_text(ws)


def test_exhausted_quota_429_is_not_retried(ws, model_for):
    api = FakeApi(openai_error(429, "You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(FatalProviderError, match="quota"):
        model_for(api).complete("x")
    assert len(api.requests) == 1


def test_refusal_is_a_recorded_call_failure(ws, model_for):
    api = FakeApi(openai_ok("", refusal="I can't help with that."))
    model = model_for(api)
    with pytest.raises(CallFailed) as e:
        model.complete("x", schema=Verdict)
    assert e.value.kind == "refusal" and "refused" in str(e.value)
    assert calls(ws)[0]["status"] == "refused"
    assert model.usage.as_dict()["failures"] == 1
    assert ws.db["llm_cache"].count == 0


def test_timeout_is_retried_then_succeeds(ws, model_for):
    api = FakeApi(httpx2.ReadTimeout("read timed out"), openai_ok(GOOD))
    assert model_for(api).complete("x", schema=Verdict).parsed.score == 3
    assert [c["status"] for c in calls(ws)] == ["no_response", "ok"]


def test_timeout_every_time_is_a_call_failure(ws, model_for):
    api = FakeApi(httpx2.ReadTimeout("read timed out"))
    with pytest.raises(CallFailed) as e:
        model_for(api, max_retries=0).complete("x")
    assert e.value.kind == "timeout" and "client-side timeout of 120 s (1 attempt)" in str(e.value)
    assert "not a model failure" in str(e.value)
    assert calls(ws)[-1]["status"] == "timeout"


def test_logprobs_are_returned_per_token(ws, model_for):
    lp = [
        {
            "token": "yes",
            "logprob": -0.1,
            "bytes": None,
            "top_logprobs": [
                {"token": "yes", "logprob": -0.1, "bytes": None},
                {"token": "no", "logprob": -2.3, "bytes": None},
            ],
        }
    ]
    api = FakeApi(openai_ok("yes", logprobs=lp))
    r = model_for(api).complete("Is it?", logprobs=True, top_logprobs=2)
    assert r.logprobs == [{"yes": -0.1, "no": -2.3}]
    assert api.bodies()[0]["top_logprobs"] == 2
    again = model_for(api).complete("Is it?", logprobs=True, top_logprobs=2)
    assert again.cached and again.logprobs == r.logprobs


def test_openai_compatible_server_needs_no_key(ws):
    api = FakeApi(openai_ok(GOOD))
    model = get_model(
        "openai:llama3", workspace=ws, base_url="http://127.0.0.1:8000/v1", http_client=api.client()
    )
    assert model.family == "openai-compatible:localhost:8000"
    r = model.complete("x", schema=Verdict)
    assert r.family == "openai-compatible:localhost:8000"
    assert str(api.requests[0].url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert api.requests[0].headers["authorization"] == "Bearer not-needed"


def test_missing_key_names_the_variable():
    with pytest.raises(MissingApiKey) as e:
        get_model("openai:gpt-4o-mini")
    assert (
        str(e.value)
        == "No API key for openai:gpt-4o-mini: set OPENAI_API_KEY or use the offline backend"
    )
