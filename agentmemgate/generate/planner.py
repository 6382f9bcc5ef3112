"""The seeded planner: one ``ArcSpec`` per conversation, in the paper's cells (Table 1, A.6).

The planner decides everything a renderer must realize (field, values, levels, dates, structure),
so LLM generators and the offline renderer produce the same benchmark design from the same seed.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ..errors import BadInput
from ..schema import (
    CONFIRMATION_LEVELS,
    CONTROL_LEVEL,
    HEDGE_LEVELS,
    SPLITS,
    ArcSpec,
    check_level,
)
from .catalog import Domain, load_catalog


@dataclass(frozen=True)
class Cell:
    split: str
    factor: str
    level: str
    outcome: str
    n: int


def paper_cells(split: str) -> list[Cell]:
    """The cell design of each split with the paper's sizes (386 arcs in all)."""
    if split == "core":
        return [Cell("core", "outcome", o, o, 20) for o in ("came_true", "abandoned", "open")]
    if split == "heldout":
        return [Cell("heldout", "outcome", o, o, 44) for o in ("came_true", "abandoned", "open")] + [
            Cell("heldout", "outcome", CONTROL_LEVEL, "control", 15)]
    if split == "controlled":
        return (
            [Cell("controlled", "hedge_strength", lv, "open", 20) for lv in HEDGE_LEVELS]
            + [Cell("controlled", "hedge_strength", CONTROL_LEVEL, "control", 19)]
            + [Cell("controlled", "confirmation_wording", lv, "came_true", 20)
               for lv in CONFIRMATION_LEVELS]
        )
    check_level(split, SPLITS, "split")
    raise AssertionError("unreachable")


def resolve_splits(split: str) -> list[str]:
    """``all`` or one split name, validated."""
    if split == "all":
        return list(SPLITS)
    check_level(split, SPLITS + ("all",), "split")
    return [split]


def plan_split(split: str, seed: int, n_per_cell: int | None = None) -> list[ArcSpec]:
    """All specs of one split; the same (split, seed, n_per_cell) always gives the same specs."""
    if n_per_cell is not None and n_per_cell < 1:
        raise BadInput(f"--n-per-cell must be a positive whole number, got {n_per_cell}")
    check_level(split, SPLITS, "split")
    return [s.model_copy() for s in _plan_all(seed, n_per_cell)[split]]


@lru_cache(maxsize=16)
def _plan_all(seed: int, n_per_cell: int | None) -> dict[str, tuple[ArcSpec, ...]]:
    """Every split, in split order, so each arc knows its place among its domain's arcs."""
    seen: Counter = Counter()
    return {split: tuple(_plan_one(split, seed, n_per_cell, seen)) for split in SPLITS}


def _plan_one(split: str, seed: int, n_per_cell: int | None, seen: Counter) -> list[ArcSpec]:
    catalog = load_catalog()
    domains = sorted(catalog.values(), key=lambda d: d.attribute)
    rng = random.Random(f"amg:{seed}:{split}")
    used: set[tuple[str, str, str]] = set()
    specs: list[ArcSpec] = []
    domain_cycle: list[Domain] = []
    for cell in paper_cells(split):
        n = cell.n if n_per_cell is None else n_per_cell
        for i in range(n):
            if not domain_cycle:  # spread arcs evenly over domains, in a seeded order
                domain_cycle = domains[:]
                rng.shuffle(domain_cycle)
            domain = domain_cycle.pop()
            spec = _spec(cell, i, domain, rng, used, seed)
            spec.domain_index = seen[domain.attribute]
            seen[domain.attribute] += 1
            specs.append(spec)
    return specs


@lru_cache(maxsize=None)
def _leak_free(attribute: str, heldout: bool) -> tuple[str, ...]:
    domain = load_catalog()[attribute]
    field = domain.field()
    pool = domain.long_values if heldout else domain.values
    return tuple(v for v in pool if not field.leaked_values([v]))


def _spec(cell: Cell, i: int, domain: Domain, rng: random.Random,
          used: set[tuple[str, str, str]], seed: int) -> ArcSpec:
    pool = _leak_free(domain.attribute, cell.split == "heldout")
    field = domain.field()
    pairs = [(a, b) for a in pool for b in pool
             if a != b and (domain.attribute, a, b) not in used]
    if not pairs:
        raise BadInput(f"Catalog has too few values for attribute {domain.attribute!r} "
                       f"to keep (attribute, initial, plan) triples unique in split {cell.split!r}")
    initial, plan = rng.choice(pairs)
    used.add((domain.attribute, initial, plan))

    n_sessions = rng.choice((2, 3))
    start = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randrange(0, 700))
    dates = [start]
    for _ in range(n_sessions - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randrange(3, 22)))

    if cell.outcome == "control":
        plan_wording = CONTROL_LEVEL
    elif cell.factor == "hedge_strength":
        plan_wording = cell.level
    else:
        plan_wording = rng.choice(HEDGE_LEVELS)
    confirmation = None
    if cell.outcome == "came_true":
        confirmation = cell.level if cell.factor == "confirmation_wording" else rng.choice(CONFIRMATION_LEVELS)

    level_tag = cell.level if cell.factor != "outcome" else cell.outcome
    return ArcSpec(
        id=f"{cell.split}-{cell.factor}-{level_tag}-{i:03d}",
        split=cell.split,  # type: ignore[arg-type]
        factor=cell.factor,  # type: ignore[arg-type]
        level=cell.level,
        outcome=cell.outcome,  # type: ignore[arg-type]
        field=field,
        domain=domain.attribute,
        initial_value=initial,
        plan_value=plan,
        plan_wording=plan_wording,
        confirmation_wording=confirmation,
        session_dates=dates,
        pending_window=cell.split != "heldout",
        seed=rng.randrange(2**31),
        plan_seed=seed,
    )
