"""Structured output on any server, and the messy replies of small models, through the real SDK
clients over httpx2.MockTransport. The fake servers answer as the real ones did (the llama-cpp-python
error body below is the one its server sent for ``json_schema``)."""

from __future__ import annotations

import json

import httpx2
import pytest
from pydantic import BaseModel

from agentmemgate.llm import CallFailed, FatalProviderError, get_model
from agentmemgate.llm.structured import Prose, extract_json
from agentmemgate.workspace import Workspace

from .llm_fakes import (
    ANTHROPIC_KEY,
    FakeApi,
    anthropic_error,
    anthropic_ok,
    openai_error,
    openai_ok,
)

URL = "http://127.0.0.1:8080/v1"
# llama-cpp-python names a model by the path of its GGUF file (shortened to the file name in messages)
GGUF = "/models/gemma-3-270m-q4_k_m.gguf"
LLAMA_CPP_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)


class Verdict(BaseModel):
    level: str
    rationale: Prose


class Hedge(BaseModel):
    span: str
    attribute: str
    plan_value: str
    reason: str


GOOD = {"level": "came_true", "rationale": "The user says the switch went through."}


def body(request) -> dict:
    return json.loads(request.content)


def llama_cpp(reply=lambda request: openai_ok(GOOD)):
    """Answers like llama-cpp-python's server: json_schema is a 500, the rest is served."""

    def handler(request):
        fmt = body(request).get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return openai_error(500, LLAMA_CPP_500, etype="internal_server_error")
        return reply(request)

    return handler


def local(ws, api, name=GGUF, **options):
    options.setdefault("max_retries", 4)
    return get_model(
        f"openai:{name}", workspace=ws, base_url=URL, http_client=api.client(), **options
    )


def calls(ws) -> list[dict]:
    return list(ws.db["llm_calls"].rows_where(order_by="id"))


def test_llama_cpp_refuses_json_schema_once_and_the_move_is_remembered(ws, capsys):
    api = FakeApi(llama_cpp())
    model = local(ws, api)
    r = model.complete("Which level?", schema=Verdict, purpose="judge.recovery", max_tokens=300)
    assert r.parsed.level == "came_true" and r.strategy == "json_object" and r.tries == 1
    # one refused request (no SDK retries for an error naming a request field), then json_object
    assert len(api.requests) == 2
    sent = api.bodies()[1]
    assert sent["response_format"]["type"] == "json_object"
    assert sent["response_format"]["schema"]["properties"]["level"] == {
        "title": "Level",
        "type": "string",
    }
    assert sent["max_tokens"] == 300
    rows = calls(ws)
    assert [(c["status"], c["strategy"]) for c in rows] == [
        ("http_500", "json_schema"),
        ("ok", "json_object"),
    ]
    assert "rejected the request field 'response_format' (HTTP 500)" in rows[0]["error"]
    assert rows[1]["note"] == "json_schema refused (response_format): moved to json_object"
    assert ws.db["llm_strategies"].get((URL, GGUF))["strategy"] == "json_object"
    assert next(ws.db["llm_cache"].rows)["strategy"] == "json_object"
    err = capsys.readouterr().err
    assert "refused structured output by json_schema" in err and "using json_object" in err
    assert "openai:gemma-3-270m-q4_k_m.gguf at 127.0.0.1:8080" in err  # the path shortened
    # a new run against the same server starts with what worked
    again = FakeApi(llama_cpp())
    local(Workspace(ws.path), again).complete("Another question?", schema=Verdict)
    assert (
        len(again.requests) == 1 and again.bodies()[0]["response_format"]["type"] == "json_object"
    )


def test_a_transient_500_is_still_retried_by_the_sdk(ws):
    api = FakeApi(
        openai_error(500, "upstream hiccup", headers={"retry-after-ms": "1"}), openai_ok(GOOD)
    )
    r = local(ws, api).complete("x", schema=Verdict)
    assert r.strategy == "json_schema" and len(api.requests) == 2


def test_429_is_retried_even_when_it_names_a_field(ws):
    api = FakeApi(
        openai_error(
            429, "Too many requests for max_tokens budget", headers={"retry-after-ms": "1"}
        ),
        openai_ok(GOOD),
    )
    assert local(ws, api).complete("x", schema=Verdict).parsed.level == "came_true"
    assert len(api.requests) == 2


def test_a_server_without_response_format_gets_a_forced_tool_call(ws):
    def handler(request):
        b = body(request)
        if "response_format" in b:
            return openai_error(400, "response_format is not supported by this server")
        assert b["tool_choice"] == {"type": "function", "function": {"name": "record_Verdict"}}
        assert b["tools"][0]["function"]["parameters"]["required"] == ["level", "rationale"]
        return httpx2.Response(
            200,
            json={
                "id": "c",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_0",
                                    "type": "function",
                                    "function": {
                                        "name": "record_Verdict",
                                        "arguments": json.dumps(GOOD),
                                    },
                                }
                            ],
                        },
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    api = FakeApi(handler)
    r = local(ws, api, name="toolsonly").complete("x", schema=Verdict)
    assert r.strategy == "tools" and r.parsed.level == "came_true"
    assert [b.get("response_format", {}).get("type") for b in api.bodies()] == [
        "json_schema",
        "json_object",
        None,
    ]


