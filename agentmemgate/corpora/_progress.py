"""Progress over a streamed corpus file, in bytes read (item bars use ``agentmemgate.progress``)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
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
