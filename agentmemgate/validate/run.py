"""Run the structural checks over a workspace and store every verdict."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from ..workspace import Workspace
from .structure import check_arcs


class StructureSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arcs: int
    arcs_passing: int
    failures_by_check: dict[str, int]
    failing_arcs: dict[str, list[str]]  # arc id -> failure details


def validate_structure(ws: Workspace, splits: list[str]) -> StructureSummary:
    from ..design.stored import workspace_design

    arcs = [a for split in splits for a in ws.arcs(split)]
    results = check_arcs(arcs, workspace_design(ws))
    ws.save_checks(results)
    failing: dict[str, list[str]] = {}
    for r in results:
        if not r.passed:
            failing.setdefault(r.arc_id, []).append(f"{r.check}: {r.detail}")
    by_check = Counter(r.check for r in results if not r.passed)
    return StructureSummary(
        arcs=len(arcs),
        arcs_passing=len(arcs) - len(failing),
        failures_by_check=dict(by_check),
        failing_arcs=failing,
    )
