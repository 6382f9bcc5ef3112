"""Running an eval's items: the one failure policy, the loop over the items, the tally that stores.

An item is one system on one arc or natural item, or one arc of an uploaded answer set. It runs in
two stages: the system makes its output (a trace, or its answers; skipped when a stored output is
scored again), then that output is scored. ``attempt`` is the only place that says what a failure
does, for component systems, answering systems, natural items and uploaded answers alike:

- ``CallFailed`` (one model call failed after its retries): the item is a ``Failure`` at its stage,
  stored and counted; a re-run retries it.
- ``AmgError`` (a bad key, an exhausted quota, bad input): raised; the run stops with one line,
  keeping finished work.
- any other exception while the system runs: a bug in that system, a ``Failure`` of the item
  ("NAME raised TypeError: ..."); the run goes on.
- any other exception while scoring: a bug of the toolkit, raised.

``CallFailed`` is not an ``AmgError``, so the order of these clauses cannot turn a failed call
into a stopped run. What the system said survives a failure of its scoring: the failure keeps the
output made now (``Failure.kept``, stored with no score), and a re-run only scores it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import Field

from .._gc import fewer_collections
from ..errors import AmgError
from ..llm import CallFailed, run_concurrent
from ..progress import progress_bar
from ..workspace import Workspace
from . import store

if TYPE_CHECKING:
    from ..schema import Arc
    from .judges import ValueJudge
    from .systems import SystemSpec

# A summary's " --workspace DIR" when the run was not in the default workspace: the follow-up
# commands it suggests must reach the same workspace when pasted. Set by the CLI; never in JSON.
WorkspaceOption = Field(default="", exclude=True)

FLUSH_OFFLINE = 200  # offline pairs are cheap to redo: store them in batches

I = TypeVar("I", bound="Item")
O = TypeVar("O")
S = TypeVar("S")  # what scoring gives
R = TypeVar("R")  # what is stored of a finished item


class Item(Protocol):
    """What the policy reads of an item: where it is stored, and its stored output, if any."""

    @property
    def run_key(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def arc_id(self) -> str: ...
    @property
    def stored(self) -> Any: ...  # an output stored by an earlier run, to score again; None: run


@dataclass
class ArcItem:
    """One system on one arc; ``stored``: its stored trace (component) or answer rows (answering)."""

    spec: SystemSpec
    arc: Arc
    sha: str  # the sha256 of the arc's stored JSON
    run_key: str  # the spec's (a hash: computed once per system)
    stored: Any = None

    @property
    def system(self) -> str:
        return self.spec.name

    @property
    def arc_id(self) -> str:
        return self.arc.id


@dataclass
class Failure(Generic[I]):
    """An item that failed, at which stage (``system`` or ``scoring``) and why."""

    item: I
    stage: str
    error: str
    kept: Any = None  # what is stored of an output made now whose scoring failed (no score)


def attempt(
    item: I,
    run: Callable[[I], O] | None,
    score: Callable[[I, O], S],
    row: Callable[[I, O, S | None], R],
) -> R | Failure[I]:
    """Run ``item`` under the policy above: ``run(item)`` makes the system's output (not called
    when ``item.stored`` holds one; None when every item has one, as an uploaded answer set's
    arcs do), ``score(item, output)`` scores it, and ``row(item, output, scored)`` is what is
    stored of it (``scored`` None: the output alone, kept after its scoring failed)."""
    stage, output = "system", item.stored
    try:
        if output is None:
            output = run(item)  # type: ignore[misc]  # None only when every item has its output
        stage = "scoring"
        scored = score(item, output)
    except CallFailed as e:
        made_now = stage == "scoring" and item.stored is None
        return Failure(item, stage, str(e), row(item, output, None) if made_now else None)
    except AmgError:
        raise
    except Exception as e:
        if stage == "scoring":
            raise
        return Failure(item, stage, f"{item.system} raised {type(e).__name__}: {e}")
    return row(item, output, scored)


def drive(
    todo: list[I],
    *,
    run: Callable[[I], O] | None,
    score: Callable[[I, O], S],
    row: Callable[[I, O, S | None], R],
    offline: bool,
    description: str,
    usage: Any,
    concurrency: int,
    show_progress: bool,
) -> Iterator[R | Failure[I]]:
    """Every item of ``todo`` through ``attempt(item, run, score, row)``, results as they finish:
    inline when everything is offline rules (faster than a thread pool for pure Python), else
    through ``run_concurrent``. ``description`` is the progress label without its closing
    parenthesis (", offline)" or ")" is added)."""
    work = partial(attempt, run=run, score=score, row=row)
    if offline:
        # the eval's pure-Python rules make few cycles: young collections every 50,000
        with (
            fewer_collections(50_000, older=10),
            progress_bar(
                f"{description}, offline)", total=len(todo), enabled=show_progress
            ) as advance,
        ):
            for it in todo:
                r = work(it)
                advance(failed=isinstance(r, Failure))
                yield r
        return
    # ``attempt`` returns a failed call as a Failure: run_concurrent never sees one to wrap
    yield from run_concurrent(
        work,
        todo,
        concurrency=concurrency,
        description=f"{description})",
        usage=usage,
        progress=show_progress,
        is_failure=lambda x: isinstance(x, Failure),
    )


class Tally:
    """What a drive's results add up to (ran, re-scored, failed, calls, the first ten failures),
    each result stored as it comes: a component's trace and score (offline ones in batches of
    FLUSH_OFFLINE: cheap to redo after a kill), an answering system's answers and score, a
    failure with what it kept."""

    def __init__(self, ws: Workspace, offline: bool):
        self.ws, self.offline = ws, offline
        self.ran = self.rescored = self.failed = self.calls = 0
        self.examples: list[str] = []
        self.buffer: list[store.Finished] = []

    def record(self, r: store.Finished | store.Answered | Failure) -> None:
        if isinstance(r, Failure):
            self.failure(r)
        elif isinstance(r, store.Answered):
            self.answered(r)
        else:
            self.finished(r)

    def failure(self, f: Failure) -> None:
        self.failed += 1
        if isinstance(f.kept, store.Answered):
            store.save_answered(self.ws, f.kept)
        elif f.kept is not None:
            store.save_finished(self.ws, [f.kept])
        it = f.item
        store.save_failure(self.ws, it.run_key, it.system, it.arc_id, f.stage, f.error)
        if len(self.examples) < 10:
            self.examples.append(f"{it.system} on {it.arc_id} ({f.stage}): {f.error}")

    def finished(self, r: store.Finished) -> None:
        if r.trace is not None:
            self.ran += 1
            self.calls += r.trace.calls
        else:
            self.rescored += 1
        self.buffer.append(r)
        if not self.offline or len(self.buffer) >= FLUSH_OFFLINE:
            self.flush()

    def answered(self, r: store.Answered) -> None:
        store.save_answered(self.ws, r)
        if r.sessions is not None:
            self.ran += 1
            self.calls += sum(x["calls"] for x in r.sessions)
        else:
            self.rescored += 1

    def flush(self) -> None:
        store.save_finished(self.ws, self.buffer)
        self.buffer = []


def usage_view(specs: list[SystemSpec], judge: ValueJudge) -> _UsageView:
    """What a progress bar reads: the summed model usage of the systems' factories
    (``factory.usage``) and the judge."""

    def read(obj: Any) -> dict[str, int]:
        u = getattr(obj, "usage", None)
        u = u() if callable(u) else u
        return u.as_dict() if hasattr(u, "as_dict") else dict(u or {})

    def total() -> dict[str, int]:
        out: dict[str, int] = {}
        seen: set[int] = set()
        for obj in [s.factory for s in specs if id(s.factory) not in seen] + [judge.judge]:
            seen.add(id(obj))
            for k, v in read(obj).items():
                out[k] = out.get(k, 0) + v
        return out

    return _UsageView(total)


class _UsageView:
    def __init__(self, total):
        self.as_dict = total
