"""Classifier metrics: AUROC (commit vs hold) with bootstrap CIs, accuracy and per-class precision
and recall with Wilson CIs, macro-F1, confusion matrix, repeated-run stability (paper, A.5).

Point estimates come from scikit-learn and ``stats.wilson``; intervals that have no closed form
use a seeded percentile bootstrap over statements (``resamples`` draws, 95%). The bootstrap draws
are evaluated all at once (AUROC as the rank statistic with scipy's tie-averaged ranks, F1 from
confusion counts): identical to scikit-learn per draw (tests check this), thousands of times
faster than calling it 2,000 times. A statistic that is undefined (e.g. AUROC when every
reference is commit) is None, never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..stats import (
    DEFAULT_RESAMPLES,
    Interval,
    Proportion,
    bootstrap,
    bootstrap_draws,
    percentile_ci,
    wilson,
)
from ..stats import macro_f1_rows as _macro_f1_rows
from .classes import EVIDENCE_TYPES


class ClassMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    support: int  # reference count
    predicted: int  # argmax count
    precision: Proportion  # TP / predicted
    recall: Proportion  # TP / support
    f1: float | None


class Stability(BaseModel):
    """Repeated runs of one classifier on the same statements (paper, A.5)."""

    model_config = ConfigDict(extra="forbid")
    runs: int
    n: int
    same_label_all_runs: Proportion
    majority_matches_run: Proportion  # majority label across runs == the reported run's label
    reported_run: int
    sd_mean: float | None  # per-statement SD (ddof=1) of P(commit) across runs, averaged
    sd_median: float | None
    auroc_min: float | None
    auroc_max: float | None
    auroc_mean: float | None
    aurocs: list[float | None]


def auroc(y_commit: Sequence[int], p_commit: Sequence[float]) -> float | None:
    """ROC AUC of P(commit) against reference commit (1) / hold (0); None with one class only."""
    y = np.asarray(y_commit)
    if y.size == 0 or len(np.unique(y)) < 2:
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, np.asarray(p_commit, dtype=float)))


_draws = bootstrap_draws  # the draws every interval here uses (kept for the tests' name)


def auroc_rows(y_commit: np.ndarray, p_commit: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """AUROC of every bootstrap draw at once (NaN where a draw has one class only).

    AUC = (R1 - n1 (n1 + 1) / 2) / (n1 n0) with R1 the summed tie-averaged ranks of the commit
    statements: the Mann-Whitney form of what ``roc_auc_score`` computes.
    """
    from scipy.stats import rankdata

    y, p = np.asarray(y_commit)[draws].astype(bool), np.asarray(p_commit, dtype=float)[draws]
    ranks = rankdata(p, axis=1)
    n1 = y.sum(axis=1)
    n0 = y.shape[1] - n1
    r1 = np.where(y, ranks, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = (r1 - n1 * (n1 + 1) / 2) / (n1 * n0)
    return np.where((n1 > 0) & (n0 > 0), auc, np.nan)


def macro_f1_rows(
    reference: Sequence[str], predicted: Sequence[str], draws: np.ndarray
) -> np.ndarray:
    """Macro-F1 of every draw over the classes present in that draw's reference (as ``macro_f1``)."""
    return _macro_f1_rows(reference, predicted, draws, EVIDENCE_TYPES)


