"""The pass-through for products (``llm.serve``): chat completions and embeddings a product asks
for, forwarded upstream as it built them, through the same cache, call log and usage counters as
``Model.complete``.

A product (Mem0, Graphiti) talks to an OpenAI-compatible endpoint with its own client, so what
reaches us is a whole chat-completions body, not a prompt: it is cached by that body (a re-run of
the product replays every call it made), and embeddings are cached per input text.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any

from ..errors import AmgError
from ._errors import CallFailed, FatalProviderError
from ._http import Attempt, recording
from .request import RawReply, Request, refuse_in_dry_run


class Forwarding:
    """``Model``'s methods for products' calls. Mixed into ``Model``, whose cache (``cache``),
    call log (``call_log``), usage (``_count``) and throttle they use; a provider that can serve
    a product overrides ``execute_chat`` and ``execute_embed``."""

    _inflight: dict[str, threading.Event]  # chat bodies being forwarded upstream (set by Model)
    _inflight_lock: threading.Lock

    def execute_chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], RawReply]:
        """Send one OpenAI chat-completions body as the product built it; return the completion
        (JSON-able, OpenAI's shape) and its token counts. Providers that can, override this."""
        raise FatalProviderError(
            f"{self.label} cannot serve a product's chat calls: products "
            "talk to an OpenAI-compatible endpoint, so use an openai: model "
            "(any OpenAI-compatible server via --base-url)"
        )

    def execute_embed(
        self, texts: list[str], dimensions: int | None
    ) -> tuple[list[list[float]], int]:
        """Embed ``texts`` (one vector each, in order) and return (vectors, input tokens)."""
        raise FatalProviderError(
            f"{self.label} serves no embeddings: give --embedder with an "
            "openai: model (any OpenAI-compatible server that embeds)"
        )

    def chat_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as it goes upstream: this model's name, and our ``--max-tokens`` (when given)
        in place of the product's budget. Everything else is the product's own."""
        out = {k: v for k, v in body.items() if k not in ("model", "stream", "stream_options")}
        out["model"] = self.name
        if self.options.max_tokens is not None:
            out.pop("max_completion_tokens", None)
            out["max_tokens"] = self.options.max_tokens
        return out

    def forward_chat(self, body: dict[str, Any], *, purpose: str = "") -> dict[str, Any]:
        """One chat completion a product asked for, answered from the cache or upstream, logged.

        The cache key is the whole request body that reaches the model (messages, tools,
        response_format, temperature, budget...), so a re-run of a product replays every call it
        made before; only successful completions are cached. Raises ``CallFailed`` (this call
        failed after the SDK's retries) or ``FatalProviderError`` (no call can succeed).
        """
        body = self.chat_body(body)
        key = self.cache.chat_key(body)
        while True:
            if (row := self.cache.get(key)) is not None:
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
        refuse_in_dry_run(self.label, purpose)
        req = Request(prompt="", purpose=purpose)
        with (
            self.throttle.slot() as slot,
            recording(on_lost=lambda waited, s=slot: self.throttle.lost(s, waited)) as attempts,
        ):
            t0 = time.monotonic()
            try:
                completion, raw = self.execute_chat(body)
            except (AmgError, CallFailed) as e:
                raise self._upstream_failed(e, key, req, attempts, t0, slot) from None
            slot.usable = True
        latency = round(time.monotonic() - t0, 4)
        self._count(attempts, raw, priced=False)
        self.call_log.record(key, req, attempts, t0, 0, status="ok", raw=raw)
        self.cache.put_chat(key, body, completion, raw, purpose, latency)
        return completion

    def embed(
        self, texts: list[str], *, dimensions: int | None = None, purpose: str = ""
    ) -> list[list[float]]:
        """One vector per text, each cached on its own (a text embedded before is not sent
        again); the texts not cached go upstream in one request, logged like a call."""
        keys = [self.cache.embed_key(t, dimensions) for t in texts]
        out: list[list[float] | None] = [None] * len(texts)
        missing: dict[str, list[int]] = {}
        for i, (t, k) in enumerate(zip(texts, keys)):
            if (row := self.cache.get(k)) is not None:
                out[i] = json.loads(row["response_text"])
            else:
                missing.setdefault(t, []).append(i)
        hits = len(texts) - sum(len(v) for v in missing.values())
        if hits:
            self.usage.add(cache_hits=hits)
        if not missing:
            return out  # type: ignore[return-value]
        refuse_in_dry_run(self.label, purpose)
        todo = list(missing)
        key = hashlib.sha256("".join(keys[missing[t][0]] for t in todo).encode()).hexdigest()
        req = Request(prompt="", purpose=purpose)
        with (
            self.throttle.slot() as slot,
            recording(on_lost=lambda waited, s=slot: self.throttle.lost(s, waited)) as attempts,
        ):
            t0 = time.monotonic()
            try:
                vectors, tokens = self.execute_embed(todo, dimensions)
                if len(vectors) != len(todo):
                    raise CallFailed(
                        f"{self.label} returned {len(vectors)} embeddings for {len(todo)} inputs",
                        kind="invalid_output",
                    )
            except (AmgError, CallFailed) as e:
                raise self._upstream_failed(e, key, req, attempts, t0, slot) from None
            slot.usable = True
        latency = round(time.monotonic() - t0, 4)
        raw = RawReply(resolved_model=self.name, input_tokens=tokens)
        self._count(attempts, raw, priced=False)
        self.call_log.record(
            key,
            req,
            attempts,
            t0,
            0,
            status="ok",
            raw=raw,
            note=f"{len(todo)} input(s) embedded, {hits} from the cache",
        )
        for t, vec in zip(todo, vectors):
            for i in missing[t]:
                out[i] = vec
            self.cache.put_embedding(keys[missing[t][0]], t, vec, purpose, latency)
        return out  # type: ignore[return-value]

    def _upstream_failed(
        self, e: Exception, key: str, req: Request, attempts: list[Attempt], t0: float, slot: Any
    ) -> Exception:
        """A forwarded chat or an embedding request failed: log it, count it, and return the
        error to raise (a timeout reworded by the throttle)."""
        if isinstance(e, CallFailed) and e.kind == "timeout":
            e = self.throttle.timeout_error(slot, len(attempts))
        self.call_log.record(
            key, req, attempts, t0, 0, status=getattr(e, "kind", "fatal"), error=str(e)
        )
        self._count(attempts, failed=True)
        return e
