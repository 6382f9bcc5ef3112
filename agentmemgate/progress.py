"""Progress displays for long work: items (done/total, failures, cache hits, tokens) and bytes
read from a streamed file."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn)

Usage = Callable[[], dict[str, int]]


def usage_text(usage: dict[str, int], failed: int) -> str:
    parts = [f"failures {failed}"]
    if "cache_hits" in usage:
        parts.append(f"cache hits {usage['cache_hits']}")
    if "input_tokens" in usage or "output_tokens" in usage:
        parts.append(f"tokens {usage.get('input_tokens', 0) + usage.get('output_tokens', 0)}")
    return "  ".join(parts)


@contextlib.contextmanager
def progress_bar(description: str, total: int, usage: Usage | None = None,
                 enabled: bool = True) -> Iterator[Callable[..., None]]:
    """Yield ``advance(failed=False)``; draws to stderr only when enabled and total > 0."""
    if not enabled or total == 0:
        yield lambda failed=False: None
        return
    failures = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[extra]}"), TimeElapsedColumn(),
                  console=Console(file=sys.stderr)) as bar:
        task = bar.add_task(description, total=total, extra="")

        def advance(failed: bool = False) -> None:
            nonlocal failures
            failures += int(failed)
            bar.update(task, advance=1, extra=usage_text(usage() if usage else {}, failures))

        yield advance


@contextlib.contextmanager
def bytes_bar(description: str, total: int, enabled: bool) -> Iterator[Callable[..., None]]:
    """Yield ``update(done_bytes, info="")``; draws to stderr only when enabled."""
    if not enabled:
        yield lambda done, info="": None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                  TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
                  console=Console(file=sys.stderr)) as bar:
        task = bar.add_task(description, total=total, info="")

        def update(done: int, info: str = "") -> None:
            bar.update(task, completed=done, info=info)

        yield update
