"""PNG heatmaps of confusion matrices (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path


def confusion_png(
    levels: list[str], confusion: dict[str, dict[str, int]], title: str, path: Path
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = [[confusion[i][r] for r in levels] for i in levels]
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(levels), 1.0 + 0.8 * len(levels)))
    try:
        im = ax.imshow(counts, cmap="Blues")
        ax.set_xticks(range(len(levels)), [lv.replace("_", "\n") for lv in levels], fontsize=8)
        ax.set_yticks(range(len(levels)), [lv.replace("_", " ") for lv in levels], fontsize=8)
        ax.set_xlabel("recovered level")
        ax.set_ylabel("intended level")
        ax.set_title(title, fontsize=9)
        top = max((c for row in counts for c in row), default=0)
        for i, row in enumerate(counts):
            for j, c in enumerate(row):
                ax.text(
                    j,
                    i,
                    str(c),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if top and c > top / 2 else "black",
                )
        from matplotlib.ticker import MaxNLocator

        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, ticks=MaxNLocator(integer=True))  # counts
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    return path
