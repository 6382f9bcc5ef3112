"""Validation: structural checks, judges (realism, blind level recovery, equivalence), reports.

The rooms above use what this one stores: the dataset card's validation section and the
``--drop-failing`` rule (``card``, listed by ``exports``), equivalence pairs as an audit source
(read by ``annotate_app``). Nothing here imports those rooms.
"""

from .judges import JudgeInfo, get_judge
from .judging import CHECKS as VALIDATION_CHECKS, JudgingSummary, ValidationSummary, judge_arcs, parse_checks, run_validation
from .report import ValidationReport, compute_report, report_markdown, validation_report, write_report
from .run import StructureSummary, validate_structure
from .structure import CHECKS, check_arc, check_arcs

__all__ = [
    "CHECKS", "JudgeInfo", "JudgingSummary", "StructureSummary", "VALIDATION_CHECKS",
    "ValidationReport", "ValidationSummary", "check_arc", "check_arcs", "compute_report",
    "get_judge", "judge_arcs", "parse_checks", "report_markdown", "run_validation",
    "validate_structure", "validation_report", "write_report",
]
