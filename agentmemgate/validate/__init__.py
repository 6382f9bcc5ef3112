"""Validation: structural checks (and, with judges, realism and blind level recovery)."""

from .structure import CHECKS, check_arc, check_arcs
from .run import StructureSummary, validate_structure

__all__ = ["CHECKS", "check_arc", "check_arcs", "StructureSummary", "validate_structure"]
