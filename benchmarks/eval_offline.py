"""Wall time of ``amg eval run`` offline: every default system on all 386 arcs.

Builds the three splits offline in a temporary workspace (timed: the reference), then runs the
evaluation protocol with every default component system (offline rules) and the offline judge,
stores every trace and score, and re-runs it (everything already stored). Prints the times, the
ratio of the eval run to the build, and the goals: all systems on all arcs in < 10 s,
< 2 s (CPU time is printed beside wall time, as the machine is often loaded).

Run: .venv/bin/python benchmarks/eval_offline.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from agentmemgate.design import paper_design
from agentmemgate.evaluate import compute_report, run_eval
from agentmemgate.pipeline import build
from agentmemgate.workspace import Workspace

SPLITS = paper_design().resolve_splits("paper")  # the 386 arcs the goals were set on


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = build(Path(tmp) / "ws", Path(tmp) / "out", split="paper", show_progress=False)
        t_build = time.perf_counter() - t0
        ws = Workspace(Path(tmp) / "ws", create=False)
        t0, c0 = time.perf_counter(), time.process_time()
        s = run_eval(ws, list(SPLITS), show_progress=False)
        t_eval, c_eval = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        again = run_eval(ws, list(SPLITS), show_progress=False)
        t_rerun = time.perf_counter() - t0
        t0 = time.perf_counter()
        compute_report(ws)
        t_report = time.perf_counter() - t0
    n = sum(summary.export.counts.values())
    pairs = s.ran_now
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"offline build of {n} arcs: {t_build:.2f} s")
    print(
        f"eval run, {len(s.systems)} systems x {s.arcs} arcs = {pairs} traces "
        f"({s.component_calls} component calls): {t_eval:.2f} s wall, {c_eval:.2f} s CPU "
        f"({pairs / t_eval:.0f} traces/s)"
    )
    print(f"eval run / build time: {t_eval / t_build:.2f}")
    print(f"re-run (all {again.already_done} stored, {again.ran_now} run): {t_rerun:.2f} s")
    print(f"report (tables, bootstrap): {t_report:.2f} s")
    print(
        f"goal 10 s / measured: {10 / t_eval:.1f}x headroom "
        f"{'OK' if t_eval < 10 else 'BELOW GOAL'}; goal 2 s (CPU): "
        f"{'OK' if c_eval < 2 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
