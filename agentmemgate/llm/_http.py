"""Per-attempt records from the SDKs' own retry loops, via the HTTP client's event hooks.

The OpenAI and Anthropic SDKs retry 408/409/429/5xx, timeouts and connection errors with
exponential backoff and jitter, honour ``retry-after``/``retry-after-ms`` (OpenAI up to two
minutes, Anthropic without a cap), and stop early when a response says ``x-should-retry: false``.
We use that machinery instead of our own loop or a retry library: it is maintained with the API,
knows each provider's headers, and reuses the idempotency key across retries. What it lacks is a
per-attempt record, so each SDK client's HTTP client gets two event hooks (public httpx/httpx2
API) that append to the calling thread's attempt list; the model writes those rows to the call
log. The response hook also marks as not retryable (``x-should-retry: false``, which both SDKs
obey) what no retry can fix: an exhausted-quota 429, and a 4xx/5xx whose body names a request
field (llama-cpp-python answers ``json_schema`` with HTTP 500 "Input should be 'text' or
'json_object'"; five retries of that only delay the move to another strategy).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ._errors import QUOTA_CODES, rejected_field

# Statuses the SDK's retry loop keeps retrying whatever the body says.
TRANSIENT = (408, 409, 429, 502, 503, 504)

_local = threading.local()


class Attempt:
    __slots__ = ("started", "ended", "http_status", "retry_after_s")

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.ended: float | None = None
        self.http_status: int | None = None
        self.retry_after_s: float | None = None

    @property
    def latency_s(self) -> float | None:
        return None if self.ended is None else round(self.ended - self.started, 4)


@contextlib.contextmanager
def recording(on_lost: Callable[[float], None] | None = None) -> Iterator[list[Attempt]]:
    """Collect the HTTP attempts this thread makes inside the block.

    ``on_lost(seconds)`` hears, as the SDK starts a retry, that the previous attempt got no
    response at all (a client-side timeout or a dropped connection) after ``seconds``: early
    enough to lower the concurrency before the retry joins the same queue.
    """
    attempts: list[Attempt] = []
    _local.attempts = attempts
    _local.on_lost = on_lost
    try:
        yield attempts
    finally:
        _local.attempts = None
        _local.on_lost = None


def attempts_so_far() -> int:
    """HTTP attempts the current call has made (for error messages)."""
    return max(len(getattr(_local, "attempts", None) or ()), 1)


def _on_request(request: Any) -> None:
    attempts = getattr(_local, "attempts", None)
    if attempts is not None:
        on_lost = getattr(_local, "on_lost", None)
        if attempts and attempts[-1].http_status is None and on_lost is not None:
            on_lost(time.monotonic() - attempts[-1].started)
        attempts.append(Attempt())


def _on_response(response: Any) -> None:
    attempts = getattr(_local, "attempts", None)
    if attempts:
        a = attempts[-1]
        a.ended = time.monotonic()
        a.http_status = response.status_code
        a.retry_after_s = retry_after(response.headers)
    status = response.status_code
    if status == 429 and _quota_exhausted(response):
        response.headers["x-should-retry"] = "false"
    elif status >= 400 and status not in TRANSIENT and _names_request_field(response):
        response.headers["x-should-retry"] = "false"


def retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) / scale
            except ValueError:
                return None
    return None


def _body(response: Any) -> Any:
    try:
        response.read()
        return json.loads(response.content or b"{}")
    except Exception:  # an unreadable body names nothing
        return None


def _names_request_field(response: Any) -> bool:
    body = _body(response)
    if body is not None:
        return rejected_field(body) is not None
    try:
        return rejected_field(None, response.text[:2000]) is not None
    except Exception:  # an undecodable body names nothing
        return False


def _quota_exhausted(response: Any) -> bool:
    body = _body(response)
    err = body.get("error") if isinstance(body, dict) else None
    return isinstance(err, dict) and (
        err.get("code") in QUOTA_CODES or err.get("type") in QUOTA_CODES
    )


def install_hooks(http_client: Any) -> Any:
    """Add the attempt hooks to an httpx2 (or legacy httpx) client, once."""
    hooks = {k: list(v) for k, v in http_client.event_hooks.items()}
    if _on_request not in hooks.setdefault("request", []):
        hooks["request"].append(_on_request)
    if _on_response not in hooks.setdefault("response", []):
        hooks["response"].append(_on_response)
    http_client.event_hooks = hooks
    return http_client
