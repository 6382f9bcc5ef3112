"""Judge specs to judges: ``offline`` and ``provider:model``, as the LLM providers are resolved.

Kept apart from ``base`` (the interface the judges subclass), so the interface never imports its
own implementations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...llm.ref import ModelRef
from ...registry import Registry
from .base import OFFLINE_JUDGE, Judge

JudgeFactory = Callable[..., Judge]
JUDGES: Registry[JudgeFactory] = Registry("judge")  # the judges that are not a model spec


def register_judge(spec: str, factory: JudgeFactory) -> None:
    """Make ``--judge SPEC`` resolve to ``factory(design=DESIGN)``; other specs are LLM judges."""
    JUDGES.register(spec, factory)


def get_judge(
    judge: str | ModelRef,
    *,
    workspace: Any = None,
    concurrency: int = 4,
    design: Any = None,
    **options: Any,
) -> Judge:
    """Resolve a ``--judge`` value, a spec or a ``ModelRef`` (its base URL and model options go
    to an LLM judge's model; ``options`` add to them); unknown names get the LLM layer's one-line
    error. ``design``: the design whose arcs it judges (the offline judge reads its recovery
    rules; an LLM judge reads the options it is shown)."""
    ref = ModelRef.parse(judge)
    if ref.spec in JUDGES:
        return JUDGES.lookup(ref.spec)(design=design)
    from .llm import LLMJudge

    return LLMJudge(ref, workspace=workspace, concurrency=concurrency, **options)


def _heuristic(design: Any = None) -> Judge:
    from .heuristic import HeuristicJudge

    return HeuristicJudge(design)


register_judge(OFFLINE_JUDGE, _heuristic)
