"""What an evaluation run is made with besides its splits and systems: ``EvalOptions``.

from agentmemgate.evaluate import EvalOptions, run_eval
from agentmemgate.llm import ModelRef

opts = EvalOptions(
    model=ModelRef.parse("openai:qwen2.5-7b", base_url="http://localhost:8000/v1"),
    judge="offline",  # a spec string is parsed into a ModelRef
    concurrency=8,
)
summary = run_eval(ws, ["core"], ["literal-gated"], opts)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..llm.ref import ModelRef


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """``model``: the components' model (offline rules by default), the answering systems' too;
    ``judge``: the value judge, and the answer judge of answering systems; ``embedder`` and
    ``graph_url``: what products that embed or keep a graph use (an embedder reference with an
    empty spec carries a base URL alone: the product's default embedder at that server). The model options (``timeout``,
    ``max_tokens``, ``structured_output``, ``price``) travel in each reference's ``options``.
    ``allow_same_family``: a judge of the components' family is allowed (the report says so);
    ``concurrency``: arcs in flight; ``variants``: ``no-retry``, ``permissive`` for the component
    systems; ``repeat``: model-backed systems run N times (runs 2 to N named ``NAME#k``).
    Spec strings given for ``model``, ``judge`` and ``embedder`` are parsed (``ModelRef.parse``).
    """

    model: ModelRef = ModelRef()
    judge: ModelRef = ModelRef()
    embedder: ModelRef | None = None
    graph_url: str | None = None
    allow_same_family: bool = False
    concurrency: int = 4
    variants: tuple[str, ...] = ()
    repeat: int = 1

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "model", ModelRef.parse(self.model))
        set_(self, "judge", ModelRef.parse(self.judge))
        if self.embedder is not None:
            set_(self, "embedder", ModelRef.parse(self.embedder))
        set_(self, "variants", tuple(self.variants or ()))

    def replace(self, **changes: Any) -> EvalOptions:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def params(self) -> dict[str, Any]:
        """The run's parameters as the runs table records them (base URLs as set or not)."""
        return {
            "model": self.model.spec,
            "judge": self.judge.spec,
            "concurrency": self.concurrency,
            "variants": list(self.variants),
            "base_url": bool(self.model.base_url),
            "embedder": (self.embedder.spec or None) if self.embedder else None,
            "embedder_base_url": bool(self.embedder and self.embedder.base_url),
            "graph_url": bool(self.graph_url),
            **({"repeat": self.repeat} if self.repeat > 1 else {}),
        }
