"""The seeded planner: one ``ArcSpec`` per conversation, in the paper's cells (Table 1, A.6).

The planner decides everything a renderer must realize (field, values, levels, dates, structure),
so LLM generators and the offline renderer produce the same benchmark design from the same seed.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
from collections import Counter
from dataclasses import dataclass

from ..errors import BadInput
from ..schema import (
    CONFIRMATION_LEVELS,
    CONTROL_LEVEL,
    CORRECTION_FACTOR,
    CORRECTION_MARKERS,
    CORRECTION_OUTCOME,
    CORRECTION_TARGETS,
    CORRECTION_TIMINGS,
    HEDGE_LEVELS,
    PAPER_SPLITS,
    SPLITS,
    ArcSpec,
    CorrectionSpec,
    FieldSpec,
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


CORRECTIONS_PER_CELL = 15  # 8 cells x 15 = 120 arcs; x 2 gated/ungated twin pairs = 240 runs


def paper_cells(split: str) -> list[Cell]:
    """The cell design of each split with the paper's sizes (386 arcs in the three paper splits;
    the corrections split adds 2 x 2 x 2 cells of 15: what is corrected, where, with or without a
    corrective marker)."""
    if split == "corrections":
        return [Cell("corrections", CORRECTION_FACTOR, f"{t}_{w}_{m}", CORRECTION_OUTCOME,
                     CORRECTIONS_PER_CELL)
                for t in CORRECTION_TARGETS for w in CORRECTION_TIMINGS for m in CORRECTION_MARKERS]
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
    """``all`` (every split), ``paper`` (the paper's three: core, heldout, controlled) or one
    split name, validated."""
    if split == "all":
        return list(SPLITS)
    if split == "paper":
        return list(PAPER_SPLITS)
    check_level(split, SPLITS + ("all", "paper"), "split")
    return [split]


def plan_split(split: str, seed: int, n_per_cell: int | None = None) -> list[ArcSpec]:
    """All specs of one split; the same (split, seed, n_per_cell) always gives the same specs.

    They are copies, nested fields included: a caller may change them (a renderer puts the spec
    into its arc, and tests edit arcs) without changing what the next call returns."""
    return [s.model_copy(deep=True) for s in _planned(split, seed, n_per_cell)]


def check_plan(split: str, seed: int, n_per_cell: int | None = None) -> None:
    """Refuse, as ``plan_split`` would, a split the catalog cannot fill (no copies made)."""
    _planned(split, seed, n_per_cell)


def _planned(split: str, seed: int, n_per_cell: int | None) -> tuple[ArcSpec, ...]:
    if n_per_cell is not None and n_per_cell < 1:
        raise BadInput(f"--n-per-cell must be a positive whole number, got {n_per_cell}")
    check_level(split, SPLITS, "split")
    try:
        return _plan_through(split, seed, n_per_cell)
    except _Exhausted as e:
        if n_per_cell is None:
            raise BadInput(f"Catalog has too few values for attribute {e.attribute!r} to keep "
                           f"(attribute, initial, plan) triples unique in split {split!r}") from None
        best = largest_n_per_cell(split, seed, below=n_per_cell)
        raise BadInput(f"--n-per-cell {n_per_cell} is more than the catalog can fill for split "
                       f"{split!r}: the largest value that works there is {best} (each arc needs an "
                       "unused attribute, initial and plan value)") from None


def largest_n_per_cell(split: str, seed: int, below: int) -> int:
    """The largest ``n_per_cell`` under ``below`` that the catalog can fill (0 if none)."""
    lo, hi = 0, below  # plan(lo) works (0 trivially), plan(hi) fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _plan_through(split, seed, mid)
            lo = mid
        except _Exhausted:
            hi = mid
    return lo


class _Exhausted(Exception):
    def __init__(self, attribute: str):
        self.attribute = attribute


@functools.lru_cache(maxsize=16)
def _plan_through(split: str, seed: int, n_per_cell: int | None) -> tuple[ArcSpec, ...]:
    """``split``'s specs, planning the splits before it too (in split order) so each arc knows its
    place among its domain's arcs across the whole build (``ArcSpec.domain_index``)."""
    seen: Counter = Counter()
    for name in SPLITS:
        specs = _plan(name, seed, n_per_cell, seen)
        if name == split:
            return tuple(specs)
    raise AssertionError("unreachable")


def _plan(split: str, seed: int, n_per_cell: int | None, seen: Counter) -> list[ArcSpec]:
    catalog = load_catalog()
    domains = sorted(catalog.values(), key=lambda d: d.attribute)
    rng = random.Random(f"amg:{seed}:{split}")
    ids = _ArcIds(seed, split)
    used: set[tuple[str, str, str]] = set()
    specs: list[ArcSpec] = []
    domain_cycle: list[Domain] = []
    for cell in paper_cells(split):
        n = cell.n if n_per_cell is None else n_per_cell
        for _ in range(n):
            if not domain_cycle:  # spread arcs evenly over domains, in a seeded order
                domain_cycle = domains[:]
                rng.shuffle(domain_cycle)
            domain = domain_cycle.pop()
            spec = _spec(cell, ids.next(), domain, rng, used, seed)
            spec.domain_index = seen[domain.attribute]
            seen[domain.attribute] += 1
            specs.append(spec)
    return specs


def _value_pairs(domain: Domain, long: bool) -> tuple[tuple[str, str], ...]:
    """Every (initial, plan) pair of distinct values that the field text does not give away."""
    f = domain.field()
    return _pairs(tuple(domain.long_values if long else domain.values), f.attribute,
                  f.description, f.probe_question)


@functools.lru_cache(maxsize=256)
def _pairs(pool: tuple[str, ...], attribute: str, description: str,
           probe_question: str) -> tuple[tuple[str, str], ...]:
    field = FieldSpec(attribute=attribute, description=description, probe_question=probe_question)
    return tuple((a, b) for a in pool for b in pool if a != b and not field.leaked_values([a, b]))


class _ArcIds:
    """Opaque arc ids: ``arc-`` and 12 hex digits drawn from the plan seed and the split.

    Nothing of the split, factor, level or outcome is in an id, so data handed to a model or a
    memory system under test does not carry its answers; the same seed gives the same ids.
    Never parse an id: read the record's fields.
    """

    def __init__(self, seed: int, split: str):
        self._rng = random.Random(f"amg-ids:{seed}:{split}")
        self._seen: set[str] = set()

    def next(self) -> str:
        while True:
            arc_id = f"arc-{self._rng.getrandbits(48):012x}"
            if arc_id not in self._seen:
                self._seen.add(arc_id)
                return arc_id


def _spec(cell: Cell, arc_id: str, domain: Domain, rng: random.Random,
          used: set[tuple[str, str, str]], seed: int) -> ArcSpec:
    field = domain.field()
    pairs = [(a, b) for a, b in _value_pairs(domain, cell.split == "heldout")
             if (domain.attribute, a, b) not in used]
    if not pairs:
        raise _Exhausted(domain.attribute)
    initial, plan = rng.choice(pairs)
    used.add((domain.attribute, initial, plan))
    if cell.outcome == CORRECTION_OUTCOME:
        return _correction_spec(cell, arc_id, domain, rng, seed, initial, plan)

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

    return ArcSpec(
        id=arc_id,
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


def _dates(rng: random.Random, n_sessions: int) -> list[dt.date]:
    start = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randrange(0, 700))
    dates = [start]
    for _ in range(n_sessions - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randrange(3, 22)))
    return dates


