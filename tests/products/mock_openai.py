"""A local mock OpenAI-compatible server for the product tests (Mem0, Graphiti, ...).

The products run their real code against it: their own prompts go out over HTTP through their own
OpenAI clients, and come back answered with JSON that validates against the schema the request
carried. Stdlib only: a threaded HTTP server on 127.0.0.1, port 0, in a thread of the test process
(so every request is recorded where the test can assert on it).

Endpoints (under ``/v1``):

- ``POST /chat/completions``: a request with ``response_format`` ``json_schema`` gets an instance of
  that schema; ``json_object`` gets a JSON object; ``tools`` (+ ``tool_choice``) gets one tool call
  whose arguments are an instance of the tool's parameter schema (a ``json_object`` request whose
  prompt carries a JSON schema gets an instance of that); anything else gets text. The
  content comes from the first *responder* that answers (see ``Responder``), else from the generic
  generator ``instance_of``. ``logprobs`` requests get the first token with a logprob (``Reply``).
- ``POST /embeddings``: deterministic embeddings, a signed hashed bag of words normalised to unit
  length (texts sharing words are near), as floats or base64 (the OpenAI SDK asks for base64).
- ``GET /models``.

Use::

    with MockOpenAI(responders=[my_responder], dim=256) as server:
        client = OpenAI(base_url=server.url, api_key="dummy")
        ...
        server.calls("/chat/completions"), server.requests[-1].body

A responder ``fn(request: ChatRequest) -> str | dict | list | Reply | None`` picks on what the
request says (``request.schema_name``, ``request.text``, ``request.last_user``); ``None`` passes to
the next responder. It may raise ``MockHTTPError(status, message)`` to send an API error.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import math
import re
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ChatRequest",
    "MockHTTPError",
    "MockOpenAI",
    "Recorded",
    "Reply",
    "Responder",
    "embed",
    "instance_of",
    "names_in",
    "refuses_json_schema",
]

DEFAULT_DATE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


# --------------------------------------------------------------------------- schema instances


class SchemaError(ValueError):
    pass


def _resolve(ref: str, root: dict) -> dict:
    if not ref.startswith("#"):
        raise SchemaError(f"only local $ref are supported, not {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _string(schema: dict, key: str | None) -> str:
    fmt = schema.get("format")
    if fmt == "date-time":
        return DEFAULT_DATE.isoformat().replace("+00:00", "Z")
    if fmt == "date":
        return DEFAULT_DATE.date().isoformat()
    if fmt == "time":
        return "00:00:00"
    if fmt == "email":
        return "user@example.com"
    if fmt in ("uri", "url"):
        return "https://example.com/"
    if fmt == "uuid":
        return "00000000-0000-4000-8000-000000000000"
    text = key or "text"
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    if len(text) < lo:
        text = (text + "x" * lo)[:lo]
    if hi is not None:
        text = text[:hi]
    return text


def _number(schema: dict, integer: bool) -> int | float:
    lo = schema.get("minimum")
    if "exclusiveMinimum" in schema:
        ex = schema["exclusiveMinimum"]
        lo = (ex + 1 if integer else ex + 0.5) if lo is None or ex >= lo else lo
    hi = schema.get("maximum")
    if "exclusiveMaximum" in schema:
        ex = schema["exclusiveMaximum"]
        hi = (ex - 1 if integer else ex - 0.5) if hi is None or ex <= hi else hi
    value = lo if lo is not None else (min(0, hi) if hi is not None else 0)
    if schema.get("multipleOf") and value % schema["multipleOf"]:
        value = math.ceil(value / schema["multipleOf"]) * schema["multipleOf"]
    return int(value) if integer else float(value)


def instance_of(
    schema: dict,
    root: dict | None = None,
    *,
    key: str | None = None,
    array_items: int = 0,
    overrides: dict[str, Any] | None = None,
) -> Any:
    """A deterministic instance valid against the JSON ``schema`` (the subset pydantic and the
    products emit: objects, arrays, enums, const, $ref/$defs, anyOf/oneOf/allOf, type lists,
    required fields, numbers with bounds, strings with formats and lengths).

    Required properties are always present, optional ones absent (their defaults apply). Arrays get
    ``max(minItems, array_items)`` items (capped by ``maxItems``); the default 0 keeps lists
    empty so a product is not fed invented entities. ``overrides`` maps a property name to the
    value to use wherever it occurs (e.g. ``{"summary": "..."}``).
    """
    root = schema if root is None else root
    overrides = overrides or {}
    kw = dict(array_items=array_items, overrides=overrides)
    if key is not None and key in overrides:
        return overrides[key]
    if "$ref" in schema:
        merged = {
            **_resolve(schema["$ref"], root),
            **{k: v for k, v in schema.items() if k != "$ref"},
        }
        return instance_of(merged, root, key=key, **kw)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "allOf" in schema:
        merged: dict = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(part["$ref"], root) if "$ref" in part else part
            for k, v in part.items():
                if k == "properties":
                    merged.setdefault("properties", {}).update(v)
                elif k == "required":
                    merged["required"] = sorted(set(merged.get("required", [])) | set(v))
                else:
                    merged.setdefault(k, v)
        return instance_of(merged, root, key=key, **kw)
    for combo in ("anyOf", "oneOf"):
        if combo in schema:
            options = schema[combo]
            non_null = [o for o in options if o.get("type") != "null"]
            return instance_of((non_null or options)[0], root, key=key, **kw)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else ("array" if "items" in schema else "string")
    if kind == "object":
        props = schema.get("properties", {})
        return {
            name: instance_of(props.get(name, {}), root, key=name, **kw)
            for name in schema.get("required", [])
        }
    if kind == "array":
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        n = max(lo, array_items)
        if hi is not None:
            n = min(n, hi)
        items = schema.get("items", {})
        if isinstance(items, list):  # tuple form
            return [instance_of(s, root, key=key, **kw) for s in items]
        out = [instance_of(items, root, key=key, **kw) for _ in range(n)]
        if schema.get("uniqueItems") and len(out) > 1:
            if all(isinstance(v, str) for v in out):
                out = [f"{v}{i}" if i else v for i, v in enumerate(out)]
            elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in out):
                out = [v + i for i, v in enumerate(out)]
        return out
    if kind == "string":
        return _string(schema, key)
    if kind == "integer":
        return _number(schema, True)
    if kind == "number":
        return _number(schema, False)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise SchemaError(f"unsupported schema type {kind!r}")


# --------------------------------------------------------------------------- embeddings

_WORD = re.compile(r"[a-z0-9]+")


def embed(text: str, dim: int = 256) -> list[float]:
    """A signed hashed bag of (lower-cased) words, unit length; the empty text is a fixed unit
    vector. Texts that share words have a positive cosine; identical bags are identical."""
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        h = hashlib.blake2b(word.encode(), digest_size=8).digest()
        idx = int.from_bytes(h[:4], "little") % dim
        vec[idx] += 1.0 if h[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0:
        vec[0], norm = 1.0, 1.0
    return [v / norm for v in vec]


# --------------------------------------------------------------------------- helpers for responders

_NAME = re.compile(r"\b[A-Z][a-zA-Z]*(?:'[a-z]+)?(?:\s+[A-Z][a-zA-Z]*(?:'[a-z]+)?)*")
_STOP = {
    "I",
    "I'm",
    "The",
    "A",
    "An",
    "It",
    "We",
    "You",
    "He",
    "She",
    "They",
    "This",
    "That",
    "My",
    "Our",
    "Your",
    "And",
    "But",
    "Or",
    "So",
    "If",
    "Yes",
    "No",
    "Maybe",
    "Well",
    "Oh",
    "Hi",
    "Hello",
    "Thanks",
    "Sure",
    "Great",
    "What",
    "When",
    "Where",
    "Who",
    "Why",
    "How",
    "Do",
    "Is",
    "Are",
    "Can",
    "Could",
    "Would",
    "Should",
    "Will",
    "Let",
    "Not",
    "Just",
    "Also",
    "There",
    "Here",
    "Then",
    "Now",
    "Okay",
    "OK",
    "Good",
    "Nice",
    "Right",
    "Sounds",
    "Have",
    "Has",
    "Had",
    "Been",
    "Being",
    "Was",
    "Were",
    "Did",
    "Does",
    "Any",
    "Some",
    "All",
    "As",
    "At",
    "By",
    "For",
    "From",
    "In",
    "Of",
    "On",
    "To",
    "With",
    "That's",
    "It's",
}


def names_in(text: str) -> list[str]:
    """Capitalised word runs of ``text`` (speaker labels, places, people), in order of first
    appearance, without sentence-initial function words (``What's``, ``I'm``) or single words that
    merely open a sentence: a crude stand-in for entity extraction."""
    seen: list[str] = []
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        while words and words[0].split("'")[0] in _STOP:
            words = words[1:]
        before = text[: match.start()].rstrip(" \t\"'(")
        if (
            len(words) == 1
            and words == match.group(0).split()
            and (not before or before[-1] in ".!?:\n")
        ):
            continue  # one capitalised word opening a sentence ("Quick question.")
        name = " ".join(words)
        if name and name not in seen:
            seen.append(name)
    return seen


# --------------------------------------------------------------------------- requests and replies


@dataclass
class ChatRequest:
    """One chat completion request as a responder sees it."""

    body: dict

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", [])

    @property
    def model(self) -> str:
        return self.body.get("model", "")

    @staticmethod
    def _content(message: dict) -> str:
        content = message.get("content") or ""
        if isinstance(content, list):  # content parts
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)

    @property
    def system(self) -> str:
        return "\n".join(self._content(m) for m in self.messages if m.get("role") == "system")

    @property
    def last_user(self) -> str:
        users = [self._content(m) for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""

    @property
    def text(self) -> str:
        """Every message's content, joined."""
        return "\n".join(self._content(m) for m in self.messages)

    @property
    def mode(self) -> str:
        """``json_schema``, ``json_object``, ``tools`` or ``text``."""
        if self.body.get("tools") and self.body.get("tool_choice") != "none":
            return "tools"
        fmt = (self.body.get("response_format") or {}).get("type")
        return fmt if fmt in ("json_schema", "json_object") else "text"

    @property
    def tool(self) -> dict | None:
        """The function the request wants called (``tool_choice``), else its first tool."""
        tools = [t.get("function", t) for t in self.body.get("tools") or []]
        choice = self.body.get("tool_choice")
        if isinstance(choice, dict):
            wanted = (choice.get("function") or {}).get("name") or choice.get("name")
            for t in tools:
                if t.get("name") == wanted:
                    return t
        return tools[0] if tools else None

    @property
    def schema(self) -> dict | None:
        """The JSON schema the reply must meet: the response format's or tool's, or, for
        ``json_object``, one the prompt carries (as Graphiti's and Mem0's fallbacks append it)."""
        if self.mode == "tools":
            return (self.tool or {}).get("parameters") or {"type": "object", "properties": {}}
        if self.mode == "json_schema":
            return (self.body["response_format"].get("json_schema") or {}).get("schema")
        if self.mode == "json_object":  # llama-cpp-python takes a schema beside json_object
            return self.body["response_format"].get("schema") or self.prompt_schema
        return None

    @property
    def prompt_schema(self) -> dict | None:
        """The last JSON Schema object written into the last message, if any."""
        text = self._content(self.messages[-1]) if self.messages else ""
        decoder = json.JSONDecoder()
        found, end = None, 0
        for m in re.finditer(r"\{", text):
            if m.start() < end:
                continue  # inside an object already read (a nested $defs schema)
            try:
                obj, stop = decoder.raw_decode(text, m.start())
            except ValueError:
                continue
            end = stop
            if isinstance(obj, dict) and "properties" in obj and obj.get("type") == "object":
                found = obj
        return found

    @property
    def schema_name(self) -> str | None:
        """The response format's or tool's name; for a schema in the prompt, its title."""
        if self.mode == "tools":
            return (self.tool or {}).get("name")
        if self.mode == "json_schema":
            return (self.body["response_format"].get("json_schema") or {}).get("name")
        if self.mode == "json_object":
            return (self.schema or {}).get("title")
        return None


