"""Statistics every report shares: proportions with Wilson CIs, kappa, alpha.

Thin wrappers over statsmodels / scikit-learn / krippendorff, so every number carries its n and
undefined statistics stay undefined (None) instead of becoming 0 or 1.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

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
        return (
            f"{self.k}/{self.n} = {100 * self.value:.1f}% "
            f"[{100 * self.ci_low:.1f}, {100 * self.ci_high:.1f}]"
        )


def preload_wilson() -> None:
    """Import what ``wilson`` needs (statsmodels and scipy: about a second of CPU) in a background
    thread, for a caller about to wait on the network (LLM judging) and report afterwards: the
    import then overlaps the waits instead of following them. Python's import lock makes a
    ``wilson`` call during the import wait for it; nothing is imported twice."""
    import threading

    if "statsmodels.stats.proportion" in sys.modules:
        return

    def load() -> None:
        try:
            import statsmodels.stats.proportion  # noqa: F401
        except Exception:
            pass

    threading.Thread(target=load, name="amg-preload-wilson", daemon=True).start()


def wilson(k: int, n: int, alpha: float = 0.05) -> Proportion:
    """Proportion with the Wilson score interval (statsmodels), undefined when n == 0."""
    if n == 0:
        return Proportion(value=None, ci_low=None, ci_high=None, n=0, k=0)
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    # Round away float noise (an upper bound of 0.9999999999999999 for k == n reads as a bug).
    return Proportion(
        value=k / n,
        ci_low=round(float(max(0.0, lo)), 12),
        ci_high=round(float(min(1.0, hi)), 12),
        n=n,
        k=k,
    )


def cohen_kappa(
    a: Sequence, b: Sequence, labels: Sequence | None = None, weights: str | None = None
) -> float | None:
    """Cohen's kappa (scikit-learn); None when undefined (no items, or one label only)."""
    if len(a) == 0 or len(a) != len(b):
        return None
    if len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    k = cohen_kappa_score(a, b, labels=labels, weights=weights)
    return None if k is None or math.isnan(k) else float(k)


def krippendorff_alpha(
    reliability_data, level: str = "nominal", value_domain: Sequence | None = None
) -> float | None:
    """Krippendorff's alpha over a coders x units matrix with NaN for missing; None if undefined."""
    import krippendorff
    import numpy as np

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
    with np.errstate(divide="ignore", invalid="ignore"):  # undefined -> NaN -> None below
        a = krippendorff.alpha(reliability_data=data, **kwargs)
    return None if a is None or math.isnan(a) else float(a)


# -- bootstrap intervals -----------------------------------------------------------------------
# Statistics with no closed-form interval (kappa, alpha, macro-F1, AUROC) get a seeded percentile
# bootstrap over units (statements, audit items): ``resamples`` draws with replacement, 95%.
# Draws are evaluated all at once from per-unit counts where the statistic allows it (kappa and
# F1 from confusion counts: identical to scikit-learn per draw, thousands of times faster).
DEFAULT_RESAMPLES = 2000


class Interval(BaseModel):
    """A statistic with a 95% percentile-bootstrap interval over units (items, statements)."""

    model_config = ConfigDict(extra="forbid")
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int
    resamples: int = 0  # bootstrap draws requested
    valid_resamples: int = 0  # draws where the statistic was defined
    seed: int | None = None

    def fmt(self, digits: int = 2, signed: bool = False) -> str:
        if self.value is None:
            return f"undefined (n={self.n})"
        f = f"{{:{'+' if signed else ''}.{digits}f}}"
        ci = "" if self.ci_low is None else f" [{f.format(self.ci_low)}, {f.format(self.ci_high)}]"
        return (
            f"{f.format(self.value)}{ci} (n={self.n}, {self.valid_resamples} bootstrap resamples)"
        )


def bootstrap_draws(n: int, resamples: int, seed: int):
    """``resamples`` x n unit indices drawn with replacement (one seeded generator)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_ci(values) -> tuple[float | None, float | None, int]:
    """2.5th and 97.5th percentiles of the defined (non-NaN) draws, and how many there were."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    ok = values[~np.isnan(values)]
    if ok.size == 0:
        return None, None, 0
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return float(lo), float(hi), int(ok.size)