def auroc_ci(
    y_commit: Sequence[int],
    p_commit: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    y, p = np.asarray(y_commit), np.asarray(p_commit, dtype=float)
    return bootstrap(auroc(y, p), lambda draws: auroc_rows(y, p, draws), len(y), resamples, seed)


def paired_auroc_difference(
    y_commit: Sequence[int],
    p_a: Sequence[float],
    p_b: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """AUROC(a) - AUROC(b) on the same statements; each draw resamples statements for both."""
    y, a, b = np.asarray(y_commit), np.asarray(p_a, dtype=float), np.asarray(p_b, dtype=float)
    ra, rb = auroc(y, a), auroc(y, b)
    if ra is None or rb is None:
        return Interval(value=None, n=len(y), resamples=resamples, seed=seed)
    if resamples <= 0:
        return Interval(value=ra - rb, n=len(y), seed=seed)
    draws = _draws(len(y), resamples, seed)
    lo, hi, valid = percentile_ci(auroc_rows(y, a, draws) - auroc_rows(y, b, draws))
    return Interval(
        value=ra - rb,
        ci_low=lo,
        ci_high=hi,
        n=len(y),
        resamples=resamples,
        valid_resamples=valid,
        seed=seed,
    )


def accuracy(reference: Sequence[str], predicted: Sequence[str]) -> Proportion:
    return wilson(sum(r == p for r, p in zip(reference, predicted)), len(reference))


def per_class(
    reference: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = EVIDENCE_TYPES
) -> list[ClassMetrics]:
    out = []
    for c in labels:
        tp = sum(r == c and p == c for r, p in zip(reference, predicted))
        support = sum(r == c for r in reference)
        pred = sum(p == c for p in predicted)
        prec, rec = wilson(tp, pred), wilson(tp, support)
        f1 = (
            None
            if prec.value is None or rec.value is None
            else (
                0.0
                if prec.value + rec.value == 0
                else 2 * prec.value * rec.value / (prec.value + rec.value)
            )
        )
        out.append(
            ClassMetrics(
                label=c, support=support, predicted=pred, precision=prec, recall=rec, f1=f1
            )
        )
    return out


def macro_f1(reference: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Mean F1 over the classes present in the reference (sklearn; a never-predicted class is 0)."""
    present = [c for c in EVIDENCE_TYPES if c in set(reference)]
    if not present:
        return None
    from sklearn.metrics import f1_score

    return float(
        f1_score(list(reference), list(predicted), labels=present, average="macro", zero_division=0)
    )


def macro_f1_ci(
    reference: Sequence[str],
    predicted: Sequence[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    return bootstrap(
        macro_f1(reference, predicted),
        lambda draws: macro_f1_rows(reference, predicted, draws),
        len(reference),
        resamples,
        seed,
    )


def confusion(
    reference: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = EVIDENCE_TYPES
) -> list[list[int]]:
    """Rows: reference label; columns: predicted label (scikit-learn's convention)."""
    if not reference:
        return [[0] * len(labels) for _ in labels]
    from sklearn.metrics import confusion_matrix

    return confusion_matrix(list(reference), list(predicted), labels=list(labels)).tolist()


def stability(
    labels_by_run: list[list[str]],
    p_commit_by_run: list[list[float]],
    y_commit: Sequence[int],
    reported_run: int = 0,
) -> Stability:
    """``labels_by_run[r][i]``: argmax of run r on statement i (same statements in every run)."""
    runs, n = len(labels_by_run), len(labels_by_run[0]) if labels_by_run else 0
    same = sum(len({labels_by_run[r][i] for r in range(runs)}) == 1 for i in range(n))
    order = {c: k for k, c in enumerate(EVIDENCE_TYPES + ("commit", "hold"))}
    majority_ok = 0
    for i in range(n):
        votes = [labels_by_run[r][i] for r in range(runs)]
        top = max(votes.count(v) for v in set(votes))
        leaders = sorted(
            {v for v in votes if votes.count(v) == top}, key=lambda v: order.get(v, 99)
        )
        majority_ok += len(leaders) == 1 and leaders[0] == labels_by_run[reported_run][i]
    p = np.asarray(p_commit_by_run, dtype=float)
    sds = p.std(axis=0, ddof=1) if runs > 1 and n else np.array([])
    aurocs = [auroc(y_commit, p[r]) for r in range(runs)]
    defined = [a for a in aurocs if a is not None]
    return Stability(
        runs=runs,
        n=n,
        same_label_all_runs=wilson(same, n),
        majority_matches_run=wilson(majority_ok, n),
        reported_run=reported_run,
        sd_mean=float(sds.mean()) if sds.size else None,
        sd_median=float(np.median(sds)) if sds.size else None,
        auroc_min=min(defined) if defined else None,
        auroc_max=max(defined) if defined else None,
        auroc_mean=float(np.mean(defined)) if defined else None,
        aurocs=aurocs,
    )
