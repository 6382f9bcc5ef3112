"""Stage 1 survives kill -9: a real `amg mine hedges` subprocess is killed mid-file and the next run
resumes from its checkpoint (same result as an uninterrupted run, nothing scanned twice)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentmemgate.corpora import load_corpus, mine_hedges, source_key
from agentmemgate.workspace import Workspace

from .paths import LONGMEMEVAL

INSTANCES = 300


def _synthetic_longmemeval(path: Path, instances: int, sessions: int) -> None:
    """A LongMemEval-shaped file cycling the fixture's sessions; session ids are unique per
    instance (so every turn is scanned), except that every tenth instance repeats the previous
    one's sessions (so the resumed run must remember which sessions it has seen)."""
    pool = [s for c in load_corpus(LONGMEMEVAL) for s in c.sessions]
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for i in range(instances):
            tag = i - 1 if i % 10 == 9 else i
            picked = [pool[(tag + j) % len(pool)] for j in range(sessions)]
            f.write(
                ("," if i else "")
                + json.dumps(
                    {
                        "question_id": f"q{i}",
                        "question_type": "synthetic",
                        "question": "",
                        "answer": "",
                        "haystack_dates": [s.date for s in picked],
                        "haystack_session_ids": [
                            f"{s.session_id}#{tag}.{j}" for j, s in enumerate(picked)
                        ],
                        "haystack_sessions": [
                            [{"role": t.speaker, "content": t.text} for t in s.turns]
                            for s in picked
                        ],
                    }
                )
            )
        f.write("]")


def _checkpoint(db: Path) -> tuple[int, int]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            row = con.execute("select stage1_items, stage1_done from mine_sources").fetchone()
    except sqlite3.Error:
        return 0, 0
    return (row[0] or 0, row[1] or 0) if row else (0, 0)


@pytest.mark.slow
def test_killed_stage_1_resumes_from_its_checkpoint(tmp_path):
    src = tmp_path / "longmemeval_s_synthetic.json"
    _synthetic_longmemeval(src, INSTANCES, 6)
    ws_dir = tmp_path / "ws"
    cmd = [
        sys.executable,
        "-c",
        "from agentmemgate.cli import main; main()",
        "mine",
        "hedges",
        str(src),
        "--workspace",
        str(ws_dir),
        "--no-progress",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            done, finished = _checkpoint(ws_dir / "workspace.db")
            assert not finished and proc.poll() is None, "stage 1 ended before it could be killed"
            if done >= INSTANCES // 4:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    ws = Workspace(ws_dir, create=False)
    key = source_key(src)
    row = ws.db["mine_sources"].get(key)
    assert not row["stage1_done"] and 0 < row["stage1_items"] < INSTANCES
    before = dict(
        ws.db.execute("select id, rowid from mined_candidates where source_key = ?", [key])
    )
    # every stored candidate belongs to a checkpointed instance: nothing half-written survives
    assert {cid.split("/")[0].split(":")[1] for cid in before} <= {
        f"q{i}" for i in range(row["stage1_items"])
    }

    resumed = mine_hedges(ws, src)
    after = dict(
        ws.db.execute("select id, rowid from mined_candidates where source_key = ?", [key])
    )
    assert all(after[cid] == rowid for cid, rowid in before.items())  # kept, not redone

    fresh = mine_hedges(Workspace(tmp_path / "fresh"), src)
    assert resumed == fresh
    fresh_ids = {
        r[0] for r in Workspace(tmp_path / "fresh").db.execute("select id from mined_candidates")
    }
    assert set(after) == fresh_ids
    assert resumed.duplicate_sessions_skipped == fresh.duplicate_sessions_skipped > 0
