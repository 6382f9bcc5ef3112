"""Slow local servers: a server that answers one request at a time is detected and the
concurrency backs off; a client-side timeout is said to be one (through the real OpenAI SDK)."""

from __future__ import annotations

import json
import threading
import time

import httpx2
import pytest
from pydantic import BaseModel

from agentmemgate.llm import CallFailed, get_model, run_concurrent
from agentmemgate.progress import usage_text

from .llm_fakes import FakeApi, openai_ok

URL = "http://127.0.0.1:8080/v1"


class Answer(BaseModel):
    answer: str


def serial(service_s: float):
    """A server with one worker: requests wait for the ones ahead (llama-cpp-python's lock)."""
    lock = threading.Lock()
    peak, active = [0], [0]

    def handler(request):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            time.sleep(service_s)
            active[0] -= 1
            return openai_ok({"answer": "ok"})

    return handler, peak


def parallel(service_s: float):
    def handler(request):
        time.sleep(service_s)
        return openai_ok({"answer": "ok"})

    return handler


def model(ws, api, **options):
    return get_model(
        "openai:tiny",
        workspace=ws,
        base_url=URL,
        http_client=api.client(),
        structured_output="json_object",
        **options,
    )


def _ask_all(m, n, concurrency=4):
    return list(
        run_concurrent(
            lambda i: m.complete(f"q{i}", schema=Answer),
            range(n),
            concurrency=concurrency,
            progress=False,
        )
    )


def test_a_serial_server_is_detected_and_concurrency_lowered_to_one(ws, capsys):
    handler, _ = serial(0.15)  # long enough that all four leave before the first is back
    m = model(ws, FakeApi(handler))
    results = _ask_all(m, 16)
    assert len(results) == 16 and all(r.parsed.answer == "ok" for r in results)
    assert m.throttle.limit == 1
    err = capsys.readouterr().err
    assert "answers one request at a time" in err and "lowering concurrency to 1" in err


def test_a_parallel_server_keeps_its_concurrency(ws, capsys):
    m = model(ws, FakeApi(parallel(0.08)))
    _ask_all(m, 16)
    assert m.throttle.limit is None
    assert "one request at a time" not in capsys.readouterr().err


def test_after_backing_off_only_one_request_is_in_flight(ws):
    handler, peak = serial(0.05)
    m = model(ws, FakeApi(handler))
    m.throttle.limit = 1  # as after a detection
    _ask_all(m, 6)
    assert peak[0] == 1


def test_a_queued_request_that_times_out_lowers_concurrency_and_is_not_a_model_failure(ws, capsys):
    started = threading.Event()

    def handler(request):
        # the first request holds the server; the one queued behind it times out client-side
        if not started.is_set():
            started.set()
            time.sleep(0.3)
            return openai_ok({"answer": "ok"})
        time.sleep(0.2)
        raise httpx2.ReadTimeout("timed out")

    m = model(ws, FakeApi(handler), timeout=0.15, max_retries=1)
    results = _ask_all(m, 2, concurrency=2)
    failed = [r for r in results if not hasattr(r, "parsed")]
    assert len(failed) == 1 and failed[0].kind == "timeout"
    assert "client-side timeout of 0.15 s" in failed[0].error
    assert "other request(s) were in flight" in failed[0].error
    assert "not a model failure" in failed[0].error
    assert m.throttle.limit == 1
    assert "lowering concurrency to 1" in capsys.readouterr().err


def test_a_lone_timeout_says_to_raise_the_timeout(ws, capsys):
    def handler(request):
        time.sleep(0.12)
        raise httpx2.ReadTimeout("timed out")

    m = model(ws, FakeApi(handler), timeout=0.1, max_retries=1)
    with pytest.raises(CallFailed) as e:
        m.complete("q", schema=Answer)
    assert e.value.kind == "timeout" and "raise --timeout" in str(e.value)
    assert m.throttle.limit is None  # nothing was queued: concurrency is not the problem
    assert "with no other request in flight" in capsys.readouterr().err
    assert [c["status"] for c in ws.db["llm_calls"].rows] == ["no_response", "timeout"]


def test_progress_shows_calls_in_flight():
    assert usage_text({"calls": 3, "in_flight": 4, "cache_hits": 1}, 0) == (
        "failures 0  calls 3 done, 4 in flight  cache hits 1"
    )
    assert "in flight" not in usage_text({"calls": 3, "in_flight": 0}, 0)


def test_usage_counts_calls_in_flight_while_they_wait(ws):
    gate = threading.Event()

    def handler(request):
        gate.wait(5)
        return openai_ok({"answer": "ok"})

    m = model(ws, FakeApi(handler))
    t = threading.Thread(target=lambda: m.complete("q", schema=Answer))
    t.start()
    deadline = time.monotonic() + 5
    while m.usage.live()["in_flight"] != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert m.usage.live()["in_flight"] == 1
    gate.set()
    t.join()
    assert m.usage.live()["in_flight"] == 0 and m.usage.calls == 1


def test_a_parallel_server_with_uneven_answers_is_probed_and_keeps_its_concurrency(ws, capsys):
    def handler(request):
        prompt = json.loads(request.content)["messages"][-1]["content"]
        first = {"q0": 0.05, "q1": 0.1, "q2": 0.15, "q3": 0.2}  # a spread-out first burst
        time.sleep(first.get(prompt.split("\n")[0], 0.12))
        return openai_ok({"answer": "ok"})

    m = model(ws, FakeApi(handler))
    _ask_all(m, 16)
    assert m.throttle.limit is None and m.throttle._decided
    assert "one request at a time" not in capsys.readouterr().err


def test_a_serial_server_is_detected_after_it_refused_the_first_strategy(ws, capsys):
    """Seen with llama-cpp-python: the refused json_schema requests come back at once, and the
    json_object retries that follow must still be judged as one burst."""
    lock, refused = threading.Lock(), []

    def handler(request):
        if (json.loads(request.content).get("response_format") or {}).get("type") == "json_schema":
            refused.append(1)
            if len(refused) > 1:
                time.sleep(0.03)  # the first refusal's retry leaves before the others are back
            return httpx2.Response(
                500, json={"error": {"message": "('body', 'response_format', 'type')"}}
            )
        with lock:
            time.sleep(0.15)
            return openai_ok({"answer": "ok"})

    m = get_model("openai:tiny", workspace=ws, base_url=URL, http_client=FakeApi(handler).client())
    _ask_all(m, 16)
    assert m.strategy() == "json_object" and m.throttle.limit == 1
    assert "answers one request at a time" in capsys.readouterr().err
