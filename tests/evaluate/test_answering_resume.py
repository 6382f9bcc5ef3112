"""kill -9 in the middle of an answering system's run: the re-run rebuilds the unfinished arcs
from their first session (the cache answers every call already made), never redoes a finished
arc, and a re-run of the finished run makes no model call."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

WORKER = Path(__file__).with_name("_answering_worker.py")


def test_kill_9_mid_arc_then_resume(tmp_path):
    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=3, show_progress=False)
    n_arcs = ws.db["arcs"].count
    log = tmp_path / "requests.log"
    tests = Path(__file__).resolve().parents[1]  # the worker registers the scripted model
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(ws.path), str(log), "0.15"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            if Workspace(ws.path).db["eval_scores"].count >= 2:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        else:
            raise AssertionError("no arc stored in time")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    db = Workspace(ws.path).db
    finished = {r["arc_id"] for r in db["eval_scores"].rows}
    assert 2 <= len(finished) < n_arcs
    # every stored arc has all its sessions; no half arc was stored
    for arc_id, n in db.execute(
        "select arc_id, count(*) from eval_product_answers group by arc_id"
    ):
        assert arc_id in finished
    answered = {hashlib.sha256(r["prompt"].encode()).hexdigest() for r in db["llm_cache"].rows}
    first = log.read_text().split()
    begun_before = {r[0] for r in db.execute("select distinct namespace from eval_product_answers")}

    out = subprocess.run(
        [sys.executable, str(WORKER), str(ws.path), str(log), "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    second = log.read_text().split()[len(first) :]
    assert not set(second) & answered  # the cache answered every call already made
    assert summary["already_done"] == len(finished) and summary["ran_now"] == n_arcs - len(finished)
    assert summary["failed"] == 0
    db = Workspace(ws.path).db
    assert db["eval_scores"].count == n_arcs
    # finished arcs were not redone: their namespaces are unchanged
    kept = {
        r[0]
        for r in db.execute(
            "select distinct namespace from eval_product_answers where "
            "arc_id in (%s)" % ",".join("?" * len(finished)),
            list(finished),
        )
    }
    assert kept == begun_before

    third = subprocess.run(
        [sys.executable, str(WORKER), str(ws.path), str(log), "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(third.stdout.strip().splitlines()[-1])["ran_now"] == 0
    assert len(log.read_text().split()) == len(first) + len(second)  # 0 model calls
