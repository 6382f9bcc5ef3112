"""A model's rows in the workspace's call log (``llm_calls``): one per HTTP attempt, the last
carrying the outcome, its tokens and its cost; a batch result is one row (``batch = 1``).

``usage_log`` reads them back (``amg usage``, the reports' cost lines).
"""

from __future__ import annotations

import time
from typing import Any

from .. import run_context
from ._errors import scrub, shorten
from ._http import Attempt
from .request import RawReply, Request


class CallLog:
    """The call-log rows of one model (``model.call_log``); without a workspace, none are kept."""

    def __init__(self, model: Any):
        self.model = model

    def record(
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
        """One row per HTTP attempt; the last carries the outcome. Returns attempts so far."""
        model = self.model
        if not attempts:  # providers without HTTP (test doubles): one synthetic attempt
            a = Attempt()
            a.started, a.ended = t0, time.monotonic()
            attempts = [a]
        rows = []
        cost = (
            model.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
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
                    "family": model.family,
                    "requested_model": model.name,
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
                    "error": self._error(error) if last and error else None,
                    "strategy": req.strategy,
                    "note": note if i == 0 else None,
                    "cost_usd": cost if raw and last else None,
                    "command": run_context.current().command or None,
                }
            )
        if model._store is not None:
            model._store.log(rows)
        return attempt_no + len(attempts)

    def record_batch(
        self,
        key: str,
        purpose: str,
        req: Request | None,
        attempt: int,
        *,
        status: str,
        raw: RawReply | None,
        error: str,
        note: str,
        http_status: int | None,
    ) -> None:
        """The one row of a batch result, costed at the batch price."""
        model = self.model
        cost = (
            model.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens, batch=True)
            if raw is not None
            else None
        )
        model._store.log(
            [
                {
                    "cache_key": key,
                    "family": model.family,
                    "requested_model": model.name,
                    "resolved_model": raw.resolved_model if raw else None,
                    "purpose": purpose,
                    "attempt": attempt,
                    "status": status,
                    "http_status": http_status,
                    "retry_after_s": None,
                    "input_tokens": raw.input_tokens if raw else None,
                    "output_tokens": raw.output_tokens if raw else None,
                    "cached_tokens": raw.cached_tokens if raw else None,
                    "latency_s": None,
                    "error": self._error(error) if error else None,
                    "strategy": req.strategy if req is not None else None,
                    "note": note,
                    "batch": 1,
                    "cost_usd": cost,
                    "command": run_context.current().command or None,
                }
            ]
        )

    def _error(self, error: str) -> str:
        return shorten(scrub(error, self.model.secrets()), 1000)
