"""The builder contract of answering systems: what ``amg eval run`` passes in, what comes back.

A builder is ``build(options: AnsweringOptions) -> Answering``; each product module
(``products/mem0.py``, ``products/graphiti.py``) and each baseline has one. What a builder fills:

- ``info``: ``SystemInfo`` (``name`` is the registry name; results show ``name@model``);
  ``offline=False`` for anything that calls a model;
- ``factory``: a fresh ``memory.answering.AnsweringSystem`` per call (one per conversation);
  its ``answer`` does the product's own retrieval, then ``products.answer_probe`` once;
- ``provenance``: ``product``, ``library``, ``library_version``, ``model``, ``embedder``,
  ``dimensions``, ``store`` and ``answer_prompt`` / ``answer_prompt_sha256``
  (``answer.answer_provenance()``); every key goes into the run key, so a changed value is a
  new run; keep secrets and server URLs out (the evaluation records only that a URL was given);
- ``model``: the ``--model`` spec; ``source``: ``Path(__file__)`` (its text is in the run key);
  ``usage``: model-call totals for the progress bar.

The namespace ``begin`` receives changes with every attempt at an arc: never put it into a
model prompt, or a re-run after a kill could not be answered from the LLM cache.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory.answering import AnsweringFactory
from ..memory.system import SystemInfo


@dataclass
class AnsweringOptions:
    """What ``amg eval run`` passes to an answering system's builder."""

    model: str = "offline"  # provider:model: the model of the answer call (and the product's LLM)
    workspace: Any = None  # the Workspace: LLM cache and call log
    base_url: str | None = None  # OpenAI-compatible server for an openai: model
    embedder: str | None = None  # provider:model of the product's embedder (--embedder)
    embedder_base_url: str | None = None  # where the embedder is served, if elsewhere
    graph_url: str | None = None  # a graph product's server (--graph-url); None: embedded
    llm_options: dict[str, Any] = field(
        default_factory=dict
    )  # timeout, max_tokens, structured_output
    concurrency: int = 16  # model calls in flight at once, across conversations


@dataclass
class Answering:
    """A resolved answering system: how reports name it, how to make one, where it came from."""

    info: SystemInfo
    factory: AnsweringFactory
    provenance: dict[
        str, Any
    ]  # product, library, version, model, embedder, dimensions, store, prompt
    model: str = "offline"
    source: Path | None = None  # the module whose text is part of the run key
    usage: Callable[[], dict[str, int]] | None = None  # model-call totals (progress bars)


Builder = Callable[[AnsweringOptions], Answering]
"""``build(options)``: a product's or baseline's builder (one per module)."""


def library_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
