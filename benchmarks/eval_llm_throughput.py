"""LLM-path throughput of ``amg eval run``: arcs run concurrently, turns within an arc in order.

Starts a local OpenAI-compatible mock server (stdlib, threaded, its own process, a fixed latency
per request) that answers every memory-component and classifier prompt with the test double
``scripted_responder`` of tests/scripted_memory.py (the offline rules' answers, computed from the
prompt; the classifier's answer comes with token logprobs), then runs the real path -- memory.get_system
("literal-gated", model="openai:...", base_url=...) -> OpenAI SDK -> HTTP -> cache/log -> the
protocol -> the workspace -- at concurrency 1 and 16. Throughput is model calls per second (arcs
differ in length); the goal is at least 12x. Then it re-runs the finished evaluation (goal: 0
calls) and re-runs every arc from scratch with the traces deleted (goal: 0 calls, all answered
by the LLM cache). Default runtime is about a minute.

    .venv/bin/python benchmarks/eval_llm_throughput.py [--latency 0.3] [--system literal-gated]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from _mock_server import MockServer

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the test doubles


def answer(prompt: str):
    """The memory components' and the classifier's answer to ``prompt`` (the offline rules)."""
    from scripted_memory import scripted_responder  # a test double: tests/ is on the path

    from agentmemgate.llm import Request

    return scripted_responder(Request(prompt=prompt))


def main() -> None:
    from agentmemgate.evaluate import run_eval
    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.llm import get_model
    from agentmemgate.workspace import Workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.3, help="Seconds per mock request.")
    ap.add_argument("--system", default="literal-gated", help="Memory system to run.")
    ap.add_argument(
        "--serial-per-cell", type=int, default=1, help="Core arcs per cell at concurrency 1."
    )
    ap.add_argument(
        "--parallel-per-cell", type=int, default=20, help="Core arcs per cell at concurrency 16."
    )
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-mock-benchmark")  # the mock ignores it
    server = MockServer(args.latency, answer)
    model = "openai:mock-model"
    get_model(model, base_url=server.url)  # import the SDK before timing anything
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency, per_cell in ((1, args.serial_per_cell), (16, args.parallel_per_cell)):
            ws = Workspace(Path(tmp) / f"ws-c{concurrency}")
            generate(
                ws, get_renderer("offline"), ["core"], n_per_cell=per_cell, show_progress=False
            )
            before, t0 = server.requests, time.perf_counter()
            s = run_eval(
                ws,
                ["core"],
                [args.system],
                model=model,
                base_url=server.url,
                concurrency=concurrency,
                show_progress=False,
            )
            secs, calls = time.perf_counter() - t0, server.requests - before
            assert s.failed == 0, s.failure_examples
            rates[concurrency] = calls / secs
            print(
                f"concurrency {concurrency:>2}: {s.ran_now} arcs, {calls} model calls, "
                f"{secs:.2f} s, {calls / secs:.1f} calls/s, {s.ran_now / secs:.2f} arcs/s"
            )
        ratio = rates[16] / rates[1]
        print(
            f"speed-up 16 vs 1 (model calls per second): {ratio:.1f}x (goal >= 12x) "
            f"{'OK' if ratio >= 12 else 'BELOW GOAL'}"
        )
        before, t0 = server.requests, time.perf_counter()
        s = run_eval(
            ws,
            ["core"],
            [args.system],
            model=model,
            base_url=server.url,
            concurrency=16,
            show_progress=False,
        )
        print(
            f"re-run of the finished evaluation: {server.requests - before} calls (goal 0), "
            f"{s.already_done} pairs already stored, {time.perf_counter() - t0:.2f} s"
        )
        with ws.db.conn:
            ws.db["eval_traces"].delete_where()
            ws.db["eval_scores"].delete_where()
        before, t0 = server.requests, time.perf_counter()
        s = run_eval(
            ws,
            ["core"],
            [args.system],
            model=model,
            base_url=server.url,
            concurrency=16,
            show_progress=False,
        )
        print(
            f"re-run of every arc with the traces deleted: {server.requests - before} calls "
            f"(goal 0: the LLM cache answers), {s.ran_now} arcs run, {time.perf_counter() - t0:.2f} s"
        )
    server.stop()


if __name__ == "__main__":
    main()
