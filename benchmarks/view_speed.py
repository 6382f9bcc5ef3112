"""How fast ``amg view`` renders, on a ``make build`` workspace and on a big synthetic one.

1. Builds the default workspace offline (``amg build``: 506 arcs) and runs ``amg eval run`` on it
   (9 systems: 4,554 traces).
2. Synthesizes a workspace of 10,000 arcs and 100,000 traces from it: arcs copied under new ids
   with their specs, checks and verdicts, and 10 systems' traces and scores (the 9 run above and
   a copy of one under another name), each trace naming the sha256 of its copied arc.
3. Renders pages with Streamlit's AppTest in a fresh process per workspace, each page once with
   empty caches: the first page a browser opens (Overview), an arc (``/arcs?arc=ID``), a trace of
   two systems side by side, a filtered arc list (a count of the report: it never loads every
   arc), and the Results page (the eval report is computed once, then cached).

Prints wall and CPU seconds per page and the ratio to the goals: the first page within 2 s, an
arc or trace page within 0.5 s. Run: .venv/bin/python benchmarks/view_speed.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = {"first page (Overview)": 2.0, "arc page": 0.5, "trace page (two systems)": 0.5}
N_ARCS, N_SYSTEMS = 10_000, 10


def make_build(ws: Path) -> None:
    from agentmemgate.design.stored import workspace_design
    from agentmemgate.evaluate import run_eval
    from agentmemgate.pipeline import build
    from agentmemgate.workspace import Workspace

    build(ws, ws.parent / "exports", split="all", show_progress=False)
    w = Workspace(ws, create=False)
    run_eval(w, list(workspace_design(w).split_names), show_progress=False)
    w.db.conn.close()


def _sha(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8") + b"\0").hexdigest()


def synthesize(src: Path, dest: Path, n_arcs: int = N_ARCS, n_systems: int = N_SYSTEMS) -> None:
    """``dest``: ``src``'s workspace with its arcs copied to ``n_arcs`` and a copy of its first
    gated system added until ``n_systems`` systems have a trace and a score on every arc."""
    dest.mkdir(parents=True)
    a, b = sqlite3.connect(src / "workspace.db"), sqlite3.connect(dest / "workspace.db")
    a.backup(b)
    a.close()
    db = b
    arcs = db.execute(
        "select id, split, generator, json, created_at from arcs order by rowid"
    ).fetchall()
    specs = {r[0]: r for r in db.execute("select * from specs")}
    checks = db.execute("select * from checks").fetchall()
    verdicts = db.execute("select * from judge_verdicts").fetchall()
    vcols = [c[1] for c in db.execute("pragma table_info(judge_verdicts)")]
    systems = db.execute("select run_key, name, info from eval_systems order by rowid").fetchall()
    extra = n_systems - len(systems)
    base = next(s for s in systems if json.loads(s[2]).get("gated"))
    for i in range(extra):
        info = json.loads(base[2])
        info["name"] = f"{base[1]}-copy{i}"
        run_key = hashlib.md5(f"{base[0]}:{i}".encode()).hexdigest()
        db.execute(
            "insert into eval_systems select ?, ?, ?, options, model, source_sha256, "
            "created_at, last_run_at, kind from eval_systems where run_key = ?",
            [run_key, info["name"], json.dumps(info), base[0]],
        )
        db.execute(
            "insert into eval_traces select ?, arc_id, ?, split, arc_sha256, trace, calls, "
            "user_messages, created_at from eval_traces where run_key = ?",
            [run_key, info["name"], base[0]],
        )
        db.execute(
            "insert into eval_scores select ?, arc_id, judge_key, ?, split, level, "
            "arc_sha256, score, created_at from eval_scores where run_key = ?",
            [run_key, info["name"], base[0]],
        )
    run_keys = [r[0] for r in db.execute("select run_key from eval_systems")]
    traces = {
        (r[0], r[1]): r
        for r in db.execute("select * from eval_traces where arc_id not like 'natural:%'")
    }
    scores = {
        (r[0], r[1]): r
        for r in db.execute("select * from eval_scores where arc_id not like 'natural:%'")
    }
    by_arc_checks: dict[str, list] = {}
    for c in checks:
        by_arc_checks.setdefault(c[0], []).append(c)
    by_arc_verdicts: dict[str, list] = {}
    item = vcols.index("item_id")
    for v in verdicts:
        by_arc_verdicts.setdefault(v[item], []).append(v)
    for copy in range(n_arcs // len(arcs) + 1):
        if copy == 0:
            continue
        rows = {
            "arcs": [],
            "specs": [],
            "checks": [],
            "judge_verdicts": [],
            "eval_traces": [],
            "eval_scores": [],
        }
        for k, (arc_id, split, gen, raw, created) in enumerate(arcs):
            if copy * len(arcs) + k >= n_arcs:
                break
            new = f"{arc_id}-c{copy}"
            new_raw = raw.replace(arc_id, new)
            sha = _sha(new_raw)
            rows["arcs"].append((new, split, gen, new_raw, created))
            s = specs[arc_id]
            rows["specs"].append((new, *s[1:5], s[5].replace(arc_id, new)))
            rows["checks"] += [(new, *c[1:]) for c in by_arc_checks.get(arc_id, [])]
            rows["judge_verdicts"] += [
                v[:item] + (new,) + v[item + 1 :] for v in by_arc_verdicts.get(arc_id, [])
            ]
            for rk in run_keys:
                t = traces.get((rk, arc_id))
                if t is not None:
                    rows["eval_traces"].append(
                        (rk, new, t[2], t[3], sha, t[5].replace(arc_id, new), *t[6:])
                    )
                sc = scores.get((rk, arc_id))
                if sc is not None:
                    rows["eval_scores"].append(
                        (
                            rk,
                            new,
                            sc[2],
                            sc[3],
                            sc[4],
                            sc[5],
                            sha,
                            sc[7].replace(arc_id, new),
                            sc[8],
                        )
                    )
        with db:
            for table, got in rows.items():
                if got:
                    db.executemany(
                        f"insert into {table} values ({','.join('?' * len(got[0]))})", got
                    )
    db.close()


_PROBE = r"""
import json, os, sys, time
from streamlit.testing.v1 import AppTest
os.environ["AMG_VIEW_WORKSPACE"] = sys.argv[1]
pages = json.loads(sys.argv[2])
out = {}
for label, page, params in pages:
    at = AppTest.from_string(f"from agentmemgate.view.app import main\nmain({page!r})",
                             default_timeout=600)
    for k, v in params.items():
        at.query_params[k] = v
    t, c = time.perf_counter(), time.process_time()
    at.run()
    out[label] = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "errors": [str(e.value)[:200] for e in at.exception] + [e.value for e in at.error],
                  "texts": [x.value for x in at.markdown][:12]}
