"""The model interface: one abstract provider call, everything else (cache, log, re-asks) shared.

``Model.complete`` is what every room calls. It looks the request up in the workspace's
content-addressed cache (so a re-run after a kill repeats no answered call), otherwise calls
``execute`` -- the one method a provider implements -- under the structured-output strategy that
works for this server (``structured``), validates the reply with pydantic (or the caller's
``parse``), re-asks a bounded number of times with the problem sent back, and logs every HTTP
attempt with the strategy used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ..errors import AmgError
from ..progress import say
from ..workspace import Workspace
from ._batch_state import active_collector as _batch_collector, plans_batch as _plans_batch
from ._errors import CallFailed, FatalProviderError, scrub, shorten
from ._http import Attempt, recording
from ._store import CallStore
from ._throttle import Slot, Throttle
from .structured import (STRATEGIES, STRATEGY_FIELDS, StructuredOutput, feedback,
                         schema_instructions, validate_reply)
from .usage import Usage
from .. import invocation

CACHE_VERSION = 1
_UNRESOLVED = object()
MAX_BUDGET = 16384  # the most a re-ask after a cut-off reply may raise the output budget to
DEFAULT_BUDGET = 2048  # for a call that states none: never generate to the context limit by omission

Parse = Callable[[str], Any]
"""A caller's reply parser for plain-text answers: returns the value or raises ValueError(problem)."""



def _refuse_in_dry_run(label: str, purpose: str) -> None:
    """A dry run sends nothing: a call it reaches that the cache cannot answer stops it."""
    from .. import invocation

    if invocation.dry_run():
        from ._errors import DryRunCall

        raise DryRunCall(f"{label}: a dry run sends nothing, and this step ({purpose or 'a call'}) "
                         "needs an answer not in the workspace", purpose)

