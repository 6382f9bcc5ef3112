"""Wall and CPU time of the offline build of all 386 arcs (generate + checks + judges + export).

Run: .venv/bin/python benchmarks/offline_build.py [--split paper|all] [--repeat N]
Goals: the build itself under 5 s; the cold main job under 3 s of CPU on 2
cores: the whole ``amg build`` command in a fresh process, imports included, as ``make build``
runs it (``.venv/bin/amg build --split SPLIT --workspace TMP --out TMP``; user + system CPU of that
process, median of ``--repeat`` runs). Times are also printed as ratios to a bare interpreter start
(``python -c pass``, CPU).

On a shared machine wall time grows with the load of other processes, and CPU time too (shared
caches and cores: here 20-30% more at load average 2-3, and +-15% from one quarter hour to the
next on this VM at the same load): the load average is printed, and runs of the code before and
after a change are best compared interleaved. The in-process lines split the job in two: importing
pandas, scipy and statsmodels (what the card's Wilson intervals and the Parquet file need; the
command imports them inside the build, the in-process figure before it), and the build itself.
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


def command_run(split: str) -> tuple[float, float]:
    """(CPU, wall) of ``amg build --split SPLIT`` in a fresh process and a fresh workspace."""
    amg = Path(sys.executable).with_name("amg")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [
                str(amg),
                "build",
                "--split",
                split,
                "--workspace",
                f"{tmp}/ws",
                "--out",
                f"{tmp}/out",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"Error: amg build --split {split} exited {os.waitstatus_to_exitcode(status)}")
    return ru.ru_utime + ru.ru_stime, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--split",
        default="paper",
        help="paper (the 386 arcs the goals were set on) or all (what `make build` builds: 506).",
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs of the whole command (median)")
    args = ap.parse_args()
    split = args.split
    bare = bare_start_cpu()
    runs = [command_run(split) for _ in range(max(1, args.repeat))]
    # The command imports these inside ``build``, which first asks for one OpenBLAS thread
    # (``pipeline._one_blas_thread``); the in-process figures import them the same way.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    t0, c0 = time.perf_counter(), time.process_time()
    from statsmodels.stats import proportion  # noqa: F401

    import agentmemgate.exports.files
    import agentmemgate.stats  # noqa: F401  (statsmodels, pandas)
    from agentmemgate.pipeline import build

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
    print(
        f"offline build, fresh workspace: {cold:.2f} s wall, {cold_cpu:.2f} s CPU ({n / cold:.0f} arcs/s)"
    )
    print(f"offline build, re-run (resume, nothing to render): {warm:.2f} s")
    print(
        f"goal 5 s / fresh build: {5 / cold:.2f}x ({'OK' if cold < 5 else 'MISSED'}); with the "
        f"imports of a cold process: {imports[0] + cold:.2f} s wall"
    )
    total_cpu = imports[1] + cold_cpu
    print(
        f"in-process imports + build, CPU: {total_cpu:.2f} s (the command adds its CLI); imports "
        f"{imports[1] / total_cpu:.0%} of it"
    )
    # The timeline consistency check (structure.consistency) on the same arcs, alone: its share of
    # the fresh build's CPU (goal: under 10%).
    from agentmemgate.design import paper_design
    from agentmemgate.generate import get_renderer, plan_split
    from agentmemgate.validate.consistency import builtin_rules, consistency

    design = paper_design()
    renderer = get_renderer("offline", design=design)
    arcs = [
        renderer.render(s)
        for name in design.resolve_splits(split)
        for s in plan_split(name, 0, design=design)
    ]
    builtin_rules()  # compiled once per process, as in the build
    from agentmemgate.validate import consistency as _check

    times = []
    for _ in range(5):  # cold each time (the build has read these arcs already); the median
        _check._scan.cache_clear()
        _check._split.cache_clear()
        c0 = time.process_time()
        for arc in arcs:
            consistency(arc)
        times.append(time.process_time() - c0)
    check_cpu = sorted(times)[2]
    print(
        f"timeline consistency check on those {len(arcs)} arcs (cold, median of 5): {check_cpu:.2f} s CPU = "
        f"{check_cpu / cold_cpu:.1%} of the fresh build's CPU; goal under 10%: "
        f"{'OK' if check_cpu < 0.1 * cold_cpu else 'MISSED'}"
    )
    cpu = sorted(c for c, _ in runs)[len(runs) // 2]
    wall = sorted(w for _, w in runs)[len(runs) // 2]
    print(
        f"whole `amg build --split {split}` command, fresh process, {len(runs)} runs: CPU "
        + ", ".join(f"{c:.2f}" for c, _ in runs)
        + " s; wall "
        + ", ".join(f"{w:.2f}" for _, w in runs)
        + " s"
    )
    print(
        f"cold main job (the whole command), CPU median: {cpu:.2f} s = {cpu / bare:.0f}x a bare "
        f"interpreter start ({1000 * bare:.0f} ms); wall median {wall:.2f} s; goal 3 s: "
        f"{'OK' if cpu < 3 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
