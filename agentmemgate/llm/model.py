"""The model interface: one abstract provider call, everything else (cache, log, re-asks) shared.

``Model.complete`` is what every room calls. It looks the request up in the workspace's
content-addressed cache (so a re-run after a kill repeats no answered call), otherwise calls
``execute`` -- the one method a provider implements -- validates structured output with pydantic,
re-asks a bounded number of times on invalid output, and logs every HTTP attempt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ..errors import AmgError
from ..workspace import Workspace
from ._errors import CallFailed, scrub
from ._http import Attempt, recording
from ._store import CallStore
from .usage import Usage

CACHE_VERSION = 1


class ModelOptions(BaseModel):
    """Options every provider accepts; providers subclass this (extra keys are errors)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    invalid_output_retries: int = Field(2, ge=0, le=10,
                                        description="Re-asks after a reply that is not valid JSON "
                                                    "for the requested schema.")


class SdkOptions(ModelOptions):
    """Options of the SDK-backed providers."""

    api_key: SecretStr | None = None
    max_retries: int = Field(4, ge=0, le=20, description="SDK retries on 429/5xx/timeouts.")
    timeout: float = Field(120.0, gt=0, description="Seconds per HTTP attempt.")
    max_tokens: int | None = Field(None, gt=0)
    http_client: Any = None  # an httpx2 (or legacy httpx) Client, e.g. with a MockTransport