def bootstrap(
    value: float | None, rows, n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> Interval:
    """``value`` with the percentile interval of ``rows(draws)`` (one statistic per draw, NaN
    where undefined); no interval when the statistic itself is undefined or ``resamples`` is 0."""
    if value is None or resamples <= 0 or n == 0:
        return Interval(value=value, n=n, resamples=resamples, seed=seed)
    lo, hi, valid = percentile_ci(rows(bootstrap_draws(n, resamples, seed)))
    return Interval(
        value=value,
        ci_low=lo,
        ci_high=hi,
        n=n,
        resamples=resamples,
        valid_resamples=valid,
        seed=seed,
    )


def _draw_sums(matrix, draws, groups=None):
    """Per draw, the column sums of ``matrix`` over the drawn units: (resamples, columns).

    ``groups[i]`` names the unit of row i (all rows of a unit are drawn together); without it
    every row is a unit. A draw is turned into unit multiplicities first, so memory stays
    (resamples x units), not (resamples x units x columns).
    """
    import numpy as np

    if groups is not None:
        groups = np.asarray(groups, dtype=int)
        units = np.zeros((int(groups.max()) + 1 if groups.size else 0, matrix.shape[1]))
        np.add.at(units, groups, matrix)
        matrix = units
    r, m = draws.shape[0], matrix.shape[0]
    counts = np.bincount((draws + m * np.arange(r)[:, None]).ravel(), minlength=r * m).reshape(r, m)
    return counts @ matrix


def kappa_rows(
    a: Sequence,
    b: Sequence,
    labels: Sequence,
    draws,
    weights: str | None = None,
    groups: Sequence[int] | None = None,
):
    """Cohen's kappa (as ``cohen_kappa``) of every draw at once; NaN where undefined.

    ``labels`` fixes the categories and, for ``weights`` "linear"/"quadratic", their order (as
    scikit-learn's ``labels``; observations outside it are left out). ``groups`` maps each
    observation to its unit, so that draws resample units (all of an item's labels together).
    """
    import numpy as np

    k = len(labels)
    index = {x: i for i, x in enumerate(labels)}
    keep = [i for i, (x, y) in enumerate(zip(a, b)) if x in index and y in index]
    cells = np.zeros((len(a), k * k))
    cells[keep, [index[a[i]] * k + index[b[i]] for i in keep]] = 1
    cm = _draw_sums(cells, draws, groups).reshape(-1, k, k)
    total = cm.sum(axis=(1, 2))
    rows, cols = cm.sum(axis=2), cm.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[:, :, None] * cols[:, None, :] / total[:, None, None]
        i, j = np.indices((k, k))
        w = {
            None: (i != j).astype(float),
            "linear": np.abs(i - j).astype(float),
            "quadratic": ((i - j) ** 2).astype(float),
        }[weights]
        kappa = 1 - (w * cm).sum(axis=(1, 2)) / (w * expected).sum(axis=(1, 2))
    used = ((rows > 0) | (cols > 0)).sum(axis=1)
    return np.where((used >= 2) & np.isfinite(kappa), kappa, np.nan)


def macro_f1_rows(
    reference: Sequence[str],
    predicted: Sequence[str],
    draws,
    labels: Sequence[str],
    groups: Sequence[int] | None = None,
):
    """Macro-F1 of every draw over the classes present in that draw's reference (F1 of a present
    class never predicted is 0; labels outside ``labels`` belong to no class)."""
    import numpy as np

    labels = list(labels)
    k = len(labels)
    R = np.zeros((len(reference), k))
    ref = [i for i, x in enumerate(reference) if x in labels]
    R[ref, [labels.index(reference[i]) for i in ref]] = 1
    P = np.zeros((len(predicted), k))
    hit = [i for i, x in enumerate(predicted) if x in labels]
    P[hit, [labels.index(predicted[i]) for i in hit]] = 1
    support, pred_n, tp = (_draw_sums(m, draws, groups) for m in (R, P, R * P))
    present = support > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(present, 2 * tp / (support + pred_n), 0.0)
        return f1.sum(axis=1) / present.sum(axis=1)