def test_prompt_strategy_reads_json_wrapped_in_prose_and_fences(ws):
    reply = "Sure! Here is the answer:\n```json\n" + json.dumps(GOOD) + "\n```\nHope that helps."
    api = FakeApi(openai_ok(reply))
    r = local(ws, api, structured_output="prompt").complete("Which level?", schema=Verdict)
    assert r.parsed.level == "came_true" and r.strategy == "prompt"
    sent = api.bodies()[0]
    assert "response_format" not in sent and "tools" not in sent
    assert "It must match this JSON Schema:" in sent["messages"][-1]["content"]


def test_a_forced_strategy_the_server_refuses_stops_the_run(ws):
    api = FakeApi(llama_cpp())
    with pytest.raises(FatalProviderError, match="does not accept --structured-output json_schema"):
        local(ws, api, structured_output="json_schema").complete("x", schema=Verdict)
    assert len(api.requests) == 1


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("", "the reply is empty"),
        (
            'Here you go: {"level": "came_true", "rationale": "<one sentence saying which words decided it>"}',
            "copies the format example",
        ),
        ('{"level": "came_true"}', "rationale: Field required"),
        ('{"level": "came_true", "rationale": "pass"}', "is one word"),
        ('{"level": "came_true", "rationale": "The user', "object is opened but never closed"),
        ("I think it came true.", "contains no JSON object"),
    ],
)
def test_messy_replies_are_re_asked_with_the_problem(ws, bad, problem):
    api = FakeApi(
        llama_cpp(lambda r: openai_ok(bad)), llama_cpp(lambda r: openai_ok(bad)), llama_cpp()
    )
    model = local(ws, api)
    r = model.complete("Which level?", schema=Verdict)
    assert r.parsed.level == "came_true" and r.tries == 2
    reask = api.bodies()[2]["messages"][-1]["content"]
    assert reask.startswith("Which level?") and "YOUR PREVIOUS REPLY WAS NOT ACCEPTED" in reask
    assert problem in reask
    rows = calls(ws)
    assert rows[-2]["status"] == "invalid_output" and problem in rows[-2]["error"]
    assert rows[-1]["note"] == "re-ask 2: the problem was sent back"


def test_the_same_value_in_every_field_is_invalid(ws):
    same = {
        "span": "maybe Seattle",
        "attribute": "maybe Seattle",
        "plan_value": "maybe Seattle",
        "reason": "maybe Seattle",
    }
    api = FakeApi(openai_ok(same))
    with pytest.raises(CallFailed) as e:
        local(ws, api, invalid_output_retries=1).complete("x", schema=Hedge)
    assert (
        e.value.kind == "invalid_output"
        and "every field of the reply has the same value" in str(e.value)
    )
    assert ws.db["llm_cache"].count == 0  # a re-run asks again


def test_an_empty_reply_from_a_local_server_says_what_to_check(ws, capsys):
    api = FakeApi(openai_ok(""))
    with pytest.raises(CallFailed) as e:
        local(ws, api, invalid_output_retries=0).complete("x", schema=Verdict)
    assert "the reply is empty" in str(e.value) and "--chat_format" in str(e.value)
    assert "sent an empty reply: check the server's chat template" in capsys.readouterr().err


def test_a_reply_cut_off_at_the_token_limit_is_re_asked_with_a_larger_budget(ws):
    cut = '{"level": "came_true", "rationale": "The user says the sw'
    api = FakeApi(openai_ok(cut, finish="length"), openai_ok(GOOD))
    r = local(ws, api, structured_output="json_object").complete("x", schema=Verdict, max_tokens=20)
    assert r.tries == 2
    assert [b["max_tokens"] for b in api.bodies()] == [20, 40]
    row = calls(ws)[0]
    assert "cut off at the output token limit of 20 tokens" in row["error"]
    assert "output budget raised to 40 tokens" in calls(ws)[1]["note"]


def test_max_tokens_option_overrides_every_budget_and_is_never_raised(ws):
    cut = '{"level": "came_true", "rationale": "The user'
    api = FakeApi(openai_ok(cut, finish="length"))
    with pytest.raises(CallFailed, match="raise --max-tokens"):
        local(ws, api, max_tokens=10, invalid_output_retries=1).complete(
            "x", schema=Verdict, max_tokens=300
        )
    assert [b["max_tokens"] for b in api.bodies()] == [10, 10]


def test_anthropic_compatible_server_without_tools_falls_back_to_json_in_text(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)

    def handler(request):
        b = body(request)
        if "tools" in b:
            return anthropic_error(
                400, "invalid_request_error", "tools: Extra inputs are not permitted"
            )
        assert "It must match this JSON Schema" in b["messages"][0]["content"]
        return anthropic_ok(text="```json\n" + json.dumps(GOOD) + "\n```", stop_reason="end_turn")

    api = FakeApi(handler)
    model = get_model(
        "anthropic:local",
        workspace=ws,
        base_url="http://127.0.0.1:8090",
        http_client=api.client(),
        max_retries=3,
    )
    r = model.complete("x", schema=Verdict, max_tokens=200)
    assert r.strategy == "prompt" and r.parsed.level == "came_true" and len(api.requests) == 2
    assert [b["max_tokens"] for b in api.bodies()] == [200, 200]


def test_extract_json():
    assert extract_json('{"a": 1}') == ({"a": 1}, "whole")
    assert extract_json('prose {"a": {"b": 2}} more {"c": 3}')[0] == {"a": {"b": 2}}
    assert extract_json("```\n{\"a\": 1}\n```")[0] == {"a": 1}
    assert extract_json("   ")[0] is None
