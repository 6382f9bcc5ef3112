"""Fakes at the HTTP level: the real SDK clients over an httpx2.MockTransport serving API-shaped JSON."""

from __future__ import annotations

import json
from typing import Any

import httpx2

OPENAI_KEY = "sk-test-DONOTLEAK-openai-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-DONOTLEAK-anthropic-0123456789"


class FakeApi:
    """Serves queued replies in order (a Response, a callable(request), or an exception to raise)."""

    def __init__(self, *replies: Any):
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []
        self.times: list[float] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        import time

        self.requests.append(request)
        self.times.append(time.monotonic())
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(request)
        return reply

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]


def openai_ok(
    content: str | dict,
    *,
    model: str = "gpt-test-2025-01-01",
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    cached: int = 0,
    refusal: str | None = None,
    finish: str = "stop",
    logprobs: list | None = None,
) -> httpx2.Response:
    text = content if isinstance(content, str) else json.dumps(content)
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {
                        "role": "assistant",
                        "content": None if refusal else text,
                        "refusal": refusal,
                    },
                    "logprobs": {"content": logprobs} if logprobs else None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        },
    )


def openai_error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    etype: str = "error",
    headers: dict | None = None,
) -> httpx2.Response:
    return httpx2.Response(
        status,
        headers=headers or {},
        json={"error": {"message": message, "type": etype, "param": None, "code": code}},
    )


def anthropic_ok(
    tool_input: dict | None = None,
    *,
    tool: str = "record_Verdict",
    text: str = "",
    stop_reason: str = "tool_use",
    model: str = "claude-test-20250101",
    input_tokens: int = 50,
    output_tokens: int = 25,
    cache_read: int = 0,
    cache_write: int = 0,
) -> httpx2.Response:
    content: list[dict] = []
    if text:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": "toolu_1", "name": tool, "input": tool_input})
    return httpx2.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
            },
        },
    )


def anthropic_error(
    status: int, etype: str, message: str, headers: dict | None = None
) -> httpx2.Response:
    return httpx2.Response(
        status,
        headers=headers or {},
        json={"type": "error", "error": {"type": etype, "message": message}},
    )


def all_text(ws) -> str:
    """Every value of every table in the workspace, as one string (for secret scans)."""
    parts = []
    for table in ws.db.table_names():
        for row in ws.db[table].rows:
            parts.extend(str(v) for v in row.values() if v is not None)
    return "\n".join(parts)
