"""Product runs of ``amg eval run``: arcs concurrent, each a fresh product memory.

Starts the benchmarks' mock OpenAI-compatible server (its own process, a fixed latency per
request, chat and embeddings) and runs the real path for each product: ``--system mem0`` (the real
mem0ai: its extraction prompt, embedded Qdrant and search, every call it makes through our
``llm.serve`` endpoint) and the ``full-context`` baseline, at concurrency 1 and 16, each in a fresh
workspace (so nothing is answered by the cache). The mock answers Mem0's extraction prompt with
one memory per user turn and the answer prompts with a short sentence. Throughput is upstream
requests per second (arcs differ in length); the goal is at least 8x at concurrency 16. Then the
finished run is repeated (goal: 0 requests). Prints, per product, calls and tokens per arc from
the call log. Default runtime is about a minute and a half.

    .venv/bin/python benchmarks/product_throughput.py [--latency 0.3] [--system mem0]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from _mock_server import MockServer

_NEW = re.compile(r"## New Messages\n(.*?)\n\n## Observation Date", re.S)


def answer(prompt: str):
    """Mem0's extraction call: one memory per user turn; any answer prompt: one sentence."""
    if m := _NEW.search(prompt):
        users = re.findall(r"^user: (.*)$", m.group(1), re.M)
        return {"memory": [{"id": str(i), "text": f"User said: {u}"} for i, u in enumerate(users)]}
    return "The user has not said."


def calls_per_arc(ws, arcs: int) -> dict[str, float]:
    rows = ws.db.execute(
        "select purpose, count(*), sum(coalesce(input_tokens, 0)), "
        "sum(coalesce(output_tokens, 0)) from llm_calls where status = 'ok' "
        "group by purpose"
    ).fetchall()
    out = {"calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0}
    for purpose, n, tin, tout in rows:
        out[f"calls[{purpose}]"] = n / arcs
        out["calls"] += n / arcs
        out["input_tokens"] += tin / arcs
        out["output_tokens"] += tout / arcs
    return out


def main() -> None:
    from agentmemgate.evaluate import run_eval
    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.workspace import Workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.3, help="Seconds per mock request.")
    ap.add_argument(
        "--system", action="append", help="Products to run (default: mem0, full-context)."
    )
    ap.add_argument(
        "--serial-per-cell", type=int, default=1, help="Core arcs per cell at concurrency 1."
    )
    ap.add_argument(
        "--parallel-per-cell", type=int, default=11, help="Core arcs per cell at concurrency 16."
    )
    args = ap.parse_args()
    systems = args.system or ["mem0", "full-context"]
    server = MockServer(args.latency, answer)
    model = "openai:mock-model"
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        arcs = {}
        for per_cell in {args.serial_per_cell, args.parallel_per_cell}:
            ws = Workspace(Path(tmp) / f"arcs-{per_cell}")
            generate(
                ws, get_renderer("offline"), ["core"], n_per_cell=per_cell, show_progress=False
            )
            arcs[per_cell] = ws.path
        if "mem0" in systems:  # import Mem0 (seconds) before timing anything
            from agentmemgate.products.mem0 import _import_mem0

            _import_mem0(None)
        for system in systems:
            rates = {}
            for concurrency, per_cell in ((1, args.serial_per_cell), (16, args.parallel_per_cell)):
                path = Path(tmp) / f"{system}-c{concurrency}"
                shutil.copytree(arcs[per_cell], path)
                ws = Workspace(path)
                before, t0 = server.requests, time.perf_counter()
                s = run_eval(
                    ws,
                    ["core"],
                    [system],
                    model=model,
                    base_url=server.url,
                    concurrency=concurrency,
                    show_progress=False,
                )
                secs, requests = time.perf_counter() - t0, server.requests - before
                assert s.failed == 0, s.failure_examples
                rates[concurrency] = requests / secs
                per_arc = calls_per_arc(ws, s.arcs)
                print(
                    f"{system:13s} concurrency {concurrency:2d}: {s.arcs} arcs, {requests} requests "
                    f"in {secs:.1f} s = {rates[concurrency]:.1f} req/s, {secs / s.arcs:.2f} s/arc "
                    f"(wall), per arc: {per_arc['calls']:.1f} calls, "
                    f"{per_arc['input_tokens']:.0f} input / {per_arc['output_tokens']:.0f} "
                    "output tokens"
                )
                detail = ", ".join(
                    f"{k[6:-1]} {v:.1f}"
                    for k, v in sorted(per_arc.items())
                    if k.startswith("calls[")
                )
                print(f"{'':13s}   calls per arc by purpose: {detail}")
                if concurrency == 16:
                    before = server.requests
                    again = run_eval(
                        ws,
                        ["core"],
                        [system],
                        model=model,
                        base_url=server.url,
                        concurrency=16,
                        show_progress=False,
                    )
                    print(
                        f"{'':13s}   re-run of the finished run: {server.requests - before} "
                        f"requests, {again.already_done} arcs already stored"
                    )
            speedup = rates[16] / rates[1]
            results.append((system, speedup))
            print(f"{system:13s} speed-up at concurrency 16: {speedup:.1f}x (goal: at least 8x)")
    server.stop()
    if any(x < 8 for _, x in results):
        raise SystemExit("below the 8x goal: " + ", ".join(f"{n} {x:.1f}x" for n, x in results))


if __name__ == "__main__":
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    main()
