"""What the model layer needs to know of a ``--batch`` run, with no imports of its own (so
``model``, ``concurrent`` and the provider batch modules can use it without import circles):
the ``Deferred`` signal, the running collector, and the shapes a provider batch API reports."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator
from typing import Any


class Deferred(BaseException):
    """A call that will be answered by a batch: not a failure, the item is simply not done yet.

    A BaseException so that a room's ``except Exception`` (which records a failure) lets it pass.
    """


@dataclasses.dataclass
class BatchInfo:
    """A batch's state as its provider reports it."""

    id: str
    state: str
    ended: bool
    total: int = 0
    done: int = 0
    failed: int = 0
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    error: str = ""


@dataclasses.dataclass
class Outcome:
    """One request's result: ``returned`` with the provider's reply payload, or a failure status
    (``errored``, ``expired``, ``cancelled``) with its reason."""

    custom_id: str
    status: str
    payload: dict[str, Any] | None = None
    error: str = ""
    http_status: int | None = None
    field: str | None = None  # the request field an error names (a refused structured output)


# A context variable, not a global: ``run_concurrent`` runs each item in a copy of the submitting
# context, so a worker still running after ``run_batched`` has returned (a fatal error stopped the
# run while calls were starting) keeps deferring to the closed collector instead of calling live.
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("amg_batch", default=None)
_RUNNING: list[Any] = []  # for threads not started by run_concurrent (a local proxy's)


def active_collector() -> Any:
    """The collector of the running ``run_batched``, if any (``Model.complete`` asks)."""
    return _ACTIVE.get() or (_RUNNING[0] if _RUNNING else None)


_PLAN_BATCH: list[bool] = []  # a dry run under --batch: its planned calls are batch calls


@contextlib.contextmanager
def planning_batch() -> Iterator[None]:
    """A dry run of ``--batch``: ``Model.plan`` estimates at batch prices (and refuses a model
    with no batch API, as the real run would)."""
    _PLAN_BATCH.append(True)
    try:
        yield
    finally:
        _PLAN_BATCH.pop()


def plans_batch() -> bool:
    return bool(_PLAN_BATCH)
