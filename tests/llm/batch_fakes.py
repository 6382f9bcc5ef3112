"""Batch endpoints at the HTTP level, for the real SDK clients over httpx2.MockTransport.

``OpenAIBatchApi`` serves ``POST /v1/files`` (multipart JSONL upload), ``POST /v1/batches``,
``GET /v1/batches/{id}`` (stepping through the given states, one per retrieve),
``GET /v1/files/{id}/content`` (the output and error files, JSONL) and ``GET /v1/batches`` (the
list, which is how a server is asked whether it serves the API; ``lists=False``: a 404, as a
server without the API answers). ``AnthropicBatchApi`` serves
``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}`` (``processing_status``,
``request_counts``, ``results_url`` once ended) and the results JSONL. ``answer(custom_id, body)``
decides each request's fate: a reply (dict or str), or ``("error", status, message)``,
``("expired",)``, ``("cancelled",)``. ``LocalServer`` serves any of these handlers over real HTTP
on 127.0.0.1, for a ``--base-url`` the SDK reaches with its own default HTTP client.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

Answer = Callable[[str, dict], Any]


def _chat(
    content: str,
    model: str = "gpt-test-2025-01-01",
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
) -> dict:
    return {
        "id": "chatcmpl-b",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }


class OpenAIBatchApi:
    def __init__(
        self,
        answer: Answer,
        states: tuple[str, ...] = ("validating", "in_progress", "completed"),
        batch_error: dict | None = None,
        lists: bool = True,
    ):
        self.answer = answer
        self.lists = lists
        self.states = states
        self.batch_error = batch_error
        self.files: dict[str, str] = {}
        self.batches: dict[str, dict] = {}
        self.polls: dict[str, int] = {}
        self.lines: dict[str, list[dict]] = {}  # batch id -> the request lines it was given
        self.requests: list[httpx2.Request] = []
        self.created = 0

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if request.method == "POST" and path.endswith("/files"):
            body = request.read().decode()
            lines = [m.group(0) for m in re.finditer(r'^\{"custom_id".*$', body, re.M)]
            fid = f"file-in-{len(self.files) + 1}"
            self.files[fid] = "\n".join(lines) + "\n"
            return httpx2.Response(
                200,
                json={
                    "id": fid,
                    "object": "file",
                    "bytes": len(body),
                    "created_at": 1700000000,
                    "filename": "amg-batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )
        if request.method == "POST" and path.endswith("/batches"):
            params = json.loads(request.content)
            self.created += 1
            bid = f"batch_{self.created}"
            lines = [json.loads(x) for x in self.files[params["input_file_id"]].splitlines() if x]
            assert all(x["url"] == params["endpoint"] == "/v1/chat/completions" for x in lines)
            self.lines[bid] = lines
            self.batches[bid] = {
                "id": bid,
                "object": "batch",
                "endpoint": params["endpoint"],
                "completion_window": "24h",
                "input_file_id": params["input_file_id"],
                "created_at": 1700000000,
                "status": self.states[0],
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            }
            self.polls[bid] = 0
            return httpx2.Response(200, json=self.batches[bid])
        if request.method == "GET" and path.endswith("/batches") and self.lists:
            data = list(self.batches.values())[-int(request.url.params.get("limit", 20)) :]
            return httpx2.Response(
                200,
                json={
                    "object": "list",
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                },
            )
        m = re.search(r"/batches/([^/]+)$", path)
        if request.method == "GET" and m:
            bid = m.group(1)
            self.polls[bid] += 1
            state = self.states[min(self.polls[bid], len(self.states) - 1)]
            b = self.batches[bid]
            b["status"] = state
            n = len(self.lines[bid])
            if state == "in_progress":
                b["request_counts"] = {"total": n, "completed": n // 2, "failed": 0}
            if state in ("completed", "expired", "cancelled") and "output_file_id" not in b:
                self._finish(bid, state)
            if state == "failed":
                b["errors"] = {
                    "object": "list",
                    "data": [
                        self.batch_error
                        or {"code": "invalid_request", "message": "bad line", "line": 1}
                    ],
                }
            return httpx2.Response(200, json=b)
        m = re.search(r"/files/([^/]+)/content$", path)
        if request.method == "GET" and m:
            return httpx2.Response(
                200,
                content=self.files[m.group(1)].encode(),
                headers={"content-type": "application/octet-stream"},
            )
        return httpx2.Response(404, json={"error": {"message": f"no route {path}"}})

    def _finish(self, bid: str, state: str) -> None:
        out, err = [], []
        for line in self.lines[bid]:
            cid = line["custom_id"]
            a = self.answer(cid, line["body"])
            if state == "expired" and not isinstance(a, tuple):
                a = ("expired",) if len(out) % 2 else a  # every other one did not make it
            if state == "cancelled":
                a = ("cancelled",)
            if isinstance(a, tuple):
                if a[0] == "error":
                    err.append(
                        {
                            "id": "r",
                            "custom_id": cid,
                            "error": None,
                            "response": {
                                "status_code": a[1],
                                "request_id": "req",
                                "body": {"error": {"message": a[2], "type": "server_error"}},
                            },
                        }
                    )
                else:
                    code = {"expired": "batch_expired", "cancelled": "batch_cancelled"}[a[0]]
                    err.append(
                        {
                            "id": "r",
                            "custom_id": cid,
                            "response": None,
                            "error": {"code": code, "message": f"This request {a[0]}."},
                        }
                    )
                continue
            text = a if isinstance(a, str) else json.dumps(a)
            out.append(
                {
                    "id": "r",
                    "custom_id": cid,
                    "error": None,
                    "response": {"status_code": 200, "request_id": "req", "body": _chat(text)},
                }
            )
        b = self.batches[bid]
        n = len(self.lines[bid])
        b["request_counts"] = {"total": n, "completed": len(out), "failed": len(err)}
        if out:
            self.files[f"file-out-{bid}"] = "".join(json.dumps(x) + "\n" for x in out)
            b["output_file_id"] = f"file-out-{bid}"
        if err:
            self.files[f"file-err-{bid}"] = "".join(json.dumps(x) + "\n" for x in err)
            b["error_file_id"] = f"file-err-{bid}"
        b["output_file_id"] = b.get("output_file_id")


def _message(tool_input: dict | None, text: str = "", tool: str = "record_Verdict") -> dict:
    content: list[dict] = []
    if text:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": "toolu_1", "name": tool, "input": tool_input})
    return {
        "id": "msg_b",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-20250101",
        "content": content,
        "stop_reason": "tool_use" if tool_input is not None else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 40,
            "output_tokens": 10,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }


class AnthropicBatchApi:
    def __init__(self, answer: Answer, polls_until_ended: int = 2):
        self.answer = answer
        self.polls_until_ended = polls_until_ended
        self.batches: dict[str, dict] = {}
        self.reqs: dict[str, list[dict]] = {}
        self.polls: dict[str, int] = {}
        self.results: dict[str, str] = {}
        self.requests: list[httpx2.Request] = []
        self.created = 0

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if request.method == "POST" and path.endswith("/messages/batches"):
            reqs = json.loads(request.content)["requests"]
            assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", r["custom_id"]) for r in reqs)
            self.created += 1
            bid = f"msgbatch_{self.created:02d}"
            self.reqs[bid] = reqs
            self.polls[bid] = 0
            self.batches[bid] = {
                "id": bid,
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {
                    "processing": len(reqs),
                    "succeeded": 0,
                    "errored": 0,
                    "canceled": 0,
                    "expired": 0,
                },
                "created_at": "2026-12-01T00:00:00Z",
                "expires_at": "2026-12-02T00:00:00Z",
                "ended_at": None,
                "results_url": None,
                "archived_at": None,
                "cancel_initiated_at": None,
            }
            return httpx2.Response(200, json=self.batches[bid])
        m = re.search(r"/messages/batches/([^/]+)/results$", path)
        if m:
            return httpx2.Response(
                200,
                content=self.results[m.group(1)].encode(),
                headers={"content-type": "application/binary"},
            )
        m = re.search(r"/messages/batches/([^/]+)$", path)
        if m:
            bid = m.group(1)
            self.polls[bid] += 1
            if self.polls[bid] >= self.polls_until_ended and bid not in self.results:
                self._finish(bid)
            return httpx2.Response(200, json=self.batches[bid])
        return httpx2.Response(
            404, json={"type": "error", "error": {"type": "not_found_error", "message": path}}
        )

    def _finish(self, bid: str) -> None:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        lines = []
        for r in self.reqs[bid]:
            a = self.answer(r["custom_id"], r["params"])
            if isinstance(a, tuple):
                kind = {"error": "errored", "expired": "expired", "cancelled": "canceled"}[a[0]]
                counts[kind] += 1
                result: dict = {"type": kind}
                if kind == "errored":
                    result["error"] = {
                        "type": "error",
                        "error": {"type": "api_error", "message": a[2]},
                    }
                lines.append({"custom_id": r["custom_id"], "result": result})
            else:
                counts["succeeded"] += 1
                tool = r["params"].get("tool_choice", {}).get("name", "record_Verdict")
                msg = _message(a, tool=tool) if isinstance(a, dict) else _message(None, text=a)
                lines.append(
                    {"custom_id": r["custom_id"], "result": {"type": "succeeded", "message": msg}}
                )
        self.results[bid] = "".join(json.dumps(x) + "\n" for x in lines)
        self.batches[bid].update(
            processing_status="ended",
            request_counts=counts,
            ended_at="2026-12-01T01:00:00Z",
            results_url=f"https://api.anthropic.com/v1/messages/batches/{bid}/results",
        )


class LocalServer:
    """An httpx2 handler (``OpenAIBatchApi.handler``, a ``FakeApi``'s) served over real HTTP on
    127.0.0.1 by a threaded ``http.server``: ``with LocalServer(api.handler) as url:`` gives
    ``http://127.0.0.1:PORT/v1``; ``requests`` lists ``(method, path with query)`` as received."""

    def __init__(self, handler: Callable[[httpx2.Request], httpx2.Response]):
        self.handler = handler
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):  # HTTP/1.0: a connection per request, no thread left
            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append((self.command, self.path))
                request = httpx2.Request(
                    self.command,
                    f"http://127.0.0.1{self.path}",
                    headers=dict(self.headers),
                    content=body,
                )
                response = outer.handler(request)
                content = response.read()
                self.send_response(response.status_code)
                for k, v in response.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> str:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def probes(self) -> int:
        """How often the server was asked whether it serves the Batch API."""
        return sum(1 for m, p in self.requests if m == "GET" and p.startswith("/v1/batches?"))
