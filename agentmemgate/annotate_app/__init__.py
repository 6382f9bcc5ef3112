"""Blind human audits: freeze items, label them in a Streamlit app, report agreement.

Researchers use ``audits`` (create/import/export/list) and ``agreement`` (reports); the app uses
only ``queues``, which never reads reference labels or other annotators' labels. Other rooms add
``--from`` sources with ``sources.register_source``.
"""

from .agreement import AgreementReport, agreement_report, save_agreement_report
from .audits import (AuditInfo, AuditSummary, CreatedAudit, ImportResult, create_audit, export_audit,
                     get_audit, import_labels, list_audits, relink)
from .items import DisplayTurn, ItemDisplay, Reference, SourceItem, ValuePair
from .labels import CANT_TELL, TASKS, LabelSet, label_set
from .queues import (AdjudicationItem, Person, QueueItem, adjudication_queue, annotator_queue,
                     record_label, resolve_token)
from .sources import SourceRequest, known_sources, load_source, register_source

__all__ = [
    "AgreementReport", "agreement_report", "save_agreement_report",
    "AuditInfo", "AuditSummary", "CreatedAudit", "ImportResult", "create_audit", "export_audit",
    "get_audit", "import_labels", "list_audits", "relink",
    "DisplayTurn", "ItemDisplay", "Reference", "SourceItem", "ValuePair",
    "CANT_TELL", "TASKS", "LabelSet", "label_set",
    "AdjudicationItem", "Person", "QueueItem", "adjudication_queue", "annotator_queue",
    "record_label", "resolve_token",
    "SourceRequest", "known_sources", "load_source", "register_source",
]
