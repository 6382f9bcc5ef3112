"""Dry runs: the calls a command would make, counted on each model (``model.planned``) without
making them, with their tokens estimated (``cost.estimate_tokens``) and priced.

A call the cache (or an earlier call of the same run) would answer counts as a cache hit; any
other is a planned call whose input tokens are those of the prompt as it would be sent and whose
output tokens are its budget. Under ``--batch`` they are priced as batch calls.
"""

from __future__ import annotations

import threading
from typing import Any

from .asking import DEFAULT_BUDGET
from .cost import estimate_tokens
from .request import Request
from .structured import ask_text
from .usage import Usage


class Plan:
    """What a dry run counted on one model: ``usage`` (the model's ``planned``)."""

    def __init__(self, model: Any):
        self.model = model
        self.usage = Usage()
        self._keys: set[str] = set()
        self._lock = threading.Lock()

    def count(self, question: Request, max_tokens: int | None, *, batch: bool) -> bool:
        """Count the call ``complete`` would make for ``question``; whether it would be made."""
        m = self.model
        key = m.cache.key(question)
        with self._lock:
            repeat = key in self._keys  # an earlier call of this run would answer it
            self._keys.add(key)
        if repeat or m.cache.has(key):
            self.usage.add(cache_hits=1)
            return False
        strategy = m.strategy() if question.schema is not None else None
        sent = (question.system or "") + ask_text(question.prompt, question.schema, strategy)
        tokens_in = estimate_tokens(sent)
        tokens_out = m.options.max_tokens or max_tokens or DEFAULT_BUDGET
        if batch:
            m.check_batch_api()
        live = m.call_cost(tokens_in, tokens_out)
        cost, at_batch = live, {}
        if batch:  # --dry-run --batch: the estimate at batch prices
            cost = m.call_cost(tokens_in, tokens_out, batch=True)
            at_batch = dict(batch_calls=1, batch_cost_usd=cost, batch_live_cost_usd=live)
        self.usage.add(
            calls=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            unpriced=cost is None,
            cost_usd=cost,
            **at_batch,
        )
        return True

    def unknown(self, n: int, *, batch: bool) -> None:
        """Count ``n`` calls whose prompts cannot be built yet: calls without an estimate."""
        if n and batch:
            self.model.check_batch_api()
            self.usage.add(calls=n, unestimated=n, batch_calls=n)
        elif n:
            self.usage.add(calls=n, unestimated=n)
