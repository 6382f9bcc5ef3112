"""LLM-path throughput: arcs rendered per second at concurrency 1 vs 16, and the cost of a re-run.

Starts a local OpenAI-compatible mock server (stdlib, threaded, in its own process, fixed latency
per request) that
answers each generation prompt with a known-good arc, then runs the real path -- get_renderer
("openai:...", base_url=...) -> OpenAI SDK -> HTTP -> cache/log -> checks -> workspace -- through
``generate.generate``. Prints both throughputs and their ratio (goal >= 12x), then re-runs the
finished build and re-renders every arc with a fresh renderer, printing the HTTP calls each made
(goal 0). Default runtime is about 15 s.

    .venv/bin/python benchmarks/llm_throughput.py [--latency 0.3] [--arcs-serial 15] [--arcs-parallel 96]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from agentmemgate.generate import generate, get_renderer, plan_split
from agentmemgate.generate.llm_renderer import reference_responder
from agentmemgate.llm import Request, get_model
from agentmemgate.schema import Arc
from agentmemgate.workspace import Workspace


def _serve(latency: float, counter, port_queue) -> None:
    """The mock server's process: POST /v1/chat/completions answered after ``latency`` seconds."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave in separate writes

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with counter.get_lock():
                counter.value += 1
            time.sleep(latency)
            prompt = body["messages"][-1]["content"]
            content = json.dumps(reference_responder(Request(prompt=prompt)))
            payload = json.dumps({
                "id": "mock", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"] + "-mock",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(content) // 4,
                          "total_tokens": (len(prompt) + len(content)) // 4},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args) -> None:
            pass

    ThreadingHTTPServer.request_queue_size = 128
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    port_queue.put(httpd.server_address[1])
    httpd.serve_forever()


class MockServer:
    """An OpenAI-compatible server in its own process (as a real one would be), counting requests."""

    def __init__(self, latency: float):
        ctx = multiprocessing.get_context("spawn")
        self.counter = ctx.Value("i", 0)
        ports = ctx.Queue()
        self.process = ctx.Process(target=_serve, args=(latency, self.counter, ports), daemon=True)
        self.process.start()
        self.url = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"

    @property
    def requests(self) -> int:
        return self.counter.value

    def calls_during(self, fn) -> tuple[int, float, object]:
        before, t0 = self.requests, time.perf_counter()
        result = fn()
        return self.requests - before, time.perf_counter() - t0, result

    def stop(self) -> None:
        self.process.terminate()
        self.process.join()


def build(server: MockServer, ws: Workspace, n_per_cell: int, concurrency: int):
    renderer = get_renderer("openai:mock-model", workspace=ws, base_url=server.url,
                            concurrency=concurrency)
    return generate(ws, renderer, ["core"], n_per_cell=n_per_cell, show_progress=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.3, help="Seconds per mock request.")
    ap.add_argument("--arcs-serial", type=int, default=15, help="Arcs at concurrency 1 (x3).")
    ap.add_argument("--arcs-parallel", type=int, default=96, help="Arcs at concurrency 16 (x3).")
    args = ap.parse_args()
    server = MockServer(args.latency)
    get_model("openai:mock-model", base_url=server.url)  # import the SDK before timing anything
    with tempfile.TemporaryDirectory() as tmp:
        rates = {}
        for concurrency, arcs in ((1, args.arcs_serial), (16, args.arcs_parallel)):
            ws = Workspace(Path(tmp) / f"ws-c{concurrency}")
            n_per_cell = max(1, arcs // 3)  # the core split has three cells
            calls, secs, summary = server.calls_during(lambda: build(server, ws, n_per_cell, concurrency))
            assert summary.failed == 0, summary.failures
            rates[concurrency] = summary.rendered_now / secs
            print(f"concurrency {concurrency:>2}: {summary.rendered_now} arcs, {calls} calls, "
                  f"{secs:.2f} s, {rates[concurrency]:.2f} arcs/s")
        ratio = rates[16] / rates[1]
        print(f"speed-up 16 vs 1: {ratio:.1f}x (goal >= 12x) {'OK' if ratio >= 12 else 'BELOW GOAL'}")

        calls, secs, summary = server.calls_during(lambda: build(server, ws, n_per_cell, 16))
        print(f"re-run of the finished build: {calls} calls (goal 0), "
              f"{summary.already_done} arcs already done, {secs:.2f} s")
        specs = plan_split("core", 0, n_per_cell)
        fresh = get_renderer("openai:mock-model", workspace=Workspace(ws.path), base_url=server.url,
                             concurrency=16)
        planned = fresh.planned_calls(specs)
        calls, secs, results = server.calls_during(lambda: list(fresh.render_many(specs)))
        assert all(isinstance(r, Arc) for r in results)
        print(f"re-render of all {len(specs)} arcs by a fresh renderer: {calls} calls (goal 0; "
              f"dry run predicted {planned}), {fresh.usage()['cache_hits']} cache hits, {secs:.2f} s")
    server.stop()


if __name__ == "__main__":
    main()
