"""Anthropic Messages API (and Anthropic-compatible servers via base_url).

Structured output: forced tool use (``tool_choice`` names the tool) first; a server that refuses
tools moves the model to ``prompt`` (the schema in the prompt, JSON read from the text), as the
OpenAI adapter does.

Sampling: the SDK's API version (2026-10-21) rejects temperature/top_p/top_k, and SDK 2.x
dropped them, so ``temperature`` is not sent (it still separates cache entries). Distinct samples
of one prompt come from ``seed_key``, which makes each a separate, cached call.

Token accounting: Anthropic's ``input_tokens`` excludes prompt-cache reads and writes, so our
input count is ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` and the
cached part is ``cache_read_input_tokens`` -- the same meaning OpenAI's ``prompt_tokens`` and
``cached_tokens`` have. Anthropic returns no logprobs: ``Response.logprobs`` stays None (use
``seed_key`` samples for vote-based confidence).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anthropic
from anthropic.types import Message

from .. import run_context
from ..errors import MissingApiKey
from ..workspace import Workspace
from ._errors import from_sdk_error
from ._http import attempts_so_far, install_hooks
from .model import Model, SdkOptions
from .request import RawReply, Request
from .structured import schema_json

KEY_ENV = "ANTHROPIC_API_KEY"


DEFAULT_MAX_TOKENS = 8192  # Anthropic requires an output limit; used when a call states none


class AnthropicOptions(SdkOptions):
    pass


class AnthropicModel(Model):
    provider = "anthropic"
    Options = AnthropicOptions
    strategies = ("tools", "prompt")

    def __init__(
        self,
        name: str,
        *,
        workspace: Workspace | str | Path | None = None,
        base_url: str | None = None,
        options: AnthropicOptions | None = None,
    ):
        super().__init__(name, workspace=workspace, options=options)
        o: AnthropicOptions = self.options  # type: ignore[assignment]
        key = o.api_key.get_secret_value() if o.api_key else os.environ.get(KEY_ENV)
        if not key:
            if not run_context.current().dry_run:  # a dry run sends nothing: it needs no key
                raise MissingApiKey(KEY_ENV, f"{self.provider}:{name}")
            key = "dry-run-sends-nothing"
        self._key = key
        self.base_url = base_url
        http_client = o.http_client if o.http_client is not None else anthropic.DefaultHttpxClient()
        self.client = anthropic.Anthropic(
            api_key=key,
            base_url=base_url,
            max_retries=o.max_retries,
            timeout=o.timeout,
            http_client=install_hooks(http_client),
        )

    def secrets(self) -> tuple[str, ...]:
        return (self._key,)

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/").lower()

    def cache_params(self) -> dict[str, Any]:
        return {"max_tokens": self.options.max_tokens or DEFAULT_MAX_TOKENS}

    def batch_api(self) -> Any:
        if self.base_url:  # a compatible server (or a proxy): no batch API to rely on
            return None
        from . import anthropic_batch

        return anthropic_batch

    def batch_reply(self, payload: dict[str, Any], tool: str | None) -> RawReply:
        """A batch result's reply body read as ``execute`` reads a live one."""
        return _reply(Message.model_validate(payload), tool)

    def request_body(self, request: Request) -> tuple[dict[str, Any], str | None]:
        """The Messages API parameters ``execute`` sends (and a batch request carries), and the
        tool name the answer comes in (None: the text)."""
        kwargs: dict[str, Any] = {
            "model": self.name,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system:
            kwargs["system"] = request.system
        use_tool = request.schema is not None and request.strategy == "tools"
        tool = _tool_name(request.schema) if use_tool else None
        if use_tool:
            kwargs["tools"] = [
                {
                    "name": tool,
                    "description": "Record your answer in this structure.",
                    "input_schema": json.loads(schema_json(request.schema)),
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": tool}
        return kwargs, tool

    def execute(self, request: Request) -> RawReply:
        kwargs, tool = self.request_body(request)
        try:
            message = self.client.messages.create(**kwargs)
        except anthropic.APIError as e:
            raise from_sdk_error(
                e,
                label=self.label,
                key_env=KEY_ENV,
                model=self.name,
                attempts=attempts_so_far(),
                secrets=self.secrets(),
            ) from None
        return _reply(message, tool)


def _tool_name(schema: type) -> str:
    return "record_" + "".join(c if c.isalnum() or c in "_-" else "_" for c in schema.__name__)[:50]


def _reply(message: Any, tool: str | None) -> RawReply:
    u = message.usage
    cache_read = getattr(u, "cache_read_input_tokens", None) or 0
    cache_write = getattr(u, "cache_creation_input_tokens", None) or 0
    reply = RawReply(
        resolved_model=message.model or "",
        input_tokens=(u.input_tokens or 0) + cache_read + cache_write,
        output_tokens=u.output_tokens or 0,
        cached_tokens=cache_read,
        truncated=message.stop_reason == "max_tokens",
    )
    texts = [b.text for b in message.content if getattr(b, "type", "") == "text"]
    if message.stop_reason == "refusal":
        reply.refusal = " ".join(texts).strip() or "stop_reason refusal"
        return reply
    if tool is not None:
        uses = [
            b for b in message.content if getattr(b, "type", "") == "tool_use" and b.name == tool
        ]
        reply.text = json.dumps(uses[0].input, ensure_ascii=False) if uses else " ".join(texts)
    else:
        reply.text = "".join(texts)
    return reply
