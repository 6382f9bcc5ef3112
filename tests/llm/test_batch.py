"""--batch through the real SDK clients over mock batch endpoints: submit, poll, collect, validate,
re-ask in a follow-up batch, record failures and retry them on a re-run, pick up stored batches,
--no-wait, and waves of dependent calls."""

from __future__ import annotations

import json
import threading

import pytest
from pydantic import BaseModel

from agentmemgate.llm import Deferred, Failed, FatalProviderError, get_model, run_concurrent
from agentmemgate.llm.batch import BatchesPending, run_batched

from .batch_fakes import AnthropicBatchApi, OpenAIBatchApi
from .llm_fakes import ANTHROPIC_KEY, OPENAI_KEY, all_text


class Verdict(BaseModel):
    label: str
    score: int


def prompt_of(body: dict) -> str:
    if "messages" in body:
        return body["messages"][-1]["content"]
    return ""


def good(cid: str, body: dict) -> dict:
    """Answers 'item N' with score N."""
    text = prompt_of(body)
    n = int(text.split("item ")[1].split()[0].strip(".")) if "item " in text else 0
    return {"label": "ok", "score": n}


@pytest.fixture
def openai_model(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def make(api, **options):
        options.setdefault("max_retries", 0)
        return get_model("openai:gpt-test", workspace=ws, http_client=api.client(), **options)

    return make


@pytest.fixture
def anthropic_model(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)

    def make(api, **options):
        options.setdefault("max_retries", 0)
        return get_model("anthropic:claude-test", workspace=ws, http_client=api.client(), **options)

    return make


def judge_all(model, n: int, schema=Verdict):
    """A room in miniature: n calls fanned out by run_concurrent; failures come back as Failed."""

    def one(i):
        return i, model.complete(
            f"Judge item {i}.", schema=schema, purpose="test.batch", max_tokens=50
        )

    out = {}
    for r in run_concurrent(one, range(n), concurrency=3, progress=False):
        if isinstance(r, Failed):
            out[r.item] = r.error
        else:
            out[r[0]] = r[1].parsed.score
    return out


def batch_calls(ws) -> list[dict]:
    return list(ws.db.query("select * from llm_calls where batch = 1 order by id"))


def run(ws, fn, **kw):
    kw.setdefault("show_progress", False)
    return run_batched(ws, fn, poll_interval=0, **kw)


# -- OpenAI ------------------------------------------------------------------------------------
def test_openai_batch_validating_in_progress_completed_answers_every_call(ws, openai_model):
    api = OpenAIBatchApi(good)
    model = openai_model(api)
    result = run(ws, lambda: judge_all(model, 5))
    assert result == {i: i for i in range(5)}
    assert api.created == 1  # one batch for the five calls
    lines = api.lines["batch_1"]
    assert len(lines) == 5 and {x["method"] for x in lines} == {"POST"}
    # the body is the one a live call sends: strict json_schema, the call's budget
    body = lines[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["max_completion_tokens"] == 50 and body["model"] == "gpt-test"
    assert api.polls["batch_1"] == 2  # validating -> in_progress -> completed
    rows = batch_calls(ws)
    assert len(rows) == 5 and {r["status"] for r in rows} == {"ok"}
    assert {r["purpose"] for r in rows} == {"test.batch"}
    assert all("batch batch_1" in r["note"] for r in rows)
    assert ws.db["llm_cache"].count == 5
    (b,) = ws.db["llm_batches"].rows
    assert (b["provider"], b["model"], b["state"], b["request_count"]) == (
        "openai",
        "gpt-test",
        "completed",
        5,
    )
    assert b["collected_at"]
    u = model.usage.as_dict()
    assert (u["batch_calls"], u["batch_input_tokens"], u["batch_output_tokens"]) == (5, 500, 100)
    assert OPENAI_KEY not in all_text(ws)
    # the live path afterwards: all from the cache, nothing sent
    sent = len(api.requests)
    assert judge_all(model, 5) == {i: i for i in range(5)}
    assert len(api.requests) == sent


def test_openai_partial_failure_is_recorded_and_retried_on_a_re_run(ws, openai_model):
    fail_once = {"Judge item 1.", "Judge item 3."}

    def answer(cid, body):
        p = prompt_of(body)
        if p in fail_once:
            return ("error", 500, "The server had an error processing your request.")
        return good(cid, body)

    api = OpenAIBatchApi(answer)
    model = openai_model(api)
    result = run(ws, lambda: judge_all(model, 4))
    assert result[0] == 0 and result[2] == 2
    assert "request errored" in result[1] and "HTTP 500" in result[1]
    assert "a re-run submits it again" in result[3]
    failed = [r for r in batch_calls(ws) if r["status"] == "errored"]
    assert len(failed) == 2 and all("HTTP 500" in r["error"] for r in failed)
    statuses = sorted(r["status"] for r in ws.db["llm_batch_requests"].rows)
    assert statuses == ["errored", "errored", "ok", "ok"]
    # a re-run submits only the two failed requests, in a new batch
    fail_once.clear()
    model = openai_model(api)
    assert run(ws, lambda: judge_all(model, 4)) == {i: i for i in range(4)}
    assert api.created == 2 and len(api.lines["batch_2"]) == 2


@pytest.mark.parametrize("state,status", [("expired", "expired"), ("cancelled", "cancelled")])
def test_openai_expired_and_cancelled_requests_are_recorded_with_reasons(
    ws, openai_model, state, status
):
    api = OpenAIBatchApi(good, states=("validating", "in_progress", state))
    model = openai_model(api)
    result = run(ws, lambda: judge_all(model, 4))
    failed = {i: e for i, e in result.items() if isinstance(e, str)}
    assert failed and all(f"request {status}" in e for e in failed.values())
    rows = [r for r in ws.db["llm_batch_requests"].rows if r["status"] == status]
    assert len(rows) == len(failed)
    assert all(f"batch_{status}" in r["error"] for r in rows)
    (b,) = ws.db["llm_batches"].rows
    assert b["state"] == state


def test_openai_failed_batch_fails_every_request_with_the_batch_error(ws, openai_model):
    api = OpenAIBatchApi(
        good,
        states=("validating", "failed"),
        batch_error={"code": "invalid_json_line", "message": "line 1 is not JSON", "line": 1},
    )
    model = openai_model(api)
    result = run(ws, lambda: judge_all(model, 2))
    assert all("invalid_json_line: line 1 is not JSON (line 1)" in e for e in result.values())


def test_invalid_replies_are_re_asked_in_a_follow_up_batch(ws, openai_model):
    def answer(cid, body):
        p = prompt_of(body)
        if "YOUR PREVIOUS REPLY WAS NOT ACCEPTED" in p:
            return good(cid, {"messages": [{"content": p.split("\n")[0]}]})
        if "item 0" in p:
            return "sorry, no JSON here"
        return good(cid, body)

    api = OpenAIBatchApi(answer)
    model = openai_model(api)
    assert run(ws, lambda: judge_all(model, 3)) == {0: 0, 1: 1, 2: 2}
    assert api.created == 2
    (reask,) = api.lines["batch_2"]
    assert "YOUR PREVIOUS REPLY WAS NOT ACCEPTED" in reask["body"]["messages"][-1]["content"]
    assert "sorry, no JSON here" in reask["body"]["messages"][-1]["content"]
    rows = [r for r in batch_calls(ws) if r["cache_key"] == reask["custom_id"]]
    assert [r["status"] for r in rows] == ["invalid_output", "ok"]
    assert [r["attempt"] for r in rows] == [1, 2]
    assert "re-ask 2" in rows[1]["note"]


def test_invalid_every_time_fails_after_the_re_asks(ws, openai_model):
    api = OpenAIBatchApi(lambda cid, body: "not json")
    model = openai_model(api, invalid_output_retries=1)
    result = run(ws, lambda: judge_all(model, 1))
    assert "no valid Verdict in 2 tries" in result[0]
    assert api.created == 2
    assert ws.db["llm_cache"].count == 0


def test_no_wait_submits_and_a_re_run_picks_up_the_stored_batch(ws, openai_model):
    api = OpenAIBatchApi(good, states=("validating", "validating", "in_progress", "completed"))
    model = openai_model(api)
    with pytest.raises(BatchesPending) as e:
        run(ws, lambda: judge_all(model, 3), wait=False)
    assert str(e.value).startswith("submitted; re-run to collect")
    assert api.created == 1 and ws.db["llm_cache"].count == 0
    (b,) = ws.db["llm_batches"].rows
    assert b["state"] == "validating" and not b["collected_at"]
    # still running: a second --no-wait submits nothing new
    model = openai_model(api)
    with pytest.raises(BatchesPending):
        run(ws, lambda: judge_all(model, 3), wait=False)
    assert api.created == 1
    # a re-run that waits collects the same batch
    model = openai_model(api)
    assert run(ws, lambda: judge_all(model, 3)) == {0: 0, 1: 1, 2: 2}
    assert api.created == 1 and ws.db["llm_cache"].count == 3


def test_interrupted_poll_leaves_the_batch_and_a_re_run_collects_it(ws, openai_model):
    api = OpenAIBatchApi(good, states=("validating", "in_progress", "in_progress", "completed"))
    model = openai_model(api)

    def interrupt(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_batched(
            ws, lambda: judge_all(model, 2), poll_interval=1, sleep=interrupt, show_progress=False
        )
    assert api.created == 1
    model = openai_model(api)
    assert run(ws, lambda: judge_all(model, 2)) == {0: 0, 1: 1}
    assert api.created == 1


def test_waves_every_items_next_step_in_one_batch(ws, openai_model):
    """Each item makes a second call that needs the first answer (an arc's next turn)."""
    api = OpenAIBatchApi(good)
    model = openai_model(api)

    def arcs():
        def arc(i):
            first = model.complete(f"Judge item {i}.", schema=Verdict, max_tokens=50).parsed
            second = model.complete(
                f"Judge item {first.score + 10} after {i}.", schema=Verdict, max_tokens=50
            ).parsed
            return i, second.score

        return dict(r for r in run_concurrent(arc, range(3), progress=False))

    assert run(ws, arcs) == {0: 10, 1: 11, 2: 12}
    assert api.created == 2
    assert [len(api.lines[b]) for b in ("batch_1", "batch_2")] == [3, 3]
    assert all("after" in x["body"]["messages"][-1]["content"] for x in api.lines["batch_2"])


def test_a_call_from_a_thread_started_without_the_context_goes_into_the_batch(ws, openai_model):
    """A local proxy's request handlers run in threads started without a copy of the run
    context: their calls are deferred to the running batch all the same, never sent live."""
    api = OpenAIBatchApi(good)
    model = openai_model(api)

    def from_a_plain_thread():
        out = {}

        def ask() -> None:
            try:
                out["score"] = model.complete("Judge item 7.", schema=Verdict, max_tokens=50)
            except Deferred:
                out["deferred"] = True

        t = threading.Thread(target=ask)
        t.start()
        t.join()
        return out

    result = run(ws, from_a_plain_thread)
    assert result["score"].parsed.score == 7
    assert api.created == 1 and len(api.lines["batch_1"]) == 1
    assert [r["status"] for r in batch_calls(ws)] == ["ok"]


def test_a_server_without_the_batch_api_is_refused(ws, monkeypatch):
    api = OpenAIBatchApi(good, lists=False)  # asked whether it serves the API: 404
    model = get_model(
        "openai:local", workspace=ws, base_url="http://127.0.0.1:9/v1", http_client=api.client()
    )

    def many():
        def one(i):
            return model.complete(f"Judge item {i}.", schema=Verdict, max_tokens=50)

        return list(run_concurrent(one, range(40), concurrency=8, progress=False))

    with pytest.raises(FatalProviderError, match="does not serve the OpenAI Batch and Files API"):
        run(ws, many)
    import time

    time.sleep(0.3)  # workers that were starting when the run stopped never call live either
    assert [(r.method, r.url.path) for r in api.requests] == [("GET", "/v1/batches")]


# -- Anthropic ---------------------------------------------------------------------------------
def test_anthropic_message_batch_in_progress_ended_with_mixed_results(ws, anthropic_model):
    fates = {}

    def answer(cid, params):
        p = params["messages"][-1]["content"]
        fates[cid] = p
        if "item 1" in p:
            return ("error", 500, "Overloaded")
        if "item 2" in p:
            return ("expired",)
        if "item 3" in p:
            return ("cancelled",)
        return good(cid, params)

    api = AnthropicBatchApi(answer)
    model = anthropic_model(api)
    result = run(ws, lambda: judge_all(model, 5))
    assert result[0] == 0 and result[4] == 4
    assert "request errored" in result[1] and "Overloaded" in result[1]
    assert "request expired" in result[2] and "request cancelled" in result[3]
    (req,) = [json.loads(r.content) for r in api.requests if r.method == "POST"]
    params = req["requests"][0]["params"]
    assert params["tool_choice"]["type"] == "tool" and params["max_tokens"] == 50
    (b,) = ws.db["llm_batches"].rows
    assert (b["provider"], b["state"], b["request_count"]) == ("anthropic", "ended", 5)
    assert json.loads(b["counts"]) == {"total": 5, "done": 5, "failed": 3}
    st = sorted(r["status"] for r in ws.db["llm_batch_requests"].rows)
    assert st == ["cancelled", "errored", "expired", "ok", "ok"]
    assert ANTHROPIC_KEY not in all_text(ws)
    # a re-run retries the three failed ones only
    fates.clear()
    api.answer = good
    model = anthropic_model(api)
    assert run(ws, lambda: judge_all(model, 5)) == {i: i for i in range(5)}
    assert api.created == 2 and len(api.reqs["msgbatch_02"]) == 3


def test_anthropic_re_run_picks_up_a_batch_still_processing(ws, anthropic_model):
    api = AnthropicBatchApi(good, polls_until_ended=3)
    model = anthropic_model(api)
    with pytest.raises(BatchesPending):
        run(ws, lambda: judge_all(model, 2), wait=False)
    model = anthropic_model(api)
    assert run(ws, lambda: judge_all(model, 2)) == {0: 0, 1: 1}
    assert api.created == 1


def test_a_refused_structured_output_strategy_moves_on_in_a_follow_up_batch(ws, openai_model):
    def answer(cid, body):
        if body.get("response_format", {}).get("type") == "json_schema":
            return (
                "error",
                400,
                "Invalid parameter: 'response_format' of type 'json_schema' "
                "is not supported with this model.",
            )
        return good(cid, body)

    api = OpenAIBatchApi(answer)
    model = openai_model(api)
    assert run(ws, lambda: judge_all(model, 2)) == {0: 0, 1: 1}
    assert api.created == 2
    assert {x["body"]["response_format"]["type"] for x in api.lines["batch_2"]} == {"json_object"}
    assert model.strategy() == "json_object"
    assert [r["status"] for r in batch_calls(ws)].count("unsupported") == 2
