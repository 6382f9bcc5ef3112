"""Run model-calling work over many items on a thread pool, yielding results as they finish.

Threads suit this work: each item waits on the network, the SDK clients are thread-safe, and the
cache/log writes are serialized by the store's lock. Failure policy: a ``CallFailed`` raised by
``fn`` (refusal, invalid output, server errors after retries) is yielded as a ``Failed`` and the
run goes on; anything else (``FatalProviderError`` for a bad key or exhausted quota, or a bug)
cancels the items not yet started and propagates. Stopping early (a ``break``, or the caller's
generator closing) lets calls already in flight finish, so their answers reach the cache.
Under ``--batch`` (``batch.run_batched``) an item whose call went into a batch raises
``Deferred``: it is neither a result nor a failure, just not done yet, and is skipped.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from ..progress import progress_bar
from ._batch_state import Deferred
from ._errors import CallFailed
from .usage import Usage

T = TypeVar("T")
R = TypeVar("R")


class _Stopped(Exception):
    """An item not started because another item's fatal error is stopping the run."""


@dataclass(frozen=True)
class Failed:
    """An item whose call failed; yielded in place of a result."""

    item: Any
    error: str
    kind: str = "error"


def run_concurrent(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    concurrency: int = 4,
    description: str = "",
    total: int | None = None,
    usage: Usage | None = None,
    progress: bool = True,
    is_failure: Callable[[Any], bool] | None = None,
) -> Iterator[R | Failed]:
    """Yield ``fn(item)`` (or ``Failed``) for every item, in completion order.

    The progress bar shows done/total, failures, and -- from ``usage`` -- cache hits and tokens.
    ``is_failure`` marks returned values that count as failures (e.g. a ``RenderFailure``).
    """
    items = list(items)
    total = len(items) if total is None else total
    concurrency = max(1, int(concurrency))
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="amg-llm")
    pending: dict[Future, Any] = {}
    source = iter(items)
    clean = False
    stop = threading.Event()

    def guarded(item: Any) -> Any:
        # A worker that finishes one item takes the next queued one at once, before the main
        # thread can cancel it: after a fatal error (bad key, quota, unreachable server) no new
        # item may start, or its retries would hold the run (and the process exit) for minutes.
        if stop.is_set():
            raise _Stopped()
        try:
            return fn(item)
        except (CallFailed, Deferred):
            raise
        except BaseException:
            stop.set()
            raise

    def fill() -> None:
        while len(pending) < concurrency * 2 and not stop.is_set():
            try:
                item = next(source)
            except StopIteration:
                return
            # each item in a copy of this context: a --batch collector reaches the worker
            pending[pool.submit(contextvars.copy_context().run, guarded, item)] = item

    try:
        with progress_bar(
            description or "calls",
            total=total,
            usage=getattr(usage, "live", None) or usage.as_dict if usage is not None else None,
            enabled=progress,
        ) as advance:
            fill()
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    item = pending.pop(fut)
                    try:
                        result: Any = fut.result()
                    except CallFailed as e:
                        result = Failed(item=item, error=str(e), kind=e.kind)
                    except _Stopped:
                        continue  # the fatal error surfaces from its own future
                    except Deferred:
                        continue  # answered by a batch: a later pass has its result
                    failed = isinstance(result, Failed) or bool(is_failure and is_failure(result))
                    advance(failed=failed)
                    yield result
                fill()
        clean = True
    except GeneratorExit:
        clean = True  # the caller stopped early: let in-flight calls land in the cache
        raise
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=clean, cancel_futures=True)
