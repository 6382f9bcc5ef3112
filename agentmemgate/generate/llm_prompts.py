"""The LLM generator's prompts: ``rubrics/generator_arc.vN.txt`` (``generator_correction_arc`` for
correction arcs) filled from the spec and the design's definitions, and the feedback a reply that
failed its checks is asked again with."""

from __future__ import annotations

import json
import re
from typing import Any

from .. import rubrics
from ..design import Design, paper_design
from ..schema import (
    CORRECTION_MARKER_PHRASES,
    ArcSpec,
)

RUBRIC = "generator_arc"
# Correction arcs (the corrections split) have their own prompt, so the other splits' prompts,
# cache keys and provenance are what they were before the split existed.
CORRECTION_RUBRIC = "generator_correction_arc"


# -- prompt --------------------------------------------------------------------------------------
def structure_of(spec: ArcSpec) -> str:
    """The rubric's name for the arc's layout (its STRUCTURE section describes each)."""
    if spec.outcome == "control":
        return "completed_change"
    return "pending_window" if spec.pending_window else "next_session_outcome"


def _own_structure(spec: ArcSpec, design: Design):
    """The level of the arc's cell when that level sets its own structure (a structure factor
    such as the sessions between plan and outcome), else None: the paper's levels set none."""
    f = design.factors.get(spec.factor)
    if f is None or not f.has(spec.level):
        return None
    lv = f.level(spec.level)
    return lv if lv.structure is not None else None


def structure_line(spec: ArcSpec, design: Design) -> str:
    """The prompt's STRUCTURE value: the structure's name, and for a level that sets its own
    structure, that level's definition and where the plan and its outcome fall."""
    name = structure_of(spec)
    lv = _own_structure(spec, design)
    if lv is None:
        return name
    line = f"{name} -- {lv.definition}"
    n = len(spec.session_dates)
    if spec.pending_window and spec.outcome != "control":
        between = {0: "no session lies", 1: "1 session lies"}.get(n - 2, f"{n - 2} sessions lie")
        line += (
            f" The plan_turn is in session 0 and the outcome_turn (or pending_turn) in "
            f"session {n - 1}, the last: {between} between them."
        )
    return line


def _wording_definition(design: Design, role: str, level: str) -> str:
    """The design's definition of a plan- or confirmation-wording level."""
    f = design.by_role(role)
    return f.level(level).definition if f is not None else design.definitions()[level]


def _split_note(design: Design, split: str) -> str:
    s = design.split(split)
    return s.note or s.title or split


def spec_brief(spec: ArcSpec) -> dict[str, Any]:
    """What the generator must realize, as data (no ids or seeds: nothing to leak into text)."""
    if (c := spec.correction) is not None:
        return {
            "split": spec.split,
            "structure": "correction",
            "field": spec.field.description,
            "attribute": spec.field.attribute,
            "first_value": spec.initial_value,
            "wrong_value": c.wrong_value,
            "right_value": c.value,
            "corrected_statement": c.target,
            "timing": c.timing,
            "marker": c.marker,
            "session_dates": [d.isoformat() for d in spec.session_dates],
        }
    return {
        "split": spec.split,
        "outcome": spec.outcome,
        "structure": structure_of(spec),
        "field": spec.field.description,
        "attribute": spec.field.attribute,
        "current_value": spec.initial_value,
        "new_value": spec.plan_value,
        "plan_wording": spec.plan_wording,
        "confirmation_wording": spec.confirmation_wording,
        "session_dates": [d.isoformat() for d in spec.session_dates],
    }


def build_prompt(
    spec: ArcSpec, rubric: rubrics.Rubric | None = None, design: Design | None = None
) -> str:
    """The first prompt for ``spec``: the rubric filled from the spec and from ``design`` (the
    paper's by default): its level definitions, split notes and structure."""
    design = design or paper_design()
    if spec.correction is not None:
        return build_correction_prompt(spec, design=design)
    rubric = rubric or rubrics.load(RUBRIC)
    conf = spec.confirmation_wording
    return rubric.render(
        field_description=spec.field.description,
        initial_value=spec.initial_value,
        plan_value=spec.plan_value,
        n_sessions=str(len(spec.session_dates)),
        dates=", ".join(f"session {i}: {d.isoformat()}" for i, d in enumerate(spec.session_dates)),
        outcome=spec.outcome,
        structure=structure_line(spec, design),
        plan_wording=spec.plan_wording,
        plan_wording_definition=_wording_definition(design, "plan_wording", spec.plan_wording),
        confirmation_wording=(
            f"{conf} -- {_wording_definition(design, 'confirmation_wording', conf)}"
            if conf
            else "(not used)"
        ),
        split=spec.split,
        split_note=_split_note(design, spec.split),
        brief_json=json.dumps(spec_brief(spec), ensure_ascii=False, sort_keys=True),
    )


# A correction level's definition names its three parts: "A correction: TARGET; TIMING; MARKER."
# (the target's may hold a semicolon of its own, the others not).
_CORRECTION_PARTS = re.compile(
    r"A correction: (?P<target>.+); (?P<timing>[^;]+); (?P<marker>[^;]+)\.", re.S
)


def correction_definitions(design: Design, spec: ArcSpec) -> tuple[str, str, str]:
    """The definitions of a correction arc's target, timing and marker, read from its level's
    definition in ``design``. A definition written otherwise is shown whole, with the timing and
    marker pointing back to it."""
    definition = design.factor(spec.factor).level(spec.level).definition
    m = _CORRECTION_PARTS.fullmatch(definition.strip())
    if m is None:
        return definition, "as defined above", "as defined above"
    return m["target"], m["timing"], m["marker"]


def build_correction_prompt(
    spec: ArcSpec, rubric: rubrics.Rubric | None = None, design: Design | None = None
) -> str:
    c = spec.correction
    assert c is not None
    rubric = rubric or rubrics.load(CORRECTION_RUBRIC)
    target, timing, marker = correction_definitions(design or paper_design(), spec)
    return rubric.render(
        field_description=spec.field.description,
        initial_value=spec.initial_value,
        wrong_value=c.wrong_value,
        right_value=c.value,
        n_sessions=str(len(spec.session_dates)),
        dates=", ".join(f"session {i}: {d.isoformat()}" for i, d in enumerate(spec.session_dates)),
        target=c.target,
        target_definition=target,
        timing=c.timing,
        timing_definition=timing,
        marker=c.marker,
        marker_definition=marker,
        # the structural check's list (validate.structure): an unmarked correction uses none
        marker_phrases=", ".join(f'"{p}"' for p in CORRECTION_MARKER_PHRASES),
        brief_json=json.dumps(spec_brief(spec), ensure_ascii=False, sort_keys=True),
    )


def with_feedback(prompt: str, problems: list[str]) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return (
        f"{prompt}\nYOUR PREVIOUS REPLY WAS REJECTED. It failed these checks:\n{lines}\n"
        "Write the whole log again as one JSON object, fixing every problem.\n"
    )
