"""How far to trust an answer judge: its accuracy measured on the held-out part of the answer set.

Every figure here was measured by ``devsets/answers/measure.py --part heldout --record`` on the
hand-labelled product-style answers (``devsets/answers/``, not read while the offline rules were
written) and is kept in ``accuracy.json`` beside this module, with the sha256 of the
rule file (or rubric) and of the answer set it was measured on. Reports that used an answer judge
print its line next to the measures it decided; a judge nobody measured says so, with the command
that measures it. A test re-measures the offline rules, so the file cannot drift from them.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..atomic import write_text_atomic
from ..stats import Proportion

ACCURACY_FILE = Path(__file__).with_name("accuracy.json")
OFFLINE_PREFIX = "answer_cues."  # offline rule files are named answer_cues.vN
# the held-out parts, latest first
HELD_OUT = tuple(f"heldout{k}" for k in (12, 11, 10, 9, 8, 7, 6, 5, 4, 2, ""))


class MeasuredAccuracy(BaseModel):
    """One judge (offline rules by file, or a model with its rubric) on one part of the set."""

    model_config = ConfigDict(extra="forbid")
    judge: str  # "offline" for rule files (any spelling of the name), else provider:model
    rubric: str  # answer_cues.v2, answer_assertion.v1, ...
    rubric_sha256: str
    answers_sha256: str
    part: str
    exact: Proportion
    false_plan: Proportion
    missed: Proportion
    failures: Proportion
    measured_on: str  # ISO date
    # the rules or rubric were tuned on this part's answers (read while writing them): the
    # figures are a fit, not an accuracy on unseen answers
    tuned_on: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return _key(self.judge, self.rubric)


def _key(judge: str, rubric: str) -> tuple[str, str]:
    # Offline rules are identified by their file: "offline" and "offline:answer_cues.v2" are one.
    return ("offline", rubric) if rubric.startswith(OFFLINE_PREFIX) else (judge, rubric)


def load_measured(path: Path = ACCURACY_FILE) -> list[MeasuredAccuracy]:
    if not path.is_file():
        return []
    return [MeasuredAccuracy.model_validate(r) for r in json.loads(path.read_text("utf-8"))]


def measured(judge: str, rubric: str, path: Path = ACCURACY_FILE) -> MeasuredAccuracy | None:
    """The held-out figures of this judge and rubric, if they were measured: a held-out part the
    rules were not tuned on first (the latest of ``HELD_OUT`` first), else a tuned-on one."""
    want = _key(judge, rubric)
    found = [m for m in load_measured(path) if m.key == want and m.part in HELD_OUT]
    found.sort(key=lambda m: (m.tuned_on, HELD_OUT.index(m.part)))
    return found[0] if found else None


def record(entries: list[MeasuredAccuracy], path: Path = ACCURACY_FILE) -> Path:
    """Add or replace entries (one per judge, rubric and part), written atomically."""
    keep = {(m.key, m.part): m for m in load_measured(path)}
    for m in entries:
        keep[(m.key, m.part)] = m
    rows = [m.model_dump() for _, m in sorted(keep.items(), key=lambda kv: (kv[0][0], kv[0][1]))]
    return write_text_atomic(path, json.dumps(rows, indent=2) + "\n")


def from_report(report, tuned_on: frozenset[str] = frozenset()) -> list[MeasuredAccuracy]:
    """``devset.DevsetReport`` -> entries to record (one per part measured), each with the
    sha256 of the answer file holding its part (not of every file loaded); ``tuned_on`` names the
    parts the rules were written on."""
    today = dt.date.today().isoformat()
    return [
        MeasuredAccuracy(
            judge=_key(report.judge, report.rubric)[0],
            rubric=report.rubric,
            rubric_sha256=report.rubric_sha256,
            answers_sha256=report.part_sha256.get(p.part, report.answers_sha256),
            part=p.part,
            exact=p.exact,
            false_plan=p.false_plan,
            missed=p.missed,
            failures=p.failures,
            measured_on=today,
            tuned_on=p.part in tuned_on,
        )
        for p in report.parts
    ]


def accuracy_line(judge: str, rubric: str) -> str:
    """One sentence for a report: the judge's held-out accuracy, or that it was not measured."""
    m = measured(judge, rubric)
    if m is None:
        return (
            f"Answer judge {judge} ({rubric}) is not measured on the held-out answer set: "
            f"measure it with `devsets/answers/measure.py --judge {judge} --part heldout12` "
            "before trusting its exposure figures."
        )
    tuned = (
        " The rules were tuned on these answers too, so this is a fit, not an accuracy on "
        "answers they were not written on."
        if m.tuned_on
        else ""
    )
    part = "held-out part" if m.part == "heldout" else f"held-out part {m.part}"
    return (
        f"Answer judge {judge} ({rubric}), measured on the {part} of the labelled "
        f"product-style answers (devsets/answers, n={m.exact.n}, {m.measured_on}): exact set "
        f"{m.exact.fmt()}; plan read as asserted where it was not (false exposures) "
        f"{m.false_plan.fmt()}; missed assertions {m.missed.fmt()}.{tuned}"
    )


__all__ = [
    "ACCURACY_FILE",
    "MeasuredAccuracy",
    "accuracy_line",
    "from_report",
    "load_measured",
    "measured",
    "record",
]