class ModelOptions(BaseModel):
    """Options every provider accepts; providers subclass this (extra keys are errors)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    invalid_output_retries: int = Field(2, ge=0, le=10,
                                        description="Re-asks after a reply that is not valid JSON "
                                                    "for the requested schema.")
    structured_output: StructuredOutput = Field(
        "auto", description="How to ask for JSON: auto (try json_schema, json_object, tools, "
                            "prompt in turn, remembered per server), or force one.")
    max_tokens: int | None = Field(None, gt=0, description="Output token limit of every call "
                                                           "(default: each call's own budget).")
    timeout: float = Field(120.0, gt=0, description="Seconds per HTTP attempt.")
    price: tuple[float, float] | None = Field(
        None, description="USD per million input and output tokens (--price) for a model the "
                          "price database has no price for (a local server).")


class SdkOptions(ModelOptions):
    """Options of the SDK-backed providers."""

    api_key: SecretStr | None = None
    max_retries: int = Field(4, ge=0, le=20, description="SDK retries on 429/5xx/timeouts.")
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
    strategy: str | None = None  # how to ask for ``schema`` (see ``structured.STRATEGIES``)
    max_tokens: int | None = None  # output budget; None: the provider's default

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
    strategy: str | None = None  # the structured-output strategy that produced it
    tries: int = 0  # model replies this answer took (1: valid at first try; 0: from the cache)


def display_name(name: str) -> str:
    """A model name as people read it: llama-cpp-python reports the GGUF file path as the model
    id, which shortens to the file name; other names (``org/model``) stay as they are."""
    if name.startswith(("/", "./", "../", "~")) or name.lower().endswith((".gguf", ".bin")) \
            or (len(name) > 2 and name[1] == ":" and name[2] in "\\/"):
        return PurePath(name.replace("\\", "/")).name or name
    return name


def display_spec(spec: str) -> str:
    """``provider:model`` with the model part as ``display_name`` shows it."""
    provider, sep, name = spec.partition(":")
    return f"{provider}:{display_name(name)}" if sep else spec


class Model(ABC):
    """A provider model bound (optionally) to a workspace's cache and call log.

    Subclasses set ``provider``, ``Options`` and ``strategies`` and implement ``execute``.
    """

    provider: ClassVar[str] = ""
    Options: ClassVar[type[ModelOptions]] = ModelOptions
    strategies: ClassVar[tuple[str, ...]] = STRATEGIES  # structured output, in the order tried

    def __init__(self, name: str, *, workspace: Workspace | str | Path | None = None,
                 options: ModelOptions | None = None):
        self.name = name
        self.options = options or self.Options()
        if workspace is not None and not isinstance(workspace, Workspace):
            workspace = Workspace(workspace)
        self.workspace = workspace
        self.usage = Usage()
        self._store = CallStore(workspace) if workspace is not None else None
        forced = self.options.structured_output
        if forced != "auto" and forced not in self.strategies:
            from ..errors import BadInput

            raise BadInput(f"--structured-output {forced} is not available for {self.provider} "
                           f"models; choose auto or one of: {', '.join(self.strategies)}")
        self._strategy: str | None = None
        self._strategy_lock = threading.Lock()
        self._said: set[str] = set()
        self._inflight: dict[str, threading.Event] = {}  # chat bodies being forwarded upstream
        self._inflight_lock = threading.Lock()
        self.throttle = Throttle(lambda: self.label, self.say, self._in_flight)
        self.planned = Usage()  # dry runs: the calls ``plan`` counted (tokens estimated)
        self._planned_keys: set[str] = set()
        self._price: Any = _UNRESOLVED
        invocation.created(self)

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def display(self) -> str:
        """The spec as messages and progress bars show it (a GGUF path shortened to its name)."""
        return f"{self.provider}:{display_name(self.name)}"

    @property
    def family(self) -> str:
        """Model family for the judges' cross-family rule."""
        return self.provider

    @property
    def label(self) -> str:
        """How error messages name this model."""
        return self.display

    @property
    def endpoint(self) -> str:
        """The server this model talks to (the key of its remembered structured-output strategy)."""
        return self.provider

    @property
    def price(self):
        """This model's ``cost.Price`` (the price database's, or ``--price``), or None: unknown."""
        if self._price is _UNRESOLVED:
            from .cost import lookup

            self._price = lookup(self.provider, self.name, getattr(self, "base_url", None),
                                 self.options.price)
        return self._price

    def call_cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, *,
                  batch: bool = False) -> float | None:
        """USD of one call with these tokens; None when this model has no price (never 0).
        ``batch``: the provider's batch price (genai-prices' batch variants)."""
        price = self.price
        if price is None:
            return None
        try:
            return price.cost(input_tokens, output_tokens, cached_tokens, batch=batch)
        except LookupError:  # no price in effect at this date
            return None

    def plan(self, prompt: str, *, system: str | None = None,
             schema: type[BaseModel] | None = None, max_tokens: int | None = None,
             **kwargs: Any) -> bool:
        """Count the call ``complete`` with these arguments would make, without making it (dry
        runs): a cache hit counts as one; otherwise input tokens are estimated from the prompt as
        it would be sent (``cost.estimate_tokens``) and output tokens are the call's budget.
        Returns whether a call would be made."""
        for k in ("purpose", "parse"):
            kwargs.pop(k, None)
        key = self.cache_key(prompt, system=system, schema=schema, **kwargs)
        with self._strategy_lock:
            repeat = key in self._planned_keys  # an earlier call of this run would answer it
            self._planned_keys.add(key)
        if repeat or (self._store is not None and self._store.has(key)):
            self.planned.add(cache_hits=1)
            return False
        from .cost import estimate_tokens

        strategy = self.strategy() if schema is not None else None
        sent = (system or "") + self._ask_text(prompt, schema, strategy)
        tokens_in = estimate_tokens(sent)
        tokens_out = self.options.max_tokens or max_tokens or DEFAULT_BUDGET
        if _plans_batch():  # --dry-run --batch: the estimate at batch prices
            self.check_batch_api()
            cost = self.call_cost(tokens_in, tokens_out, batch=True)
            live = self.call_cost(tokens_in, tokens_out)
            self.planned.add(calls=1, input_tokens=tokens_in, output_tokens=tokens_out,
                             unpriced=cost is None, cost_usd=cost, batch_calls=1,
                             batch_cost_usd=cost, batch_live_cost_usd=live)
            return True
        cost = self.call_cost(tokens_in, tokens_out)
        self.planned.add(calls=1, input_tokens=tokens_in, output_tokens=tokens_out,
                         unpriced=cost is None, cost_usd=cost)
        return True

    def plan_unknown(self, n: int) -> None:
        """Count ``n`` calls whose prompts a dry run cannot build yet (e.g. judging arcs not
        rendered yet): counted as calls, without a token or cost estimate (summaries say so)."""
        if n and _plans_batch():
            self.check_batch_api()
            self.planned.add(calls=n, unestimated=n, batch_calls=n)
        elif n:
            self.planned.add(calls=n, unestimated=n)

    def secrets(self) -> tuple[str, ...]:
        key = getattr(self.options, "api_key", None)
        return (key.get_secret_value(),) if key else ()

    def empty_reply_hint(self) -> str:
        """What to check when replies come back empty (providers know their servers)."""
        return ""

    def say(self, message: str) -> None:
        """A notice for the person running the command, printed once per model."""
        with self._strategy_lock:
            if message in self._said:
                return
            self._said.add(message)
        say(message)

    @abstractmethod
    def execute(self, request: Request) -> RawReply:
        """Make one provider call (the SDK's retries included); raise ProviderError on failure."""

    def cache_params(self) -> dict[str, Any]:
        """Provider settings that change the answer and so belong in the cache key."""
        return {}

    def batch_api(self) -> Any:
        """The provider's batch API module (``llm/openai_batch``, ``llm/anthropic_batch``), or
        None when this model's server has none; providers with one also implement
        ``request_body(request) -> (body, tool)`` and ``batch_reply(payload, tool)``."""
        return None

    def check_batch_api(self) -> None:
        """Refuse ``--batch`` for a model whose server has no batch API (one line, how to fix)."""
        if self.batch_api() is None:
            raise FatalProviderError(f"--batch: {self.label} has no batch API (OpenAI's and "
                                     "Anthropic's own APIs have one; an OpenAI-compatible server "
                                     "does not): run without --batch")

    # -- structured output -------------------------------------------------------------------
    def strategy(self) -> str:
        """The strategy the next structured call uses: forced, remembered for this server, or first."""
        if self.options.structured_output != "auto":
            return self.options.structured_output
        with self._strategy_lock:
            if self._strategy is None:
                known = self._store.strategy(self.endpoint, self.name) if self._store else None
                self._strategy = known if known in self.strategies else self.strategies[0]
            return self._strategy

    def _refused(self, strategy: str, error: CallFailed) -> str:
        """Move on from a strategy the server refused; returns the note for the call log."""
        if self.options.structured_output != "auto":
            raise FatalProviderError(f"{self.label} does not accept --structured-output {strategy} "
                                     f"({error.field} refused): use --structured-output auto")
        with self._strategy_lock:
            if self._strategy == strategy:  # other threads may have moved it already
                i = self.strategies.index(strategy)
                if i + 1 >= len(self.strategies):
                    raise FatalProviderError(f"{self.label} refused every structured-output "
                                             f"strategy; last: {error}")
                self._strategy = self.strategies[i + 1]
                if self._store is not None:
                    self._store.remember(self.endpoint, self.name, self._strategy,
                                         f"{strategy} refused ({error.field})")
                moved = True
            else:
                moved = False
            now_using = self._strategy
        if moved:
            self.say(f"{self.label} refused structured output by {strategy} ({error.field}); "
                     f"using {now_using} from now on (remembered for this server in the workspace)")
        return f"{strategy} refused ({error.field}): moved to {now_using}"

    def _ask_text(self, prompt: str, schema: type[BaseModel] | None, strategy: str | None) -> str:
        if schema is not None:
            return prompt + schema_instructions(strategy, schema_json(schema))
        return prompt

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
        for k in ("purpose", "max_tokens", "parse"):
            kwargs.pop(k, None)
        return self._store is not None and self._store.has(self.cache_key(prompt, **kwargs))

    def complete(self, prompt: str, *, system: str | None = None,
                 schema: type[BaseModel] | None = None, temperature: float = 0.0,
                 logprobs: bool = False, top_logprobs: int = 0, purpose: str = "",
                 seed_key: str = "", max_tokens: int | None = None,
                 parse: Parse | None = None) -> Response:
        """Answer ``prompt`` (validated against ``schema``, or by ``parse``), cached and logged.

        ``seed_key`` asks for a distinct sample of the same prompt (e.g. vote 3 of 5) while
        keeping it cacheable: it is part of the cache key and seeds providers that take a seed.
        ``max_tokens`` is the output budget this call needs (``--max-tokens`` overrides it);
        an answer is never left to run to the context limit by omission.
        """
        key = self.cache_key(prompt, system=system, schema=schema, temperature=temperature,
                             logprobs=logprobs, top_logprobs=top_logprobs, seed_key=seed_key)
        if self._store is not None and (row := self._store.get(key)) is not None:
            parsed, problem = _check(row["response_text"], schema, parse)
            if problem is None:
                collector = _batch_collector()
                if collector is None or not collector.answered(key):  # not this run's batch
                    self.usage.add(cache_hits=1)
                return self._response(row["response_text"], parsed, key, cached=True,
                                      resolved=row["resolved_model"], latency=0.0,
                                      tokens=(row["input_tokens"], row["output_tokens"],
                                              row["cached_tokens"]),
                                      logprobs=json.loads(row["logprobs_json"] or "null"),
                                      strategy=row.get("strategy"), tries=0)
        _refuse_in_dry_run(self.label, purpose)
        forced_budget = self.options.max_tokens is not None
        budget = self.options.max_tokens or max_tokens or DEFAULT_BUDGET
        if (collector := _batch_collector()) is not None:  # --batch: sent later, in a batch
            collector.defer(self, key, prompt=prompt, system=system, schema=schema, parse=parse,
                            temperature=temperature, logprobs=logprobs, top_logprobs=top_logprobs,
                            seed_key=seed_key, purpose=purpose, budget=budget,
                            forced_budget=forced_budget)  # raises Deferred (or this run's failure)
        started = time.monotonic()
        attempt_no = 0
        asked, problem, note = prompt, "", None
        tries = 0
        while tries < self.options.invalid_output_retries + 1:
            strategy = self.strategy() if schema is not None else None
            req = Request(prompt=self._ask_text(asked, schema, strategy), system=system,
                          schema=schema, temperature=temperature, logprobs=logprobs,
                          top_logprobs=top_logprobs, seed_key=seed_key, purpose=purpose,
                          strategy=strategy, max_tokens=budget)
            with self.throttle.slot() as slot, \
                    recording(on_lost=lambda waited, s=slot: self._lost(s, waited)) as attempts:
                t0 = time.monotonic()
                try:
                    raw = self.execute(req)
                except CallFailed as e:
                    refused = (strategy is not None and e.kind == "unsupported"
                               and e.field in STRATEGY_FIELDS.get(strategy, ()))
                    if refused:
                        attempt_no = self._log(key, req, attempts, t0, attempt_no,
                                               status="unsupported", error=str(e),
                                               note=f"{strategy} refused ({e.field})")
                        self.usage.add(requests=max(len(attempts), 1))
                        note = self._refused(strategy, e)
                        continue
                    if e.kind == "timeout":
                        e = self._timeout_error(e, slot, len(attempts))
                    attempt_no = self._log(key, req, attempts, t0, attempt_no, status=e.kind,
                                           error=str(e), note=note)
                    self.usage.add(calls=1, failures=1, requests=max(len(attempts), 1))
                    raise e from None
                except AmgError as e:
                    attempt_no = self._log(key, req, attempts, t0, attempt_no,
                                           status=getattr(e, "kind", "fatal"), error=str(e),
                                           note=note)
                    self.usage.add(calls=1, failures=1, requests=max(len(attempts), 1))
                    raise
                slot.usable = True
            tries += 1
            cost = self.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
            self.usage.add(calls=1, requests=max(len(attempts), 1), input_tokens=raw.input_tokens,
                           output_tokens=raw.output_tokens, cached_tokens=raw.cached_tokens,
                           unpriced=cost is None, cost_usd=cost)
            if raw.refusal is not None:
                reason = shorten(scrub(raw.refusal or "no reason given", self.secrets()))
                self._log(key, req, attempts, t0, attempt_no, status="refused", raw=raw,
                          error=reason, note=note)
                self.usage.add(failures=1)
                raise CallFailed(f"{self.label} refused to answer: {reason}", kind="refusal")
            parsed, problem = _check(raw.text, schema, parse)
            if problem is not None and not raw.text.strip():
                problem = "the reply is empty"
                if hint := self.empty_reply_hint():
                    self.say(f"{self.label} sent an empty reply: {hint}")
                    problem += f" ({hint})"
            if problem is not None and raw.truncated:
                problem += (f" (the reply was cut off at the output token limit of {budget} tokens"
                            + (": raise --max-tokens)" if forced_budget or not budget else ")"))
            if problem is None:
                self._log(key, req, attempts, t0, attempt_no, status="ok", raw=raw, note=note)
                latency = round(time.monotonic() - started, 4)
                self._cache(key, req, raw, latency)
                return self._response(raw.text, parsed, key, cached=False,
                                      resolved=raw.resolved_model or self.name, latency=latency,
                                      tokens=(raw.input_tokens, raw.output_tokens, raw.cached_tokens),
                                      logprobs=raw.logprobs, strategy=strategy, tries=tries)
            attempt_no = self._log(key, req, attempts, t0, attempt_no, status="invalid_output",
                                   raw=raw, error=problem, note=note)
            asked = feedback(prompt, problem, raw.text)
            note = f"re-ask {tries + 1}: the problem was sent back"
            if (raw.truncated and schema is not None and budget and not forced_budget
                    and budget < MAX_BUDGET):  # a cut-off one-word answer rambled: no more room
                budget = min(budget * 2, MAX_BUDGET)
                note += f"; output budget raised to {budget} tokens"
        self.usage.add(failures=1)
        tries_n = self.options.invalid_output_retries + 1
        what = schema.__name__ if schema else "reply"
        raise CallFailed(f"{self.label} gave no valid {what} in {tries_n} "
                         f"tr{'y' if tries_n == 1 else 'ies'}: {problem}", kind="invalid_output",
                         problem=problem)

    # -- pass-through for products (``llm.serve``) ---------------------------------------------
    def execute_chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], RawReply]:
        """Send one OpenAI chat-completions body as the product built it; return the completion
        (JSON-able, OpenAI's shape) and its token counts. Providers that can, override this."""
        raise FatalProviderError(f"{self.label} cannot serve a product's chat calls: products "
                                 "talk to an OpenAI-compatible endpoint, so use an openai: model "
                                 "(any OpenAI-compatible server via --base-url)")

    def execute_embed(self, texts: list[str], dimensions: int | None) -> tuple[list[list[float]], int]:
        """Embed ``texts`` (one vector each, in order) and return (vectors, input tokens)."""
        raise FatalProviderError(f"{self.label} serves no embeddings: give --embedder with an "
                                 "openai: model (any OpenAI-compatible server that embeds)")

    def chat_key(self, body: dict[str, Any]) -> str:
        payload = {"v": CACHE_VERSION, "kind": "chat", "family": self.family, "model": self.name,
                   "body": body, "params": self.cache_params()}
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def embed_key(self, text: str, dimensions: int | None) -> str:
        payload = {"v": CACHE_VERSION, "kind": "embedding", "family": self.family,
                   "model": self.name, "dimensions": dimensions, "text": text}
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(raw.encode()).hexdigest()

    def chat_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as it goes upstream: this model's name, and our ``--max-tokens`` (when given)
        in place of the product's budget. Everything else is the product's own."""
        out = {k: v for k, v in body.items() if k not in ("model", "stream", "stream_options")}
        out["model"] = self.name
        if self.options.max_tokens is not None:
            out.pop("max_completion_tokens", None)
            out["max_tokens"] = self.options.max_tokens
        return out

    def _upstream_failed(self, e: Exception, key: str, req: Request, attempts: list, t0: float,
                         slot: Any) -> Exception:
        """A forwarded chat or an embedding request failed: log it, count it, and return the
        error to raise (a timeout reworded by the throttle)."""
        if isinstance(e, CallFailed) and e.kind == "timeout":
            e = self._timeout_error(e, slot, len(attempts))
        self._log(key, req, attempts, t0, 0, status=getattr(e, "kind", "fatal"), error=str(e))
        self.usage.add(calls=1, failures=1, requests=max(len(attempts), 1))
        return e

    def forward_chat(self, body: dict[str, Any], *, purpose: str = "") -> dict[str, Any]:
        """One chat completion a product asked for, answered from the cache or upstream, logged.

        The cache key is the whole request body that reaches the model (messages, tools,
        response_format, temperature, budget...), so a re-run of a product replays every call it
        made before; only successful completions are cached. Raises ``CallFailed`` (this call
        failed after the SDK's retries) or ``FatalProviderError`` (no call can succeed).
        """
        body = self.chat_body(body)
        key = self.chat_key(body)
        while True:
            if self._store is not None and (row := self._store.get(key)) is not None:
                try:
                    completion = json.loads(row["response_text"])
                except (TypeError, ValueError):
                    completion = None
                if isinstance(completion, dict):
                    self.usage.add(cache_hits=1)
                    return completion
            # One upstream call per body at a time: a product that re-sends a request after its
            # own client timed out waits for the call already under way instead of starting a
            # second one (and then reads its answer from the cache, or tries itself if it failed).
            with self._inflight_lock:
                running = self._inflight.get(key)
                if running is None:
                    self._inflight[key] = mine = threading.Event()
            if running is None:
                break
            running.wait()
        try:
            return self._forward_chat(key, body, purpose)
        finally:
            with self._inflight_lock:
                self._inflight.pop(key, None)
            mine.set()

    def _forward_chat(self, key: str, body: dict[str, Any], purpose: str) -> dict[str, Any]:
        _refuse_in_dry_run(self.label, purpose)
        req = Request(prompt="", purpose=purpose)
        with self.throttle.slot() as slot, \
                recording(on_lost=lambda waited, s=slot: self._lost(s, waited)) as attempts:
            t0 = time.monotonic()
            try:
                completion, raw = self.execute_chat(body)
            except AmgError as e:
                raise self._upstream_failed(e, key, req, attempts, t0, slot) from None
            slot.usable = True
        latency = round(time.monotonic() - t0, 4)
        self.usage.add(calls=1, requests=max(len(attempts), 1), input_tokens=raw.input_tokens,
                       output_tokens=raw.output_tokens, cached_tokens=raw.cached_tokens)
        self._log(key, req, attempts, t0, 0, status="ok", raw=raw)
        if self._store is not None:
            system = "\n\n".join(str(m.get("content") or "") for m in body.get("messages", [])
                                  if isinstance(m, dict) and m.get("role") == "system") or None
            self._store.put({
                "key": key, "family": self.family, "requested_model": self.name,
                "resolved_model": raw.resolved_model or self.name, "purpose": purpose,
                "system": system,
                "prompt": json.dumps({k: v for k, v in body.items() if k != "model"},
                                     ensure_ascii=False, sort_keys=True),
                "schema_name": None, "response_text": json.dumps(completion, ensure_ascii=False),
                "logprobs_json": None, "input_tokens": raw.input_tokens,
                "output_tokens": raw.output_tokens, "cached_tokens": raw.cached_tokens,
                "latency_s": latency, "strategy": None,
            })
        return completion

    def embed(self, texts: list[str], *, dimensions: int | None = None,
              purpose: str = "") -> list[list[float]]:
        """One vector per text, each cached on its own (a text embedded before is not sent
        again); the texts not cached go upstream in one request, logged like a call."""
        keys = [self.embed_key(t, dimensions) for t in texts]
        out: list[list[float] | None] = [None] * len(texts)
        missing: dict[str, list[int]] = {}
        for i, (t, k) in enumerate(zip(texts, keys)):
            row = self._store.get(k) if self._store is not None else None
            if row is not None:
                out[i] = json.loads(row["response_text"])
            else:
                missing.setdefault(t, []).append(i)
        hits = len(texts) - sum(len(v) for v in missing.values())
        if hits:
            self.usage.add(cache_hits=hits)
        if not missing:
            return out  # type: ignore[return-value]
        _refuse_in_dry_run(self.label, purpose)
        todo = list(missing)
        key = hashlib.sha256("".join(keys[missing[t][0]] for t in todo).encode()).hexdigest()
        req = Request(prompt="", purpose=purpose)
        with self.throttle.slot() as slot, \
                recording(on_lost=lambda waited, s=slot: self._lost(s, waited)) as attempts:
            t0 = time.monotonic()
            try:
                vectors, tokens = self.execute_embed(todo, dimensions)
                if len(vectors) != len(todo):
                    raise CallFailed(f"{self.label} returned {len(vectors)} embeddings for "
                                     f"{len(todo)} inputs", kind="invalid_output")
            except AmgError as e:
                raise self._upstream_failed(e, key, req, attempts, t0, slot) from None
            slot.usable = True
        latency = round(time.monotonic() - t0, 4)
        raw = RawReply(resolved_model=self.name, input_tokens=tokens)
        self.usage.add(calls=1, requests=max(len(attempts), 1), input_tokens=tokens)
        self._log(key, req, attempts, t0, 0, status="ok", raw=raw,
                  note=f"{len(todo)} input(s) embedded, {hits} from the cache")
        for t, vec in zip(todo, vectors):
            for i in missing[t]:
                out[i] = vec
            if self._store is not None:
                self._store.put({
                    "key": keys[missing[t][0]], "family": self.family,
                    "requested_model": self.name, "resolved_model": self.name,
                    "purpose": purpose, "system": None, "prompt": t, "schema_name": "embedding",
                    "response_text": json.dumps(vec), "logprobs_json": None,
                    "input_tokens": None, "output_tokens": None, "cached_tokens": None,
                    "latency_s": latency, "strategy": None,
                })
        return out  # type: ignore[return-value]

    # -- helpers -----------------------------------------------------------------------------
    def _in_flight(self, n: int) -> None:
        self.usage.in_flight = n

    def _lost(self, slot: Slot, waited: float) -> None:
        timeout = self.options.timeout
        if waited >= timeout:
            self.throttle.timed_out(slot, timeout)

    def _timeout_error(self, e: CallFailed, slot: Slot, attempts: int) -> CallFailed:
        timeout = self.options.timeout
        self.throttle.timed_out(slot, timeout)
        queued = (f"; {slot.others} other request(s) were in flight, so it may have waited in "
                  "the server's queue (concurrency is now 1)" if slot.others else "")
        return CallFailed(
            f"{self.label}: no reply within the client-side timeout of {timeout:g} s "
            f"({attempts} attempt{'s' if attempts != 1 else ''}){queued}. A timeout, not a model "
            "failure: the server may still be computing; raise --timeout", kind="timeout")

    def _response(self, text: str, parsed: Any, key: str, *, cached: bool, resolved: str,
                  latency: float, tokens: tuple[int, int, int],
                  logprobs: list[dict[str, float]] | None, strategy: str | None,
                  tries: int) -> Response:
        return Response(text=text, parsed=parsed, cached=cached, model=resolved,
                        requested_model=self.name, family=self.family, input_tokens=tokens[0],
                        output_tokens=tokens[1], cached_tokens=tokens[2], logprobs=logprobs,
                        latency_s=latency, cache_key=key, strategy=strategy, tries=tries)

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
            "cached_tokens": raw.cached_tokens, "latency_s": latency, "strategy": req.strategy,
        })

    def _log(self, key: str, req: Request, attempts: list[Attempt], t0: float, attempt_no: int,
             *, status: str, raw: RawReply | None = None, error: str = "",
             note: str | None = None) -> int:
        """One call-log row per HTTP attempt; the last carries the outcome. Returns attempts so far."""
        if not attempts:  # providers without HTTP (scripted): one synthetic attempt
            a = Attempt()
            a.started, a.ended = t0, time.monotonic()
            attempts = [a]
        rows = []
        cost = (self.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
                if raw is not None else None)
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
                "error": shorten(scrub(error, self.secrets()), 1000) if last and error else None,
                "strategy": req.strategy, "note": note if i == 0 else None,
                "cost_usd": cost if raw and last else None, "command": invocation.command() or None,
            })
        if self._store is not None:
            self._store.log(rows)
        return attempt_no + len(attempts)


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> str:
    """The schema's JSON Schema, computed once per class (it is on every call's hot path)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True)


def _check(text: str, schema: type[BaseModel] | None, parse: Parse | None) -> tuple[Any, str | None]:
    """(parsed, None) or (None, one-line reason) for a reply."""
    if schema is not None:
        return validate_reply(text, schema)
    if parse is not None:
        try:
            return parse(text), None
        except ValueError as e:
            return None, str(e) or "the reply could not be read"
    return None, None