print("RESULT " + json.dumps(out))
"""


def measure(ws: Path) -> dict:
    db = sqlite3.connect(ws / "workspace.db")
    arc = db.execute(
        "select arc_id from eval_traces where system = 'literal-gated' and "
        "split = 'core' order by rowid desc limit 1"
    ).fetchone()[0]
    db.close()
    pages = [
        ["first page (Overview)", "overview", {}],
        ["arc page", "arcs", {"arc": arc}],
        [
            "trace page (two systems)",
            "trace",
            {"arc": arc, "system": "literal-gated", "compare": "literal-ungated"},
        ],
        [
            "filtered arc list",
            "arcs",
            {
                "split": "core",
                "system": "literal-ungated",
                "measure": "end_contamination",
                "value": "yes",
            },
        ],
        ["Results (the eval report, computed once)", "results", {}],
        ["Results again (cached)", "results", {}],
    ]
    code = "import streamlit.testing.v1\n" + _PROBE  # Streamlit itself loaded before timing
    out = subprocess.run(
        [sys.executable, "-c", code, str(ws), json.dumps(pages)],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def report(name: str, ws: Path, got: dict) -> None:
    db = sqlite3.connect(ws / "workspace.db")
    n_arcs = db.execute("select count(*) from arcs").fetchone()[0]
    n_traces = db.execute(
        "select count(*) from eval_traces where arc_id not like 'natural:%'"
    ).fetchone()[0]
    db.close()
    size = (ws / "workspace.db").stat().st_size / 1e6
    print(f"\n{name}: {n_arcs} arcs, {n_traces} traces, {size:.0f} MB")
    for label, m in got.items():
        goal = GOALS.get(label)
        ratio = f"  {m['wall'] / goal:.2f} of the {goal:g} s goal" if goal else ""
        print(
            f"  {label:<42} {m['wall']:6.2f} s wall {m['cpu']:6.2f} s CPU{ratio}"
            + (f"  ERRORS: {m['errors']}" if m["errors"] else "")
        )
        if label.startswith("filtered"):
            print(f"    {next((t for t in m['texts'] if 'match' in t), '')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--keep", type=Path, help="build the workspaces here and keep them (reused when present)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        small, big = root / "build" / "ws", root / "synthetic" / "ws"
        if not (small / "workspace.db").is_file():
            t = time.perf_counter()
            make_build(small)
            print(f"built and evaluated the default workspace in {time.perf_counter() - t:.1f} s")
        if not (big / "workspace.db").is_file():
            t = time.perf_counter()
            synthesize(small, big)
            print(f"synthesized the big workspace in {time.perf_counter() - t:.1f} s")
        print(
            f"cores: {os.cpu_count()}, load average: "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        for name, ws in (("make build + amg eval run", small), ("synthetic", big)):
            report(name, ws, measure(ws))


if __name__ == "__main__":
    main()
