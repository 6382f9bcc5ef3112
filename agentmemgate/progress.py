"""Progress displays for long work: items (done/total, failures, cache hits, tokens, and model
calls in flight) and bytes read from a streamed file; and ``say`` for one-line notices printed
above whatever bar is live."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

Usage = Callable[[], dict[str, int]]
_live: list[Progress] = []
_lock = threading.Lock()


def say(message: str) -> None:
    """Print a notice to stderr, above the live progress bar if there is one."""
    with _lock:
        bar = _live[-1] if _live else None
    if bar is not None:
        bar.console.print(message, markup=False, highlight=False)
    else:
        print(message, file=sys.stderr, flush=True)


def usage_text(usage: dict[str, int], failed: int) -> str:
    parts = [f"failures {failed}"]
    if "calls" in usage or "in_flight" in usage:
        calls = f"calls {usage.get('calls', 0)} done"
        if usage.get("in_flight"):
            calls += f", {usage['in_flight']} in flight"
        parts.append(calls)
    if "cache_hits" in usage:
        parts.append(f"cache hits {usage['cache_hits']}")
    if "input_tokens" in usage or "output_tokens" in usage:
        parts.append(f"tokens {usage.get('input_tokens', 0) + usage.get('output_tokens', 0)}")
    return "  ".join(parts)


class _UsageColumn(ProgressColumn):
    """Reads the usage at every refresh, so calls in flight show while no item has finished."""

    def __init__(self, usage: Usage | None, failures: list[int]):
        super().__init__()
        self.usage, self.failures = usage, failures

    def render(self, task) -> Text:
        return Text(usage_text(self.usage() if self.usage else {}, self.failures[0]))


@contextlib.contextmanager
def _registered(bar: Progress) -> Iterator[Progress]:
    with _lock:
        _live.append(bar)
    try:
        with bar:
            yield bar
    finally:
        with _lock:
            _live.remove(bar)


@contextlib.contextmanager
def progress_bar(
    description: str, total: int, usage: Usage | None = None, enabled: bool = True
) -> Iterator[Callable[..., None]]:
    """Yield ``advance(failed=False)``; draws to stderr only when enabled and total > 0."""
    if not enabled or total == 0:
        yield lambda failed=False: None
        return
    failures = [0]
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _UsageColumn(usage, failures),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
        refresh_per_second=4,
    )
    with _registered(bar):
        task = bar.add_task(description, total=total)

        def advance(failed: bool = False) -> None:
            failures[0] += int(failed)
            bar.advance(task, 1)

        yield advance


@contextlib.contextmanager
def bytes_bar(description: str, total: int, enabled: bool) -> Iterator[Callable[..., None]]:
    """Yield ``update(done_bytes, info="")``; draws to stderr only when enabled."""
    if not enabled:
        yield lambda done, info="": None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
    )
    with _registered(bar):
        task = bar.add_task(description, total=total, info="")

        def update(done: int, info: str = "") -> None:
            bar.update(task, completed=done, info=info)

        yield update
