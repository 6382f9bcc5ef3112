"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, Ollama, llama.cpp) via base_url.

Structured output, by the strategy the model chose (``structured``): ``json_schema`` sends a
strict JSON schema built by the SDK's own ``openai.lib.type_to_response_format_param``;
``json_object`` sends ``{"type": "json_object", "schema": ...}`` (llama-cpp-python turns the
schema into a decoding grammar; other servers ignore the extra key) with the schema also named in
the prompt; ``tools`` forces a call of one function whose parameters are the schema; ``prompt``
sends nothing special. We validate the text ourselves with pydantic so an invalid reply can be
re-asked and logged instead of raising inside the SDK's parser.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import openai
from openai.lib import type_to_response_format_param
from openai.types.chat import ChatCompletion
from pydantic import Field

from .. import run_context
from ..errors import MissingApiKey
from ..workspace import Workspace
from ._errors import FatalProviderError, from_sdk_error
from ._http import attempts_so_far, install_hooks
from .model import Model, SdkOptions
from .request import RawReply, Request
from .servers import family_of
from .structured import schema_json

KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "not-needed"  # OpenAI-compatible servers usually take no key; the SDK wants one


class OpenAIOptions(SdkOptions):
    send_temperature: bool = Field(
        True,
        description="Set False for models that only accept the "
        "default temperature (reasoning models).",
    )


class OpenAIModel(Model):
    provider = "openai"
    Options = OpenAIOptions

    def __init__(
        self,
        name: str,
        *,
        workspace: Workspace | str | Path | None = None,
        base_url: str | None = None,
        options: OpenAIOptions | None = None,
    ):
        super().__init__(name, workspace=workspace, options=options)
        o: OpenAIOptions = self.options  # type: ignore[assignment]
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if self.base_url and _host(self.base_url) == "api.openai.com":
            self.base_url = None  # OpenAI itself, named explicitly
        key = o.api_key.get_secret_value() if o.api_key else os.environ.get(KEY_ENV)
        if not key:
            if not self.base_url and not run_context.current().dry_run:  # a dry run sends nothing
                raise MissingApiKey(KEY_ENV, f"{self.provider}:{name}")
            key = PLACEHOLDER_KEY
        self._key = key
        http_client = o.http_client if o.http_client is not None else openai.DefaultHttpx2Client()
        self.client = openai.OpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=o.max_retries,
            timeout=o.timeout,
            http_client=install_hooks(http_client),
        )

    @property
    def family(self) -> str:
        return family_of("openai", self.base_url)

    @property
    def label(self) -> str:
        return f"{self.display} at {_host(self.base_url)}" if self.base_url else self.display

    def secrets(self) -> tuple[str, ...]:
        return (self._key,) if self._key != PLACEHOLDER_KEY else ()

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/").lower()

    def empty_reply_hint(self) -> str:
        if not self.base_url:
            return ""
        return (
            "check the server's chat template: a GGUF model without one gets a generic "
            "prompt format and answers nothing; start llama-cpp-python's server with the "
            "model's --chat_format (e.g. gemma), or Ollama/vLLM with the model's template"
        )

    def cache_params(self) -> dict[str, Any]:
        o: OpenAIOptions = self.options  # type: ignore[assignment]
        return {"max_tokens": o.max_tokens, "send_temperature": o.send_temperature}

    def batch_api(self) -> Any:
        from . import openai_batch

        if self.base_url and openai_batch.unserved(self) is not None:
            return None  # a server without it (vLLM, Ollama, llama.cpp); a gateway may have it
        return openai_batch

    def check_batch_api(self) -> None:
        if self.base_url:
            from . import openai_batch

            if (why := openai_batch.unserved(self)) is not None:
                raise FatalProviderError(
                    f"--batch: {self.label} does not serve the OpenAI Batch and Files API ({why}): "
                    "run without --batch, or batch through a gateway that serves it (e.g. a "
                    "LiteLLM proxy)"
                )
        super().check_batch_api()

    def batch_reply(self, payload: dict[str, Any], tool: str | None) -> RawReply:
        """A batch result's reply body read as ``execute`` reads a live one."""
        return _reply(ChatCompletion.model_validate(payload), tool)

    def request_body(self, request: Request) -> tuple[dict[str, Any], str | None]:
        """The chat completions body ``execute`` sends (and a batch line carries), and the tool
        name the reply's answer comes in (None: the text)."""
        o: OpenAIOptions = self.options  # type: ignore[assignment]
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        kwargs: dict[str, Any] = {"model": self.name, "messages": messages}
        if o.send_temperature:
            kwargs["temperature"] = request.temperature
        tool = None
        if request.schema is not None:
            if request.strategy == "json_schema":
                kwargs["response_format"] = _response_format(request.schema)
            elif request.strategy == "json_object":
                kwargs["response_format"] = {
                    "type": "json_object",
                    "schema": _schema(request.schema),
                }
            elif request.strategy == "tools":
                tool = _tool_name(request.schema)
                kwargs["tools"] = [
                    {
                        "type": "function",
                        "function": {
                            "name": tool,
                            "description": "Record your answer in this structure.",
                            "parameters": _schema(request.schema),
                        },
                    }
                ]
                kwargs["tool_choice"] = {"type": "function", "function": {"name": tool}}
        if request.logprobs:
            kwargs["logprobs"] = True
            if request.top_logprobs:
                kwargs["top_logprobs"] = request.top_logprobs
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.max_tokens:
            # compatible servers know the older name; OpenAI itself prefers the newer one
            kwargs["max_tokens" if self.base_url else "max_completion_tokens"] = request.max_tokens
        return kwargs, tool

    def execute(self, request: Request) -> RawReply:
        kwargs, tool = self.request_body(request)
        try:
            # The SDK's documented raw ``post`` (same retries, headers and hooks as
            # ``chat.completions.create``) sends the body as built here: ``create`` first runs
            # every parameter through a recursive, typing-driven transform that cost a third of
            # the client's CPU per call (benchmarks/llm_throughput.py --profile).
            completion = self.client.post("/chat/completions", body=kwargs, cast_to=ChatCompletion)
        except openai.APIError as e:
            raise from_sdk_error(
                e,
                label=self.label,
                key_env=KEY_ENV,
                model=self.name,
                attempts=attempts_so_far(),
                secrets=self.secrets(),
            ) from None
        return _reply(completion, tool)

    def execute_chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], RawReply]:
        o: OpenAIOptions = self.options  # type: ignore[assignment]
        if not o.send_temperature:
            body = {k: v for k, v in body.items() if k not in ("temperature", "top_p")}
        try:
            completion = self.client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        except openai.APIError as e:
            raise from_sdk_error(
                e,
                label=self.label,
                key_env=KEY_ENV,
                model=self.name,
                attempts=attempts_so_far(),
                secrets=self.secrets(),
            ) from None
        return completion.model_dump(mode="json", exclude_unset=True), _reply(completion)

    def execute_embed(
        self, texts: list[str], dimensions: int | None
    ) -> tuple[list[list[float]], int]:
        kwargs: dict[str, Any] = {"input": texts, "model": self.name, "encoding_format": "float"}
        if dimensions:
            kwargs["dimensions"] = dimensions
        try:
            reply = self.client.embeddings.create(**kwargs)
        except openai.APIError as e:
            raise from_sdk_error(
                e,
                label=self.label,
                key_env=KEY_ENV,
                model=self.name,
                attempts=attempts_so_far(),
                secrets=self.secrets(),
            ) from None
        data = sorted(reply.data, key=lambda d: d.index)
        tokens = (getattr(reply.usage, "prompt_tokens", 0) or 0) if reply.usage else 0
        vectors = [list(d.embedding) for d in data]
        if any(not v or not all(isinstance(x, (int, float)) for x in v) for v in vectors):
            raise FatalProviderError(
                f"{self.label} returned embeddings that are not one vector of numbers per input "
                "(a server without pooling returns one vector per token: start llama-cpp-python "
                "with --embedding true --pooling_type 1, or use an embedding model)"
            )
        return vectors, tokens


