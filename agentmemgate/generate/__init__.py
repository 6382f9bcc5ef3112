"""Generation: the seeded planner, the renderer interface, the offline template renderer."""

from .catalog import Domain, load_catalog
from .importer import ImportSummary, import_arcs
from .planner import Cell, paper_cells, plan_split, resolve_splits
from .renderer import RenderError, RenderFailure, Renderer, get_renderer, register_renderer
from .run import GenerateSummary, generate
from . import offline, llm_renderer  # noqa: F401,E402  (each registers its renderers)

__all__ = [
    "Cell", "Domain", "GenerateSummary", "ImportSummary", "import_arcs", "RenderError", "RenderFailure", "Renderer",
    "generate", "get_renderer", "load_catalog", "paper_cells", "plan_split", "register_renderer",
    "resolve_splits",
]
