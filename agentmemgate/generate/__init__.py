"""Generation: the seeded planner, the renderer interface, the offline template renderer.

The renderers (``offline``, ``llm_renderer``) register with ``renderer`` on its first use."""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "ImportSummary": ("importer", None),
    "import_arcs": ("importer", None),
    "Cell": ("planner", None),
    "plan_split": ("planner", None),
    "resolve_splits": ("planner", None),
    "RenderError": ("renderer", None),
    "RenderFailure": ("renderer", None),
    "Renderer": ("renderer", None),
    "get_renderer": ("renderer", None),
    "register_renderer": ("renderer", None),
    "GenerateSummary": ("run", None),
    "generate": ("run", None),
    "plan_generate": ("run", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "Cell",
    "GenerateSummary",
    "ImportSummary",
    "import_arcs",
    "RenderError",
    "RenderFailure",
    "Renderer",
    "generate",
    "get_renderer",
    "plan_generate",
    "plan_split",
    "register_renderer",
    "resolve_splits",
]
