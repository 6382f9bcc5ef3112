"""Drive any renderer over planned specs: store each arc as it lands, resume, show progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..design import Design
from ..design.stored import record_plan, store_design, workspace_design
from ..errors import BadInput
from ..progress import progress_bar
from ..schema import Arc, ArcSpec
from ..workspace import Workspace
from .importer import imported_count
from .planner import plan_split
from .renderer import Renderer, RenderFailure

if TYPE_CHECKING:
    from ..validate.dry_run import JudgeCalls


class GenerateSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    planned: int
    rendered_now: int
    already_done: int
    failed: int
    failures: list[RenderFailure]
    planned_calls: int = 0

    def lines(self) -> list[str]:
        return [
            f"planned {self.planned}, rendered now {self.rendered_now}, already done "
            f"{self.already_done}, failed {self.failed}",
            *(f"  failed {f.spec_id}: {f.reason}" for f in self.failures[:20]),
        ]

    def plan_lines(self, judges: JudgeCalls | None = None) -> list[str]:
        """A dry run's counts, with those of the judges that would follow (``amg build``)."""
        total = self.planned_calls + (judges.total if judges else 0)
        out = [
            f"dry run: {self.planned} arcs planned, {self.planned - self.already_done} to "
            f"render, {total} model calls"
        ]
        if judges is not None:
            out.append(f"  generator: {self.planned_calls}")
            out += [f"  judge {spec}: {n}" for spec, n in judges.by_judge.items()]
            out += [f"  judge {spec}: 0 (heuristic, no model calls)" for spec in judges.heuristic]
        return out


def plan(
    ws: Workspace,
    splits: list[str],
    seed: int,
    n_per_cell: int | None,
    save: bool = True,
    design: Design | None = None,
) -> tuple[list[ArcSpec], set[str]]:
    """Plan each split; return the specs and the splits whose plan differs from the stored one.

    With ``save``, a changed plan (seed, sizes, catalog) replaces the split's old work; a dry run
    passes ``save=False`` and changes nothing.
    """
    design = workspace_design(ws, design)
    if save:
        store_design(ws, design)
    specs: list[ArcSpec] = []
    changed: set[str] = set()
    for split in splits:
        new = plan_split(split, seed, n_per_cell, design=design)
        old = ws.specs(split)
        if [s.model_dump_json() for s in old] != [s.model_dump_json() for s in new]:
            changed.add(split)
            if save and (n := imported_count(ws, split)):
                raise BadInput(
                    f"Split {split!r} in workspace {str(ws.path)!r} holds {n} imported "
                    "arc(s) (amg import); generating it would replace them: build into "
                    "another --workspace"
                )
            if save:
                if design.ids == "keyed":  # an unchanged id is an unchanged arc: keep its work
                    ws.clear_split(split, keep={s.id for s in new})
                else:
                    ws.clear_split(split)
                ws.save_specs(new)
        if save:
            record_plan(ws, design, split, seed, n_per_cell)
        specs.extend(new)
    return specs, changed


def pending(
    ws: Workspace,
    renderer: Renderer,
    splits: list[str],
    *,
    seed: int = 0,
    n_per_cell: int | None = None,
    save: bool = True,
    design: Design | None = None,
) -> tuple[list[ArcSpec], list[ArcSpec]]:
    """The planned specs, and those this renderer has not rendered yet (``save``: as ``plan``)."""
    design = workspace_design(ws, design)
    specs, changed = plan(ws, splits, seed, n_per_cell, save=save, design=design)
    # Arcs of a re-planned split are stale even where ids repeat (only a dry run still sees them),
    # except with keyed ids, where an id names one arc's content.
    stale = set(ws.arc_ids(splits=sorted(changed))) if changed and design.ids != "keyed" else set()
    done = ws.arc_ids(generator=renderer.name) - stale
    return specs, [s for s in specs if s.id not in done]


def plan_generate(
    ws: Workspace,
    renderer: Renderer,
    splits: list[str],
    *,
    seed: int = 0,
    n_per_cell: int | None = None,
    design: Design | None = None,
) -> GenerateSummary:
    """What ``generate`` would do, counted without rendering or storing anything: the planned
    arcs, those already rendered, and the model calls the rest would take (``planned_calls``)."""
    specs, todo = pending(
        ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, save=False, design=design
    )
    return GenerateSummary(
        planned=len(specs),
        rendered_now=0,
        already_done=len(specs) - len(todo),
        failed=0,
        failures=[],
        planned_calls=renderer.planned_calls(todo),
    )


def generate(
    ws: Workspace,
    renderer: Renderer,
    splits: list[str],
    *,
    seed: int = 0,
    n_per_cell: int | None = None,
    show_progress: bool = True,
    design: Design | None = None,
) -> GenerateSummary:
    """Render every planned arc of ``design`` (default: the workspace's) not already rendered
    by this generator (``plan_generate`` counts them instead)."""
    specs, todo = pending(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, design=design)
    failures: list[RenderFailure] = []
    by_id = {s.id: s for s in todo}
    rendered = 0
    with progress_bar(
        f"render ({getattr(renderer, 'display', renderer.name)})",
        total=len(todo),
        usage=renderer.usage,
        enabled=show_progress,
    ) as advance:
        for result in renderer.render_many(todo):
            if isinstance(result, Arc):
                ws.save_arc(result)
                rendered += 1
            else:
                spec = by_id[result.spec_id]
                ws.save_failure(spec, renderer.name, result.reason, result.attempts)
                failures.append(result)
            advance(failed=not isinstance(result, Arc))
    return GenerateSummary(
        planned=len(specs),
        rendered_now=rendered,
        already_done=len(specs) - len(todo),
        failed=len(failures),
        failures=failures,
    )
