"""Repeated runs in the report: each measure's spread across the runs of one system.

``amg eval run --repeat N`` runs a model-backed system N times, runs 2 to N as ``NAME#k`` with LLM
cache entries of their own (``systems.repeat_spec``). The report keeps the first run in every
table, takes the others out of them, and gives per split and measure the value of every run with
its mean, minimum and maximum (``EvalReport.repeats``): how far one run's figure can be from
another's, which a single run's Wilson interval does not say.
"""

from __future__ import annotations

from .aggregate import CALLS, Stat
from .systems import repeat_of


def repeat_runs(names) -> dict[str, list[str]]:
    """First run -> the names of all its runs, in order (the first run first), for every system
    of ``names`` that has runs 2..N beside it."""
    names = list(names)
    runs: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        got = repeat_of(name)
        if got is not None and got[0] in names:
            runs.setdefault(got[0], [(1, got[0])]).append((got[1], name))
    return {base: [n for _, n in sorted(v)] for base, v in runs.items()}


def drop_repeats(runs: dict[str, list[str]], *tables: dict) -> None:
    """Take runs 2..N out of ``tables`` (each keyed by system name)."""
    for names in runs.values():
        for name in names[1:]:
            for t in tables:
                t.pop(name, None)


def spread(results: dict[str, dict[str, dict]], names: list[str]) -> dict[str, dict]:
    """split -> measure -> the runs' values (fractions; calls per user message as a ratio)
    with their n, mean, min and max; a measure only where every run has it."""
    out: dict[str, dict] = {}
    splits = [s for s in results.get(names[0], {}) if all(s in results.get(n, {}) for n in names)]
    for split in splits:
        blocks = [results[n][split] for n in names]
        for measure in blocks[0]:
            if measure == "by_level":
                continue
            stats: list[Stat] = [b.get(measure) for b in blocks]
            if any(s is None or s.value is None for s in stats):
                continue
            values = [s.value for s in stats]
            out.setdefault(split, {})[measure] = {
                "values": values,
                "k": [s.k for s in stats],
                "n": [s.n for s in stats],
                "mean": sum(values) / len(values),
                "min": min(values),
                "max": max(values),
                "ratio": measure == CALLS,
            }
    return out


def repeats_block(results: dict[str, dict[str, dict]], runs: dict[str, list[str]]) -> dict:
    """What ``eval.json`` keeps under ``repeats``: per system, its runs and their spread."""
    return {base: {"runs": names, "spread": spread(results, names)} for base, names in runs.items()}


__all__ = ["drop_repeats", "repeat_runs", "repeats_block", "spread"]
