"""The LLM layer served as a local OpenAI-compatible endpoint, for products that call models
through their own clients (Mem0, Graphiti).

    with LLMEndpoint(model, embedder, purpose="product.mem0") as ep:
        product = Memory.from_config({... "openai_base_url": ep.url, "api_key": ep.api_key ...})

A stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) for the length of a run, serving
``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models``. Every request goes
through our layer -- ``Model.forward_chat`` / ``Model.embed``: the workspace's content-addressed
cache (keyed by the body that reaches the model; embeddings per input), the call log
(``llm_calls``, purpose ``<purpose>.chat`` / ``<purpose>.embed``), the usage counters the progress
bar reads, the provider SDK's retries -- so a product run is cached, logged and resumable like
every other run, and a re-run makes no model call that was answered before.

The product is given a per-run token as its API key (checked on every request); the real key
never leaves this process. An upstream failure reaches the product as an HTTP error with
``x-should-retry: false`` (our SDK already retried), so the product's own error handling runs; a
fatal one (bad key, unknown model, unreachable server) is kept in ``fatal`` and every later
request gets it at once, so the run can stop with that one line.
"""

from __future__ import annotations

import base64
import json
import secrets
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import AmgError
from ._errors import CallFailed, FatalProviderError, shorten
from .model import Model

STATUS = {
    "rate_limited": 429,
    "timeout": 504,
    "bad_request": 400,
    "unsupported": 400,
    "refusal": 400,
    "server_error": 502,
    "invalid_output": 502,
}


class LLMEndpoint:
    """``chat`` (and ``embedder``, default ``chat``) served at ``url`` until ``stop``."""

    def __init__(self, chat: Model, embedder: Model | None = None, *, purpose: str = "product"):
        self.chat = chat
        self.embedder = embedder if embedder is not None else chat
        self.purpose = purpose
        self.api_key = "amg-" + secrets.token_urlsafe(24)  # the product's key: ours, per run
        self.fatal: str | None = None
        self.requests = {"chat": 0, "embeddings": 0, "models": 0}
        self._by_tag: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the endpoint is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def url_for(self, tag: str) -> str:
        """A base URL whose requests are also counted under ``tag`` (``requests_of``): one per
        conversation, so concurrent products' calls are told apart."""
        if not tag.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"a tag is letters, digits, - and _: {tag!r}")
        return self.url[: -len("/v1")] + f"/t/{tag}/v1"

    def requests_of(self, tag: str) -> dict[str, int]:
        with self._lock:
            return dict(self._by_tag.get(tag, {}))

    def start(self) -> LLMEndpoint:
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        server.request_queue_size = 128
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="amg-llm-endpoint", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LLMEndpoint:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def raise_fatal(self) -> None:
        """Raise the fatal upstream error a request met, if one did (for the product's caller)."""
        if self.fatal is not None:
            raise FatalProviderError(self.fatal)

    # -- requests ------------------------------------------------------------------------------
    def _count(self, what: str, tag: str | None = None) -> None:
        with self._lock:
            self.requests[what] += 1
            if tag is not None:
                counts = self._by_tag.setdefault(tag, {})
                counts[what] = counts.get(what, 0) + 1

    def handle_chat(self, body: dict[str, Any], tag: str | None = None) -> dict[str, Any]:
        self._count("chat", tag)
        if body.get("stream"):
            raise _HttpError(
                400, "streaming is not served by the agentmemgate endpoint", "bad_request"
            )
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise _HttpError(400, "messages must be a non-empty list", "bad_request")
        return self.chat.forward_chat(body, purpose=f"{self.purpose}.chat")

    def handle_embeddings(self, body: dict[str, Any], tag: str | None = None) -> dict[str, Any]:
        self._count("embeddings", tag)
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise _HttpError(
                400,
                "input must be a string or a non-empty list of strings "
                "(token arrays are not served)",
                "bad_request",
            )
        dims = body.get("dimensions")
        if dims is not None and (not isinstance(dims, int) or dims <= 0):
            raise _HttpError(400, "dimensions must be a positive integer", "bad_request")
        vectors = self.embedder.embed(texts, dimensions=dims, purpose=f"{self.purpose}.embed")
        b64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if b64 else v
                ),
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(t.split()) for t in texts)  # an estimate: cached inputs have no count
        return {
            "object": "list",
            "data": data,
            "model": self.embedder.name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def handle_models(self) -> dict[str, Any]:
        self._count("models")
        names = dict.fromkeys([self.chat.name, self.embedder.name])
        return {
            "object": "list",
            "data": [
                {"id": n, "object": "model", "created": 0, "owned_by": "agentmemgate"}
                for n in names
            ],
        }


class _HttpError(Exception):
    def __init__(self, status: int, message: str, kind: str):
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def _handler(ep: LLMEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, payload: dict[str, Any], retry: bool = True) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status >= 400 and not retry:
                self.send_header("x-should-retry", "false")  # our SDK has retried already
            try:
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # the product gave up on this request (its own client timeout); what it asked
                # is cached, so its retry is answered from there
                self.close_connection = True

        def _error(self, status: int, message: str, kind: str) -> None:
            self._send(
                status,
                {"error": {"message": message, "type": kind, "code": kind, "param": None}},
                retry=False,
            )

        def _authorized(self) -> bool:
            if self.headers.get("Authorization", "") == f"Bearer {ep.api_key}":
                return True
            self._error(
                401,
                "this endpoint serves one agentmemgate run; its key was not given",
                "invalid_api_key",
            )
            return False

        def _path(self) -> str:
            return self._route()[0]

        def _route(self) -> tuple[str, str | None]:
            """(path, tag) of ``/t/TAG/v1/...`` or ``/v1/...``."""
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.startswith("/t/"):
                tag, _, rest = path[3:].partition("/")
                return "/" + rest, tag or None
            return path, None

        def do_GET(self) -> None:
            if not self._authorized():
                return
            if self._path() in ("/v1/models", "/models"):
                self._send(200, ep.handle_models())
            else:
                self._error(404, f"no route {self._path()}", "not_found")

        def do_POST(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
            except (ValueError, OSError):
                self._error(400, "unreadable request body", "bad_request")
                return
            if not self._authorized():
                return
            path, tag = self._route()
            route = {
                "/v1/chat/completions": ep.handle_chat,
                "/chat/completions": ep.handle_chat,
                "/v1/embeddings": ep.handle_embeddings,
                "/embeddings": ep.handle_embeddings,
            }.get(path)
            if route is None:
                self._error(404, f"no route {path}", "not_found")
                return
            if ep.fatal is not None:
                self._error(502, ep.fatal, "fatal")
                return
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                self._error(400, "the request body is not JSON", "bad_request")
                return
            if not isinstance(body, dict):
                self._error(400, "the request body must be a JSON object", "bad_request")
                return
            try:
                self._send(200, route(body, tag))
            except _HttpError as e:
                self._error(e.status, e.message, e.kind)
            except CallFailed as e:
                self._error(STATUS.get(e.kind, 502), str(e), e.kind)
            except FatalProviderError as e:
                ep.fatal = ep.fatal or str(e)
                self._error(502, str(e), "fatal")
            except AmgError as e:
                self._error(500, str(e), "error")
            except Exception as e:  # a bug of ours must reach the product as an HTTP error
                self._error(500, shorten(f"{type(e).__name__}: {e}"), "internal_error")

        def log_message(self, *args: Any) -> None:  # requests are in the call log
            pass

    return Handler


__all__ = ["LLMEndpoint"]
