"""The report's lead, before the per-split tables: the summary (one row per system) and the
"why" notes (``explain``), in Markdown."""

from __future__ import annotations

from .aggregate import Stat
from .report_models import EvalReport


def _cell(s: Stat | None) -> str:
    if s is None:
        return "—"
    if s.n == 0 or s.value is None:
        return "undefined (n=0)"
    return f"{s.k}/{s.n} {100 * s.value:.1f}% [{100 * s.ci_low:.1f}, {100 * s.ci_high:.1f}]"


def summary_md(r: EvalReport, role, title) -> list[str]:
    """``role(r, name)``: how the report names a system's kind; ``title(r, split)``: a split."""
    if not r.summary:
        return []
    splits = [s for s in r.meta.splits if any(s in row.splits for row in r.summary)]
    rows = []
    answers = stores = False
    for row in r.summary:
        pending, end = _cell(row.pending_contamination), _cell(row.end_contamination)
        if row.pending_source.startswith("answers"):
            pending += " (exposure)"
            answers = True
        elif row.kind != "component" and row.pending_contamination is not None:
            pending, end = pending + " (store)", end + " (store)"
            stores = True
        rows.append(
            [
                row.system,
                role(r, row.system),
                pending,
                end,
                _cell(row.task_accuracy),
                _cell(row.premature_write),
            ]
        )
    out = [
        "## Summary: each system's contamination, accuracy and premature writes",
        "",
        "One row per system, pooled over the conversations of "
        + ", ".join(title(r, s) for s in splits)
        + " where each measure applies (k/n with a 95% Wilson interval; per split in the tables "
        "below). Pending contamination: an at-risk plan (abandoned or still open) held as the "
        "field's current value at a read while it was open. End contamination: held at the end. "
        "Task accuracy: the end read names the true current value. Premature writes: a plan "
        "that came true, held as current before it did; counted apart from contamination, "
        "which counts only plans that never came true.",
        "",
    ]
    if stores:
        out[-2] += (
            " Products whose store is read (marked store) give contamination from what their "
            "store held after each session, the measure's own definition; their answers' "
            "figures are in the products table."
        )
    if answers:
        out[-2] += (
            " Systems known by their answers show exposure in the pending column: an answer "
            "given before the outcome asserted the plan (held-out plans included)."
        )
    header = [
        "System",
        "Kind",
        "Pending contamination",
        "End contamination",
        "Task accuracy",
        "Premature writes",
    ]
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out + [""]


def repeats_md(r: EvalReport, title, names: dict[str, str]) -> list[str]:
    """Each measure's spread across the runs of ``amg eval run --repeat`` (``names``: how the
    report names each measure)."""
    if not r.repeats:
        return []
    rows = []
    for base, got in r.repeats.items():
        for split, measures in got["spread"].items():
            for m, s in measures.items():
                fmt = (lambda x: f"{x:.2f}") if s["ratio"] else (lambda x: f"{100 * x:.1f}%")
                each = ", ".join(f"{k}/{n}" for k, n in zip(s["k"], s["n"]))
                rows.append(
                    [
                        base,
                        title(r, split),
                        names.get(m, m),
                        str(len(s["values"])),
                        fmt(s["mean"]),
                        fmt(s["min"]),
                        fmt(s["max"]),
                        each,
                    ]
                )
    if not rows:
        return []
    header = ["System", "Split", "Measure", "Runs", "Mean", "Min", "Max", "Each run (k/n)"]
    return (
        [
            "## Run-to-run spread: each measure across repeated runs",
            "",
            "`amg eval run --repeat N` ran these systems N times, every run asking each model "
            "call anew (runs 2 to N are named NAME#2 ...); the other tables show the first run. "
            "Per split and measure: the mean, minimum and maximum over the runs, and each run's "
            "count. A spread wider than a run's Wilson interval means one run is not enough.",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
        ]
        + ["| " + " | ".join(row) + " |" for row in rows]
        + [""]
    )


def why_md(r: EvalReport) -> list[str]:
    if not r.explanations:
        return []
    out = [
        "## Why: results the tables alone do not explain",
        "",
        "Read from the stored traces (`amg eval show ARC_ID --system NAME` prints one).",
        "",
    ]
    out += [f"- {e.text}" for e in r.explanations]
    return out + [""]


__all__ = ["repeats_md", "summary_md", "why_md"]
