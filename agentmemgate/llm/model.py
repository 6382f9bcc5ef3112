"""The model interface: one abstract provider call, everything else (cache, log, re-asks) shared.

``Model.complete`` is what every room calls. It looks the request up in the workspace's
content-addressed cache (so a re-run after a kill repeats no answered call), otherwise calls
``execute`` -- the one method a provider implements -- under the structured-output strategy that
works for this server (``structured``), validates the reply with pydantic (or the caller's
``parse``), re-asks a bounded number of times with the problem sent back, and logs every HTTP
attempt with the strategy used. The calls products make through their own clients take the
same cache and log by another door (``forwarding``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from .. import run_context
from ..errors import AmgError
from ..progress import say
from ..workspace import Workspace
from ._batch_state import active_collector as _batch_collector
from ._batch_state import plans_batch as _plans_batch
from ._errors import CallFailed, FatalProviderError, scrub, shorten
from ._http import Attempt, recording
from ._store import CACHE_VERSION, CallStore
from ._throttle import Slot, Throttle
from .forwarding import Forwarding
from .request import RawReply, Request, refuse_in_dry_run
from .structured import (
    STRATEGIES,
    STRATEGY_FIELDS,
    StructuredOutput,
    feedback,
    schema_instructions,
    validate_reply,
)
from .usage import Usage

_UNRESOLVED = object()
MAX_BUDGET = 16384  # the most a re-ask after a cut-off reply may raise the output budget to
DEFAULT_BUDGET = (
    2048  # for a call that states none: never generate to the context limit by omission
)

Parse = Callable[[str], Any]
"""A caller's reply parser for plain-text answers: returns the value or raises ValueError(problem)."""


