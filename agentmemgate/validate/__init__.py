"""Validation: structural checks, judges (realism, blind level recovery, equivalence), reports.

The rooms above use what this one stores: the dataset card's validation section and the
``--drop-failing`` rule (``card``, listed by ``exports``), equivalence pairs as an audit source
(read by ``annotate_app``). Nothing here imports those rooms.
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "JudgeInfo": ("judges", None),
    "get_judge": ("judges", None),
    "VALIDATION_CHECKS": ("judging", "CHECKS"),
    "JudgingSummary": ("judging", None),
    "ValidationSummary": ("judging", None),
    "judge_arcs": ("judging", None),
    "parse_checks": ("judging", None),
    "run_validation": ("judging", None),
    "ValidationReport": ("report_models", None),
    "compute_report": ("report", None),
    "report_markdown": ("_report_md", None),
    "validation_report": ("report", None),
    "write_report": ("report", None),
    "StructureSummary": ("run", None),
    "validate_structure": ("run", None),
    "CHECKS": ("structure", None),
    "check_arc": ("structure", None),
    "check_arcs": ("structure", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "CHECKS",
    "JudgeInfo",
    "JudgingSummary",
    "StructureSummary",
    "VALIDATION_CHECKS",
    "ValidationReport",
    "ValidationSummary",
    "check_arc",
    "check_arcs",
    "compute_report",
    "get_judge",
    "judge_arcs",
    "parse_checks",
    "report_markdown",
    "run_validation",
    "validate_structure",
    "validation_report",
    "write_report",
]
