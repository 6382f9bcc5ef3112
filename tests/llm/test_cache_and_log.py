"""The content-addressed cache, the call log, dry-run counting and secret hygiene."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from agentmemgate.llm import CallFailed, FatalProviderError, get_model, scrub
from agentmemgate.workspace import Workspace

from .llm_fakes import OPENAI_KEY, FakeApi, all_text, openai_error, openai_ok


class Label(BaseModel):
    label: str


@pytest.fixture
def openai_model(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def make(api: FakeApi, workspace=None, **options):
        return get_model(
            "openai:gpt-test",
            workspace=workspace or ws,
            http_client=api.client(),
            max_retries=1,
            **options,
        )

    return make


def test_second_identical_call_is_served_from_the_cache(ws, openai_model):
    api = FakeApi(openai_ok({"label": "a"}, prompt_tokens=10, completion_tokens=2))
    first = openai_model(api).complete("p", schema=Label)
    fresh_model = openai_model(api, workspace=Workspace(ws.path))  # a new process, same workspace
    second = fresh_model.complete("p", schema=Label)
    assert len(api.requests) == 1
    assert second.cached and not first.cached
    assert second.parsed == first.parsed and second.model == first.model
    assert fresh_model.usage.as_dict() == {
        "calls": 0,
        "cache_hits": 1,
        "failures": 0,
        "requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_tokens": 0,
        "unpriced": 0,
        "unestimated": 0,
    }
    row = next(ws.db["llm_cache"].rows)
    assert (row["prompt"], row["schema_name"], row["requested_model"]) == ("p", "Label", "gpt-test")


def test_seed_key_temperature_system_and_schema_each_make_a_new_entry(ws, openai_model):
    api = FakeApi(openai_ok({"label": "a"}))
    m = openai_model(api)
    m.complete("p", schema=Label)
    m.complete("p", schema=Label, seed_key="vote-2")
    m.complete("p", schema=Label, temperature=1.0)
    m.complete("p", schema=Label, system="s")
    m.complete("p")
    m.complete(
        "p", schema=Label, seed_key="vote-2", purpose="other purpose"
    )  # purpose is not a key
    assert len(api.requests) == 5
    seeds = [b.get("seed") for b in api.bodies()]
    assert seeds[0] is None and isinstance(seeds[1], int)


def test_is_cached_counts_only_unanswered_calls_for_dry_runs(ws, openai_model):
    api = FakeApi(openai_ok({"label": "a"}))
    m = openai_model(api)
    prompts = ["a", "b", "c"]
    m.complete("b", schema=Label)
    assert sum(not m.is_cached(p, schema=Label) for p in prompts) == 2
    assert len(api.requests) == 1  # asking costs nothing


def test_models_without_workspace_work_uncached():
    m = get_model("scripted:nocache")
    m.enqueue("one", "two")
    assert [m.complete("p").text, m.complete("p").text] == ["one", "two"]


def test_scripted_model_history_and_failures(ws):
    m = get_model("scripted:pipeline", workspace=ws)
    m.enqueue({"label": "x"}, RuntimeError("boom"))
    assert m.complete("hello", schema=Label, purpose="t").parsed.label == "x"
    assert m.history[0].prompt == "hello" and m.history[0].schema is Label
    same_name = get_model("scripted:pipeline", workspace=ws)
    assert same_name.history is m.history  # the pipeline's instance shares the test's script
    with pytest.raises(RuntimeError):
        same_name.complete("other")
    with pytest.raises(CallFailed, match="no scripted reply left"):
        same_name.complete("third")


def test_the_key_never_reaches_the_database_logs_or_messages(ws, openai_model, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {OPENAI_KEY}. Authorization: Bearer {OPENAI_KEY}"
    api = FakeApi(
        openai_ok({"label": "ok"}),
        openai_error(400, f"bad request for key {OPENAI_KEY}", code="invalid_request"),
        openai_ok("", refusal=f"no, {OPENAI_KEY}"),
        openai_error(401, echo, code="invalid_api_key"),
    )
    m = openai_model(api)
    m.complete("fine", schema=Label)
    messages = []
    for prompt in ("bad", "refused"):
        with pytest.raises(CallFailed) as e:
            m.complete(prompt, schema=Label)
        messages.append(str(e.value))
    with pytest.raises(FatalProviderError) as fatal:
        m.complete("auth", schema=Label)
    messages.append(str(fatal.value))
    out = capsys.readouterr()
    everything = "\n".join([all_text(ws), *messages, out.out, out.err, caplog.text])
    assert OPENAI_KEY not in everything
    assert "Bearer sk-" not in everything
    assert ws.db["llm_calls"].count == 4


def test_scrub_removes_key_shaped_strings():
    text = "key sk-proj-abcdefghijklmnop and Authorization: Bearer abc.def x-api-key=zzz123"
    clean = scrub(text)
    assert "abcdefghijklmnop" not in clean and "abc.def" not in clean and "zzz123" not in clean
