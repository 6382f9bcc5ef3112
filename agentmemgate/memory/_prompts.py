"""The memory rubrics: versioned prompt files whose leading ``# `` lines are a provenance header.

The header (where a prompt comes from, what was adapted) is for readers and is not sent to a
model; the sha256 recorded in component names is still that of the whole file.
"""

from __future__ import annotations

from functools import lru_cache

from .. import rubrics
from ..rubrics import Rubric

RUBRICS = ("memory_extract_literal", "memory_extract_cautious", "memory_match",
           "memory_match_permissive", "memory_predicates", "memory_check")


def strip_header(text: str) -> str:
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (lines[i].startswith("# ") or lines[i].strip() == "#"):
        i += 1
    return "".join(lines[i:])


@lru_cache(maxsize=None)
def memory_rubric(name: str, version: int | None = None) -> Rubric:
    r = rubrics.load(name, version)
    return r.model_copy(update={"text": strip_header(r.text)})


def component_name(model, rubric: Rubric) -> str:
    """How SystemInfo.components names an LLM component: model, rubric version, file hash."""
    return f"{model.spec}|{rubric.ref}#{rubric.sha256[:8]}"
