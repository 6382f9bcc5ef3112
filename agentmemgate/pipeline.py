"""``amg build``: generate -> validate -> export, composed from the rooms' library calls."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ._gc import fewer_collections, paused
from .exports import ExportSummary, export
from .generate import GenerateSummary, generate, get_renderer, resolve_splits
from .generate.planner import check_plan
from .generate.run import pending
from .outputs import can_create
from .validate import JudgingSummary, StructureSummary, judge_arcs, validate_structure
from .validate.dry_run import JudgeCalls, planned_judge_calls
from .validate.judges import check_families
from .validate.judging import resolve_judges
from .workspace import Workspace, open_workspace


class BuildSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    splits: list[str]
    generator: str
    generate: GenerateSummary
    structure: StructureSummary | None = None
    judging: JudgingSummary | None = None
    export: ExportSummary | None = None
    cells: dict[str, dict[str, int]] = {}
    judge_calls: JudgeCalls | None = None  # dry runs: the judge calls the run would make


def _one_blas_thread() -> None:
    """Let numpy's and scipy's OpenBLAS start one thread, not one per core, when the build
    imports them (pandas for Parquet, statsmodels for the card's Wilson intervals). Its idle
    worker threads busy-wait after start-up: about 0.2 s of CPU of a 3 s build on 2 cores, for a
    job that does no linear algebra. A value the user set is kept; once numpy is imported the
    setting no longer matters, so it is left alone."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@fewer_collections()  # ~0.4 s of the CPU of an offline build was garbage collection
def build(workspace: str | Path, out: str | Path, split: str = "all", generator: str = "offline",
          seed: int = 0, n_per_cell: int | None = None, dry_run: bool = False,
          drop_failing: bool = False, show_progress: bool = True,
          judges: list[str] | None = None, allow_same_family: bool = False,
          judge_base_url: str | None = None, model_options: dict | None = None,
          **renderer_options) -> BuildSummary:
    """``model_options`` (``timeout``, ``max_tokens``, ``structured_output``) go to every model
    the build uses: an LLM generator and LLM judges."""
    # Everything that can be refused is refused before any work, and a workspace this call
    # created is removed again when it is refused (nothing is left on disk).
    _one_blas_thread()
    splits = resolve_splits(split)
    for s in splits:  # a size the catalog cannot fill fails here, naming the largest that works
        check_plan(s, seed, n_per_cell)
    if not dry_run:
        can_create(Path(out))
    with open_workspace(workspace, create=True) as ws:
        renderer = get_renderer(generator, workspace=ws, **renderer_options,
                                **((model_options or {}) if generator != "offline" else {}))
        judge_objs = resolve_judges(ws, judges, base_url=judge_base_url,  # default: offline heuristic
                                    model_options=model_options)
        check_families(judge_objs, {renderer.family}, allow_same_family)
        if dry_run:  # changes nothing: no plan saved, no run recorded, no new workspace kept
            gen = generate(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, dry_run=True,
                           show_progress=False)
            specs, todo = pending(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, save=False)
            new = {s.id for s in todo}
            calls = planned_judge_calls(ws, judge_objs, [s.id for s in specs if s.id not in new],
                                        len(todo))
            summary = BuildSummary(splits=splits, generator=renderer.name, generate=gen,
                                   judge_calls=calls)
            ws.discard_if_unused()
            return summary
        # Fully offline (template renderer, heuristic judges): seconds of work, no model calls,
        # so no cyclic collection at all; with a model the collector runs, less often.
        offline = renderer.name == "offline" and all(j.heuristic for j in judge_objs)
        with paused() if offline else nullcontext():
            return _build(ws, out, splits, renderer, judge_objs, split=split, generator=generator,
                          seed=seed, n_per_cell=n_per_cell, drop_failing=drop_failing,
                          allow_same_family=allow_same_family, show_progress=show_progress)


def _build(ws: Workspace, out, splits, renderer, judge_objs, *, split, generator, seed, n_per_cell,
           drop_failing, allow_same_family, show_progress) -> BuildSummary:
    run_id = ws.start_run("build", {"split": split, "generator": generator, "seed": seed,
                                    "n_per_cell": n_per_cell, "out": str(out)})
    status = "failed"
    try:
        gen = generate(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell,
                       show_progress=show_progress)
        summary = BuildSummary(splits=splits, generator=renderer.name, generate=gen)
        summary.structure = validate_structure(ws, splits)
        summary.judging = judge_arcs(ws, splits, judge_objs, allow_same_family=allow_same_family,
                                     show_progress=show_progress)
        if ws.arc_ids(splits=splits):  # with no arc rendered at all there is nothing to export
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
