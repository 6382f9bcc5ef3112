"""What the built-in answering systems share: the model, the usage view, the provenance record."""

from __future__ import annotations

from typing import Any

from .contract import AnsweringOptions, library_version


def make_model(options: AnsweringOptions) -> Any:
    """The answer model through the LLM layer (cache + call log), bounded to
    ``options.concurrency`` calls in flight across every conversation of the run."""
    from ..llm import get_model
    from ..memory.registry import BoundedModel

    return BoundedModel(
        get_model(
            options.model,
            workspace=options.workspace,
            base_url=options.base_url,
            **options.llm_options,
        ),
        options.concurrency,
    )


def provenance(
    product: str,
    *,
    model: str,
    library: str = "agentmemgate",
    embedder: str | None = None,
    dimensions: int | None = None,
    store: str = "none",
    **extra: Any,
) -> dict[str, Any]:
    """The provenance every answering system records (the run key hashes it): product, library
    and version, configuration (model, embedder, dimensions, store) and the prompts' hashes."""
    return {
        "product": product,
        "library": library,
        "library_version": library_version(library),
        "model": model,
        "embedder": embedder,
        "dimensions": dimensions,
        "store": store,
        **extra,
    }