@dataclasses.dataclass(frozen=True)
class Request:
    """One completion request as a provider sees it."""

    prompt: str
    system: str | None = None
    schema: type[BaseModel] | None = None
    temperature: float = 0.0
    logprobs: bool = False
    top_logprobs: int = 0
    seed_key: str = ""
    purpose: str = ""

    @property
    def seed(self) -> int | None:
        """A provider sampling seed derived from ``seed_key`` (None when no key was given)."""
        if not self.seed_key:
            return None
        return int(hashlib.sha256(self.seed_key.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


class RawReply(BaseModel):
    """What ``execute`` returns: the provider's answer before validation."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    resolved_model: str = ""
    input_tokens: int = 0  # all input tokens, cached ones included
    output_tokens: int = 0
    cached_tokens: int = 0
    logprobs: list[dict[str, float]] | None = None
    refusal: str | None = None  # set when the model declined to answer
    truncated: bool = False  # stopped at the output token limit


class Response(BaseModel):
    """A validated answer, fresh or from the cache."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, protected_namespaces=())
    text: str
    parsed: Any = None
    cached: bool
    model: str  # the resolved model the provider reported
    requested_model: str
    family: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    logprobs: list[dict[str, float]] | None = None
    latency_s: float
    cache_key: str


class Model(ABC):
    """A provider model bound (optionally) to a workspace's cache and call log.

    Subclasses set ``provider`` and ``Options`` and implement ``execute``.
    """

    provider: ClassVar[str] = ""
    Options: ClassVar[type[ModelOptions]] = ModelOptions

    def __init__(self, name: str, *, workspace: Workspace | str | Path | None = None,
                 options: ModelOptions | None = None):
        self.name = name
        self.options = options or self.Options()
        if workspace is not None and not isinstance(workspace, Workspace):
            workspace = Workspace(workspace)
        self.workspace = workspace
        self.usage = Usage()
        self._store = CallStore(workspace) if workspace is not None else None

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def family(self) -> str:
        """Model family for the judges' cross-family rule."""
        return self.provider

    @property
    def label(self) -> str:
        """How error messages name this model."""
        return self.spec

    def secrets(self) -> tuple[str, ...]:
        key = getattr(self.options, "api_key", None)
        return (key.get_secret_value(),) if key else ()

    @abstractmethod
    def execute(self, request: Request) -> RawReply:
        """Make one provider call (the SDK's retries included); raise ProviderError on failure."""

    def cache_params(self) -> dict[str, Any]:
        """Provider settings that change the answer and so belong in the cache key."""
        return {}

    # -- the shared path ---------------------------------------------------------------------
    def cache_key(self, prompt: str, *, system: str | None = None,
                  schema: type[BaseModel] | None = None, temperature: float = 0.0,
                  logprobs: bool = False, top_logprobs: int = 0, seed_key: str = "") -> str:
        payload = {
            "v": CACHE_VERSION, "family": self.family, "model": self.name, "system": system,
            "prompt": prompt, "schema": schema_json(schema) if schema else None,
            "schema_name": schema.__name__ if schema else None, "temperature": temperature,
            "logprobs": logprobs, "top_logprobs": top_logprobs, "seed_key": seed_key,
            "params": self.cache_params(),
        }
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def is_cached(self, prompt: str, **kwargs: Any) -> bool:
        """Whether ``complete`` with these arguments would be answered from the cache (dry runs)."""
        kwargs.pop("purpose", None)
        return self._store is not None and self._store.has(self.cache_key(prompt, **kwargs))

    def complete(self, prompt: str, *, system: str | None = None,
                 schema: type[BaseModel] | None = None, temperature: float = 0.0,
                 logprobs: bool = False, top_logprobs: int = 0, purpose: str = "",
                 seed_key: str = "") -> Response:
        """Answer ``prompt`` (validated against ``schema`` when given), cached and logged.

        ``seed_key`` asks for a distinct sample of the same prompt (e.g. vote 3 of 5) while
        keeping it cacheable: it is part of the cache key and seeds providers that take a seed.
        """
        req = Request(prompt=prompt, system=system, schema=schema, temperature=temperature,
                      logprobs=logprobs, top_logprobs=top_logprobs, seed_key=seed_key,
                      purpose=purpose)
        key = self.cache_key(prompt, system=system, schema=schema, temperature=temperature,
                             logprobs=logprobs, top_logprobs=top_logprobs, seed_key=seed_key)
        if self._store is not None and (row := self._store.get(key)) is not None:
            parsed, problem = _validate(row["response_text"], schema)
            if problem is None:
                self.usage.add(cache_hits=1)
                return self._response(row["response_text"], parsed, key, cached=True,
                                      resolved=row["resolved_model"], latency=0.0,
                                      tokens=(row["input_tokens"], row["output_tokens"],
                                              row["cached_tokens"]),
                                      logprobs=json.loads(row["logprobs_json"] or "null"))
        started = time.monotonic()
        attempt_no = 0
        problem = ""
        for _ in range(self.options.invalid_output_retries + 1):
            with recording() as attempts:
                t0 = time.monotonic()
                try:
                    raw = self.execute(req)
                except AmgError as e:
                    attempt_no = self._log(key, req, attempts, t0, attempt_no,
                                           status=getattr(e, "kind", "fatal"), error=str(e))
                    self.usage.add(calls=1, failures=1, requests=max(len(attempts), 1))
                    raise
            self.usage.add(calls=1, requests=max(len(attempts), 1), input_tokens=raw.input_tokens,
                           output_tokens=raw.output_tokens, cached_tokens=raw.cached_tokens)
            if raw.refusal is not None:
                reason = scrub(raw.refusal or "no reason given", self.secrets())[:300]
                self._log(key, req, attempts, t0, attempt_no, status="refused", raw=raw, error=reason)
                self.usage.add(failures=1)
                raise CallFailed(f"{self.label} refused to answer: {reason}", kind="refusal")
            parsed, problem = _validate(raw.text, schema)
            if problem is not None and raw.truncated:
                problem += " (the reply was cut off at the output token limit: raise max_tokens)"
            if problem is None:
                self._log(key, req, attempts, t0, attempt_no, status="ok", raw=raw)
                latency = round(time.monotonic() - started, 4)
                self._cache(key, req, raw, latency)
                return self._response(raw.text, parsed, key, cached=False,
                                      resolved=raw.resolved_model or self.name, latency=latency,
                                      tokens=(raw.input_tokens, raw.output_tokens, raw.cached_tokens),
                                      logprobs=raw.logprobs)
            attempt_no = self._log(key, req, attempts, t0, attempt_no, status="invalid_output",
                                   raw=raw, error=problem)
        self.usage.add(failures=1)
        tries = self.options.invalid_output_retries + 1
        raise CallFailed(f"{self.label} gave no valid {schema.__name__ if schema else 'reply'} "
                         f"in {tries} tries: {problem}", kind="invalid_output")

    # -- helpers -----------------------------------------------------------------------------
    def _response(self, text: str, parsed: Any, key: str, *, cached: bool, resolved: str,
                  latency: float, tokens: tuple[int, int, int],
                  logprobs: list[dict[str, float]] | None) -> Response:
        return Response(text=text, parsed=parsed, cached=cached, model=resolved,
                        requested_model=self.name, family=self.family, input_tokens=tokens[0],
                        output_tokens=tokens[1], cached_tokens=tokens[2], logprobs=logprobs,
                        latency_s=latency, cache_key=key)

    def _cache(self, key: str, req: Request, raw: RawReply, latency: float) -> None:
        if self._store is None:
            return
        self._store.put({
            "key": key, "family": self.family, "requested_model": self.name,
            "resolved_model": raw.resolved_model or self.name, "purpose": req.purpose,
            "system": req.system, "prompt": req.prompt,
            "schema_name": req.schema.__name__ if req.schema else None,
            "response_text": raw.text,
            "logprobs_json": json.dumps(raw.logprobs) if raw.logprobs is not None else None,
            "input_tokens": raw.input_tokens, "output_tokens": raw.output_tokens,
            "cached_tokens": raw.cached_tokens, "latency_s": latency,
        })

    def _log(self, key: str, req: Request, attempts: list[Attempt], t0: float, attempt_no: int,
             *, status: str, raw: RawReply | None = None, error: str = "") -> int:
        """One call-log row per HTTP attempt; the last carries the outcome. Returns attempts so far."""
        if not attempts:  # providers without HTTP (scripted): one synthetic attempt
            a = Attempt()
            a.started, a.ended = t0, time.monotonic()
            attempts = [a]
        rows = []
        for i, a in enumerate(attempts):
            last = i == len(attempts) - 1
            if not last:
                row_status = f"http_{a.http_status}" if a.http_status else "no_response"
            elif error and status not in ("refused", "invalid_output") and (a.http_status or 0) >= 400:
                row_status = f"http_{a.http_status}"
            else:
                row_status = status
            rows.append({
                "cache_key": key, "family": self.family, "requested_model": self.name,
                "resolved_model": (raw.resolved_model if raw and last else None),
                "purpose": req.purpose, "attempt": attempt_no + i + 1, "status": row_status,
                "http_status": a.http_status, "retry_after_s": a.retry_after_s,
                "input_tokens": raw.input_tokens if raw and last else None,
                "output_tokens": raw.output_tokens if raw and last else None,
                "cached_tokens": raw.cached_tokens if raw and last else None,
                "latency_s": a.latency_s,
                "error": scrub(error, self.secrets())[:1000] if last and error else None,
            })
        if self._store is not None:
            self._store.log(rows)
        return attempt_no + len(attempts)


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> str:
    """The schema's JSON Schema, computed once per class (it is on every call's hot path)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True)


def _validate(text: str, schema: type[BaseModel] | None) -> tuple[Any, str | None]:
    """(parsed, None) or (None, one-line reason) for a reply against the requested schema."""
    if schema is None:
        return None, None
    try:
        return schema.model_validate_json(text), None
    except ValidationError as e:
        errs = e.errors()
        if errs and errs[0].get("type") == "json_invalid":
            return None, f"reply is not valid JSON ({errs[0].get('msg', '')})"
        first = "; ".join(f"{'.'.join(str(p) for p in x.get('loc', ())) or 'reply'}: {x.get('msg')}"
                          for x in errs[:3])
        return None, f"reply does not match {schema.__name__}: {first}"
