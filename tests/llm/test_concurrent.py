"""run_concurrent: results as they finish, failures recorded, fatal errors stop the run."""

from __future__ import annotations

import threading
import time

import pytest

from agentmemgate.llm import CallFailed, Failed, FatalProviderError, get_model, run_concurrent


def test_runs_items_concurrently_and_yields_every_result(ws):
    model = get_model("scripted:slow", workspace=ws, delay=0.01)
    model.respond_with(lambda req: req.prompt.upper())
    together = threading.Barrier(4, timeout=10)  # passes only if 4 calls are in flight at once
    lock, active, peak = threading.Lock(), [0], [0]

    def work(p):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            if p in ("p0", "p1", "p2", "p3"):
                together.wait()
            return model.complete(p).text
        finally:
            with lock:
                active[0] -= 1

    out = list(
        run_concurrent(
            work,
            [f"p{i}" for i in range(16)],
            concurrency=4,
            description="demo",
            usage=model.usage,
            progress=False,
        )
    )
    assert sorted(out) == sorted(f"P{i}" for i in range(16))
    assert peak[0] == 4  # that many at once, never more than asked for
    assert model.usage.as_dict()["calls"] == 16


def test_call_failures_are_yielded_and_the_run_goes_on(ws):
    def work(i):
        if i == 2:
            raise CallFailed("model refused", kind="refusal")
        return i

    out = list(run_concurrent(work, range(5), concurrency=2, progress=False))
    failed = [r for r in out if isinstance(r, Failed)]
    assert sorted(r for r in out if not isinstance(r, Failed)) == [0, 1, 3, 4]
    assert failed == [Failed(item=2, error="model refused", kind="refusal")]


def test_a_fatal_error_stops_the_run_and_cancels_what_has_not_started():
    ran = []

    def work(i):
        ran.append(i)
        if i == 0:
            raise FatalProviderError("openai rejected the API key (HTTP 401): check OPENAI_API_KEY")
        time.sleep(0.05)
        return i

    with pytest.raises(FatalProviderError, match="rejected the API key"):
        list(run_concurrent(work, range(50), concurrency=2, progress=False))
    time.sleep(0.2)
    assert 0 in ran and len(ran) <= 2  # no worker starts a queued item after the fatal error


def test_after_a_fatal_error_no_new_call_starts_and_the_fatal_error_is_what_surfaces():
    started = threading.Barrier(3, timeout=5)  # items 0-2 are all in flight before 0 fails
    ran = []

    def work(i):
        ran.append(i)
        if i < 3:
            started.wait()
        if i == 0:
            raise FatalProviderError("cannot reach openai:x at 127.0.0.1:9 after 5 attempts")
        time.sleep(0.05)  # still busy when the fatal error happens
        return i

    with pytest.raises(FatalProviderError, match="cannot reach"):
        list(run_concurrent(work, range(40), concurrency=3, progress=False))
    time.sleep(0.2)  # a worker that took another item would have started it by now
    assert sorted(ran) == [0, 1, 2]


def test_stopping_early_lets_in_flight_calls_finish_into_the_cache(ws):
    model = get_model("scripted:early", workspace=ws, delay=0.1)
    model.respond_with(lambda req: "done " + req.prompt)
    prompts = [f"q{i}" for i in range(12)]
    gen = run_concurrent(lambda p: model.complete(p).text, prompts, concurrency=3, progress=False)
    next(gen)
    gen.close()
    asked = {r.prompt for r in model.history}
    assert 1 < len(asked) < 12
    assert all(model.is_cached(p) for p in asked)  # nothing answered was lost
    assert threading.active_count() < 5
