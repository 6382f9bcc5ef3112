"""Validation: structural checks, judges (realism, blind level recovery, equivalence), reports.

Importing this package registers the validation summary as a dataset-card section and the
``--drop-failing`` rule with ``agentmemgate.exports``, and the ``equivalence`` audit source.
"""

from .judges import JudgeInfo, get_judge
from .judging import CHECKS as VALIDATION_CHECKS, JudgingSummary, ValidationSummary, judge_arcs, parse_checks, run_validation
from .report import ValidationReport, compute_report, report_markdown, validation_report, write_report
from .run import StructureSummary, validate_structure
from .structure import CHECKS, check_arc, check_arcs
from . import _audit_source, card as _card

_card.register()
_audit_source.register()

__all__ = [
    "CHECKS", "JudgeInfo", "JudgingSummary", "StructureSummary", "VALIDATION_CHECKS",
    "ValidationReport", "ValidationSummary", "check_arc", "check_arcs", "compute_report",
    "get_judge", "judge_arcs", "parse_checks", "report_markdown", "run_validation",
    "validate_structure", "validation_report", "write_report",
]
