"""What the model layer needs to know of a ``--batch`` run, with no imports of its own beyond the
run context (so ``model``, ``concurrent`` and the provider batch modules can use it without import
circles): the ``Deferred`` signal, readers of the run context's batch settings, and the shapes a
provider batch API reports."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..run_context import current


class Deferred(BaseException):
    """A call that will be answered by a batch: not a failure, the item is simply not done yet.

    Raised by ``Model.complete`` when the run context has a batch collector. The call sits deep
    in a room's own code (a system's step, a judge's question), often in a worker thread of
    ``run_concurrent``; an exception is the one way to leave that code without the room
    recording a result, and it reaches ``run_concurrent`` (which skips the item) or
    ``run_batched`` (which ends the pass) whatever the room's code in between. A
    BaseException so that a room's ``except Exception`` (which records a failure) lets it pass.
    """


def active_collector() -> Any:
    """The collector of the running ``run_batched``, if any (``Model.complete`` asks)."""
    return current().collector


def plans_batch() -> bool:
    """A dry run of ``--batch``: ``Model.plan`` estimates at batch prices."""
    return current().plans_batch


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
