"""The benchmarks' OpenAI-compatible mock server: stdlib, threaded, in its own process (as a real
server would be), a fixed latency per request, counting requests.

``/embeddings`` requests get deterministic hashed bag-of-words vectors (``EMBEDDING_DIMS``), for
the products that embed (benchmarks/product_throughput.py).

``responder(prompt) -> str | dict`` answers the last message of each chat completion (a dict is
sent as JSON). When the request asks for logprobs and the answer is a plain word, the reply
carries that word as the first token with its logprob, as llama-cpp-python and OpenAI do.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import re
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Responder = Callable[[str], "str | dict"]
EMBEDDING_DIMS = 64


def _embedding(text: str) -> list[float]:
    vec = [0.0] * EMBEDDING_DIMS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vec[h % EMBEDDING_DIMS] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _serve(latency: float, responder: Responder, counter, port_queue) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave in separate writes

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with counter.get_lock():
                counter.value += 1
            time.sleep(latency)
            if self.path.rstrip("/").endswith("/embeddings"):
                texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
                self._send(
                    {
                        "object": "list",
                        "model": body.get("model", "mock"),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": _embedding(t)}
                            for i, t in enumerate(texts)
                        ],
                        "usage": {
                            "prompt_tokens": sum(len(t) // 4 for t in texts),
                            "total_tokens": sum(len(t) // 4 for t in texts),
                        },
                    }
                )
                return
            prompt = body["messages"][-1]["content"]
            reply = responder(prompt)
            content = reply if isinstance(reply, str) else json.dumps(reply)
            logprobs = None
            if body.get("logprobs") and isinstance(reply, str):
                first = {"token": reply, "logprob": -0.05, "bytes": None}
                logprobs = {"content": [{**first, "top_logprobs": [first]}]}
            self._send(
                {
                    "id": "mock",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"] + "-mock",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "logprobs": logprobs,
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": len(prompt) // 4,
                        "completion_tokens": len(content) // 4,
                        "total_tokens": (len(prompt) + len(content)) // 4,
                    },
                }
            )

        def _send(self, reply: dict) -> None:
            payload = json.dumps(reply).encode()
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
    """Start with ``MockServer(0.3, responder)``; ``url`` is its ``/v1`` base URL.

    ``responder`` must be a module-level function (the server process imports it by name).
    """

    def __init__(self, latency: float, responder: Responder):
        ctx = multiprocessing.get_context("spawn")
        self.counter = ctx.Value("i", 0)
        ports = ctx.Queue()
        self.process = ctx.Process(
            target=_serve, args=(latency, responder, self.counter, ports), daemon=True
        )
        self.process.start()
        self.url = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"

    @property
    def requests(self) -> int:
        return self.counter.value

    def calls_during(self, fn) -> tuple[int, float, object]:
        """(requests made, seconds, result) of ``fn()``."""
        before, t0 = self.requests, time.perf_counter()
        result = fn()
        return self.requests - before, time.perf_counter() - t0, result

    def stop(self) -> None:
        self.process.terminate()
        self.process.join()
