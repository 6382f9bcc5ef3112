"""The gate's evidence-type classifier and its validation (paper, sec. 4 and A.5).

A room of its own rather than part of ``validate/`` (which checks generated arcs): it owns the
classifiers (offline lexicon, LLM under a versioned rubric), statement labeling by model votes,
per-statement distributions and the metrics that compare them with references.
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "BINARY_CLASSES": ("classes", None),
    "COMMIT_CLASSES": ("classes", None),
    "EVIDENCE_TYPES": ("classes", None),
    "HOLD_CLASSES": ("classes", None),
    "Distribution": ("classes", None),
    "check_label": ("classes", None),
    "normalize_label": ("classes", None),
    "LabelSummary": ("labeling", None),
    "label_statements": ("labeling", None),
    "plan_labels": ("labeling", None),
    "majority": ("labeling", None),
    "LexiconClassifier": ("lexicon", None),
    "lexicon_classifier": ("lexicon", None),
    "Interval": ("metrics", None),
    "Stability": ("metrics", None),
    "accuracy": ("metrics", None),
    "auroc": ("metrics", None),
    "auroc_ci": ("metrics", None),
    "confusion": ("metrics", None),
    "macro_f1": ("metrics", None),
    "macro_f1_ci": ("metrics", None),
    "paired_auroc_difference": ("metrics", None),
    "per_class": ("metrics", None),
    "stability": ("metrics", None),
    "RUBRICS": ("registry", None),
    "Classifier": ("registry", None),
    "classify_many": ("registry", None),
    "get_classifier": ("registry", None),
    "ClassifierReport": ("report", None),
    "SetReport": ("report", None),
    "classifier_report": ("report", None),
    "ClassifyResult": ("run", None),
    "classify_set": ("run", None),
    "classifiers_of": ("run", None),
    "plan_classify_set": ("run", None),
    "export_distributions": ("run", None),
    "stored": ("run", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BINARY_CLASSES",
    "COMMIT_CLASSES",
    "EVIDENCE_TYPES",
    "HOLD_CLASSES",
    "RUBRICS",
    "Classifier",
    "ClassifierReport",
    "ClassifyResult",
    "Distribution",
    "Interval",
    "LabelSummary",
    "LexiconClassifier",
    "SetReport",
    "Stability",
    "accuracy",
    "auroc",
    "auroc_ci",
    "check_label",
    "classifier_report",
    "classifiers_of",
    "classify_many",
    "classify_set",
    "confusion",
    "export_distributions",
    "get_classifier",
    "label_statements",
    "lexicon_classifier",
    "macro_f1",
    "macro_f1_ci",
    "majority",
    "normalize_label",
    "paired_auroc_difference",
    "per_class",
    "plan_classify_set",
    "plan_labels",
    "stability",
    "stored",
]
