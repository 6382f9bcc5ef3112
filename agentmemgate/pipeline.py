"""``amg build``: generate -> validate -> export, composed from the rooms' library calls."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .exports import ExportSummary, export
from .generate import GenerateSummary, generate, get_renderer, resolve_splits
from .validate import JudgingSummary, StructureSummary, judge_arcs, validate_structure
from .validate.judges import check_families
from .validate.judging import resolve_judges
from .workspace import Workspace


class BuildSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    splits: list[str]
    generator: str
    generate: GenerateSummary
    structure: StructureSummary | None = None
    judging: JudgingSummary | None = None
    export: ExportSummary | None = None
    cells: dict[str, dict[str, int]] = {}


def build(workspace: str | Path, out: str | Path, split: str = "all", generator: str = "offline",
          seed: int = 0, n_per_cell: int | None = None, dry_run: bool = False,
          drop_failing: bool = False, show_progress: bool = True,
          judges: list[str] | None = None, allow_same_family: bool = False,
          judge_base_url: str | None = None, model_options: dict | None = None,
          **renderer_options) -> BuildSummary:
    """``model_options`` (``timeout``, ``max_tokens``, ``structured_output``) go to every model
    the build uses: an LLM generator and LLM judges."""
    splits = resolve_splits(split)
    ws = Workspace(workspace)
    llm_generator = generator != "offline"
    renderer = get_renderer(generator, workspace=ws, **renderer_options,
                            **((model_options or {}) if llm_generator else {}))
    judge_objs = resolve_judges(ws, judges, base_url=judge_base_url,  # default: offline heuristic
                                model_options=model_options)
    check_families(judge_objs, {renderer.family}, allow_same_family)  # refuse before any work
    run_id = ws.start_run("build", {"split": split, "generator": generator, "seed": seed,
                                    "n_per_cell": n_per_cell, "out": str(out)})
    status = "failed"
    try:
        gen = generate(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, dry_run=dry_run,
                       show_progress=show_progress)
        summary = BuildSummary(splits=splits, generator=renderer.name, generate=gen)
        if dry_run:
            status = "dry-run"
            return summary
        summary.structure = validate_structure(ws, splits)
        summary.judging = judge_arcs(ws, splits, judge_objs, allow_same_family=allow_same_family,
                                     show_progress=show_progress)
        summary.export = export(ws, out, splits, drop_failing=drop_failing)
        summary.cells = {s: _cells(ws, s) for s in splits}
        status = "ok" if gen.failed == 0 else "partial"
        return summary
    finally:
        ws.finish_run(run_id, status)


def _cells(ws: Workspace, split: str) -> dict[str, int]:
    rows = ws.db.execute(
        "select specs.factor || '/' || specs.level, count(arcs.id) from specs "
        "left join arcs on arcs.id = specs.id where specs.split = ? group by 1 order by min(specs.rowid)",
        [split]).fetchall()
    return {k: n for k, n in rows}
