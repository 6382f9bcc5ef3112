"""Designs: what a benchmark is made of (factors, levels, cells, structure, domains), as data.

A design is a TOML file (the paper's ships as ``design/paper/design.toml``) with the files it
names beside it (the offline renderer's phrase banks, the offline judge's recovery rules) and
the domain catalog it draws from. ``load_design`` reads one; every room asks it for splits,
cells, levels and definitions instead of keeping its own list.
"""

from .bundle import BUILTIN, CATALOG_DIR, Bundle, NamedFile
from .catalog import Domain, Exchange, load_catalog, load_domains, second_person
from .load import DesignError, Problem, design_of_bundle, load_design, paper_design, read_design
from .model import (
    OUTCOME_KINDS,
    PLAN_KINDS,
    ROLES,
    Cell,
    Design,
    Factor,
    Level,
    Split,
    Structure,
    StructureOverride,
)

__all__ = [
    "BUILTIN",
    "CATALOG_DIR",
    "OUTCOME_KINDS",
    "PLAN_KINDS",
    "ROLES",
    "Bundle",
    "Cell",
    "Design",
    "DesignError",
    "Domain",
    "Exchange",
    "Factor",
    "Level",
    "NamedFile",
    "Problem",
    "Split",
    "Structure",
    "StructureOverride",
    "design_of_bundle",
    "load_catalog",
    "load_design",
    "load_domains",
    "paper_design",
    "read_design",
    "second_person",
]
