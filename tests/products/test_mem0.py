"""The real Mem0 (``mem0ai``) run by ``amg eval run --system mem0`` against the local mock
OpenAI-compatible server: Mem0's own prompts, parsing, Qdrant store and search, with every model
call it makes going through our LLM endpoint. What a user relies on: sessions in order with their
roles and dates, one namespace per arc, a probe after every session, answers stored and scored,
nothing of one arc retrieved for another, resume after kill -9, no model call on a re-run."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentmemgate.evaluate import EvalOptions
from agentmemgate.llm import ModelRef

if (
    importlib.util.find_spec("mem0") is None
):  # not imported here: the adapter turns telemetry off first
    pytest.skip(
        "mem0ai is not installed: pip install 'agentmemgate[mem0]'", allow_module_level=True
    )

from agentmemgate.evaluate import run_eval
from agentmemgate.evaluate.arcs import load_arcs
from agentmemgate.generate import generate, get_renderer
from agentmemgate.llm import FatalProviderError
from agentmemgate.memory.answering import SessionInput, SessionTurn
from agentmemgate.products.contract import AnsweringOptions
from agentmemgate.workspace import Workspace

from .mem0_responders import RESPONDERS, is_extraction, new_messages
from .mock_openai import MockHTTPError, MockOpenAI

WORKER = Path(__file__).with_name("_mem0_worker.py")
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


def chat_requests(mock, extraction=True):
    return [
        r
        for r in mock.requests
        if r.path == "/chat/completions" and is_extraction(r.chat) == extraction
    ]


def product_rows(ws):
    return [
        dict(r) for r in ws.db["eval_product_answers"].rows_where(order_by="arc_id, after_session")
    ]


def test_a_mem0_run_ingests_in_order_probes_every_session_scores_and_reruns_free(arcs_ws, mock):
    ws = arcs_ws
    arcs = {a.id: a for a, _ in load_arcs(ws, ["core"])}
    s = run_eval(
        ws,
        ["core"],
        ["mem0"],
        EvalOptions(model=ModelRef.parse(MODEL, base_url=mock.url), concurrency=2),
        show_progress=False,
    )
    assert (s.ran_now, s.failed, s.already_done) == (len(arcs), 0, 0)

    # Every session went to Mem0 once, its turns in order with their roles.
    sent = [new_messages(r.chat) for r in chat_requests(mock)]
    for arc in arcs.values():
        positions = []
        for session in arc.sessions:
            turns = [(t.role, t.text) for t in session.turns]
            hits = [i for i, m in enumerate(sent) if m == turns]
            assert len(hits) == 1, f"session of {arc.id} sent {len(hits)} times"
            positions.append(hits[0])
        assert positions == sorted(positions)  # session by session, in order
    assert len(sent) == sum(len(a.sessions) for a in arcs.values())

    # A probe after every session, one namespace per arc (never the arc id), answers stored.
    rows = product_rows(ws)
    by_arc: dict[str, list[dict]] = {}
    for r in rows:
        by_arc.setdefault(r["arc_id"], []).append(r)
    assert set(by_arc) == set(arcs)
    namespaces = set()
    for arc_id, rs in by_arc.items():
        arc = arcs[arc_id]
        assert [r["after_session"] for r in rs] == list(range(len(arc.sessions)))
        assert [r["date"] for r in rs] == [x.date.isoformat() for x in arc.sessions]
        assert len({r["namespace"] for r in rs}) == 1
        ns = rs[0]["namespace"]
        assert arc_id not in ns
        namespaces.add(ns)
        # What was retrieved after session i: memories of this arc's sessions <= i only, each
        # dated with the session it came from (Mem0's created_at).
        user_turns = {t.text: x for x in arc.sessions for t in x.turns if t.role == "user"}
        for r in rs:
            retrieved = json.loads(r["retrieved"])
            assert retrieved and r["answer"] != "I don't know."
            for m in retrieved:
                said = m["text"].removeprefix("User said: ")
                assert said in user_turns, f"retrieved {said!r}, not a turn of {arc_id}"
                session = user_turns[said]
                assert m["meta"]["created_at"].startswith(session.date.isoformat())
                assert m["meta"]["session_date"] == session.date.isoformat()
                assert session.date.isoformat() <= r["date"]
            assert r["answer"] == retrieved[0]["text"]  # the mock answers with the top memory
    assert len(namespaces) == len(arcs)

    # The whole store is read after every session (Memory.get_all): every memory of the
    # sessions so far, one per user turn, and nothing of another arc.
    for arc_id, rs in by_arc.items():
        arc = arcs[arc_id]
        for r in rs:
            held = [m["memory"].removeprefix("User said: ") for m in json.loads(r["store"])]
            so_far = [
                t.text for x in arc.sessions[: r["after_session"] + 1] for t in x.turns
                if t.role == "user"
            ]  # fmt: skip
            assert sorted(held) == sorted(so_far)

    # Scored from the store too: at-risk arcs get store contamination and the agreement of the
    # store with the answers; the reasons say which session's store held what.
    name = f"mem0@{MODEL}"
    scores = [json.loads(r["score"]) for r in ws.db["eval_scores"].rows_where("system = ?", [name])]
    at_risk = [sc for sc in scores if sc["outcome"] in ("abandoned", "open")]
    assert at_risk and all(
        {"store_pending_contamination", "store_end_contamination", "store_answer_agreement"}
        <= set(sc["values"])
        for sc in at_risk
    )
    assert all(
        "store_pending_contamination" not in sc["values"] for sc in scores if sc not in at_risk
    )
    # amg eval show prints the store beside the answer, record by record, read by its reader
    from agentmemgate.evaluate import show_arc

    shown = show_arc(ws, at_risk[0]["arc_id"], name)
    assert "Store after session 0 (" in shown and "read by mem0 store_cues.v1" in shown
    assert "store_pending_contamination: " in shown

    # Scored and judged like any answer set; every call logged with its purpose.
    name = f"mem0@{MODEL}"
    assert s.names == [name]
    assert ws.db["eval_scores"].count_where("system = ?", [name]) == len(arcs)
    verdicts = [r["verdict"] for r in ws.db["eval_answers"].rows_where("name = ?", [name])]
    assert len(verdicts) == len(rows) and all(verdicts)
    purposes = {r["purpose"] for r in ws.db["llm_calls"].rows}
    assert {"product.mem0.chat", "product.mem0.embed", "products.answer"} <= purposes
    assert not any((ws.path / "products" / "mem0").iterdir())  # per-arc stores removed

    # A re-run of the finished run makes no model call at all.
    before = len(mock.requests)
    again = run_eval(
        ws,
        ["core"],
        ["mem0"],
        EvalOptions(model=ModelRef.parse(MODEL, base_url=mock.url), concurrency=2),
        show_progress=False,
    )
    assert (again.ran_now, again.already_done, again.failed) == (0, len(arcs), 0)
    assert len(mock.requests) == before


def test_arcs_in_one_process_are_isolated(tmp_path, mock):
    from agentmemgate.products.mem0 import build

    ws = Workspace(tmp_path / "ws")
    a = build(AnsweringOptions(model=MODEL, workspace=ws, base_url=mock.url))
    one, two = a.factory(), a.factory()
    one.begin("amg-one")
    two.begin("amg-two")
    try:
        day = dt.date(2024, 3, 1)
        one.ingest(
            SessionInput(
                index=0,
                date=day,
                turns=(SessionTurn(role="user", text="I live in Boston and my gym is Equinox."),),
            )
        )
        two.ingest(
            SessionInput(
                index=0,
                date=day,
                turns=(SessionTurn(role="user", text="Where can I buy running shoes?"),),
            )
        )
        got_one = one.answer("Which gym is the user a member of?", day)
        got_two = two.answer("Which gym is the user a member of?", day)
        # one extraction and one answer each, though both talk to one endpoint
        assert (one.calls, two.calls) == (2, 2)
    finally:
        one.close()
        two.close()
    assert [r.text for r in got_one.retrieved] == [
        "User said: I live in Boston and my gym is Equinox."
    ]
    assert all("Equinox" not in r.text for r in got_two.retrieved)
    assert "Equinox" not in got_two.answer
    assert a.provenance["library"] == "mem0ai" and a.provenance["dimensions"] == 64
    assert a.provenance["telemetry"].startswith("off")


def test_a_fatal_upstream_error_stops_the_run_with_one_line(arcs_ws, mock):
    def reject(req):
        if is_extraction(req):
            raise MockHTTPError(401, "Incorrect API key provided")
        return None

    mock.responders.insert(0, reject)
    with pytest.raises(FatalProviderError, match="rejected the API key"):
        run_eval(
            arcs_ws,
            ["core"],
            ["mem0"],
            EvalOptions(model=ModelRef.parse(MODEL, base_url=mock.url), concurrency=1),
            show_progress=False,
        )
    assert len(chat_requests(mock)) == 1  # the product got the error at once: no retries


@pytest.mark.slow
def test_kill_9_mid_arc_then_resume_rebuilds_that_arc_and_keeps_finished_ones(arcs_ws):
    ws = arcs_ws
    arcs = load_arcs(ws, ["core"])
    total_sessions = sum(len(a.sessions) for a, _ in arcs)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with MockOpenAI(list(RESPONDERS), dim=64, latency=0.08) as mock:
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(ws.path), mock.url],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 120
        try:
            while time.time() < deadline:  # an arc is stored and the next one has begun
                db = Workspace(ws.path).db
                if "eval_product_answers" in db.table_names():
                    stored = db["eval_product_answers"].count
                    cached = db["llm_cache"].count_where("purpose = 'product.mem0.chat'")
                    if stored and cached > stored:
                        break
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.02)
            else:
                raise AssertionError("no arc stored in time")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        db = Workspace(ws.path).db
        finished = {r["arc_id"]: r["namespace"] for r in db["eval_product_answers"].rows}
        assert 1 <= len(finished) < len(arcs)
        cached_bodies = {
            r["prompt"] for r in db["llm_cache"].rows_where("purpose = 'product.mem0.chat'")
        }
        left = [d for d in (ws.path / "products" / "mem0").iterdir()]
        assert left  # the killed arc's store is still on disk
        first_run = len(mock.requests)

        out = subprocess.run(
            [sys.executable, str(WORKER), str(ws.path), mock.url],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        rerun = mock.requests[first_run:]
    assert summary["already_done"] == len(finished)
    assert summary["ran_now"] == len(arcs) - len(finished) and summary["failed"] == 0
    db = Workspace(ws.path).db
    after = {}
    for r in db["eval_product_answers"].rows:
        after.setdefault(r["arc_id"], r["namespace"])
    assert len(after) == len(arcs)
    assert all(after[a] == ns for a, ns in finished.items())  # finished arcs not redone
    # The killed arc was rebuilt from scratch, and the cache answered every call made before.
    resent = [
        r
        for r in rerun
        if r.path == "/chat/completions"
        and json.dumps(
            {k: v for k, v in r.body.items() if k != "model"}, ensure_ascii=False, sort_keys=True
        )
        in cached_bodies
    ]
    assert resent == []
    extraction_rerun = [r for r in rerun if r.path == "/chat/completions" and is_extraction(r.chat)]
    assert len(extraction_rerun) <= total_sessions - len(cached_bodies)
    assert not any((ws.path / "products" / "mem0").iterdir())  # the killed store was swept
