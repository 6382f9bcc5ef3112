"""Workspace size after mining a LongMemEval_s-sized file, as a ratio of the input size.

The goal: well under a quarter of the input. Until migration m009 every candidate
carried its turn and two context turns as text (about half the input on LongMemEval_s: the
assistant's long answers were copied for every user turn after them); now candidates refer to
turns stored once per source, compressed.

The input is synthesized the way benchmarks/prefilter_throughput.py does it: 500 questions x 48
sessions cycled from the real LongMemEval oracle sample (or the committed fixture), session ids
unique per question so every turn is scanned and stored as it would be in a real _s haystack
(about 47.7 sessions per question, ~115k tokens). The whole miner runs (stage 1, offline stage 2,
outcome linking) into a fresh workspace; the database is checkpointed (WAL folded in) before it is
measured. It also prints what the pre-m009 storage would have taken for the same candidates.

Run: .venv/bin/python benchmarks/miner_workspace_size.py [--instances 500] [--sessions 48]

Caveat printed with the result: oracle sessions are evidence sessions, dense in personal
statements, so more of their turns become candidates than in real _s filler chats; the ratio here
is an upper bound.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from prefilter_throughput import FIXTURE, REAL, synthesize, to_json

from agentmemgate.corpora import (
    Candidate,
    _store,
    mine_hedges,
    source_key,
)
from agentmemgate.workspace import Workspace


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def _table_bytes(db: Path) -> dict[str, int]:
    """Bytes per table and index (SQLite's dbstat, when this build has it)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("select name, sum(pgsize) from dbstat group by name").fetchall()
    except sqlite3.OperationalError:
        rows = []
    con.close()
    return dict(rows)


def _legacy_bytes(ws: Workspace, key: str) -> int:
    """What the pre-m009 rows (full Candidate JSON, texts inline) would hold for these candidates."""
    total = 0
    source = _store.SourceTexts(ws.db["mine_sources"].get(key)["path"], "longmemeval", key)
    cursor = ws.db.execute(
        f"select {_store.COLUMNS} from mined_candidates c where source_key = ? order by position",
        [key],
    )
    while rows := cursor.fetchmany(1000):
        for cand in _store.load(ws.db, key, rows, source):
            total += len(Candidate.model_dump_json(cand).encode("utf-8"))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--sessions", type=int, default=48)
    args = ap.parse_args()
    source = REAL if REAL.is_file() else FIXTURE
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longmemeval_s_synthetic.json"
        to_json(synthesize(source, args.instances, args.sessions), path)
        size = path.stat().st_size
        ws_dir = Path(tmp) / "ws"
        t0 = time.perf_counter()
        ws = Workspace(ws_dir)
        s = mine_hedges(ws, path)
        dt = time.perf_counter() - t0
        ws.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db = ws_dir / "workspace.db"
        wal = ws_dir / "workspace.db-wal"
        used = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        tables = _table_bytes(db)
        t1 = time.perf_counter()
        legacy = _legacy_bytes(ws, source_key(path))
        dt_read = time.perf_counter() - t1

    print(
        f"cores: {os.cpu_count()}; source: {source.name}; input: {args.instances} questions x "
        f"{args.sessions} sessions = {_mb(size)}"
    )
    print(
        f"mined in {dt:.0f} s: {s.turns_scanned:,} user turns, {s.prefilter_hits:,} candidates "
        f"({100 * s.prefilter_hits / max(1, s.turns_scanned):.1f}%), {s.hedges:,} kept by offline-rules"
    )
    print(f"workspace: {_mb(used)} = {used / size:.3f} of the input (goal: well under 0.25)")
    if tables:
        top = sorted(tables.items(), key=lambda kv: -kv[1])[:6]
        print("  largest: " + ", ".join(f"{name} {_mb(n)}" for name, n in top))
    print(
        f"reading every candidate back with its context (the export path, long context turns "
        f"from the file): {dt_read:.0f} s"
    )
    print(
        f"pre-m009 candidate rows would hold {_mb(legacy)} of JSON alone = {legacy / size:.3f} "
        f"of the input; ratio new/old = {used / max(1, legacy):.2f}"
    )
    print(
        "note: oracle sessions are evidence sessions, so the candidate share (and the ratio) "
        "is an upper bound for real _s haystacks"
    )


if __name__ == "__main__":
    main()
