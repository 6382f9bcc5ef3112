"""The evaluation report's figures as PNG: one per "by level" table of ``_report_md`` (Figures
2 and 3 for the paper's design), drawn with matplotlib (Agg backend, like ``validate._plots``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._files import write_atomic
from ._report_md import (
    MEASURE_NAMES,
    gated_systems,
    level_measures,
    level_views,
    main_systems,
    split_title,
)
from .report_models import EvalReport


@dataclass
class Series:
    label: str
    values: list[float | None]  # fractions, None where undefined
    lows: list[float | None]
    highs: list[float | None]
    dashed: bool = False
    group: str = ""  # series of one group share a colour (e.g. one system, solid and dashed)


def levels_png(
    levels: list[str], series: list[Series], title: str, xlabel: str, ylabel: str, path: Path
) -> Path:
    """One line per series over ordered levels, with 95% interval bars; written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    try:
        xs = list(range(len(levels)))
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        groups = list(dict.fromkeys(s.group or s.label for s in series))
        for i, s in enumerate(series):
            pts = [
                (x, 100 * v, 100 * (v - lo), 100 * (hi - v))
                for x, v, lo, hi in zip(xs, s.values, s.lows, s.highs)
                if v is not None
            ]
            if not pts:
                continue
            off = (i - (len(series) - 1) / 2) * 0.04  # keep overlapping lines apart
            ax.errorbar(
                [p[0] + off for p in pts],
                [p[1] for p in pts],
                yerr=[[p[2] for p in pts], [p[3] for p in pts]],
                capsize=3,
                marker="o",
                linestyle="--" if s.dashed else "-",
                label=s.label,
                color=palette[groups.index(s.group or s.label) % len(palette)],
            )
        ax.set_xticks(xs, [lv.replace("_", " ") for lv in levels], fontsize=8)
        ax.set_ylim(-5, 105)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        if series:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    finally:
        plt.close(fig)
    return path


def figures(r: EvalReport, out: Path) -> list[Path]:
    """One figure per "by level" table (Figures 2 and 3 for the paper's design)."""
    paths = []
    main = main_systems(r)
    gated = gated_systems(r, list(r.meta.systems))
    for v in level_views(r.design, r.meta.splits):
        label, name = v.figure
        title, split = split_title(r.design, v.split), v.split
        levels = list(v.levels)
        f = v.factor.name.replace("_", " ")
        series = []
        if v.factor.role == "confirmation_wording":
            for n in [n for n in gated if any(r.stat(n, split, "promoted", lv) for lv in levels)]:
                for m, dashed, what in (
                    ("promoted", False, "all plans"),
                    ("promoted_among_staged", True, "among staged"),
                ):
                    series.append(_series(r, n, split, m, levels, f"{n} ({what})", dashed, n))
            if series:
                paths.append(
                    levels_png(
                        levels,
                        series,
                        f"{label}: promotion of came-true plans by {f}"
                        if v.paper
                        else f"{label}: promotion of came-true plans ({title})",
                        "confirmation wording (more implicit ->)",
                        "promotion rate (%)",
                        out / name,
                    )
                )
            continue
        measure = (
            "end_contamination"
            if v.factor.role == "plan_wording"
            else next(iter(level_measures(r, v, main)), None)
        )
        if measure is None:
            continue
        cols = [n for n in main if any(r.stat(n, split, measure, lv) for lv in levels)]
        if not cols:
            continue
        series = [_series(r, n, split, measure, levels, n) for n in cols]
        if v.factor.role == "plan_wording":
            paths.append(
                levels_png(
                    levels,
                    series,
                    f"{label}: at-end contamination by {f} (95% Wilson CIs)"
                    if v.paper
                    else f"{label}: at-end contamination ({title}; 95% Wilson CIs)",
                    "plan wording (more settled ->)",
                    "% of at-risk plans stored as current",
                    out / name,
                )
            )
        else:
            paths.append(
                levels_png(
                    levels,
                    series,
                    f"{label}: {MEASURE_NAMES[measure].lower()} ({title}; 95% Wilson CIs)",
                    f"{f} (design order ->)" if v.factor.ordered else f,
                    "% of probes answered correctly"
                    if measure == "task_accuracy"
                    else "% of at-risk plans stored as current",
                    out / name,
                )
            )
    return paths


def _series(
    r: EvalReport,
    system: str,
    split: str,
    measure: str,
    levels: list[str],
    label: str,
    dashed: bool = False,
    group: str = "",
) -> Series:
    st = [r.stat(system, split, measure, lv) for lv in levels]
    return Series(
        label,
        [s.value if s else None for s in st],
        [s.ci_low if s else None for s in st],
        [s.ci_high if s else None for s in st],
        dashed=dashed,
        group=group,
    )
