"""The hosted-product recipe's plug-in (docs/how-to/hosted-products.md): Mem0's platform through
mem0ai's own MemoryClient, its HTTP transport mocked with the platform's JSON (never the toolkit's
functions or the client's methods patched), run by the protocol end to end."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys
import uuid
from urllib.parse import parse_qs

import pytest

if importlib.util.find_spec("mem0") is None:
    pytest.skip(
        "mem0ai is not installed: pip install 'agentmemgate[mem0]'", allow_module_level=True
    )

import httpx

from agentmemgate.evaluate import compute_report, run_eval
from agentmemgate.evaluate.systems import answering_spec
from agentmemgate.generate import generate, get_renderer
from agentmemgate.llm import get_model
from agentmemgate.products import AnsweringOptions
from agentmemgate.workspace import Workspace

from .plugin_doubles import recipe

KEY = "m0-test-key-never-stored"


class Platform:
    """Mem0's platform as its API answers (the shapes mem0ai 2.2's MemoryClient reads): additions
    are queued and become memories once their event is looked up, one memory per user turn."""

    def __init__(self):
        self.memories: dict[str, list[dict]] = {}  # user id -> memories
        self.queued: dict[str, tuple[str, list[dict]]] = {}  # event id -> (user, memories)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path, body = request.url.path, json.loads(request.content or b"{}")
        if request.headers.get("authorization") != f"Token {KEY}":
            return httpx.Response(401, json={"detail": "Invalid API key"})
        if path == "/v1/ping/":
            return httpx.Response(200, json={"status": "ok", "org_id": "org_1",
                                             "project_id": "proj_1", "user_email": "dev@example.com"})  # fmt: skip
        if path == "/v3/memories/add/":
            user, when = body["user_id"], body.get("timestamp")
            made = [
                {"id": str(uuid.uuid4()), "memory": f"User said: {m['content']}", "user_id": user,
                 "created_at": dt.datetime.fromtimestamp(when, dt.UTC).isoformat(),
                 "metadata": body.get("metadata")}
                for m in body["messages"] if m["role"] == "user"
            ]  # fmt: skip
            event = str(uuid.uuid4())
            self.queued[event] = (user, made)
            return httpx.Response(200, json={"results": [{"message": "Memory processing has been "
                                             "queued for background execution", "status": "PENDING",
                                             "event_id": event}]})  # fmt: skip
        if m := re.fullmatch(r"/v1/event/([0-9a-f-]+)/", path):
            user, made = self.queued.pop(m.group(1))
            self.memories.setdefault(user, []).extend(made)
            return httpx.Response(200, json={"id": m.group(1), "status": "SUCCEEDED",
                                             "results": [{"id": x["id"], "event": "ADD",
                                                          "memory": x["memory"]} for x in made]})  # fmt: skip
        if path == "/v3/memories/search/":
            mine = self.memories.get(body["filters"]["user_id"], [])
            return httpx.Response(
                200, json={"results": [dict(x, score=0.5) for x in reversed(mine)]}
            )
        if path == "/v3/memories/":
            mine = self.memories.get(body["filters"]["user_id"], [])
            return httpx.Response(200, json={"count": len(mine), "next": None, "previous": None,
                                             "results": mine})  # fmt: skip
        if path == "/v1/memories/" and request.method == "DELETE":
            self.memories.pop(parse_qs(request.url.query.decode())["user_id"][0], None)
            return httpx.Response(200, json={"message": "Memories deleted successfully!"})
        return httpx.Response(404, json={"detail": f"no route {request.method} {path}"})


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    _, py = recipe()
    (tmp_path / "amg_mem0_platform.py").write_text(py, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MEM0_API_KEY", KEY)
    sys.modules.pop("amg_mem0_platform", None)
    import amg_mem0_platform

    yield amg_mem0_platform
    sys.modules.pop("amg_mem0_platform", None)


def test_the_recipes_plugin_runs_through_the_official_client(plugin, tmp_path):
    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    model = get_model("scripted:hosted", workspace=ws)
    model.respond_with(lambda req: "They use what the first memory says.")
    platform = Platform()
    options = AnsweringOptions(model="scripted:hosted", workspace=ws)

    def factory():
        return plugin.Mem0Platform(
            options, http=httpx.Client(transport=httpx.MockTransport(platform))
        )

    spec = answering_spec(factory, info=plugin.Mem0Platform.info, model="scripted:hosted")
    s = run_eval(ws, ["core"], [spec], show_progress=False)
    arcs = list(ws.arcs("core"))
    assert (s.ran_now, s.failed) == (len(arcs), 0), s.failure_examples

    rows = list(ws.db["eval_product_answers"].rows)
    users = {r["namespace"] for r in rows}
    assert len(users) == len(arcs)  # one platform user per conversation
    for r in rows:  # the store read after each session: every user turn so far, this arc's only
        arc = next(a for a in arcs if a.id == r["arc_id"])
        said = [f"User said: {t.text}" for x in arc.sessions[: r["after_session"] + 1]
                for t in x.turns if t.role == "user"]  # fmt: skip
        assert sorted(m["memory"] for m in json.loads(r["store"])) == sorted(said)
    adds = [q for q in platform.requests if q.url.path == "/v3/memories/add/"]
    assert len(adds) == sum(len(a.sessions) for a in arcs)  # one addition per session ...
    first = json.loads(adds[0].content)
    assert first["user_id"] in users and first["metadata"]["session_date"]
    # ... each waited for before the probe: no search ran while an addition was queued
    assert not platform.queued and not platform.memories  # and everything deleted at the end
    # scored from the answers and, read as Mem0 memories, from the platform's store
    r = compute_report(ws, ["core"])
    assert r.stat("mem0-platform@scripted:hosted", "core", "store_answer_agreement") is not None
    # the key went to the platform only
    assert KEY.encode() not in (ws.path / "workspace.db").read_bytes()


def test_without_a_key_the_plugin_says_what_to_set(plugin, monkeypatch, tmp_path):
    monkeypatch.delenv("MEM0_API_KEY")
    with pytest.raises(RuntimeError, match="MEM0_API_KEY"):
        plugin.Mem0Platform(
            AnsweringOptions(model="scripted:x", workspace=Workspace(tmp_path / "w"))
        )
