"""The model interface: one abstract provider call, everything else (cache, log, re-asks) shared.

``Model.complete`` is what every room calls. It looks the request up in the workspace's
content-addressed cache (``cache``: so a re-run after a kill repeats no answered call), otherwise
sends it live (``live``): it calls ``execute`` -- the one method a provider implements -- under
the structured-output strategy that works for this server (``strategies``, ``structured``),
validates the reply with pydantic (or the caller's ``parse``), re-asks a bounded number of times
with the problem sent back (``asking``), and logs every HTTP attempt with the strategy used
(``call_log``). Under ``--batch`` the call is deferred to a provider batch (``batch``), which
follows the same rules; a dry run counts it instead (``planning``), priced by ``cost``. The calls
products make through their own clients take the same cache and log by another door
(``forwarding``).
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from pathlib import Path, PurePath
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from .. import run_context
from ..progress import say
from ..workspace import Workspace
from ._batch_state import active_collector as _batch_collector
from ._batch_state import plans_batch as _plans_batch
from ._errors import FatalProviderError
from ._http import Attempt
from ._store import CallStore
from ._throttle import Throttle
from .asking import DEFAULT_BUDGET, Asking, Parse, check
from .cache import Cache
from .call_log import CallLog
from .cost import Pricing
from .forwarding import Forwarding
from .live import send
from .planning import Plan
from .request import RawReply, Request, refuse_in_dry_run
from .strategies import StrategyChoice
from .structured import STRATEGIES, StructuredOutput
from .usage import Usage


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
    to serve products, ``execute_chat`` / ``execute_embed``: ``forwarding``). The model
    coordinates its collaborators: ``cache``, ``call_log``, ``pricing``, ``structured`` (the
    structured-output strategy in use), ``throttle``, the dry-run plan (``planned``), and the
    two ways to send a call (``live``, ``batch``).
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
        self.structured = StrategyChoice(self)  # refuses a --structured-output it cannot do
        self.cache = Cache(self)
        self.call_log = CallLog(self)
        self.pricing = Pricing(self)
        self._said: set[str] = set()
        self._said_lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}  # products' chat bodies sent upstream now
        self._inflight_lock = threading.Lock()
        self.throttle = Throttle(
            lambda: self.label, self.say, self._in_flight, lambda: self.options.timeout
        )
        self._plan = Plan(self)
        self.planned = self._plan.usage  # dry runs: the calls ``plan`` counted (tokens estimated)
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
        return self.pricing.price

    def call_cost(
        self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, *, batch: bool = False
    ) -> float | None:
        """USD of one call with these tokens; None when this model has no price (never 0).
        ``batch``: the provider's batch price (genai-prices' batch variants)."""
        return self.pricing.call_cost(input_tokens, output_tokens, cached_tokens, batch=batch)

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
        kwargs.pop("parse", None)
        question = Request(prompt, system=system, schema=schema, **kwargs)
        return self._plan.count(question, max_tokens, batch=_plans_batch())

    def plan_unknown(self, n: int) -> None:
        """Count ``n`` calls whose prompts a dry run cannot build yet (e.g. judging arcs not
        rendered yet): counted as calls, without a token or cost estimate (summaries say so)."""
        self._plan.unknown(n, batch=_plans_batch())

    def secrets(self) -> tuple[str, ...]:
        key = getattr(self.options, "api_key", None)
        return (key.get_secret_value(),) if key else ()

    def empty_reply_hint(self) -> str:
        """What to check when replies come back empty (providers know their servers)."""
        return ""

    def say(self, message: str) -> None:
        """A notice for the person running the command, printed once per model."""
        with self._said_lock:
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

    def strategy(self) -> str:
        """The strategy the next structured call uses: forced, remembered for this server, or first."""
        return self.structured.current()

    def cache_key(self, prompt: str, **request: Any) -> str:
        """The cache key of ``complete(prompt, **request)`` (``Request``'s fields)."""
        return self.cache.key(Request(prompt, **request))

    def is_cached(self, prompt: str, **kwargs: Any) -> bool:
        """Whether ``complete`` with these arguments would be answered from the cache (dry runs)."""
        kwargs.pop("parse", None)
        return self.cache.has(self.cache_key(prompt, **kwargs))

    # -- the shared path ---------------------------------------------------------------------
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
        question = Request(
            prompt,
            system=system,
            schema=schema,
            temperature=temperature,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            seed_key=seed_key,
            purpose=purpose,
            max_tokens=max_tokens,
        )
        key = self.cache.key(question)
        if (hit := self._from_cache(key, schema, parse)) is not None:
            return hit
        refuse_in_dry_run(self.label, purpose)
        ask = Asking(
            key,
            question,
            parse,
            forced_budget=self.options.max_tokens is not None,
            budget=self.options.max_tokens or max_tokens or DEFAULT_BUDGET,
        )
        if (collector := _batch_collector()) is not None:  # --batch: sent later, in a batch
            collector.defer(self, ask)  # raises Deferred (or this run's failure)
        return send(self, ask)

    def _from_cache(
        self, key: str, schema: type[BaseModel] | None, parse: Parse | None
    ) -> Response | None:
        """The cached answer, when there is one and it still passes the caller's checks."""
        if (row := self.cache.get(key)) is None:
            return None
        parsed, problem = check(row["response_text"], schema, parse)
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
