"""--batch through a gateway: a server at --base-url is asked whether it serves the OpenAI Batch
and Files API (``GET /v1/batches?limit=1``, once per server and process, never again for a server
the workspace has batched through), used when it does and refused in one line, before anything
is stored, when it does not. Real HTTP on 127.0.0.1 through the SDK's own default client."""

from __future__ import annotations

import httpx2
import pytest
from pydantic import BaseModel
from reference_drafts import reference_responder
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import FatalProviderError, Request, get_model, run_concurrent
from agentmemgate.llm.batch import run_batched
from agentmemgate.llm.openai_batch import forget_servers
from agentmemgate.workspace import Workspace

from .batch_fakes import LocalServer, OpenAIBatchApi

runner = CliRunner()


class Verdict(BaseModel):
    label: str
    score: int


def good(cid: str, body: dict) -> dict:
    """Answers 'item N' with score N; an arc prompt with its reference draft."""
    prompt = body["messages"][-1]["content"]
    if "item " in prompt:
        return {"label": "ok", "score": int(prompt.split("item ")[1].split(".")[0])}
    return reference_responder(Request(prompt=prompt))


def no_batch_api(request: httpx2.Request) -> httpx2.Response:
    """A server without the API (vLLM, Ollama, llama.cpp): 404 for every route but chat."""
    return httpx2.Response(404, json={"detail": "Not Found"})


def judge_all(model, n: int) -> dict[int, int]:
    def one(i):
        return i, model.complete(f"Judge item {i}.", schema=Verdict, max_tokens=50).parsed.score

    return dict(run_concurrent(one, range(n), concurrency=3, progress=False))


def test_a_gateway_that_serves_the_batch_api_gets_the_batch(ws):
    api = OpenAIBatchApi(good)
    with LocalServer(api.handler) as url:
        model = get_model("openai:gpt-test", workspace=ws, base_url=url)
        model.check_batch_api()
        result = run_batched(ws, lambda: judge_all(model, 4), poll_interval=0, show_progress=False)
    assert result == {i: i for i in range(4)}
    assert api.created == 1 and len(api.lines["batch_1"]) == 4
    assert not [r for r in api.requests if r.url.path.endswith("/chat/completions")]
    (b,) = ws.db["llm_batches"].rows
    assert b["endpoint"] == url and b["collected_at"]


def test_the_server_is_asked_once_per_process(ws):
    api = OpenAIBatchApi(good)
    local = LocalServer(api.handler)
    with local as url:
        for spec in ("openai:gpt-test", "openai:gpt-test", "openai:other"):
            get_model(spec, workspace=ws, base_url=url).check_batch_api()
    assert local.probes() == 1 and local.requests == [("GET", "/v1/batches?limit=1")]


def test_a_server_without_the_api_is_refused_in_one_line(ws):
    local = LocalServer(no_batch_api)
    with local as url:
        model = get_model("openai:smollm2", workspace=ws, base_url=url)
        with pytest.raises(FatalProviderError) as e:
            model.check_batch_api()
        assert model.batch_api() is None
    port = url.split(":")[2].split("/")[0]
    assert str(e.value) == (
        f"--batch: openai:smollm2 at 127.0.0.1:{port} does not serve the OpenAI Batch and Files "
        f"API (GET {url}/batches?limit=1 answered HTTP 404): run without --batch, or batch "
        "through a gateway that serves it (e.g. a LiteLLM proxy)"
    )
    assert local.requests == [("GET", "/v1/batches?limit=1")]  # the probe, nothing else


@pytest.mark.parametrize(
    "reply, why",
    [
        (
            httpx2.Response(401, json={"error": {"message": "no key"}}),
            "answered HTTP 401 (the server refused the key: set OPENAI_API_KEY)",
        ),
        (
            httpx2.Response(200, text="<html>a web page</html>"),
            "did not answer with a list of batches",
        ),
    ],
)
def test_what_the_refusal_says_when_the_server_answers_otherwise(ws, reply, why):
    with LocalServer(lambda request: reply) as url:
        with pytest.raises(FatalProviderError, match="does not serve the OpenAI Batch"):
            get_model("openai:m", workspace=ws, base_url=url).check_batch_api()
        with pytest.raises(FatalProviderError) as e:
            get_model("openai:m", workspace=ws, base_url=url).check_batch_api()
    assert why in str(e.value)


def test_a_server_that_is_not_there_is_refused():
    with LocalServer(no_batch_api) as url:
        pass  # the port is closed again
    with pytest.raises(
        FatalProviderError, match=r"batches\?limit=1 got no answer: Connection refused\)"
    ):
        get_model("openai:m", base_url=url).check_batch_api()


def test_a_server_the_workspace_batched_through_is_not_asked_again(ws):
    api = OpenAIBatchApi(good)
    local = LocalServer(api.handler)
    with local as url:
        model = get_model("openai:gpt-test", workspace=ws, base_url=url)
        run_batched(ws, lambda: judge_all(model, 2), poll_interval=0, show_progress=False)
    assert local.probes() == 1
    forget_servers()  # a new process; the server is down now, and still known to serve batches
    again = get_model("openai:gpt-test", workspace=Workspace(ws.path, create=False), base_url=url)
    again.check_batch_api()
    assert local.probes() == 1


# -- the commands ------------------------------------------------------------------------------
def _build(tmp_path, url: str, *extra: str):
    return runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--generator",
            "openai:gpt-test",
            "--base-url",
            url,
            "--batch",
            "--no-progress",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],
    )


def test_build_batch_through_a_gateway(tmp_path, monkeypatch):
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    api = OpenAIBatchApi(good)
    local = LocalServer(api.handler)
    with local as url:
        dry = _build(tmp_path, url, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert api.created == 0 and local.probes() == 1
        r = _build(tmp_path, url)
    assert r.exit_code == 0, r.output
    assert "rendered now: 3, already done: 0, render failures: 0" in r.output
    assert api.created == 1 and len(api.lines["batch_1"]) == 3
    assert not [p for _, p in local.requests if p.endswith("/chat/completions")]
    assert local.probes() == 1  # asked once in this process
    assert len((tmp_path / "out" / "core" / "data.jsonl").read_text().splitlines()) == 3


def test_build_batch_at_a_server_without_the_api_stores_nothing(tmp_path):
    local = LocalServer(no_batch_api)
    with local as url:
        r = _build(tmp_path, url)
    assert r.exit_code == 1
    assert r.output.startswith("Error: --batch: openai:gpt-test at 127.0.0.1:")
    assert r.output.count("\n") == 1 and "answered HTTP 404" in r.output
    assert not (tmp_path / "ws").exists() and not (tmp_path / "out").exists()
    assert local.requests == [("GET", "/v1/batches?limit=1")]
