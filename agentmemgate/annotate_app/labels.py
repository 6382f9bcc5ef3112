"""Each audit task's label set, its order (if any) and per-label definitions.

Definitions come from the task's rubric file (``rubrics/audit_<task>.v1.txt``: lines
``- label: definition``), except difficulty levels: a ``difficulty:FACTOR`` audit asks for the
levels of a factor of the workspace's design, in the design's order, described by the design's
definitions, so the audit and the generator describe a level in the same words. Whether the
levels form a scale (ordinal agreement, off by one) is the factor's ``ordered`` in the design.
"can't tell" is a label in every task: a decision, unlike an item nobody has labeled yet.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from .. import rubrics
from ..errors import BadInput, UnknownLevel
from ..schema import EVIDENCE_TYPES

if TYPE_CHECKING:
    from ..design import Design

CANT_TELL = "cant_tell"
TASKS = ("evidence_type", "equivalence", "difficulty", "realism", "answer_assertion")
# Routing collapse for evidence_type (schema.HOLD_CLASSES): only speculation is held; every other
# class commits.
REALISM_CRITERIA = {
    "natural": "Does this conversation read as natural human chat with an assistant?",
    "motivated": "Is the highlighted plan statement motivated by its context?",
}

_TASK_LABELS: dict[str, tuple[str, ...]] = {
    "evidence_type": EVIDENCE_TYPES,
    "equivalence": ("equivalent", "not_equivalent"),
    "realism": ("yes", "no"),
    # What a black-box system's answer asserts as current, over the item's two neutral options.
    "answer_assertion": ("value_a", "value_b", "both", "neither"),
}
_SHOWN = {"value_a": "value A", "value_b": "value B"}


class LabelSet(BaseModel):
    """What an annotator may answer for one audit; frozen into the audit when it is created."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    task: str
    factor: str | None = None
    labels: tuple[str, ...]  # substantive labels, in scale order when ``ordered``; CANT_TELL last
    ordered: bool = False
    rubric: str  # e.g. "audit_evidence_type.v1"
    rubric_sha256: str
    instructions: str
    definitions: dict[str, str]

    @property
    def choices(self) -> tuple[str, ...]:
        """The buttons shown, in key order 1..n (substantive labels, then can't tell)."""
        return self.labels + (CANT_TELL,)

    def check(self, label: str) -> str:
        """Normalize a label as typed in a CSV ("can't tell", "Speculation") or refuse it."""
        norm = normalize_label(label)
        if norm not in self.choices:
            raise BadInput(
                f"Label {label!r} is not in the {self.task} label set: {', '.join(self.choices)}"
            )
        return norm


def normalize_label(label: str) -> str:
    s = str(label).strip().lower().replace("\u2019", "'")
    if s in {"can't tell", "cant tell", "cannot tell", "can't_tell", "cant_tell"}:
        return CANT_TELL
    return re.sub(r"[\s-]+", "_", s)


def display_name(label: str) -> str:
    if label == CANT_TELL:
        return "can't tell"
    return _SHOWN.get(label, label.replace("_", " "))


def parse_task(task: str, design: Design | None = None) -> tuple[str, str | None]:
    """``difficulty:hedge_strength`` -> ("difficulty", "hedge_strength"); validates the task and,
    given the design whose levels the audit asks for, the factor."""
    name, _, factor = task.partition(":")
    if name not in TASKS:
        raise UnknownLevel(
            f"Unknown task {task!r}; choose one of: {', '.join(TASKS)} "
            "(difficulty may name its factor, e.g. difficulty:hedge_strength)"
        )
    if factor and name != "difficulty":
        raise BadInput(f"Only the difficulty task takes a factor; got {task!r}")
    if factor and design is not None:
        design.factor(factor)  # one line naming the design's factors, with a did-you-mean
    return name, factor or None


def label_set(task: str, factor: str | None = None, *, design: Design) -> LabelSet:
    """The frozen label set of ``task``; difficulty asks for the levels of ``factor`` (or the one
    named in ``task``) as ``design`` declares them."""
    task, parsed_factor = parse_task(task, design)
    factor = factor or parsed_factor
    rubric = rubrics.load(f"audit_{task}")
    defs = _definitions(rubric.text)
    if task == "difficulty":
        if factor is None:
            raise BadInput(
                f"The difficulty task needs a factor: use --task difficulty:FACTOR, "
                f"FACTOR one of: {', '.join(design.factors)}"
            )
        f = design.factor(factor)
        labels = f.level_names
        defs = {**{lv.name: lv.definition for lv in f.levels}, **defs}
        ordered = factor in design.ordered_factors
    else:
        labels, ordered, factor = _TASK_LABELS[task], False, None
    instructions = "\n".join(
        line
        for line in rubric.text.splitlines()
        if not _DEF_LINE.match(line)
        or _DEF_LINE.match(line)["label"] not in set(labels) | {CANT_TELL}
    ).strip()
    return LabelSet(
        task=task,
        factor=factor,
        labels=tuple(labels),
        ordered=ordered,
        rubric=rubric.ref,
        rubric_sha256=rubric.sha256,
        instructions=instructions,
        definitions={k: defs.get(k, "") for k in tuple(labels) + (CANT_TELL,)},
    )


CUSTOM = "custom"  # the task of an imported audit whose labels are its own


def custom_label_set(labels: list[str]) -> LabelSet:
    """For audits created by importing labels made elsewhere, with labels of no known task."""
    subs = tuple(sorted({normalize_label(x) for x in labels} - {CANT_TELL}))
    return LabelSet(
        task=CUSTOM,
        labels=subs,
        rubric="",
        rubric_sha256="",
        instructions="Labels imported from a file.",
        definitions={k: "" for k in subs + (CANT_TELL,)},
    )


_DEF_LINE = re.compile(r"^- (?P<label>[a-z_]+): (?P<text>.+)$")


def _definitions(text: str) -> dict[str, str]:
    return {m["label"]: m["text"].strip() for m in map(_DEF_LINE.match, text.splitlines()) if m}
