"""Metrics against the paper's Table 8, scikit-learn, and hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

from agentmemgate.classify import (
    EVIDENCE_TYPES,
    accuracy,
    auroc,
    auroc_ci,
    confusion,
    macro_f1,
    macro_f1_ci,
    paired_auroc_difference,
    per_class,
    stability,
)
from agentmemgate.classify.metrics import _draws, auroc_rows, macro_f1_rows

# A confusion matrix consistent with every cell of Table 8 (163 natural statements): rows are the
# reference, columns the argmax, in EVIDENCE_TYPES order; "other" -> completed_event is 35 of 68.
TABLE8 = [[37, 4, 0, 1], [0, 46, 0, 2], [0, 2, 2, 1], [3, 35, 1, 29]]


def _labels(matrix):
    ref, pred = [], []
    for i, row in enumerate(matrix):
        for j, k in enumerate(row):
            ref += [EVIDENCE_TYPES[i]] * k
            pred += [EVIDENCE_TYPES[j]] * k
    return ref, pred


def _pct(p):
    return (round(100 * p.value, 1), round(100 * p.ci_low, 1), round(100 * p.ci_high, 1))


def test_table8_accuracy_precision_recall_with_wilson_intervals():
    ref, pred = _labels(TABLE8)
    acc = accuracy(ref, pred)
    assert (acc.k, acc.n) == (114, 163) and _pct(acc) == (69.9, 62.5, 76.5)
    rows = {m.label: m for m in per_class(ref, pred)}
    expected = {  # Table 8: support, precision [CI], recall [CI]
        "speculation": (42, (92.5, 80.1, 97.4), (88.1, 75.0, 94.8)),
        "completed_event": (48, (52.9, 42.5, 63.0), (95.8, 86.0, 98.8)),
        "explicit_correction": (5, (66.7, 20.8, 93.9), (40.0, 11.8, 76.9)),
        "other": (68, (87.9, 72.7, 95.2), (42.6, 31.6, 54.5)),
    }
    for label, (support, precision, recall) in expected.items():
        m = rows[label]
        assert m.support == support
        assert _pct(m.precision) == precision, label
        assert _pct(m.recall) == recall, label
    assert confusion(ref, pred) == TABLE8
    # A.5: macro-F1 0.665
    assert round(macro_f1(ref, pred), 3) == 0.665
    assert macro_f1(ref, pred) == pytest.approx(f1_score(ref, pred, average="macro"))


def test_auroc_matches_sklearn_and_is_undefined_with_one_class():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    p = np.clip(y * 0.3 + rng.random(60) * 0.7, 0, 1).round(2)  # ties included
    assert auroc(y, p) == pytest.approx(roc_auc_score(y, p))
    assert auroc([1, 1, 1], [0.2, 0.5, 0.9]) is None
    ci = auroc_ci([1, 1], [0.1, 0.2])
    assert ci.value is None and ci.fmt() == "undefined (n=2)"
    assert macro_f1([], []) is None


def test_bootstrap_draws_equal_sklearn_per_draw():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 25)
    p = rng.random(25).round(1)
    ref = list(rng.choice(EVIDENCE_TYPES, 25))
    pred = list(rng.choice(EVIDENCE_TYPES, 25))
    draws = _draws(25, 40, seed=3)
    fast_auc = auroc_rows(y, p, draws)
    fast_f1 = macro_f1_rows(ref, pred, draws)
    for k, idx in enumerate(draws):
        if len(set(y[idx])) == 2:
            assert fast_auc[k] == pytest.approx(roc_auc_score(y[idx], p[idx]))
        else:
            assert np.isnan(fast_auc[k])
        r, q = [ref[i] for i in idx], [pred[i] for i in idx]
        present = [c for c in EVIDENCE_TYPES if c in r]
        assert fast_f1[k] == pytest.approx(
            f1_score(r, q, labels=present, average="macro", zero_division=0)
        )


def test_bootstrap_intervals_are_seeded_and_report_their_resamples():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    p = y * 0.4 + rng.random(80) * 0.6
    a = auroc_ci(y, p, resamples=500, seed=11)
    b = auroc_ci(y, p, resamples=500, seed=11)
    assert a == b and a.resamples == 500 and a.valid_resamples == 500
    assert a.ci_low < a.value < a.ci_high
    assert "500 bootstrap resamples" in a.fmt()
    ref, pred = _labels(TABLE8)
    f1 = macro_f1_ci(ref, pred, resamples=300, seed=0)
    assert f1.ci_low < f1.value < f1.ci_high


def test_paired_difference():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 100)
    good = y * 0.5 + rng.random(100) * 0.5
    weak = y * 0.1 + rng.random(100) * 0.9
    same = paired_auroc_difference(y, good, good, resamples=200)
    assert same.value == 0 and same.ci_low == 0 and same.ci_high == 0
    d = paired_auroc_difference(y, good, weak, resamples=400, seed=1)
    assert d.value == pytest.approx(roc_auc_score(y, good) - roc_auc_score(y, weak))
    assert 0 < d.ci_low < d.value < d.ci_high
    assert paired_auroc_difference([1, 1], [0.1, 0.2], [0.3, 0.4]).value is None


def test_stability_by_hand():
    labels = [
        ["speculation", "other", "other"],
        ["speculation", "completed_event", "other"],
        ["speculation", "completed_event", "speculation"],
    ]
    p = [[0.1, 0.8, 0.6], [0.2, 0.9, 0.6], [0.3, 0.7, 0.3]]
    s = stability(labels, p, [0, 1, 1])
    assert (s.runs, s.n) == (3, 3)
    assert (s.same_label_all_runs.k, s.same_label_all_runs.n) == (1, 3)
    # majorities: speculation (= run 0), completed_event (run 0 said other), other (= run 0)
    assert s.majority_matches_run.k == 2
    sds = np.std(np.array(p), axis=0, ddof=1)
    assert s.sd_mean == pytest.approx(sds.mean()) and s.sd_median == pytest.approx(np.median(sds))
    assert s.aurocs == [1.0, 1.0, 0.75] and (s.auroc_min, s.auroc_max) == (0.75, 1.0)


def test_bootstrap_intervals_equal_a_plain_sklearn_loop():
    """The whole interval, not just each draw: percentile 2.5/97.5 of sklearn over the same draws."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 30)
    y[:2] = [0, 1]
    p = (y * 0.3 + rng.random(30) * 0.7).round(1)
    q = rng.random(30).round(1)
    ref = list(rng.choice(EVIDENCE_TYPES, 30, p=[0.4, 0.3, 0.05, 0.25]))
    pred = [r if rng.random() < 0.6 else "other" for r in ref]
    draws = np.random.default_rng(9).integers(0, 30, size=(100, 30))
    two = [d for d in draws if len(set(y[d])) == 2]
    aucs = [roc_auc_score(y[d], p[d]) for d in two]
    ci = auroc_ci(y, p, resamples=100, seed=9)
    assert (ci.ci_low, ci.ci_high) == pytest.approx(tuple(np.percentile(aucs, [2.5, 97.5])))
    assert ci.valid_resamples == len(two)
    diffs = [roc_auc_score(y[d], p[d]) - roc_auc_score(y[d], q[d]) for d in two]
    d = paired_auroc_difference(y, p, q, resamples=100, seed=9)
    assert (d.ci_low, d.ci_high) == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])))
    f1s = []
    for idx in draws:
        r, s = [ref[i] for i in idx], [pred[i] for i in idx]
        f1s.append(
            f1_score(
                r, s, labels=[c for c in EVIDENCE_TYPES if c in r], average="macro", zero_division=0
            )
        )
    f = macro_f1_ci(ref, pred, resamples=100, seed=9)
    assert (f.ci_low, f.ci_high) == pytest.approx(tuple(np.percentile(f1s, [2.5, 97.5])))
