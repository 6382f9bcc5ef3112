"""Per-arc scores -> the report's numbers: k/n with 95% Wilson intervals per system x split (and
per level), calls per user message, and paired differences with a seeded cluster bootstrap.

One observation per conversation, as in the paper: every arc is one conversation, so the
bootstrap resamples arcs (the clusters) with replacement and the paired difference of two systems
is taken over the arcs both were scored on.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..stats import wilson
from .measures import MEASURES, ArcScore

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CALLS = "calls_per_user_message"
# Measures whose paired difference the report gives (gated minus its ungated twin, a variant
# minus its base system).
DIFFERENCE_MEASURES = (
    "pending_contamination",
    "end_contamination",
    "task_accuracy",
    "staged_at_plan_turn",
    "promoted",
    "controls_committed",
    "corrections_applied",
    "exposure",
    CALLS,
    "premature_write",
)


class Stat(BaseModel):
    """A proportion k/n with its 95% Wilson interval (fractions); for calls per user message, k is
    the number of calls, n the user messages, and the interval a cluster bootstrap."""

    model_config = ConfigDict(extra="forbid")
    k: int
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None

    def pct(self) -> str:
        if self.n == 0 or self.value is None:
            return "undefined (n=0)"
        return (
            f"{self.k}/{self.n} {100 * self.value:.1f}% "
            f"[{100 * self.ci_low:.1f}, {100 * self.ci_high:.1f}]"
        )


def proportion(outcomes: Iterable[bool]) -> Stat:
    xs = list(outcomes)
    p = wilson(sum(xs), len(xs))
    return Stat(k=p.k, n=p.n, value=p.value, ci_low=p.ci_low, ci_high=p.ci_high)


def _resample(n: int, seed: int, resamples: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def calls_stat(
    scores: list[ArcScore], seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> Stat | None:
    scores = [s for s in scores if s.user_messages]
    if not scores:
        return None
    calls = np.array([s.calls for s in scores], dtype=float)
    msgs = np.array([s.user_messages for s in scores], dtype=float)
    idx = _resample(len(scores), seed, resamples)
    boot = calls[idx].sum(axis=1) / msgs[idx].sum(axis=1)
    return Stat(
        k=int(calls.sum()),
        n=int(msgs.sum()),
        value=float(calls.sum() / msgs.sum()),
        ci_low=float(np.percentile(boot, 2.5)),
        ci_high=float(np.percentile(boot, 97.5)),
    )


def measure_block(scores: list[ArcScore], with_calls: bool = True) -> dict[str, Stat]:
    """measure -> Stat for the measures that apply to at least one of ``scores`` (others absent)."""
    out: dict[str, Stat] = {}
    for m in MEASURES:
        if m == CALLS:
            continue
        xs = [s.values[m] for s in scores if m in s.values]
        if xs:
            out[m] = proportion(xs)
    if with_calls and (c := calls_stat(scores)) is not None:
        out[CALLS] = c
    return out


def split_block(scores: list[ArcScore]) -> dict:
    """``{MEASURE: Stat, ..., "by_level": {LEVEL: {MEASURE: Stat}}}`` for one system x split."""
    block: dict = dict(measure_block(scores))
    levels: dict[str, list[ArcScore]] = {}
    for s in scores:
        levels.setdefault(s.level, []).append(s)
    block["by_level"] = {lv: measure_block(ss, with_calls=False) for lv, ss in levels.items()}
    return block


class Difference(BaseModel):
    """``system`` minus ``baseline`` on the arcs both were scored on (paired, in points for
    proportions), with a seeded cluster-bootstrap 95% interval."""

    model_config = ConfigDict(extra="forbid")
    kind: str  # "gated_minus_ungated" | "minus_ungated_twin" (plan-typed) | "variant_minus_base"
    system: str
    baseline: str
    split: str
    measure: str
    n: int  # paired arcs
    value: float
    ci_low: float
    ci_high: float
    n_gained: int  # arcs where the measure holds for the system only
    n_lost: int  # arcs where it holds for the baseline only
    resamples: int
    seed: int
    clusters: int | None = None  # conversations resampled, when fewer than the paired ids


def paired_difference(
    kind: str,
    system: str,
    baseline: str,
    split: str,
    measure: str,
    a: dict[str, ArcScore],
    b: dict[str, ArcScore],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    clusters: dict[str, str] | None = None,
) -> Difference | None:
    """``clusters`` (id -> conversation) when several ids share a conversation (natural sets:
    LoCoMo questions of one sample): the bootstrap then resamples conversations and takes the
    mean paired difference over the ids they hold. Without it every id is its own cluster."""
    ids = sorted(set(a) & set(b))
    if clusters is not None and measure != CALLS:
        ids = [i for i in ids if measure in a[i].values and measure in b[i].values]
        if not ids:
            return None
        d = np.array([a[i].values[measure] for i in ids], float) - np.array(
            [b[i].values[measure] for i in ids], float
        )
        names = sorted({clusters.get(i, i) for i in ids})
        index = {c: j for j, c in enumerate(names)}
        member = np.array([index[clusters.get(i, i)] for i in ids])
        sums = np.bincount(member, weights=d, minlength=len(names))
        sizes = np.bincount(member, minlength=len(names)).astype(float)
        idx = _resample(len(names), seed, resamples)
        boot = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
        return Difference(
            kind=kind,
            system=system,
            baseline=baseline,
            split=split,
            measure=measure,
            n=len(ids),
            value=float(d.mean()),
            ci_low=float(np.percentile(boot, 2.5)),
            ci_high=float(np.percentile(boot, 97.5)),
            n_gained=int((d > 0).sum()),
            n_lost=int((d < 0).sum()),
            resamples=resamples,
            seed=seed,
            clusters=len(names),
        )
    if measure == CALLS:
        ids = [i for i in ids if a[i].user_messages and b[i].user_messages]
        if not ids:
            return None
        ca = np.array([a[i].calls for i in ids], float)
        cb = np.array([b[i].calls for i in ids], float)
        ma = np.array([a[i].user_messages for i in ids], float)
        mb = np.array([b[i].user_messages for i in ids], float)
        idx = _resample(len(ids), seed, resamples)
        boot = ca[idx].sum(1) / ma[idx].sum(1) - cb[idx].sum(1) / mb[idx].sum(1)
        value = ca.sum() / ma.sum() - cb.sum() / mb.sum()
        gained = int((ca > cb).sum())
        lost = int((ca < cb).sum())
    else:
        ids = [i for i in ids if measure in a[i].values and measure in b[i].values]
        if not ids:
            return None
        xa = np.array([a[i].values[measure] for i in ids], float)
        xb = np.array([b[i].values[measure] for i in ids], float)
        d = xa - xb
        idx = _resample(len(ids), seed, resamples)
        boot = d[idx].mean(axis=1)
        value = d.mean()
        gained, lost = int((d > 0).sum()), int((d < 0).sum())
    return Difference(
        kind=kind,
        system=system,
        baseline=baseline,
        split=split,
        measure=measure,
        n=len(ids),
        value=float(value),
        ci_low=float(np.percentile(boot, 2.5)),
        ci_high=float(np.percentile(boot, 97.5)),
        n_gained=gained,
        n_lost=lost,
        resamples=resamples,
        seed=seed,
    )
