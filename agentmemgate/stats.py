"""Statistics every report shares: proportions with Wilson CIs, kappa, alpha.

Thin wrappers over statsmodels / scikit-learn / krippendorff, so every number carries its n and
undefined statistics stay undefined (None) instead of becoming 0 or 1.
"""

from __future__ import annotations

import math
from typing import Sequence

from pydantic import BaseModel, ConfigDict


class Proportion(BaseModel):
    """k of n with a 95% Wilson interval; value and bounds are fractions in [0, 1]."""

    model_config = ConfigDict(extra="forbid")
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    k: int

    def fmt(self) -> str:
        if self.n == 0 or self.value is None:
            return "undefined (n=0)"
        return (f"{self.k}/{self.n} = {100 * self.value:.1f}% "
                f"[{100 * self.ci_low:.1f}, {100 * self.ci_high:.1f}]")


def wilson(k: int, n: int, alpha: float = 0.05) -> Proportion:
    """Proportion with the Wilson score interval (statsmodels), undefined when n == 0."""
    if n == 0:
        return Proportion(value=None, ci_low=None, ci_high=None, n=0, k=0)
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    # Round away float noise (an upper bound of 0.9999999999999999 for k == n reads as a bug).
    return Proportion(value=k / n, ci_low=round(float(max(0.0, lo)), 12),
                      ci_high=round(float(min(1.0, hi)), 12), n=n, k=k)


def cohen_kappa(a: Sequence, b: Sequence, labels: Sequence | None = None,
                weights: str | None = None) -> float | None:
    """Cohen's kappa (scikit-learn); None when undefined (no items, or one label only)."""
    if len(a) == 0 or len(a) != len(b):
        return None
    if len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    k = cohen_kappa_score(a, b, labels=labels, weights=weights)
    return None if k is None or math.isnan(k) else float(k)


def krippendorff_alpha(reliability_data, level: str = "nominal",
                       value_domain: Sequence | None = None) -> float | None:
    """Krippendorff's alpha over a coders x units matrix with NaN for missing; None if undefined."""
    import numpy as np
    import krippendorff

    data = np.asarray(reliability_data, dtype=float)
    if data.size == 0:
        return None
    values = data[~np.isnan(data)]
    if len(set(values.tolist())) < 2:
        return None
    pairable = (np.sum(~np.isnan(data), axis=0) >= 2).sum()
    if pairable == 0:
        return None
    kwargs = {"level_of_measurement": level}
    if value_domain is not None:
        kwargs["value_domain"] = list(value_domain)
    a = krippendorff.alpha(reliability_data=data, **kwargs)
    return None if a is None or math.isnan(a) else float(a)
