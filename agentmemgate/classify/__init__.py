"""The gate's evidence-type classifier and its validation (paper, sec. 4 and A.5).

A room of its own rather than part of ``validate/`` (which checks generated arcs): it owns the
classifiers (offline lexicon, LLM under a versioned rubric), statement labeling by model votes,
per-statement distributions and the metrics that compare them with references.
"""

from .classes import (BINARY_CLASSES, COMMIT_CLASSES, EVIDENCE_TYPES, HOLD_CLASSES, Distribution,
                      check_label, normalize_label)
from .labeling import LabelSummary, label_statements, majority
from .lexicon import LexiconClassifier, lexicon_classifier
from .metrics import (Interval, Stability, accuracy, auroc, auroc_ci, confusion, macro_f1,
                      macro_f1_ci, paired_auroc_difference, per_class, stability)
from .registry import RUBRICS, Classifier, classify_many, get_classifier
from .report import ClassifierReport, SetReport, classifier_report
from .run import ClassifyResult, classify_set, classifiers_of, export_distributions, stored

__all__ = [
    "BINARY_CLASSES", "COMMIT_CLASSES", "EVIDENCE_TYPES", "HOLD_CLASSES", "RUBRICS", "Classifier",
    "ClassifierReport", "ClassifyResult", "Distribution", "Interval", "LabelSummary",
    "LexiconClassifier", "SetReport", "Stability", "accuracy", "auroc", "auroc_ci", "check_label",
    "classifier_report", "classifiers_of", "classify_many", "classify_set", "confusion",
    "export_distributions", "get_classifier", "label_statements", "lexicon_classifier", "macro_f1",
    "macro_f1_ci", "majority", "normalize_label", "paired_auroc_difference", "per_class",
    "stability", "stored",
]