def _tool_name(schema: type) -> str:
    return "record_" + "".join(c if c.isalnum() or c in "_-" else "_" for c in schema.__name__)[:50]


@lru_cache(maxsize=256)
def _response_format(schema: type) -> Any:
    return type_to_response_format_param(schema)


@lru_cache(maxsize=256)
def _schema(schema: type) -> dict:
    return json.loads(schema_json(schema))


def _reply(completion: Any, tool: str | None = None) -> RawReply:
    choice = completion.choices[0] if completion.choices else None
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    reply = RawReply(
        resolved_model=completion.model or "",
        input_tokens=(usage.prompt_tokens or 0) if usage else 0,
        output_tokens=(usage.completion_tokens or 0) if usage else 0,
        cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
    )
    if choice is None:
        return reply
    msg = choice.message
    if msg.refusal:
        reply.refusal = msg.refusal
    elif choice.finish_reason == "content_filter":
        reply.refusal = "the provider's content filter stopped the reply"
    reply.text = msg.content or ""
    calls = (
        [
            c
            for c in (getattr(msg, "tool_calls", None) or [])
            if getattr(getattr(c, "function", None), "name", None) == tool
        ]
        if tool
        else []
    )
    if calls:
        reply.text = calls[0].function.arguments or ""
    reply.truncated = choice.finish_reason == "length"
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    if content:
        reply.logprobs = [
            {t.token: t.logprob for t in (item.top_logprobs or [])} or {item.token: item.logprob}
            for item in content
        ]
    return reply


def _host(url: str) -> str:
    parsed = urlparse(url if "://" in url else f"http://{url}")
    host = parsed.hostname or url
    return f"{host}:{parsed.port}" if parsed.port else host
