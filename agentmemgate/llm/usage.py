"""A thread-safe tally of what a run's model calls cost, shared by models and progress bars."""

from __future__ import annotations

import threading


class Usage:
    """Counts calls that reached the provider, cache hits, failures, HTTP requests and tokens.

    ``input_tokens`` always includes cached input tokens; ``cached_tokens`` is the part of it the
    provider served from its prompt cache (OpenAI ``prompt_tokens_details.cached_tokens``,
    Anthropic ``cache_read_input_tokens``). The ``batch_*`` tallies are the part of ``calls`` and
    the tokens that came from a provider batch API (``--batch``), priced at the provider's batch
    price; ``batch_cost_usd`` is their cost (part of ``cost_usd``) and ``batch_live_cost_usd``
    what they would have cost live (the summaries show the discount). A dry run under ``--batch``
    counts its planned calls as batch calls.
    """

    FIELDS = (
        "calls",
        "cache_hits",
        "failures",
        "requests",
        "input_tokens",
        "output_tokens",
        "cached_tokens",
        "unpriced",
        "unestimated",
        "batch_calls",
        "batch_input_tokens",
        "batch_output_tokens",
        "batch_cached_tokens",
    )
    # ``unestimated``: planned calls (dry runs) whose prompt cannot be known yet (no tokens)
    # ``cost_usd``: USD of the priced calls; ``unpriced``: calls whose cost is unknown (no price)
    COSTS = ("cost_usd", "batch_cost_usd", "batch_live_cost_usd")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(self.FIELDS, 0)
        self.cost_usd = self.batch_cost_usd = self.batch_live_cost_usd = 0.0
        self.in_flight = 0  # a gauge, not a tally: requests waiting on the provider right now

    def add(
        self,
        cost_usd: float | None = None,
        *,
        batch_cost_usd: float | None = None,
        batch_live_cost_usd: float | None = None,
        **amounts: int,
    ) -> None:
        with self._lock:
            for k, v in amounts.items():
                self._counts[k] += int(v or 0)
            if cost_usd is not None:
                self.cost_usd += cost_usd
            if batch_cost_usd is not None:
                self.batch_cost_usd += batch_cost_usd
            if batch_live_cost_usd is not None:
                self.batch_live_cost_usd += batch_live_cost_usd

    def as_dict(self) -> dict[str, int]:
        """The tallies; the ``batch_*`` ones only once a batch answered something."""
        with self._lock:
            return {k: v for k, v in self._counts.items() if v or not k.startswith("batch_")}

    def live(self) -> dict[str, int]:
        """The tallies plus calls in flight, for progress displays."""
        return {**self.as_dict(), "in_flight": self.in_flight}

    def __getattr__(self, name: str) -> int:
        if name in Usage.FIELDS:
            with self._lock:
                return self._counts[name]
        raise AttributeError(name)

    def __str__(self) -> str:
        d = self.as_dict()
        return (
            f"{d['calls']} calls, {d['cache_hits']} cache hits, {d['failures']} failures, "
            f"{d['input_tokens']} input tokens ({d['cached_tokens']} cached), "
            f"{d['output_tokens']} output tokens"
        )
