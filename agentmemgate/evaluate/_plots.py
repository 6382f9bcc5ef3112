"""Figures 2 and 3 of the paper as PNG (matplotlib, Agg backend, like ``validate._plots``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._files import write_atomic


@dataclass
class Series:
    label: str
    values: list[float | None]  # fractions, None where undefined
    lows: list[float | None]
    highs: list[float | None]
    dashed: bool = False
    group: str = ""  # series of one group share a colour (e.g. one system, solid and dashed)


def levels_png(levels: list[str], series: list[Series], title: str, xlabel: str, ylabel: str,
               path: Path) -> Path:
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
            pts = [(x, 100 * v, 100 * (v - lo), 100 * (hi - v)) for x, v, lo, hi
                   in zip(xs, s.values, s.lows, s.highs) if v is not None]
            if not pts:
                continue
            off = (i - (len(series) - 1) / 2) * 0.04  # keep overlapping lines apart
            ax.errorbar([p[0] + off for p in pts], [p[1] for p in pts],
                        yerr=[[p[2] for p in pts], [p[3] for p in pts]], capsize=3, marker="o",
                        linestyle="--" if s.dashed else "-", label=s.label,
                        color=palette[groups.index(s.group or s.label) % len(palette)])
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
