"""The LLM layer served as a local OpenAI-compatible endpoint: a real openai SDK client (as a
product holds one) talks to it; upstream is the real SDK over an httpx2.MockTransport."""

from __future__ import annotations

import json
import threading

import httpx2
import openai
import pytest

from agentmemgate.llm import get_model
from agentmemgate.llm.serve import LLMEndpoint

from .llm_fakes import OPENAI_KEY, FakeApi, openai_error, openai_ok


def embeddings_ok(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.5]}
        for i, t in enumerate(body["input"])
    ]
    return httpx2.Response(
        200,
        json={
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 7, "total_tokens": 7},
        },
    )


@pytest.fixture
def upstream(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def make(api: FakeApi, **options):
        options.setdefault("max_retries", 0)
        return get_model("openai:gpt-test", workspace=ws, http_client=api.client(), **options)

    return make


def product_client(ep: LLMEndpoint, **kw) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=ep.url, api_key=ep.api_key, max_retries=kw.pop("max_retries", 0), **kw
    )


MESSAGES = [
    {"role": "system", "content": "Extract facts as JSON."},
    {"role": "user", "content": "I might move to Seattle."},
]


def test_chat_is_forwarded_cached_and_logged(ws, upstream):
    api = FakeApi(openai_ok('{"memory": []}', prompt_tokens=50, completion_tokens=5))
    model = upstream(api)
    with LLMEndpoint(model, purpose="product.test") as ep:
        client = product_client(ep)
        r1 = client.chat.completions.create(
            model="whatever-the-product-says",
            messages=MESSAGES,
            temperature=0.1,
            response_format={"type": "json_object"},
        )
        r2 = client.chat.completions.create(
            model="whatever-the-product-says",
            messages=MESSAGES,
            temperature=0.1,
            response_format={"type": "json_object"},
        )
        r3 = client.chat.completions.create(model="x", messages=MESSAGES, temperature=0.7)
    assert r3.choices[0].message.content
    assert r1.choices[0].message.content == r2.choices[0].message.content == '{"memory": []}'
    assert r1.usage.prompt_tokens == 50
    assert len(api.requests) == 2  # the repeat came from the cache; another temperature did not
    sent = api.bodies()[0]
    assert sent["model"] == "gpt-test"  # our model, not the product's name for it
    assert sent["messages"] == MESSAGES and sent["response_format"] == {"type": "json_object"}
    assert api.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    rows = list(ws.db["llm_calls"].rows_where(order_by="id"))
    assert [(r["purpose"], r["status"], r["input_tokens"]) for r in rows] == [
        ("product.test.chat", "ok", 50),
        ("product.test.chat", "ok", 50),
    ]
    u = model.usage.as_dict()
    assert (u["calls"], u["cache_hits"], u["input_tokens"]) == (2, 1, 100)


def test_the_cache_outlives_the_endpoint_a_rerun_makes_no_upstream_call(ws, upstream):
    api = FakeApi(openai_ok("hello"))
    with LLMEndpoint(upstream(api)) as ep:
        product_client(ep).chat.completions.create(model="m", messages=MESSAGES)
    with LLMEndpoint(upstream(api)) as ep:  # a new run: new port, new key, same workspace
        again = product_client(ep).chat.completions.create(model="m", messages=MESSAGES)
    assert again.choices[0].message.content == "hello"
    assert len(api.requests) == 1


def test_embeddings_are_cached_per_input(ws, upstream):
    api = FakeApi(embeddings_ok)
    model = upstream(api)
    with LLMEndpoint(model) as ep:
        client = product_client(ep)
        a = client.embeddings.create(model="m", input=["alpha", "be"], encoding_format="float")
        b = client.embeddings.create(model="m", input=["be", "gamma!"])  # SDK default: base64
        c = client.embeddings.create(model="m", input="alpha", encoding_format="float")
    assert [d.embedding for d in a.data] == [[5.0, 1.0, 0.5], [2.0, 1.0, 0.5]]
    assert [d.embedding for d in b.data] == [[2.0, 1.0, 0.5], [6.0, 1.0, 0.5]]
    assert c.data[0].embedding == [5.0, 1.0, 0.5]
    assert [body["input"] for body in api.bodies()] == [["alpha", "be"], ["gamma!"]]
    rows = list(ws.db["llm_calls"].rows_where(order_by="id"))
    assert [(r["purpose"], r["status"]) for r in rows] == [("product.embed", "ok")] * 2
    assert model.usage.as_dict()["cache_hits"] == 2


def test_an_upstream_error_reaches_the_product_as_http_error_and_is_recorded(ws, upstream):
    api = FakeApi(openai_error(500, "the GPU caught fire"))
    with LLMEndpoint(upstream(api)) as ep:
        client = product_client(ep, max_retries=3)
        with pytest.raises(openai.InternalServerError) as err:
            client.chat.completions.create(model="m", messages=MESSAGES)
        assert ep.fatal is None
    assert "GPU caught fire" in str(err.value)
    assert ep.requests["chat"] == 1  # x-should-retry: false, our SDK had retried already
    rows = list(ws.db["llm_calls"].rows_where(order_by="id"))
    assert [r["status"] for r in rows] == ["http_500"]
    assert ws.db["llm_cache"].count == 0  # failures are not cached


