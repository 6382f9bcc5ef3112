"""Fleiss' kappa and Gwet's AC1/AC2 for any number of raters per item, with 95% intervals.

Both follow Gwet's unified framework (Handbook of Inter-Rater Reliability, 4th ed., 2014, ch. 2-3
and 5), as his irrCAC package computes them from raw ratings: the same weighted percent agreement
over items with two or more ratings, and a chance agreement that differs (Fleiss: the squared
category shares; Gwet: the share of disagreement a random rating would produce), so AC1 stays
meaningful when one category dominates, where kappa can sit near zero though people agree on
almost every item. Items may have different numbers of ratings (Fleiss' generalized kappa). The
interval is Gwet's: the variance from each item's contribution, the coefficient plus or minus a
t quantile with n-1 degrees of freedom times its standard error, the upper bound at most 1.

No maintained Python package computes these with their variance and installs beside the toolkit:
irrCAC for Python pins pandas below 3 and numpy below 2; statsmodels has Fleiss' kappa for a
constant number of raters without a variance (the tests check this module against it, and both
against the published worked examples).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import numpy as np

Kind = Literal["fleiss", "gwet"]
Weights = Literal["identity", "ordinal", "linear", "quadratic"]


class ChanceCoefficient(BaseModel):
    """A chance-corrected agreement coefficient with Gwet's 95% interval."""

    model_config = ConfigDict(extra="forbid")
    value: float | None  # None: undefined (no item with two ratings, or chance agreement of 1)
    ci_low: float | None
    ci_high: float | None
    n: int  # items with at least one rating
    n_multi: int = 0  # items with two or more ratings (percent agreement is over these)
    se: float | None = None
    pa: float | None = None  # observed (weighted) agreement
    pe: float | None = None  # chance agreement
    weights: str = "identity"


def weight_matrix(q: int, kind: Weights = "identity") -> np.ndarray:
    """Gwet's weights over ``q`` ordered categories (identity: unweighted)."""
    import numpy as np

    k = np.arange(q)
    if kind == "identity" or q == 1:
        return np.eye(q)
    d = np.abs(k[:, None] - k[None, :]).astype(float)
    if kind == "linear":
        return 1 - d / (q - 1)
    if kind == "quadratic":
        return 1 - d**2 / (q - 1) ** 2
    if kind == "ordinal":
        m = d + 1
        w = m * (m - 1) / 2
        return 1 - w / w.max()
    raise ValueError(f"unknown weights {kind!r}")


def rating_counts(items: Sequence[Sequence[str]], categories: Sequence[str]) -> np.ndarray:
    """Items x categories: how many raters put each item in each category (labels outside
    ``categories`` are left out, as missing ratings)."""
    import numpy as np

    pos = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(items), len(categories)))
    for r, labels in enumerate(items):
        for lab in labels:
            if lab in pos:
                out[r, pos[lab]] += 1
    return out


def coefficient(
    counts: np.ndarray, kind: Kind, weights: Weights = "identity", confidence: float = 0.95
) -> ChanceCoefficient:
    """Fleiss' generalized kappa or Gwet's AC1 (identity weights) / AC2 (other weights) from an
    items x categories count matrix."""
    import numpy as np

    counts = np.asarray(counts, dtype=float)
    counts = counts[counts.sum(axis=1) > 0]
    n, q = counts.shape if counts.ndim == 2 else (0, 0)
    w = weight_matrix(q, weights) if q else np.eye(0)
    r_i = counts.sum(axis=1)
    multi = r_i >= 2
    out = ChanceCoefficient(
        value=None, ci_low=None, ci_high=None, n=int(n), n_multi=int(multi.sum()), weights=weights
    )
    if not multi.any() or q < 2:
        return out
    weighted = counts @ w.T  # r*_ik = sum_l w_kl r_il
    agree_i = (counts * (weighted - 1)).sum(axis=1)
    den = r_i * (r_i - 1)
    pa = float((agree_i[multi] / den[multi]).sum() / multi.sum())
    pi = (counts / r_i[:, None]).mean(axis=0)
    if kind == "fleiss":
        pe = float((w * np.outer(pi, pi)).sum())
    else:
        pe = float(w.sum() * (pi * (1 - pi)).sum() / (q * (q - 1)))
    out.pa, out.pe = round(pa, 12), round(pe, 12)
    if pe >= 1:
        return out
    value = (pa - pe) / (1 - pe)
    out.value = float(value)
    if n < 2:
        return out
    # Gwet's linearization: each item's contribution to the coefficient, corrected for the
    # chance agreement estimated from the same items.
    pa_i = agree_i / np.where(den == 0, -1, den)
    c_i = (n / multi.sum()) * (pa_i - pe * multi) / (1 - pe)
    if kind == "fleiss":
        pi_w = (w @ pi + w.T @ pi) / 2
        pe_i = (counts @ pi_w) / r_i
    else:
        pe_i = (w.sum() / (q * (q - 1))) * (counts @ (1 - pi)) / r_i
    c_star = c_i - 2 * (1 - value) * (pe_i - pe) / (1 - pe)
    var = float(((c_star - value) ** 2).sum() / (n * (n - 1)))
    se = math.sqrt(max(var, 0.0))
    from scipy.stats import t

    half = float(t.ppf(1 - (1 - confidence) / 2, n - 1)) * se
    out.se = se
    out.ci_low = max(-1.0, value - half)
    out.ci_high = min(1.0, value + half)
    return out
