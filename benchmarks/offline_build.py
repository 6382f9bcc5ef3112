"""Wall time of the offline build of all 386 arcs (generate + checks + export).

Run: .venv/bin/python benchmarks/offline_build.py   (the issue's goal: well under a minute on 2 cores)
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from agentmemgate.pipeline import build


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = build(Path(tmp) / "ws", Path(tmp) / "out", split="all", show_progress=False)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        build(Path(tmp) / "ws", Path(tmp) / "out", split="all", show_progress=False)
        warm = time.perf_counter() - t0
    n = sum(summary.export.counts.values())
    print(f"cores: {os.cpu_count()}")
    print(f"arcs: {n}")
    print(f"offline build, fresh workspace: {cold:.2f} s ({n / cold:.0f} arcs/s)")
    print(f"offline build, re-run (resume, nothing to render): {warm:.2f} s")
    print(f"goal 60 s / measured: {60 / cold:.1f}x headroom")


if __name__ == "__main__":
    main()
