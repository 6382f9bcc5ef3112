"""The agreement report's records: what ``amg report agreement`` computes, renders and saves.

Proportions carry n and a 95% Wilson interval; kappa, alpha and macro-F1 carry a seeded
percentile-bootstrap interval over items (``stats.Interval``). A statistic that is undefined is
None; one that does not apply to the task is absent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_serializer

from ..stats import Interval, Proportion
from .chance import ChanceCoefficient


class Alpha(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: float | None
    level: str  # "nominal" or "ordinal"
    n_units: int  # items with two or more usable labels
    note: str = ""
    ci: Interval | None = None  # bootstrap over items


_WEIGHTED = (
    "kappa_linear",
    "kappa_quadratic",
    "kappa_linear_ci",
    "kappa_quadratic_ci",
    "n_weighted",
)


class KappaPair(BaseModel):
    """Cohen's kappa of one annotator pair on the items both labeled.

    Ordered tasks (difficulty levels) add linearly and quadratically weighted kappa over the items
    where both labels are on the scale ("can't tell" is not: ``n_weighted``); for unordered tasks
    those keys are absent, not null.
    """

    model_config = ConfigDict(extra="forbid")
    a: str
    b: str
    kappa: float | None
    n: int
    agreement: Proportion
    kappa_ci: Interval | None = None
    kappa_linear: float | None = None
    kappa_quadratic: float | None = None
    kappa_linear_ci: Interval | None = None
    kappa_quadratic_ci: Interval | None = None
    n_weighted: int | None = None  # None: the task is not ordered, weighted kappa does not apply

    @model_serializer(mode="wrap")
    def _absent_unless_ordered(self, handler):
        out = handler(self)
        if self.n_weighted is None:
            for key in _WEIGHTED:
                out.pop(key, None)
        return out


class Confusion(BaseModel):
    """Rows are reference labels, columns the human labels, both in ``labels`` order."""

    model_config = ConfigDict(extra="forbid")
    labels: list[str]
    matrix: list[list[int]]


class ClassStats(BaseModel):
    model_config = ConfigDict(extra="forbid")
    precision: float | None
    precision_ci_low: float | None
    precision_ci_high: float | None
    precision_n: int  # how many human labels chose this class
    recall: float | None
    recall_ci_low: float | None
    recall_ci_high: float | None
    support: int  # how many reference labels are this class


class Binary(BaseModel):
    """evidence_type collapsed to the routing decision: speculation holds, other classes commit."""

    model_config = ConfigDict(extra="forbid")
    agreement: Proportion
    kappa: float | None
    confusion: Confusion
    kappa_ci: Interval | None = None


class PlanAsserted(BaseModel):
    """answer_assertion collapsed to the decision that drives exposure: does the answer assert the
    plan value (the option holding it, or both)? Rows of ``confusion`` are the judge's decision."""

    model_config = ConfigDict(extra="forbid")
    agreement: Proportion  # human vs judge; a human "can't tell" counts as a disagreement
    kappa: float | None
    kappa_ci: Interval | None = None
    confusion: Confusion  # labels yes, no, cant_tell
    # Of the judge's "plan asserted" observations that a human decided, how many the human says
    # do not assert the plan value: the judge's false plan assertions (they inflate exposure).
    judge_yes_human_no: Proportion
    # Of the judge's "not asserted" observations a human decided, how many assert it for the human.
    judge_no_human_yes: Proportion
    human_cant_tell: int


class VsReference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agreement: Proportion
    kappa: float | None
    per_class: dict[str, ClassStats]
    macro_f1: float | None
    confusion: Confusion
    within_one: Proportion | None = None  # ordered tasks: off by at most one level
    binary: Binary | None = None
    plan_asserted: PlanAsserted | None = None  # answer_assertion only (absent otherwise)
    kappa_ci: Interval | None = None  # bootstrap over items (pooled: an item's labels together)
    macro_f1_ci: Interval | None = None

    @model_serializer(mode="wrap")
    def _absent_unless_answers(self, handler):
        out = handler(self)
        if self.plan_asserted is None:
            out.pop("plan_asserted", None)
        return out


class ReferenceBlock(VsReference):
    """Pooled over annotators (each annotator's label is one observation), then per annotator."""

    sources: dict[str, int]  # reference source -> items
    n_items: int  # items with both a reference and a human label
    per_annotator: dict[str, VsReference]


class Adjudication(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n_candidates: int  # items with two or more annotator labels
    n_disagreements: int
    n_resolved: int
    vs_reference: Proportion | None


class AnnotatorDiag(BaseModel):
    model_config = ConfigDict(extra="forbid")
    annotator: str
    assigned: int
    labeled: int
    labels_logged: int
    changed: int  # items labeled more than once (the latest label counts)
    cant_tell: int
    fast: int
    median_active_seconds: float | None
    # agreement with the item's final label (majority, or the adjudicator's resolution), over
    # the person's items with two or more labels and a final label
    vs_final: Proportion | None = None


class FastDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    annotator: str
    item_id: str
    seconds: float


class Diagnostics(BaseModel):
    model_config = ConfigDict(extra="forbid")
    per_annotator: list[AnnotatorDiag]
    prevalence: dict[str, Proportion]  # human labels (latest), pooled
    reference_prevalence: dict[str, Proportion]
    prevalence_by_group: dict[str, dict[str, Proportion]]  # e.g. realism criterion -> label
    n_unlabeled_items: int
    fast_threshold_seconds: float
    fast_decisions: list[FastDecision]
    undefined: list[str]
    notes: list[str]


class Bootstrap(BaseModel):
    """How the kappa, alpha and macro-F1 intervals were drawn."""

    model_config = ConfigDict(extra="forbid")
    resamples: int
    seed: int
    unit: str = "item"  # draws resample items; an item's labels stay together
    confidence: float = 0.95


class AgreementReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    task: str
    factor: str | None
    labels: list[str]
    ordered: bool
    rubric: str
    n_items: int
    n_annotators: int
    n_labels: int  # latest labels, all annotators
    n_items_multi: int  # items with two or more annotator labels
    percent_agreement: Proportion
    krippendorff_alpha: Alpha
    # any number of raters per item, with Gwet's 95% interval (``chance``); AC2 (ordinal weights)
    # for ordered tasks only, absent otherwise
    fleiss_kappa: ChanceCoefficient | None = None
    gwet_ac1: ChanceCoefficient | None = None
    gwet_ac2: ChanceCoefficient | None = None
    screened_out: int = 0  # screened-out people of an open audit
    screened_included: bool = False  # their labels counted (--include-screened)
    cohen_kappa_pairs: list[KappaPair]
    vs_reference: ReferenceBlock | None
    adjudication: Adjudication | None
    diagnostics: Diagnostics
    bootstrap: Bootstrap | None = None
    reference_name: str | None = None  # who made the references, when the source says
    # answer_assertion: human-human percent agreement on "plan asserted or not" (all label pairs)
    plan_asserted_human: Proportion | None = None
    plots: dict[str, str] = {}

    @model_serializer(mode="wrap")
    def _absent_unless_set(self, handler):
        out = handler(self)
        for key in ("reference_name", "plan_asserted_human", "gwet_ac2"):
            if getattr(self, key) is None:
                out.pop(key, None)
        return out
