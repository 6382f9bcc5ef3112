"""Generation: the seeded planner, the renderer interface, the offline template renderer."""

from . import offline  # noqa: F401,E402  (registers "offline")
from .renderer import register_loader as _register_loader


def _llm_renderers() -> None:
    from . import llm_renderer  # noqa: F401  (registers openai:, anthropic:, scripted:)


# The LLM renderers register when first asked for: an offline build does not import them.
_register_loader(_llm_renderers)


# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "Domain": ("catalog", None),
    "load_catalog": ("catalog", None),
    "ImportSummary": ("importer", None),
    "import_arcs": ("importer", None),
    "Cell": ("planner", None),
    "paper_cells": ("planner", None),
    "plan_split": ("planner", None),
    "resolve_splits": ("planner", None),
    "RenderError": ("renderer", None),
    "RenderFailure": ("renderer", None),
    "Renderer": ("renderer", None),
    "get_renderer": ("renderer", None),
    "register_renderer": ("renderer", None),
    "GenerateSummary": ("run", None),
    "generate": ("run", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

__all__ = [
    "Cell", "Domain", "GenerateSummary", "ImportSummary", "import_arcs", "RenderError", "RenderFailure", "Renderer",
    "generate", "get_renderer", "load_catalog", "paper_cells", "plan_split", "register_renderer",
    "resolve_splits",
]
