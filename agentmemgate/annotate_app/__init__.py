"""Blind human audits: freeze items, label them in a Streamlit app, report agreement.

Researchers use ``audits`` (create/list/add/relink), ``interop`` (import/export) and
``agreement`` (reports); ``study`` runs open audits (a study link, assignment as people arrive,
checks, codes); the app uses only ``queues``, which never reads reference labels or other
annotators' labels. Other rooms add
``--from`` sources with ``sources.register_source``.
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "AgreementReport": ("agreement", None),
    "agreement_report": ("agreement", None),
    "save_agreement_report": ("agreement", None),
    "AuditInfo": ("audits", None),
    "AuditSummary": ("audits", None),
    "CreatedAudit": ("audits", None),
    "ImportResult": ("interop", None),
    "create_audit": ("audits", None),
    "export_audit": ("interop", None),
    "get_audit": ("audits", None),
    "import_labels": ("interop", None),
    "list_audits": ("audits", None),
    "relink": ("audits", None),
    "add_people": ("audits", None),
    "StudyOptions": ("study_options", None),
    "DisplayTurn": ("items", None),
    "ItemDisplay": ("items", None),
    "Reference": ("items", None),
    "SourceItem": ("items", None),
    "ValuePair": ("items", None),
    "CANT_TELL": ("labels", None),
    "TASKS": ("labels", None),
    "LabelSet": ("labels", None),
    "label_set": ("labels", None),
    "AdjudicationItem": ("queues", None),
    "Person": ("queues", None),
    "QueueItem": ("queues", None),
    "adjudication_queue": ("queues", None),
    "annotator_queue": ("queues", None),
    "record_label": ("queues", None),
    "resolve_token": ("queues", None),
    "SourceRequest": ("sources", None),
    "known_sources": ("sources", None),
    "load_source": ("sources", None),
    "register_source": ("sources", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AgreementReport",
    "agreement_report",
    "save_agreement_report",
    "AuditInfo",
    "AuditSummary",
    "CreatedAudit",
    "ImportResult",
    "create_audit",
    "export_audit",
    "get_audit",
    "import_labels",
    "list_audits",
    "relink",
    "add_people",
    "StudyOptions",
    "DisplayTurn",
    "ItemDisplay",
    "Reference",
    "SourceItem",
    "ValuePair",
    "CANT_TELL",
    "TASKS",
    "LabelSet",
    "label_set",
    "AdjudicationItem",
    "Person",
    "QueueItem",
    "adjudication_queue",
    "annotator_queue",
    "record_label",
    "resolve_token",
    "SourceRequest",
    "known_sources",
    "load_source",
    "register_source",
]