def _correction_spec(cell: Cell, arc_id: str, domain: Domain, rng: random.Random, seed: int,
                     first: str, second: str) -> ArcSpec:
    """A correction arc. Corrected initial value: the user states ``first`` and later corrects it
    to ``second`` (initial_value, plan_value = the corrected value). Corrected change: the user
    states ``first``, later reports a completed change to ``second``, and later still corrects
    the change to a third value (initial_value, plan_value = the reported change's value)."""
    target, timing, marker = cell.level.split("_")
    field = domain.field()
    if target == "initial":
        initial, plan, wrong, value = first, second, first, second
        n_sessions = rng.choice((2, 3))
        plan_wording = CORRECTION_OUTCOME
    else:
        thirds = [v for v in domain.values if v not in (first, second)
                  and not field.leaked_values([v])]
        initial, plan, wrong, value = first, second, second, rng.choice(thirds)
        # the change is reported in session 1; a later correction needs a session after it
        n_sessions = 3 if timing == "later" else rng.choice((2, 3))
        plan_wording = CONTROL_LEVEL
    return ArcSpec(
        id=arc_id, split=cell.split, factor=cell.factor, level=cell.level,  # type: ignore[arg-type]
        outcome=cell.outcome, field=field, domain=domain.attribute,  # type: ignore[arg-type]
        initial_value=initial, plan_value=plan, plan_wording=plan_wording,
        session_dates=_dates(rng, n_sessions), pending_window=False,
        seed=rng.randrange(2**31), plan_seed=seed,
        correction=CorrectionSpec(target=target, timing=timing, marker=marker,  # type: ignore[arg-type]
                                  wrong_value=wrong, value=value))
