"""The memory rubrics: versioned prompt files whose leading ``# `` lines are a provenance header.

The header (where a prompt comes from, what was adapted) is for readers and is not sent to a
model; the sha256 recorded in component names is still that of the whole file.
"""

from __future__ import annotations

from functools import cache

from .. import rubrics
from ..rubrics import Rubric

RUBRICS = (
    "memory_extract_literal",
    "memory_extract_cautious",
    "memory_match",
    "memory_match_permissive",
    "memory_predicates",
    "memory_check",
)


def strip_header(text: str) -> str:
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (lines[i].startswith("# ") or lines[i].strip() == "#"):
        i += 1
    return "".join(lines[i:])


@cache
def memory_rubric(name: str, version: int | None = None) -> Rubric:
    r = rubrics.load(name, version)
    return r.model_copy(update={"text": strip_header(r.text)})


def component_name(model, rubric: Rubric) -> str:
    """How SystemInfo.components names an LLM component: model, rubric version, file hash."""
    return f"{model.spec}|{rubric.ref}#{rubric.sha256[:8]}"


# Output budgets per component call: enough for a valid answer, small enough that a model that
# rambles is cut off early (the LLM layer re-asks, raising the budget, when a reply is cut off).
BUDGETS = {"extract": 512, "match": 48, "predicates": 320, "check": 24}


def budget(model, component: str) -> dict:
    """``{"max_tokens": N}`` for ``model.complete`` when the LLM layer takes a per-call output
    budget, else ``{}`` (the layer's own default applies)."""
    return (
        {"max_tokens": BUDGETS[component]}
        if _takes_budget(type(getattr(model, "_model", model)))
        else {}
    )


@cache
def _takes_budget(cls: type) -> bool:
    import inspect

    return "max_tokens" in inspect.signature(cls.complete).parameters
