"""Ask one judge many questions: inline for heuristic judges, concurrently through the LLM layer
for model judges (progress bar with cache hits and tokens; a failed call comes back as an error)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from ..progress import progress_bar
from .judges import Judge

T = TypeVar("T")


def ask_all(
    judge: Judge,
    items: list[T],
    question_of: Callable[[T], object],
    description: str,
    show_progress: bool = True,
) -> Iterator[tuple[T, object | None, str]]:
    """Yield (item, verdict or None, error) as each answer lands."""
    if judge.heuristic:
        with progress_bar(description, total=len(items), enabled=show_progress) as advance:
            for it in items:
                yield it, judge.ask(question_of(it)), ""
                advance()
        return
    from ..llm import Failed, run_concurrent

    def ask(it: T):
        return it, judge.ask(question_of(it)), ""

    for res in run_concurrent(
        ask,
        items,
        concurrency=judge.concurrency,
        description=description,
        usage=judge.model.usage,
        progress=show_progress,
    ):
        yield (res.item, None, res.error) if isinstance(res, Failed) else res
