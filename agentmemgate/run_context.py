"""How the code running now runs: a dry run or not, through the batch APIs or not, for which
command, and the models and batch collector it has made -- one value, entered in one place.

The CLI enters it as a command starts (``cli._app.handles_errors``); a library caller enters it
the same way::

    with run_context(dry_run=True) as run:
        ...  # nothing is sent; a provider needs no API key to count its calls
    print(cost_lines(run.models, planned=True))  # the models it made, their planned calls

It is held in a context variable, so a thread pool that runs each item in a copy of the
submitting context (``llm.run_concurrent``) sees the context its items were submitted in, even
after the block has ended. Threads started without a copy (a local proxy's request handlers)
see the innermost context entered in the process.

No imports of the package and nothing heavy: the CLI's start-up stays fast.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

_KEEP: Any = object()


@dataclasses.dataclass(frozen=True)
class RunContext:
    """How the code running now runs.

    ``dry_run``: nothing is sent: a model call the cache cannot answer stops the run, and a
    provider needs no API key to count its calls. ``batch``: model calls go through the
    providers' batch APIs: a model whose server has none is refused as it is made, and a dry
    run estimates at batch prices. ``command``: the CLI command running (``amg eval run``),
    recorded with every model call (``amg usage`` sums by it); empty for a library caller.
    ``collector``: the running ``llm.batch.run_batched``'s collector, which model calls are
    deferred to. ``models``: the models made in the context, in order (the CLI prints tokens
    and cost per model from them)."""

    dry_run: bool = False
    batch: bool = False
    command: str = ""
    collector: Any = dataclasses.field(default=None, compare=False, repr=False)
    models: list[Any] = dataclasses.field(default_factory=list, compare=False, repr=False)

    @property
    def plans_batch(self) -> bool:
        """A dry run of ``--batch``: its planned calls are estimated at batch prices (and a
        model with no batch API is refused, as the real run would)."""
        return self.dry_run and self.batch


_CURRENT: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
    "amg_run_context", default=None
)
_ENTERED: list[RunContext] = []  # innermost last: for threads started without a copy
_lock = threading.Lock()


def current() -> RunContext:
    """The context the calling code runs in (outside any: a fresh default one, which keeps
    nothing it is given)."""
    return _CURRENT.get() or (_ENTERED[-1] if _ENTERED else RunContext())


@contextlib.contextmanager
def run_context(
    *,
    dry_run: bool | None = None,
    batch: bool | None = None,
    command: str | None = None,
    collector: Any = _KEEP,
) -> Iterator[RunContext]:
    """Run the block in the current context with the settings given changed (``None``: as it
    is). The outermost context, and one that names a command, starts an empty list of models
    (the command's); others add to their outer one's."""
    changes: dict[str, Any] = {"dry_run": dry_run, "batch": batch, "command": command}
    changes = {k: v for k, v in changes.items() if v is not None}
    if command is not None:
        changes["models"] = []
    if collector is not _KEEP:
        changes["collector"] = collector
    ctx = dataclasses.replace(current(), **changes)
    token = _CURRENT.set(ctx)
    with _lock:
        _ENTERED.append(ctx)
    try:
        yield ctx
    finally:
        with _lock:
            del _ENTERED[next(i for i, c in enumerate(_ENTERED) if c is ctx)]
        _CURRENT.reset(token)
