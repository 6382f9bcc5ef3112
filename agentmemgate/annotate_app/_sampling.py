"""Seeded sampling, assignment and per-annotator order; all independent of source row order."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

from ..errors import BadInput
from .items import SourceItem

MISSING_STRATUM = "(none)"


def sample(
    items: list[SourceItem], n: int | None, stratify_by: str | None, seed: int
) -> list[SourceItem]:
    """``n`` items (all if None), spread evenly over the strata of ``stratify_by``.

    Equal allocation, not proportional: strata are visited round-robin, so rare classes get as
    many items as common ones until they run out. That is what per-class recall needs.
    """
    pool = sorted(items, key=lambda it: it.id)
    if stratify_by is not None:
        fields = sorted({k for it in pool for k in it.strata})
        if stratify_by not in fields:
            raise BadInput(
                f"Cannot stratify by {stratify_by!r}; this source's items have: "
                f"{', '.join(fields) or 'no strata'}"
            )
    if n is not None and n < 1:
        raise BadInput(f"--sample must be at least 1, got {n}")
    rng = random.Random(f"sample:{seed}")
    if stratify_by is None:
        rng.shuffle(pool)
        return pool[:n] if n is not None else pool
    groups: dict[str, list[SourceItem]] = defaultdict(list)
    for it in pool:
        groups[it.strata.get(stratify_by, MISSING_STRATUM)].append(it)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    want = len(pool) if n is None else min(n, len(pool))
    out: list[SourceItem] = []
    cursors = {k: 0 for k in groups}
    while len(out) < want:
        for key in sorted(groups):
            if cursors[key] < len(groups[key]) and len(out) < want:
                out.append(groups[key][cursors[key]])
                cursors[key] += 1
    return out


def assign(
    item_ids: list[str], annotators: list[str], overlap: int, seed: int
) -> dict[str, list[str]]:
    """Each item to ``overlap`` annotators, loads within one of each other, pairs rotated.

    Greedy over annotator groups: the next item goes to the least-loaded group whose members have
    labeled together least, so every annotator pair shares items (kappa per pair needs that).
    """
    if overlap < 1:
        raise BadInput(f"--overlap must be at least 1, got {overlap}")
    if overlap > len(annotators):
        raise BadInput(
            f"--overlap {overlap} is more than the {len(annotators)} annotator(s); "
            "each item can be labeled at most once per annotator"
        )
    rng = random.Random(f"assign:{seed}")
    ids = list(item_ids)
    rng.shuffle(ids)
    groups = list(itertools.combinations(range(len(annotators)), overlap))
    rng.shuffle(groups)
    load = [0] * len(annotators)
    together: dict[tuple[int, int], int] = defaultdict(int)
    out: dict[str, list[str]] = {a: [] for a in annotators}
    for item in ids:
        best = min(
            groups,
            key=lambda g: (
                max(load[i] for i in g),
                sum(load[i] for i in g),
                sum(together[p] for p in itertools.combinations(g, 2)),
            ),
        )
        for i in best:
            load[i] += 1
            out[annotators[i]].append(item)
        for p in itertools.combinations(best, 2):
            together[p] += 1
    return out


def order_for(annotator: str, item_ids: list[str], seed: int) -> list[str]:
    """The annotator's own shuffled queue order (so no two annotators share an order)."""
    ids = sorted(item_ids)
    random.Random(f"order:{seed}:{annotator}").shuffle(ids)
    return ids