def test_a_fatal_upstream_error_stops_every_later_request_and_leaks_no_key(ws, upstream):
    api = FakeApi(openai_error(401, f"Incorrect API key provided: {OPENAI_KEY}"))
    with LLMEndpoint(upstream(api)) as ep:
        client = product_client(ep)
        for _ in range(2):
            with pytest.raises(openai.APIStatusError):
                client.chat.completions.create(model="m", messages=MESSAGES)
        assert "rejected the API key" in ep.fatal
        with pytest.raises(Exception, match="rejected the API key"):
            ep.raise_fatal()
    assert len(api.requests) == 1
    logged = json.dumps(list(ws.db["llm_calls"].rows)) + json.dumps(list(ws.db["llm_cache"].rows))
    assert OPENAI_KEY not in logged and OPENAI_KEY not in ep.fatal


def test_only_the_runs_key_is_accepted_and_bad_requests_are_400(ws, upstream):
    api = FakeApi(openai_ok("x"))
    with LLMEndpoint(upstream(api)) as ep:
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=ep.url, api_key="guess", max_retries=0).models.list()
        assert [m.id for m in product_client(ep).models.list().data] == ["gpt-test"]
        raw = httpx2.post(
            f"{ep.url}/chat/completions",
            content=b"{not json",
            headers={"Authorization": f"Bearer {ep.api_key}"},
        )
        assert raw.status_code == 400 and "not JSON" in raw.json()["error"]["message"]
        with pytest.raises(openai.BadRequestError, match="streaming"):
            product_client(ep).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert api.requests == []


def test_concurrent_products_share_the_endpoint_safely(ws, upstream):
    def echo(request: httpx2.Request) -> httpx2.Response:
        return openai_ok(json.loads(request.content)["messages"][-1]["content"].upper())

    api = FakeApi(echo)
    model = upstream(api)
    results: dict[int, str] = {}
    with LLMEndpoint(model) as ep:

        def product(i: int) -> None:
            client = product_client(ep)
            for j in range(5):
                r = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"arc {i} call {j}"}]
                )
                results[i * 10 + j] = r.choices[0].message.content

        threads = [threading.Thread(target=product, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {i * 10 + j: f"ARC {i} CALL {j}" for i in range(8) for j in range(5)}
    assert ws.db["llm_cache"].count == 40 and model.usage.as_dict()["calls"] == 40


def test_scripted_models_serve_chat_and_hashed_embeddings(ws):
    model = get_model("scripted:serve", workspace=ws)
    model.respond_with(lambda req: f"seen: {req.prompt} / {req.system}")
    with LLMEndpoint(model) as ep:
        client = product_client(ep)
        r = client.chat.completions.create(model="m", messages=MESSAGES)
        e = client.embeddings.create(
            model="m",
            input=["move to Seattle", "Seattle, move to", "grocery store"],
            encoding_format="float",
        )
    assert r.choices[0].message.content == "seen: I might move to Seattle. / Extract facts as JSON."
    v = [d.embedding for d in e.data]
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))
    assert len(v[0]) == 64 and dot(v[0], v[1]) == pytest.approx(1.0)
    assert dot(v[0], v[2]) < 0.5


def test_anthropic_models_refuse_with_one_line(ws, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = get_model("anthropic:claude-test", workspace=ws)
    with LLMEndpoint(model) as ep:
        with pytest.raises(openai.APIStatusError):
            product_client(ep).chat.completions.create(model="m", messages=MESSAGES)
        assert "cannot serve a product's chat calls" in ep.fatal


def test_token_level_embeddings_are_refused_with_the_fix(ws, upstream):
    def per_token(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            json={
                "object": "list",
                "model": "m",
                "data": [
                    {"object": "embedding", "index": 0, "embedding": [[0.1, 0.2], [0.3, 0.4]]}
                ],
            },
        )

    with LLMEndpoint(upstream(FakeApi(per_token))) as ep:
        with pytest.raises(openai.APIStatusError):
            product_client(ep).embeddings.create(
                model="m", input="two tokens", encoding_format="float"
            )
        assert "one vector per token" in ep.fatal
    assert ws.db["llm_cache"].count == 0


def test_a_product_retry_waits_for_the_call_under_way_instead_of_a_second_upstream_call(
    ws, upstream
):
    import time

    def slow(request: httpx2.Request) -> httpx2.Response:
        time.sleep(0.5)
        return openai_ok("slow answer")

    api = FakeApi(slow)
    with LLMEndpoint(upstream(api)) as ep:
        # the product's client times out and re-sends; the first request is still upstream
        impatient = product_client(ep, timeout=0.2, max_retries=0)
        with pytest.raises(openai.APITimeoutError):
            impatient.chat.completions.create(model="m", messages=MESSAGES)
        again = product_client(ep).chat.completions.create(model="m", messages=MESSAGES)
        time.sleep(0.1)
    assert again.choices[0].message.content == "slow answer"
    assert len(api.requests) == 1


def test_tagged_base_urls_count_each_products_requests_apart(ws):
    model = get_model("scripted:tags", workspace=ws)
    model.respond_with(lambda req: "ok")
    with LLMEndpoint(model) as ep:
        a = openai.OpenAI(base_url=ep.url_for("arc-a"), api_key=ep.api_key, max_retries=0)
        b = openai.OpenAI(base_url=ep.url_for("arc-b"), api_key=ep.api_key, max_retries=0)
        for i in range(3):
            a.chat.completions.create(model="m", messages=[{"role": "user", "content": f"a{i}"}])
        b.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
        b.embeddings.create(model="m", input="b", encoding_format="float")
        assert ep.requests_of("arc-a") == {"chat": 3}
        assert ep.requests_of("arc-b") == {"chat": 1, "embeddings": 1}
        assert ep.requests["chat"] == 4
        with pytest.raises(ValueError):
            ep.url_for("../x")
