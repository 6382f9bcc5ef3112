"""Fleiss' kappa and Gwet's AC1/AC2 against published worked examples.

- Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological Bulletin
  76(5): 378-382: 30 patients, 6 psychiatrists each, 5 diagnoses; kappa = .430. The ratings are
  the table as R's irr package ships it (``diagnoses``), which statsmodels' tests also use.
- Gwet, Handbook of Inter-Rater Reliability, 4th ed. (2014), p. 120: 12 subjects, 4 raters, 5
  categories, with missing ratings (no rater rated every subject), as his irrCAC package ships it
  (``cac.raw4raters``). Its README prints AC1 = 0.77544 (pa 0.8181818, pe 0.1903212, standard
  error 0.14295, 95% CI (0.461, 1)) and Fleiss' kappa = 0.76117 (pe 0.2387153, standard error
  0.15302, 95% CI (0.424, 1)). The weighted values (ordinal, linear, quadratic weights) are
  those his irrCAC program gives, as the irrCAC Python port's tests record them.
- Gwet's irrCAC README on the first 15 subjects of Fleiss' table (``distrib.6raters``): AC1 =
  0.4448007 (standard error 0.08418757, CI (0.264, 0.625)) and Fleiss' kappa = 0.4139265
  (standard error 0.08119291, CI (0.24, 0.588)).
"""

from __future__ import annotations

import numpy as np
import pytest

from agentmemgate.annotate_app.chance import coefficient, rating_counts

# Fleiss 1971: each row is one patient's six diagnoses (1 depression, 2 personality disorder,
# 3 schizophrenia, 4 neurosis, 5 other).
FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip

# Gwet 2014, p. 120 (irrCAC's cac.raw4raters): one row per subject, one column per rater.
N = None
RAW4RATERS = [
    [1, 1, N, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [N, 5, 5, 5], [N, N, 1, 1], [N, N, 3, N],
]  # fmt: skip
CATS = ["1", "2", "3", "4", "5"]


def counts(rows) -> np.ndarray:
    return rating_counts([[str(x) for x in r if x is not None] for r in rows], CATS)


def test_fleiss_1971():
    k = coefficient(counts(FLEISS_1971), "fleiss")
    assert round(k.value, 3) == 0.430 and k.n == 30
    from statsmodels.stats.inter_rater import fleiss_kappa  # constant raters: the same number

    assert k.value == pytest.approx(fleiss_kappa(counts(FLEISS_1971)), abs=1e-12)


def test_gwet_readme_on_the_first_15_subjects_of_fleiss():
    c = counts(FLEISS_1971[:15])
    ac1, kappa = coefficient(c, "gwet"), coefficient(c, "fleiss")
    assert ac1.value == pytest.approx(0.4448007, abs=1e-7)
    assert ac1.se == pytest.approx(0.08418757, abs=1e-8)
    assert (round(ac1.ci_low, 3), round(ac1.ci_high, 3)) == (0.264, 0.625)
    assert kappa.value == pytest.approx(0.4139265, abs=1e-7)
    assert kappa.se == pytest.approx(0.08119291, abs=1e-8)
    assert (round(kappa.ci_low, 2), round(kappa.ci_high, 3)) == (0.24, 0.588)


def test_gwet_handbook_raw4raters_with_missing_ratings():
    c = counts(RAW4RATERS)
    ac1 = coefficient(c, "gwet")
    assert ac1.value == pytest.approx(0.77544, abs=5e-6)
    assert ac1.pa == pytest.approx(0.8181818, abs=1e-7)
    assert ac1.pe == pytest.approx(0.1903212, abs=1e-7)
    assert ac1.se == pytest.approx(0.14295, abs=5e-6)
    assert (round(ac1.ci_low, 3), ac1.ci_high) == (0.461, 1.0)
    kappa = coefficient(c, "fleiss")
    assert kappa.value == pytest.approx(0.76117, abs=5e-6)
    assert kappa.pe == pytest.approx(0.2387153, abs=1e-7)
    assert kappa.se == pytest.approx(0.15302, abs=5e-6)
    assert (round(kappa.ci_low, 3), kappa.ci_high) == (0.424, 1.0)
    assert ac1.n == 12 and ac1.n_multi == 11  # the last subject has one rating


@pytest.mark.parametrize(
    "weights, ac2, pa, pe, se, fleiss",
    [
        ("ordinal", 0.899, 0.968, 0.685, 0.107, 0.850),
        ("linear", 0.859, 0.939, 0.571, 0.117, 0.818),
        ("quadratic", 0.914, 0.975, 0.714, 0.104, 0.865),
    ],
)
def test_gwet_ac2_and_weighted_kappa_on_raw4raters(weights, ac2, pa, pe, se, fleiss):
    c = counts(RAW4RATERS)
    got = coefficient(c, "gwet", weights)
    assert (round(got.value, 3), round(got.pa, 3), round(got.pe, 3), round(got.se, 3)) == (
        ac2,
        pa,
        pe,
        se,
    )
    assert round(coefficient(c, "fleiss", weights).value, 3) == fleiss


def test_skewed_labels_kappa_near_zero_ac1_high():
    """Near-unanimous labels on a skewed task: kappa collapses, AC1 does not (the paradox AC1
    answers)."""
    rows = [["a", "a", "a"]] * 18 + [["a", "a", "b"], ["a", "b", "a"]]
    c = rating_counts(rows, ["a", "b"])
    kappa, ac1 = coefficient(c, "fleiss"), coefficient(c, "gwet")
    assert kappa.value < 0.0 and ac1.value > 0.9


def test_undefined_cases():
    one = coefficient(rating_counts([["a"], ["b"]], ["a", "b"]), "gwet")
    assert one.value is None and one.n_multi == 0
    same = coefficient(rating_counts([["a", "a"], ["a", "a"]], ["a", "b"]), "fleiss")
    assert same.value is None and same.pe == 1.0  # chance agreement of 1: kappa undefined
    assert coefficient(rating_counts([["a", "a"], ["a", "a"]], ["a", "b"]), "gwet").value == 1.0
