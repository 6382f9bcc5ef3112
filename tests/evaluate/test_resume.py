"""kill -9 in the middle of an LLM-backed eval run: the re-run finishes the unfinished (system,
arc) pairs and repeats no model call that had been answered (the LLM layer's cache)."""

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

WORKER = Path(__file__).with_name("_resume_worker.py")


def test_kill_9_then_resume_repeats_no_answered_call(tmp_path):
    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=3, show_progress=False)
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
            if Workspace(ws.path).db["eval_traces"].count >= 2:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        else:
            raise AssertionError("no trace stored in time")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    db = Workspace(ws.path).db
    stored = db["eval_traces"].count
    assert 2 <= stored < 9
    answered = {hashlib.sha256(r["prompt"].encode()).hexdigest() for r in db["llm_cache"].rows}
    first = log.read_text().split()
    assert answered and set(first) >= answered

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
    assert not set(second) & answered  # no answered call was made again
    assert summary["already_done"] == stored and summary["ran_now"] == 9 - stored
    assert summary["failed"] == 0
    assert Workspace(ws.path).db["eval_traces"].count == 9
