"""Weighted kappa for ordered tasks and bootstrap intervals for kappa, alpha and macro-F1."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score
from typer.testing import CliRunner

from agentmemgate.annotate_app import agreement_report, import_labels
from agentmemgate.cli import app
from agentmemgate.design import paper_design
from agentmemgate.stats import bootstrap_draws, kappa_rows, macro_f1_rows

from .test_agreement import write_csv

SCALE = list(paper_design().levels("hedge_strength"))  # the scale, control last
# Two annotators on 30 hedge-strength items: mostly close, some far apart, two can't tell.
A = [
    "strongly_hedged",
    "weakly_hedged",
    "confident_no_date",
    "scheduled_with_date",
    "completed_change",
] * 6
B = [
    "strongly_hedged",
    "confident_no_date",
    "confident_no_date",
    "scheduled_with_date",
    "strongly_hedged",
    "weakly_hedged",
    "weakly_hedged",
    "scheduled_with_date",
    "completed_change",
    "completed_change",
    "strongly_hedged",
    "weakly_hedged",
    "can't tell",
    "confident_no_date",
    "completed_change",
    "weakly_hedged",
    "weakly_hedged",
    "confident_no_date",
    "can't tell",
    "completed_change",
    "strongly_hedged",
    "scheduled_with_date",
    "confident_no_date",
    "scheduled_with_date",
    "scheduled_with_date",
    "strongly_hedged",
    "weakly_hedged",
    "completed_change",
    "scheduled_with_date",
    "completed_change",
]


@pytest.fixture
def ordered(ws, tmp_path):
    rows = [
        (f"i{k:02d}", who, lab) for k in range(30) for who, lab in (("ana", A[k]), ("ben", B[k]))
    ]
    import_labels(
        ws, "levels", write_csv(tmp_path / "l.csv", rows), task="difficulty:hedge_strength"
    )
    refs = [(f"i{k:02d}", A[k]) for k in range(30)]
    import_labels(
        ws, "levels", write_csv(tmp_path / "r.csv", refs, "item_id,label"), reference=True
    )
    return ws


def test_weighted_kappa_per_pair_for_ordered_tasks(ordered):
    r = agreement_report(ordered, "levels", resamples=200)
    (pair,) = r.cohen_kappa_pairs
    on_scale = [(a, b) for a, b in zip(A, B) if b != "can't tell"]
    xa, xb = zip(*on_scale)
    assert pair.n == 30 and pair.n_weighted == 28
    assert pair.kappa_linear == pytest.approx(
        cohen_kappa_score(xa, xb, labels=SCALE, weights="linear")
    )
    assert pair.kappa_quadratic == pytest.approx(
        cohen_kappa_score(xa, xb, labels=SCALE, weights="quadratic")
    )
    assert pair.kappa_quadratic > pair.kappa_linear > pair.kappa  # near misses count as near
    row = json.loads(r.model_dump_json())["cohen_kappa_pairs"][0]
    assert {"kappa", "kappa_linear", "kappa_quadratic"} <= set(row)


def test_weighted_kappa_is_absent_for_unordered_tasks(ws, tmp_path):
    rows = [
        (f"p{i}", who, lab)
        for i in range(8)
        for who, lab in (("A", "equivalent" if i % 2 else "not_equivalent"), ("B", "equivalent"))
    ]
    import_labels(ws, "eq", write_csv(tmp_path / "e.csv", rows))
    row = json.loads(agreement_report(ws, "eq").model_dump_json())["cohen_kappa_pairs"][0]
    assert "kappa" in row and not {"kappa_linear", "kappa_quadratic", "n_weighted"} & set(row)


def test_bootstrap_intervals_are_seeded_and_reported(ordered):
    r = agreement_report(ordered, "levels", resamples=500, seed=7)
    pair, alpha, vs = r.cohen_kappa_pairs[0], r.krippendorff_alpha, r.vs_reference
    for value, ci in [
        (pair.kappa, pair.kappa_ci),
        (pair.kappa_linear, pair.kappa_linear_ci),
        (pair.kappa_quadratic, pair.kappa_quadratic_ci),
        (alpha.value, alpha.ci),
        (vs.kappa, vs.kappa_ci),
        (vs.macro_f1, vs.macro_f1_ci),
    ]:
        assert ci.value == value and ci.ci_low < value < ci.ci_high
        assert (ci.resamples, ci.seed) == (500, 7) and ci.valid_resamples > 450
    assert pair.kappa_ci.n == 30 and pair.kappa_linear_ci.n == 28 and alpha.ci.n == 30
    assert vs.kappa_ci.n == 30  # pooled over two annotators, resampled by item
    assert r.bootstrap.model_dump() == {
        "resamples": 500,
        "seed": 7,
        "unit": "item",
        "confidence": 0.95,
    }
    same = agreement_report(ordered, "levels", resamples=500, seed=7)
    assert same.model_dump() == r.model_dump()
    other = agreement_report(ordered, "levels", resamples=500, seed=8)
    assert other.cohen_kappa_pairs[0].kappa_ci.ci_low != pair.kappa_ci.ci_low
    none = agreement_report(ordered, "levels", resamples=0)
    assert none.cohen_kappa_pairs[0].kappa_ci.ci_low is None


def test_cli_prints_intervals_with_resamples_and_seed(ordered):
    res = CliRunner().invoke(
        app,
        [
            "report",
            "agreement",
            "levels",
            "--resamples",
            "300",
            "--seed",
            "4",
            "--workspace",
            str(ordered.path),
        ],
    )
    assert res.exit_code == 0, res.output
    md = res.stdout
    assert "95% percentile bootstrap over items (300 resamples, seed 4" in md
    assert (
        "| annotator pair | n | agreement [95% CI] | Cohen's kappa [95% CI] | n on the scale | "
        "linear-weighted kappa | quadratic-weighted kappa |" in md
    )
    r = agreement_report(ordered, "levels", resamples=300, seed=4)
    k = r.cohen_kappa_pairs[0]
    assert (
        f"{k.kappa_quadratic:.3f} [{k.kappa_quadratic_ci.ci_low:.3f}, "
        f"{k.kappa_quadratic_ci.ci_high:.3f}]" in md
    )
    a = r.krippendorff_alpha
    assert (
        f"Krippendorff's alpha (ordinal): {a.value:.3f} [{a.ci.ci_low:.3f}, {a.ci.ci_high:.3f}]"
        in md
    )
    assert f"Macro-F1 over the reference's classes: {r.vs_reference.macro_f1:.3f} [" in md


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_draws_equal_sklearn_per_draw(weights):
    rng = np.random.default_rng(1)
    a = [SCALE[i] for i in rng.integers(0, 5, 40)]
    b = [SCALE[min(4, i + int(rng.integers(0, 2)))] for i in (SCALE.index(x) for x in a)]
    draws = bootstrap_draws(40, 30, seed=2)
    fast = kappa_rows(a, b, SCALE, draws, weights)
    for row, d in zip(fast, draws):
        ref = cohen_kappa_score([a[i] for i in d], [b[i] for i in d], labels=SCALE, weights=weights)
        assert row == pytest.approx(ref)


def test_grouped_draws_resample_whole_items():
    # Item 0 has two observations, item 1 one: drawing item 0 twice counts its labels twice.
    ref, hum, groups = ["x", "x", "y"], ["x", "y", "y"], [0, 0, 1]
    rows = macro_f1_rows(ref, hum, np.array([[0, 0], [0, 1]]), ["x", "y"], groups)
    expected = [
        f1_score(["x", "x", "x", "x"], ["x", "y", "x", "y"], labels=["x"], average="macro"),
        f1_score(ref, hum, labels=["x", "y"], average="macro"),
    ]
    assert rows == pytest.approx(expected)
    k = kappa_rows(ref, hum, ["x", "y"], np.array([[0, 1]]), None, groups)
    assert k[0] == pytest.approx(cohen_kappa_score(ref, hum))
