"""``amg eval check``: a gate for CI. A system's stored scores against bounds, pass or fail.

The numbers are the report's summary row (``summary``): each measure pooled over the chosen
splits, k/n with a 95% Wilson interval. A bound is met by the point value (the interval is shown
beside it, so a reader sees how sure the verdict is). A gate never passes on part of the data:
a split where the system has no score for some arcs (failed, or arcs added since its run) fails
the check, and a bound on a measure that does not apply on the chosen splits is refused.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..workspace import Workspace
from .aggregate import Stat
from .summary import SummaryRow

# measure -> (option, what it is called, "max" | "min")
BOUNDS = {
    "pending_contamination": ("--max-pending-contamination", "pending contamination", "max"),
    "end_contamination": ("--max-end-contamination", "end contamination", "max"),
    "task_accuracy": ("--min-task-accuracy", "task accuracy", "min"),
    "premature_write": ("--max-premature-writes", "premature writes", "max"),
}


def parse_fraction(text: str | float, option: str) -> float:
    """``0.05`` or ``5%`` -> 0.05; anything else is a one-line error naming ``option``."""
    raw = str(text).strip()
    pct = raw.endswith("%")
    try:
        value = float(raw[:-1] if pct else raw)
    except ValueError:
        raise BadInput(f"{option} {raw!r} is not a proportion: write 0.05 or 5%") from None
    if pct:
        value /= 100
    if not 0 <= value <= 1:
        raise BadInput(
            f"{option} {raw!r} is outside 0-1: write a fraction (0.05) or a percent (5%)"
        )
    return value


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


class BoundResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    measure: str
    option: str
    bound: float
    direction: str  # "max" | "min"
    stat: Stat
    source: str = ""  # the pending figure's source ("answers (exposure)" for answering systems)
    ok: bool

    def line(self) -> str:
        what = BOUNDS[self.measure][1] + (
            " (exposure, from answers)" if self.source.startswith("answers") else ""
        )
        s = self.stat
        value = f"{s.k}/{s.n} {_pct(s.value)} [{100 * s.ci_low:.1f}, {100 * s.ci_high:.1f}]"
        op = ("<=" if self.ok else ">") if self.direction == "max" else (">=" if self.ok else "<")
        return f"{'ok' if self.ok else 'missed'}: {what} {value} {op} {_pct(self.bound)} ({self.option})"


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str
    splits: list[str]
    results: list[BoundResult]
    incomplete: list[str] = []  # one line per split where some arcs have no score

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results) and not self.incomplete

    def lines(self) -> list[str]:
        head = f"{self.system} on {', '.join(self.splits)}:"
        return (
            [head]
            + [f"  {r.line()}" for r in self.results]
            + [f"  missed: {x}" for x in self.incomplete]
            + [f"  {'passed' if self.ok else 'failed'}"]
        )


def check_system(
    ws: Workspace,
    system: str,
    splits: list[str],
    bounds: dict[str, float],
    *,
    judge: str | None = None,
) -> CheckResult:
    """``bounds``: measure (a key of ``BOUNDS``) -> the bound, a fraction."""
    from .report import compute_report

    if not bounds:
        raise BadInput(
            "Give at least one bound: "
            + ", ".join(f"{opt} P" for opt, _, _ in BOUNDS.values())
            + " (P a fraction, 0.05, or a percent, 5%)"
        )
    r = compute_report(ws, splits, judge, [system], with_differences=False)
    row: SummaryRow | None = next((x for x in r.summary if x.system == system), None)
    if row is None:
        raise BadInput(
            f"{system} has no scores on {', '.join(splits)}: run `amg eval run --system "
            f"{system}" + "".join(f" --split {s}" for s in splits) + "`"
        )
    results = []
    for measure, bound in bounds.items():
        option, what, direction = BOUNDS[measure]
        stat = row.stat(measure)
        if stat is None or not stat.n:
            raise BadInput(
                f"{option}: {what} does not apply to {system} on {', '.join(row.splits)}"
                + (
                    " (no read lies between a plan and its outcome there; the core and "
                    "controlled splits have a pending window)"
                    if measure in ("pending_contamination", "premature_write")
                    else ""
                )
                + ": drop the bound or choose other splits"
            )
        ok = stat.value <= bound if direction == "max" else stat.value >= bound
        source = row.pending_source if measure == "pending_contamination" else ""
        results.append(
            BoundResult(
                measure=measure,
                option=option,
                bound=bound,
                direction=direction,
                stat=stat,
                source=source,
                ok=ok,
            )
        )
    incomplete = []
    for split in splits:
        have = r.stat(system, split, "task_accuracy")
        n_arcs = r.meta.arcs.get(split, 0)
        scored = have.n if have is not None else 0
        if n_arcs and scored < n_arcs:
            incomplete.append(
                f"{n_arcs - scored} of {n_arcs} arcs of {split} have no score for {system} "
                f"(failed, or new since its run): run `amg eval run --system {system} "
                f"--split {split}` to score them"
            )
    return CheckResult(system=system, splits=splits, results=results, incomplete=incomplete)


__all__ = ["BOUNDS", "BoundResult", "CheckResult", "check_system", "parse_fraction"]
