"""The report's first table and ``amg eval check``'s numbers: one row per system, its headline
measures pooled over the splits reported.

A builder's questions, in order: how often does the system hold a plan as a fact while the plan is
open (pending contamination), at the end (end contamination), does it still answer right (task
accuracy), and does it write plans that later come true before they do (premature writes). Each
is k/n with a 95% Wilson interval over the conversations of every reported split where the
measure applies (one observation per conversation, as in the per-split tables).

Where the contamination figures come from depends on what the system shows: component systems
and products whose store is read (``store_pending_contamination``, ``store_end_contamination``)
give them from reads of the store, the measure's own definition; systems known only by their
answers give exposure (an answer before the outcome asserted the plan), the nearest thing answers
can show, and the last answer's. ``pending_source`` says which.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .aggregate import Stat, proportion
from .measures import ArcScore

# (pending measure, end measure, where they come from), in order of preference: the store's own
# reads (component systems; products whose store is read), else the answers
SOURCES = (
    ("pending_contamination", "end_contamination", "store reads"),
    ("store_pending_contamination", "store_end_contamination", "store reads"),
    ("exposure", "end_contamination", "answers (exposure)"),
)
SUMMARY_MEASURES = (
    "pending_contamination",
    "end_contamination",
    "task_accuracy",
    "premature_write",
)


class SummaryRow(BaseModel):
    """One system's headline measures, pooled over ``splits``."""

    model_config = ConfigDict(extra="forbid")
    system: str
    kind: str  # as ``meta.systems[NAME].kind``: component | product | answers
    splits: list[str]  # the reported splits the system has scores on
    pending_contamination: Stat | None = None
    pending_source: str = ""  # "store reads" | "answers (exposure)"; "" when absent
    end_contamination: Stat | None = None
    answer_end_contamination: Stat | None = None  # products whose store is read: from answers
    task_accuracy: Stat | None = None
    premature_write: Stat | None = None

    def stat(self, measure: str) -> Stat | None:
        return getattr(self, measure, None)


def pooled(scores: list[ArcScore], measure: str) -> Stat | None:
    xs = [s.values[measure] for s in scores if measure in s.values]
    return proportion(xs) if xs else None


def summary_row(name: str, kind: str, by_split: dict[str, dict[str, ArcScore]]) -> SummaryRow:
    """``by_split``: split -> arc id -> score, for the splits reported."""
    scores = [s for arcs in by_split.values() for s in arcs.values()]
    row = SummaryRow(system=name, kind=kind, splits=[s for s, a in by_split.items() if a])
    for pending, end, source in SOURCES:
        if (st := pooled(scores, pending)) is not None:
            row.pending_contamination, row.pending_source = st, source
            row.end_contamination = pooled(scores, end)
            break
    else:
        row.end_contamination = pooled(scores, "end_contamination")
    if row.pending_source == "store reads" and row.kind != "component":
        row.answer_end_contamination = pooled(scores, "end_contamination")
    row.task_accuracy = pooled(scores, "task_accuracy")
    row.premature_write = pooled(scores, "premature_write")
    return row


def summary_rows(
    per_arc: dict[str, dict[str, dict[str, ArcScore]]], kinds: dict[str, str], order: list[str]
) -> list[SummaryRow]:
    """A row per system of ``order`` with scores (``per_arc``: system -> split -> arc -> score)."""
    return [
        summary_row(n, kinds[n], per_arc[n])
        for n in order
        if n in per_arc and any(per_arc[n].values())
    ]


__all__ = ["SUMMARY_MEASURES", "SummaryRow", "pooled", "summary_row", "summary_rows"]