@dataclass
class Reply:
    """A responder's reply with extras: ``logprob`` of the first token (for logprobs requests);
    ``tool``, the function a tools request's call names (default: the one it asks for, else its
    first)."""

    content: Any
    logprob: float | None = None
    tool: str | None = None


class MockHTTPError(Exception):
    def __init__(self, status: int, message: str = "mock error"):
        super().__init__(message)
        self.status, self.message = status, message


Responder = Callable[[ChatRequest], Any]


def refuses_json_schema(req: ChatRequest) -> None:
    """A responder that makes the server behave like llama-cpp-python's: ``response_format``
    ``json_schema`` is refused with its HTTP 500 validation error (``json_object`` is served)."""
    if req.mode == "json_schema":
        raise MockHTTPError(
            500,
            "1 validation error: {'type': 'literal_error', 'loc': ('body', "
            "'response_format', 'type'), 'msg': \"Input should be 'text' or "
            "'json_object'\", 'input': 'json_schema'}",
        )
    return None


@dataclass
class Recorded:
    """One request the server answered: its path (under /v1), JSON body and what it sent back."""

    path: str
    body: dict
    status: int = 200
    reply: Any = None
    at: float = field(default_factory=time.time)

    @property
    def chat(self) -> ChatRequest:
        return ChatRequest(self.body)


