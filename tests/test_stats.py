"""The shared statistics against the paper's reported intervals and undefined cases."""

import math

import pytest

from agentmemgate.stats import cohen_kappa, krippendorff_alpha, wilson


@pytest.mark.parametrize(
    "k, n, text",
    [
        (47, 54, "47/54 = 87.0% [75.6, 93.6]"),  # judge audit (Section 4)
        (35, 40, "35/40 = 87.5% [73.9, 94.5]"),  # classifier audit
        (114, 163, "114/163 = 69.9% [62.5, 76.5]"),  # Table 8 accuracy
        (0, 20, "0/20 = 0.0% [0.0, 16.1]"),  # "each observed zero has a 16.1% upper bound"
        (0, 40, "0/40 = 0.0% [0.0, 8.8]"),  # Table 2 gated zeros
    ],
)
def test_wilson_matches_the_paper(k, n, text):
    assert wilson(k, n).fmt() == text


def test_wilson_bounds_are_clean_and_n_zero_is_undefined():
    full = wilson(386, 386)
    assert full.ci_high == 1.0 and full.value == 1.0
    empty = wilson(0, 0)
    assert empty.value is None and empty.n == 0 and "undefined" in empty.fmt()


def test_kappa_and_alpha_undefined_with_one_label():
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None
    assert cohen_kappa([], []) is None
    assert krippendorff_alpha([[1, 1, 1], [1, 1, 1]]) is None
    k = cohen_kappa(["a", "b", "a", "b"], ["a", "b", "b", "b"])
    assert math.isclose(k, 0.5)
