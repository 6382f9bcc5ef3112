"""The real LangMem (``langmem``) with LangGraph's in-memory store, run by ``amg eval run --system
langmem`` against the local mock OpenAI-compatible server: LangMem's own prompts and trustcall
tool calls, its store and search, every model call through our LLM endpoint. What a user relies
on: each session goes in once and in order, one namespace per arc, a probe after every session,
the store read after every session, answers stored and scored, no model call on a re-run."""

from __future__ import annotations

import importlib.util
import json

import pytest

from agentmemgate.evaluate import EvalOptions
from agentmemgate.llm import ModelRef

if importlib.util.find_spec("langmem") is None:
    pytest.skip(
        "langmem is not installed: pip install 'agentmemgate[langmem]'", allow_module_level=True
    )

from agentmemgate.evaluate import run_eval
from agentmemgate.evaluate.arcs import load_arcs
from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

from .langmem_responders import RESPONDERS, is_extraction, user_turns
from .mock_openai import MockOpenAI

MODEL = "openai:mock-model"


@pytest.fixture
def mock():
    with MockOpenAI(list(RESPONDERS), dim=64) as server:
        yield server


@pytest.fixture
def arcs_ws(tmp_path):
    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    return ws


def test_a_langmem_run_ingests_in_order_reads_the_store_and_reruns_free(arcs_ws, mock):
    ws = arcs_ws
    arcs = {a.id: a for a, _ in load_arcs(ws, ["core"])}
    s = run_eval(
        ws,
        ["core"],
        ["langmem"],
        EvalOptions(model=ModelRef.parse(MODEL, base_url=mock.url), concurrency=2),
        show_progress=False,
    )
    assert (s.ran_now, s.failed) == (len(arcs), 0), s.failure_examples

    # Every session went to LangMem's memory manager once, its user turns in order.
    sent = [
        user_turns(r.chat)
        for r in mock.requests
        if r.path == "/chat/completions" and is_extraction(r.chat)
    ]
    for arc in arcs.values():
        positions = []
        for session in arc.sessions:
            users = [t.text for t in session.turns if t.role == "user"]
            hits = [i for i, m in enumerate(sent) if m == users]
            assert len(hits) == 1, f"a session of {arc.id} went in {len(hits)} times"
            positions.append(hits[0])
        assert positions == sorted(positions)
    assert len(sent) == sum(len(a.sessions) for a in arcs.values())

    # A probe after every session, one namespace per arc, what was retrieved its own only; the
    # store read after each session holds one memory per session so far.
    rows = list(ws.db["eval_product_answers"].rows)
    namespaces = set()
    for arc_id, arc in arcs.items():
        rs = sorted((r for r in rows if r["arc_id"] == arc_id), key=lambda r: r["after_session"])
        assert [r["after_session"] for r in rs] == list(range(len(arc.sessions)))
        assert len({r["namespace"] for r in rs}) == 1 and arc_id not in rs[0]["namespace"]
        namespaces.add(rs[0]["namespace"])
        said = {
            "User said: " + " ".join(t.text for t in x.turns if t.role == "user")
            for x in arc.sessions
        }
        for r in rs:
            held = [m["memory"] for m in json.loads(r["store"])]
            assert len(held) == r["after_session"] + 1 and set(held) <= said
            retrieved = json.loads(r["retrieved"])
            assert retrieved and {m["text"] for m in retrieved} <= said
            assert r["answer"] == retrieved[0]["text"]  # the mock answers with the top memory
    assert len(namespaces) == len(arcs)

    # Scored from the answers and the store; every call logged with its purpose.
    name = f"langmem@{MODEL}"
    scores = [json.loads(r["score"]) for r in ws.db["eval_scores"].rows_where("system = ?", [name])]
    assert len(scores) == len(arcs)
    assert all(
        "store_pending_contamination" in sc["values"]
        for sc in scores
        if sc["outcome"] in ("abandoned", "open")
    )
    purposes = {r["purpose"] for r in ws.db["llm_calls"].rows}
    assert {"product.langmem.chat", "product.langmem.embed", "products.answer"} <= purposes
    prov = json.loads(next(ws.db["eval_systems"].rows_where("name = ?", [name]))["options"])
    assert prov["library"] == "langmem" and prov["tracing"].startswith("LangSmith off")

    # A re-run of the finished run makes no model call at all.
    before = len(mock.requests)
    again = run_eval(
        ws,
        ["core"],
        ["langmem"],
        EvalOptions(model=ModelRef.parse(MODEL, base_url=mock.url), concurrency=2),
        show_progress=False,
    )
    assert (again.ran_now, again.already_done) == (0, len(arcs))
    assert len(mock.requests) == before