# --------------------------------------------------------------------------- the server


class MockOpenAI:
    """The mock server; ``url`` is its ``/v1`` base URL once started (``start()`` or ``with``).

    ``responders`` are tried in order for every chat request; ``default_text`` answers plain
    requests no responder took; ``dim`` is the embedding dimension when a request names none;
    ``latency`` seconds are slept per request; ``array_items`` is passed to ``instance_of``.
    """

    def __init__(
        self,
        responders: list[Responder] | None = None,
        *,
        dim: int = 256,
        latency: float = 0.0,
        default_text: str = "OK",
        array_items: int = 0,
        models: tuple[str, ...] = ("mock-model", "mock-embedder"),
    ):
        self.responders = list(responders or [])
        self.dim, self.latency, self.default_text = dim, latency, default_text
        self.array_items, self.models = array_items, models
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("MockOpenAI is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> MockOpenAI:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                path = self._path()
                if path == "/models":
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {"id": m, "object": "model", "created": 0, "owned_by": "mock"}
                                for m in mock.models
                            ],
                        },
                        record=Recorded(path, {}),
                    )
                else:
                    self._send(
                        404, _error(f"no route GET {self.path}"), record=Recorded(path, {}, 404)
                    )

            def do_POST(self) -> None:
                path = self._path()
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, _error("body is not JSON"), record=Recorded(path, {}, 400))
                    return
                record = Recorded(path, body)
                if mock.latency:
                    time.sleep(mock.latency)
                try:
                    if path == "/chat/completions":
                        payload = mock._chat(body)
                    elif path == "/embeddings":
                        payload = mock._embeddings(body)
                    else:
                        raise MockHTTPError(404, f"no route POST {self.path}")
                except MockHTTPError as e:
                    record.status = e.status
                    self._send(e.status, _error(e.message), record=record)
                    return
                except Exception as e:  # a responder's bug: a 500 the test sees, not a hang
                    record.status = 500
                    self._send(500, _error(f"mock failed: {type(e).__name__}: {e}"), record=record)
                    return
                record.reply = payload
                self._send(200, payload, record=record)

            def _path(self) -> str:
                path = self.path.split("?", 1)[0]
                return path[3:] if path.startswith("/v1/") else path

            def _send(self, status: int, payload: dict, record: Recorded) -> None:
                with mock._lock:
                    mock.requests.append(record)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, daemon=True, name="mock-openai"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> MockOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- assertions
    def calls(self, path: str | None = None) -> int:
        """Requests answered so far (to ``path``, e.g. "/chat/completions", if given)."""
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def chats(self) -> list[ChatRequest]:
        with self._lock:
            return [r.chat for r in self.requests if r.path == "/chat/completions"]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- endpoints
    def _content_for(self, req: ChatRequest) -> tuple[Any, float | None, str | None]:
        for responder in self.responders:
            reply = responder(req)
            if reply is not None:
                if isinstance(reply, Reply):
                    return reply.content, reply.logprob, reply.tool
                return reply, None, None
        schema = req.schema
        if schema is not None:
            return instance_of(schema, array_items=self.array_items), None, None
        if req.mode == "json_object":
            return {}, None, None
        return self.default_text, None, None

    def _chat(self, body: dict) -> dict:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise MockHTTPError(400, "messages must be a non-empty list")
        req = ChatRequest(body)
        content, logprob, tool = self._content_for(req)
        text = content if isinstance(content, str) else json.dumps(content)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        if req.mode == "tools":
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(self.requests)}",
                        "type": "function",
                        "function": {
                            "name": tool or req.schema_name or "tool",
                            "arguments": text,
                        },
                    }
                ],
            }
            finish = "tool_calls"
        logprobs = None
        if body.get("logprobs"):
            first = text.split()[0] if text.split() else text
            top = {"token": first, "logprob": -0.05 if logprob is None else logprob, "bytes": None}
            tops = [top][: max(1, int(body.get("top_logprobs") or 1))]
            logprobs = {"content": [{**top, "top_logprobs": tops}]}
        prompt_tokens = len(req.text) // 4
        return {
            "id": f"chatcmpl-mock-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model or "mock-model",
            "choices": [
                {"index": 0, "finish_reason": finish, "logprobs": logprobs, "message": message}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text) // 4,
                "total_tokens": prompt_tokens + len(text) // 4,
            },
        }

    def _embeddings(self, body: dict) -> dict:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            raise MockHTTPError(400, "input must be a string or a non-empty list")
        if all(isinstance(i, int) for i in inputs):  # one tokenised input
            inputs = [" ".join(map(str, inputs))]
        dim = int(body.get("dimensions") or self.dim)
        data = []
        for i, item in enumerate(inputs):
            text = " ".join(map(str, item)) if isinstance(item, list) else str(item)
            vec = embed(text, dim)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        tokens = sum(len(str(i)) // 4 for i in inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "mock-embedder"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _error(message: str) -> dict:
    return {"error": {"message": message, "type": "mock_error", "param": None, "code": None}}
