"""Wall and CPU time of the offline build of all 386 arcs (generate + checks + judges + export).

Run: .venv/bin/python benchmarks/offline_build.py [--split paper|all]
Goals: issue 11, the build itself under 5 s; issue 18, the cold main job (imports included, as
``make build`` runs it) under 3 s on 2 cores, judged on CPU time on a loaded machine. Times are
also printed as ratios to a bare interpreter start (``python -c pass``, CPU).

On a shared machine wall time grows with the load of other processes; CPU time of this process is
printed beside it, with the load average, so a slow reading can be told from a slow build. The
first build in a process also pays for importing pandas, scipy and statsmodels: measured apart and
printed beside the goal, which is about the build itself (as before issue 11).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def bare_start_cpu() -> float:
    """CPU seconds of a bare ``python -c pass`` (median of 5), the unit of the printed ratios."""
    cpus = []
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        _, _, ru = os.wait4(p.pid, 0)
        cpus.append(ru.ru_utime + ru.ru_stime)
    return sorted(cpus)[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="paper", help="paper (the 386 arcs the goals were set on) "
                                                     "or all (what `make build` builds: 506).")
    split = ap.parse_args().split
    bare = bare_start_cpu()
    t0, c0 = time.perf_counter(), time.process_time()
    from agentmemgate.pipeline import build
    import agentmemgate.stats, agentmemgate.exports.files  # noqa: F401,E401  (statsmodels, pandas)
    from statsmodels.stats import proportion  # noqa: F401
    imports = time.perf_counter() - t0, time.process_time() - c0
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        summary = build(Path(tmp) / "ws", Path(tmp) / "out", split=split, show_progress=False)
        cold, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        build(Path(tmp) / "ws", Path(tmp) / "out", split=split, show_progress=False)
        warm = time.perf_counter() - t0
    n = sum(summary.export.counts.values())
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"arcs: {n}")
    print(f"imports (pandas, scipy, statsmodels): {imports[0]:.2f} s wall, {imports[1]:.2f} s CPU")
    print(f"offline build, fresh workspace: {cold:.2f} s wall, {cold_cpu:.2f} s CPU ({n / cold:.0f} arcs/s)")
    print(f"offline build, re-run (resume, nothing to render): {warm:.2f} s")
    print(f"goal 5 s / fresh build: {5 / cold:.2f}x ({'OK' if cold < 5 else 'MISSED'}); with the "
          f"imports of a cold process: {imports[0] + cold:.2f} s wall")
    total_cpu = imports[1] + cold_cpu
    print(f"cold main job (imports + build), CPU: {total_cpu:.2f} s = {total_cpu / bare:.0f}x a bare "
          f"interpreter start ({1000 * bare:.0f} ms); imports {imports[1] / total_cpu:.0%} of it; "
          f"issue 18 goal 3 s: {'OK' if total_cpu < 3 else 'MISSED'}")


if __name__ == "__main__":
    main()
