"""Start-up cost of the ``amg`` command: ``amg --help``, ``amg <cmd> --help`` for every command, and
every command reaching its own work (a run that enters the command's body, imports what it needs
and stops at its first check: a missing workspace, an unknown split, a missing input file).

Each is run as a fresh process (the way a user runs it) ``--repeat`` times; printed: the median
CPU time of the process (user + system, from ``os.wait4``), the fastest wall time, and both as
ratios to a bare ``python -c pass``. On a loaded machine wall time grows with the other
processes' load; CPU time does not, so the goal is checked on CPU time (and wall is shown beside
it with the load average). Goal: every command reaches its work in under 0.3 s, and ``amg
--help`` within 6 times a bare start.

Processes run with Python's bytecode cache as an installed toolkit has it (``PYTHONDONTWRITEBYTECODE``
is dropped from their environment and the first, compiling run of each is not counted): a
machine that sets it recompiles every module of the CLI at each start, about twice the cost.

Run: .venv/bin/python benchmarks/cli_startup.py [--repeat 5] [--only help|work]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 0.3  # seconds per command, to its work

# Every command once, each stopped by the first check inside its body (never a usage error:
# the script fails if typer's "Try '... --help'" hint shows, since then the body never ran).
# {missing} is a workspace that does not exist, {tmp} an empty temporary folder.
WORK = [
    ["build", "--split", "nosuch", "--workspace", "{tmp}/ws-build", "--out", "{tmp}/out"],
    ["generate", "--split", "nosuch", "--workspace", "{tmp}/ws-gen"],
    ["export", "--workspace", "{missing}", "--out", "{tmp}/out"],
    ["annotate", "--workspace", "{missing}"],
    ["classify", "--statements", "s", "--workspace", "{missing}"],
    ["import", "{tmp}/nosuch.jsonl", "--workspace", "{missing}"],
    ["report", "validation", "--workspace", "{missing}"],
    ["report", "equivalence", "--workspace", "{missing}"],
    ["report", "agreement", "a", "--workspace", "{missing}"],
    ["report", "classifier", "s", "--workspace", "{missing}"],
    ["report", "eval", "--workspace", "{missing}"],
    ["validate", "--workspace", "{missing}"],
    ["validate", "equivalence-pairs", "--workspace", "{missing}"],
    ["audit", "create", "a", "--task", "nosuch", "--from", "arcs", "--workspace", "{tmp}/ws-audit"],
    ["audit", "import", "a", "{tmp}/nosuch.jsonl", "--workspace", "{missing}"],
    ["audit", "export", "a", "--workspace", "{missing}"],
    ["audit", "list", "--workspace", "{missing}"],
    ["audit", "relink", "a", "p", "--workspace", "{missing}"],
    ["mine", "hedges", "{tmp}/nosuch.json", "--workspace", "{tmp}/ws-mine"],
    ["statements", "sample", "s", "--size", "5", "--workspace", "{missing}"],
    ["statements", "import", "s", "{tmp}/nosuch.jsonl", "--workspace", "{tmp}/ws-st"],
    ["statements", "label", "s", "--voters", "offline", "--workspace", "{missing}"],
    ["statements", "list", "--workspace", "{missing}"],
    ["eval", "run", "--workspace", "{missing}"],
    ["eval", "answers", "{tmp}/nosuch.jsonl", "--name", "n", "--workspace", "{missing}"],
    ["catalog", "check", "{tmp}/nosuch"],
    ["catalog", "propose", "--attribute", "a", "--out", "{tmp}/out", "--workspace", "{tmp}/ws-cat"],
    ["eval", "systems"],  # a listing: its work is the list (exit 0)
    ["eval", "show", "x", "--system", "s", "--workspace", "{missing}"],
    ["corpora", "fetch", "nosuch", "--to", "{tmp}/corpora"],
    ["corpora", "list", "--folder", "{tmp}/corpora"],  # a listing: its work is the list (exit 0)
]


def measure(cmd: list[str], repeat: int) -> tuple[float, float, int, str]:
    """(median CPU s, fastest wall s, exit code, first stderr line) of ``cmd`` as fresh processes."""
    cpus, walls = [], []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, env=env, capture_output=True)  # writes the bytecode cache; not counted
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read().decode(errors="replace")
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        cpus.append(ru.ru_utime + ru.ru_stime)
    return statistics.median(cpus), min(walls), os.waitstatus_to_exitcode(status), err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--repeat", type=int, default=5, help="Runs per command (median CPU, min wall)."
    )
    ap.add_argument(
        "--only", choices=("help", "work"), help="Only the --help runs or the work runs."
    )
    args = ap.parse_args()
    amg = [sys.executable, "-c", "from agentmemgate.cli import main; main()"]
    bare_cpu, bare_wall, _, _ = measure([sys.executable, "-c", "pass"], args.repeat)
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"bare `python -c pass`: {1000 * bare_cpu:.0f} ms CPU, {1000 * bare_wall:.0f} ms wall "
        f"(the unit of the ratios below)"
    )
    print(f"{'command':<58} {'CPU ms':>7} {'x bare':>7} {'wall ms':>8} {'x bare':>7}")

    from typer.main import get_command

    from agentmemgate.cli import app

    def leaves(cmd, path):
        subs = getattr(cmd, "commands", None)
        if not subs or getattr(cmd, "invoke_without_command", False):
            yield path
        for name, sub in (subs or {}).items():
            yield from leaves(sub, path + [name])

    rows: list[tuple[str, list[str]]] = []
    if args.only != "work":
        rows += [("amg --help", ["--help"])]
        rows += [
            (f"amg {' '.join(p)} --help", [*p, "--help"]) for p in leaves(get_command(app), []) if p
        ]
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        missing = str(Path(tmp) / "no-such-workspace")
        if args.only != "help":
            rows += [
                (
                    f"amg {' '.join(w[:2] if not w[1].startswith(('-', '{')) else w[:1])} (to its work)",
                    [a.format(tmp=tmp, missing=missing) for a in w],
                )
                for w in WORK
            ]
        for label, argv in rows:
            cpu, wall, code, err = measure(amg + argv, args.repeat)
            help_run = argv[-1] == "--help"
            listing = argv[:2] in (["eval", "systems"], ["corpora", "list"])
            if (
                help_run
                and code != 0
                or listing
                and code != 0
                or not (help_run or listing)
                and (
                    code == 0
                    or not err.startswith("Error: ")
                    or "--help' for help" in err
                    or "Traceback" in err
                )
            ):
                raise SystemExit(
                    f"{label}: did not {'print its help' if help_run else 'reach its work'} "
                    f"(exit {code}): {err.strip()[:300]}"
                )
            if not help_run:
                worst = max(worst, cpu)
            print(
                f"{label:<58} {1000 * cpu:7.0f} {cpu / bare_cpu:7.1f} {1000 * wall:8.0f} "
                f"{wall / bare_wall:7.1f}",
                flush=True,
            )
    if args.only != "help":
        print(
            f"slowest command to its work: {1000 * worst:.0f} ms CPU = {worst / bare_cpu:.1f}x a bare "
            f"start; goal {1000 * GOAL:.0f} ms: {'OK' if worst < GOAL else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