class ModelOptions(BaseModel):
    """Options every provider accepts; providers subclass this (extra keys are errors)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    invalid_output_retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Re-asks after a reply that is not valid JSON for the requested schema.",
    )
    structured_output: StructuredOutput = Field(
        "auto",
        description="How to ask for JSON: auto (try json_schema, json_object, tools, "
        "prompt in turn, remembered per server), or force one.",
    )
    max_tokens: int | None = Field(
        None,
        gt=0,
        description="Output token limit of every call (default: each call's own budget).",
    )
    timeout: float = Field(120.0, gt=0, description="Seconds per HTTP attempt.")
    price: tuple[float, float] | None = Field(
        None,
        description="USD per million input and output tokens (--price) for a model the "
        "price database has no price for (a local server).",
    )
    repeat: int = Field(
        1,
        ge=1,
        description="Which run of a repeated evaluation this model serves (amg eval run "
        "--repeat): runs after the first have cache entries of their own, so each asks anew.",
    )


class SdkOptions(ModelOptions):
    """Options of the SDK-backed providers."""

    api_key: SecretStr | None = None
    max_retries: int = Field(4, ge=0, le=20, description="SDK retries on 429/5xx/timeouts.")
    http_client: Any = None  # an httpx2 (or legacy httpx) Client, e.g. with a MockTransport


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
    if (
        name.startswith(("/", "./", "../", "~"))
        or name.lower().endswith((".gguf", ".bin"))
        or (len(name) > 2 and name[1] == ":" and name[2] in "\\/")
    ):
        return PurePath(name.replace("\\", "/")).name or name
    return name


def display_spec(spec: str) -> str:
    """``provider:model`` with the model part as ``display_name`` shows it."""
    provider, sep, name = spec.partition(":")
    return f"{provider}:{display_name(name)}" if sep else spec


class Model(Forwarding, ABC):
    """A provider model bound (optionally) to a workspace's cache and call log.

    Subclasses set ``provider``, ``Options`` and ``strategies`` and implement ``execute`` (and,
    to serve products, ``execute_chat`` / ``execute_embed``: ``forwarding``).
    """

    provider: ClassVar[str] = ""
    Options: ClassVar[type[ModelOptions]] = ModelOptions
    strategies: ClassVar[tuple[str, ...]] = STRATEGIES  # structured output, in the order tried

    def __init__(
        self,
        name: str,
        *,
        workspace: Workspace | str | Path | None = None,
        options: ModelOptions | None = None,
    ):
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

            raise BadInput(
                f"--structured-output {forced} is not available for {self.provider} "
                f"models; choose auto or one of: {', '.join(self.strategies)}"
            )
        self._strategy: str | None = None
        self._strategy_lock = threading.Lock()
        self._said: set[str] = set()
        self._inflight: dict[str, threading.Event] = {}  # products' chat bodies sent upstream now
        self._inflight_lock = threading.Lock()
        self.throttle = Throttle(lambda: self.label, self.say, self._in_flight)
        self.planned = Usage()  # dry runs: the calls ``plan`` counted (tokens estimated)
        self._planned_keys: set[str] = set()
        self._price: Any = _UNRESOLVED
        run_context.current().models.append(self)

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

            self._price = lookup(
                self.provider, self.name, getattr(self, "base_url", None), self.options.price
            )
        return self._price

    def call_cost(
        self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, *, batch: bool = False
    ) -> float | None:
        """USD of one call with these tokens; None when this model has no price (never 0).
        ``batch``: the provider's batch price (genai-prices' batch variants)."""
        price = self.price
        if price is None:
            return None
        try:
            return price.cost(input_tokens, output_tokens, cached_tokens, batch=batch)
        except LookupError:  # no price in effect at this date
            return None

    def plan(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        **kwargs: Any,
    ) -> bool:
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
            self.planned.add(
                calls=1,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                unpriced=cost is None,
                cost_usd=cost,
                batch_calls=1,
                batch_cost_usd=cost,
                batch_live_cost_usd=live,
            )
            return True
        cost = self.call_cost(tokens_in, tokens_out)
        self.planned.add(
            calls=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            unpriced=cost is None,
            cost_usd=cost,
        )
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
        """Make one provider call (the SDK's retries included); raise ``CallFailed`` or
        ``FatalProviderError`` on failure."""

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
            raise FatalProviderError(
                f"--batch: {self.label} has no batch API (OpenAI's and "
                "Anthropic's own APIs have one, and so does a gateway that "
                "serves OpenAI's): run without --batch"
            )

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
            raise FatalProviderError(
                f"{self.label} does not accept --structured-output {strategy} "
                f"({error.field} refused): use --structured-output auto"
            )
        with self._strategy_lock:
            if self._strategy == strategy:  # other threads may have moved it already
                i = self.strategies.index(strategy)
                if i + 1 >= len(self.strategies):
                    raise FatalProviderError(
                        f"{self.label} refused every structured-output strategy; last: {error}"
                    )
                self._strategy = self.strategies[i + 1]
                if self._store is not None:
                    self._store.remember(
                        self.endpoint,
                        self.name,
                        self._strategy,
                        f"{strategy} refused ({error.field})",
                    )
                moved = True
            else:
                moved = False
            now_using = self._strategy
        if moved:
            self.say(
                f"{self.label} refused structured output by {strategy} ({error.field}); "
                f"using {now_using} from now on (remembered for this server in the workspace)"
            )
        return f"{strategy} refused ({error.field}): moved to {now_using}"

    def _ask_text(self, prompt: str, schema: type[BaseModel] | None, strategy: str | None) -> str:
        if schema is not None:
            return prompt + schema_instructions(strategy, schema_json(schema))
        return prompt

    # -- the shared path ---------------------------------------------------------------------
    def cache_key(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        temperature: float = 0.0,
        logprobs: bool = False,
        top_logprobs: int = 0,
        seed_key: str = "",
    ) -> str:
        payload = {
            "v": CACHE_VERSION,
            "family": self.family,
            "model": self.name,
            "system": system,
            "prompt": prompt,
            "schema": schema_json(schema) if schema else None,
            "schema_name": schema.__name__ if schema else None,
            "temperature": temperature,
            "logprobs": logprobs,
            "top_logprobs": top_logprobs,
            "seed_key": seed_key,
            "params": self.cache_params(),
        }
        if self.options.repeat > 1:  # a repeated run's own entries; the first run's keys unchanged
            payload["repeat"] = self.options.repeat
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def is_cached(self, prompt: str, **kwargs: Any) -> bool:
        """Whether ``complete`` with these arguments would be answered from the cache (dry runs)."""
        for k in ("purpose", "max_tokens", "parse"):
            kwargs.pop(k, None)
        return self._store is not None and self._store.has(self.cache_key(prompt, **kwargs))

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        temperature: float = 0.0,
        logprobs: bool = False,
        top_logprobs: int = 0,
        purpose: str = "",
        seed_key: str = "",
        max_tokens: int | None = None,
        parse: Parse | None = None,
    ) -> Response:
        """Answer ``prompt`` (validated against ``schema``, or by ``parse``), cached and logged.

        ``seed_key`` asks for a distinct sample of the same prompt (e.g. vote 3 of 5) while
        keeping it cacheable: it is part of the cache key and seeds providers that take a seed.
        ``max_tokens`` is the output budget this call needs (``--max-tokens`` overrides it);
        an answer is never left to run to the context limit by omission.
        """
        key = self.cache_key(
            prompt,
            system=system,
            schema=schema,
            temperature=temperature,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            seed_key=seed_key,
        )
        if (hit := self._from_cache(key, schema, parse)) is not None:
            return hit
        refuse_in_dry_run(self.label, purpose)
        ask = _Asking(
            key=key,
            prompt=prompt,
            system=system,
            schema=schema,
            parse=parse,
            temperature=temperature,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            seed_key=seed_key,
            purpose=purpose,
            asked=prompt,
            budget=self.options.max_tokens or max_tokens or DEFAULT_BUDGET,
            forced_budget=self.options.max_tokens is not None,
        )
        if (collector := _batch_collector()) is not None:  # --batch: sent later, in a batch
            # raises Deferred (or this run's failure)
            collector.defer(
                self,
                key,
                prompt=prompt,
                system=system,
                schema=schema,
                parse=parse,
                temperature=temperature,
                logprobs=logprobs,
                top_logprobs=top_logprobs,
                seed_key=seed_key,
                purpose=purpose,
                budget=ask.budget,
                forced_budget=ask.forced_budget,
            )
        started = time.monotonic()
        tries = self.options.invalid_output_retries + 1
        while ask.tries < tries:
            sent = self._attempt(ask)
            if sent is None:
                continue  # the server refused this way of asking for JSON: ask the next way
            ask.tries += 1
            raw = sent.raw
            parsed, problem = (None, None) if raw.refusal is not None else self._read(ask, raw)
            self._count(
                sent.attempts,
                raw,
                failed=raw.refusal is not None or (problem is not None and ask.tries == tries),
            )
            if raw.refusal is not None:
                reason = shorten(scrub(raw.refusal or "no reason given", self.secrets()))
                self._log_reply(ask, sent, "refused", reason)
                raise CallFailed(f"{self.label} refused to answer: {reason}", kind="refusal")
            if problem is None:
                self._log_reply(ask, sent, "ok")
                latency = round(time.monotonic() - started, 4)
                self._cache(key, sent.req, raw, latency)
                return self._response(
                    raw.text,
                    parsed,
                    key,
                    cached=False,
                    resolved=raw.resolved_model or self.name,
                    latency=latency,
                    tokens=(raw.input_tokens, raw.output_tokens, raw.cached_tokens),
                    logprobs=raw.logprobs,
                    strategy=sent.req.strategy,
                    tries=ask.tries,
                )
            self._reask(ask, sent, problem)
        what = schema.__name__ if schema else "reply"
        raise CallFailed(
            f"{self.label} gave no valid {what} in {tries} "
            f"tr{'y' if tries == 1 else 'ies'}: {ask.problem}",
            kind="invalid_output",
            problem=ask.problem,
        )

    def _from_cache(
        self, key: str, schema: type[BaseModel] | None, parse: Parse | None
    ) -> Response | None:
        """The cached answer, when there is one and it still passes the caller's checks."""
        if self._store is None or (row := self._store.get(key)) is None:
            return None
        parsed, problem = _check(row["response_text"], schema, parse)
        if problem is not None:
            return None
        collector = _batch_collector()
        if collector is None or not collector.answered(key):  # not this run's batch
            self.usage.add(cache_hits=1)
        return self._response(
            row["response_text"],
            parsed,
            key,
            cached=True,
            resolved=row["resolved_model"],
            latency=0.0,
            tokens=(row["input_tokens"], row["output_tokens"], row["cached_tokens"]),
            logprobs=json.loads(row["logprobs_json"] or "null"),
            strategy=row.get("strategy"),
            tries=0,
        )

    def _attempt(self, ask: _Asking) -> _Sent | None:
        """Ask once (the SDK's retries included), in the structured-output strategy of the moment.

        Returns the reply, or None when the server refused the strategy (the next one is in
        place: ask again). A failed call is logged, counted and raised.
        """
        strategy = self.strategy() if ask.schema is not None else None
        req = Request(
            prompt=self._ask_text(ask.asked, ask.schema, strategy),
            system=ask.system,
            schema=ask.schema,
            temperature=ask.temperature,
            logprobs=ask.logprobs,
            top_logprobs=ask.top_logprobs,
            seed_key=ask.seed_key,
            purpose=ask.purpose,
            strategy=strategy,
            max_tokens=ask.budget,
        )
        with (
            self.throttle.slot() as slot,
            recording(on_lost=lambda waited, s=slot: self._lost(s, waited)) as attempts,
        ):
            t0 = time.monotonic()
            try:
                raw = self.execute(req)
            except CallFailed as e:
                if (
                    strategy is not None
                    and e.kind == "unsupported"
                    and e.field in STRATEGY_FIELDS.get(strategy, ())
                ):
                    ask.logged = self._log(
                        ask.key,
                        req,
                        attempts,
                        t0,
                        ask.logged,
                        status="unsupported",
                        error=str(e),
                        note=f"{strategy} refused ({e.field})",
                    )
                    self._count(attempts, call=False)
                    ask.note = self._refused(strategy, e)
                    return None
                if e.kind == "timeout":
                    e = self._timeout_error(e, slot, len(attempts))
                self._failed(ask, req, attempts, t0, e)
                raise e from None
            except AmgError as e:
                self._failed(ask, req, attempts, t0, e)
                raise
            slot.usable = True
        return _Sent(req, raw, attempts, t0)

    def _failed(
        self,
        ask: _Asking,
        req: Request,
        attempts: list[Attempt],
        t0: float,
        error: AmgError | CallFailed,
    ) -> None:
        ask.logged = self._log(
            ask.key,
            req,
            attempts,
            t0,
            ask.logged,
            status=getattr(error, "kind", "fatal"),
            error=str(error),
            note=ask.note,
        )
        self._count(attempts, failed=True)

    def _read(self, ask: _Asking, raw: RawReply) -> tuple[Any, str | None]:
        """(parsed, None) for a valid reply, else (None, the problem as the re-ask states it)."""
        parsed, problem = _check(raw.text, ask.schema, ask.parse)
        if problem is not None and not raw.text.strip():
            problem = "the reply is empty"
            if hint := self.empty_reply_hint():
                self.say(f"{self.label} sent an empty reply: {hint}")
                problem += f" ({hint})"
        if problem is not None and raw.truncated:
            problem += (
                f" (the reply was cut off at the output token limit of {ask.budget} tokens"
                + (": raise --max-tokens)" if ask.forced_budget or not ask.budget else ")")
            )
        return parsed, problem

    def _reask(self, ask: _Asking, sent: _Sent, problem: str) -> None:
        """Log an invalid reply and set up the next try: the problem sent back with the reply,
        and more room for a reply that was cut off."""
        self._log_reply(ask, sent, "invalid_output", problem)
        ask.problem = problem
        ask.asked = feedback(ask.prompt, problem, sent.raw.text)
        ask.note = f"re-ask {ask.tries + 1}: the problem was sent back"
        if (
            sent.raw.truncated
            and ask.schema is not None
            and ask.budget
            and not ask.forced_budget
            and ask.budget < MAX_BUDGET
        ):  # a cut-off one-word answer rambled: no more room
            ask.budget = min(ask.budget * 2, MAX_BUDGET)
            ask.note += f"; output budget raised to {ask.budget} tokens"

    def _log_reply(self, ask: _Asking, sent: _Sent, status: str, error: str = "") -> None:
        ask.logged = self._log(
            ask.key,
            sent.req,
            sent.attempts,
            sent.t0,
            ask.logged,
            status=status,
            raw=sent.raw,
            error=error,
            note=ask.note,
        )

    def _count(
        self,
        attempts: list[Attempt],
        raw: RawReply | None = None,
        *,
        failed: bool = False,
        call: bool = True,
        priced: bool = True,
    ) -> None:
        """Count one call that reached the provider in ``usage``: its HTTP requests, its reply's
        tokens and cost, whether it failed. Every call is counted here; cache hits where the
        cache answers. ``call=False``: a request the server refused for how it asked for JSON
        (the call goes on); ``priced=False``: a product's forwarded call (``forwarding``), whose
        cost the call log carries but ``usage`` does not."""
        amounts = {"calls": int(call), "failures": int(failed), "requests": max(len(attempts), 1)}
        cost = None
        if raw is not None:
            amounts.update(
                input_tokens=raw.input_tokens,
                output_tokens=raw.output_tokens,
                cached_tokens=raw.cached_tokens,
            )
            if priced:
                cost = self.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
                amounts["unpriced"] = int(cost is None)
        self.usage.add(cost, **amounts)

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
        queued = (
            f"; {slot.others} other request(s) were in flight, so it may have waited in "
            "the server's queue (concurrency is now 1)"
            if slot.others
            else ""
        )
        return CallFailed(
            f"{self.label}: no reply within the client-side timeout of {timeout:g} s "
            f"({attempts} attempt{'s' if attempts != 1 else ''}){queued}. A timeout, not a model "
            "failure: the server may still be computing; raise --timeout",
            kind="timeout",
        )

    def _response(
        self,
        text: str,
        parsed: Any,
        key: str,
        *,
        cached: bool,
        resolved: str,
        latency: float,
        tokens: tuple[int, int, int],
        logprobs: list[dict[str, float]] | None,
        strategy: str | None,
        tries: int,
    ) -> Response:
        return Response(
            text=text,
            parsed=parsed,
            cached=cached,
            model=resolved,
            requested_model=self.name,
            family=self.family,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            cached_tokens=tokens[2],
            logprobs=logprobs,
            latency_s=latency,
            cache_key=key,
            strategy=strategy,
            tries=tries,
        )

    def _cache(self, key: str, req: Request, raw: RawReply, latency: float) -> None:
        if self._store is None:
            return
        self._store.put(
            {
                "key": key,
                "family": self.family,
                "requested_model": self.name,
                "resolved_model": raw.resolved_model or self.name,
                "purpose": req.purpose,
                "system": req.system,
                "prompt": req.prompt,
                "schema_name": req.schema.__name__ if req.schema else None,
                "response_text": raw.text,
                "logprobs_json": json.dumps(raw.logprobs) if raw.logprobs is not None else None,
                "input_tokens": raw.input_tokens,
                "output_tokens": raw.output_tokens,
                "cached_tokens": raw.cached_tokens,
                "latency_s": latency,
                "strategy": req.strategy,
            }
        )

    def _log(
        self,
        key: str,
        req: Request,
        attempts: list[Attempt],
        t0: float,
        attempt_no: int,
        *,
        status: str,
        raw: RawReply | None = None,
        error: str = "",
        note: str | None = None,
    ) -> int:
        """One call-log row per HTTP attempt; the last carries the outcome. Returns attempts so far."""
        if not attempts:  # providers without HTTP (scripted): one synthetic attempt
            a = Attempt()
            a.started, a.ended = t0, time.monotonic()
            attempts = [a]
        rows = []
        cost = (
            self.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
            if raw is not None
            else None
        )
        for i, a in enumerate(attempts):
            last = i == len(attempts) - 1
            if not last:
                row_status = f"http_{a.http_status}" if a.http_status else "no_response"
            elif (
                error
                and status not in ("refused", "invalid_output")
                and (a.http_status or 0) >= 400
            ):
                row_status = f"http_{a.http_status}"
            else:
                row_status = status
            rows.append(
                {
                    "cache_key": key,
                    "family": self.family,
                    "requested_model": self.name,
                    "resolved_model": (raw.resolved_model if raw and last else None),
                    "purpose": req.purpose,
                    "attempt": attempt_no + i + 1,
                    "status": row_status,
                    "http_status": a.http_status,
                    "retry_after_s": a.retry_after_s,
                    "input_tokens": raw.input_tokens if raw and last else None,
                    "output_tokens": raw.output_tokens if raw and last else None,
                    "cached_tokens": raw.cached_tokens if raw and last else None,
                    "latency_s": a.latency_s,
                    "error": shorten(scrub(error, self.secrets()), 1000)
                    if last and error
                    else None,
                    "strategy": req.strategy,
                    "note": note if i == 0 else None,
                    "cost_usd": cost if raw and last else None,
                    "command": run_context.current().command or None,
                }
            )
        if self._store is not None:
            self._store.log(rows)
        return attempt_no + len(attempts)


@dataclasses.dataclass
class _Asking:
    """One ``complete`` call across its tries: the question, what the next try asks, and how far
    it got (replies so far, call-log rows so far, the last reply's problem)."""

    key: str
    prompt: str  # the caller's prompt: each re-ask is built from it
    system: str | None
    schema: type[BaseModel] | None
    parse: Parse | None
    temperature: float
    logprobs: bool
    top_logprobs: int
    seed_key: str
    purpose: str
    asked: str  # what the next try sends: the prompt, or the re-ask with the problem
    budget: int  # output tokens; raised after a structured reply was cut off
    forced_budget: bool  # --max-tokens: the budget stays as given
    note: str | None = None  # for the next try's call-log row (a re-ask, a strategy moved on)
    tries: int = 0  # replies received
    logged: int = 0  # call-log rows so far (attempt numbers run on across tries)
    problem: str = ""  # what was wrong with the last reply


@dataclasses.dataclass
class _Sent:
    """One attempt that got a reply: what was sent, the reply, and its HTTP attempts."""

    req: Request
    raw: RawReply
    attempts: list[Attempt]
    t0: float


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> str:
    """The schema's JSON Schema, computed once per class (it is on every call's hot path)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True)


def _check(
    text: str, schema: type[BaseModel] | None, parse: Parse | None
) -> tuple[Any, str | None]:
    """(parsed, None) or (None, one-line reason) for a reply."""
    if schema is not None:
        return validate_reply(text, schema)
    if parse is not None:
        try:
            return parse(text), None
        except ValueError as e:
            return None, str(e) or "the reply could not be read"
    return None, None
