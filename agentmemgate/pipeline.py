"""``amg build``: generate -> validate -> export, composed from the rooms' library calls."""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ._gc import fewer_collections, paused
from .design import Design
from .design.stored import design_for
from .design_checks import require_sound_design
from .exports import ExportSummary, export
from .generate import GenerateSummary, Renderer, generate, get_renderer, plan_generate
from .generate.planner import check_plan
from .generate.run import pending
from .llm.ref import ModelRef
from .outputs import can_create
from .validate import JudgingSummary, StructureSummary, judge_arcs, validate_structure
from .validate.dry_run import JudgeCalls, planned_judge_calls
from .validate.judges import Judge, check_families
from .validate.judging import judge_refs, resolve_judges
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
    design: str = ""  # the design built: its name, and where it was read from

    @property
    def failures(self) -> int:
        """Render failures, failing arcs and failed judge calls (a re-run retries the calls)."""
        return (
            self.generate.failed
            + len(self.structure.failing_arcs if self.structure else {})
            + (self.judging.failures if self.judging else 0)
        )

    def lines(self) -> list[str]:
        """What ``amg build`` prints below its ``table()`` (a dry run: what it would do)."""
        if self.judge_calls is not None:
            return self.generate.plan_lines(self.judge_calls)
        g, s, j = self.generate, self.structure, self.judging
        out = [
            f"rendered now: {g.rendered_now}, already done: {g.already_done}, "
            f"render failures: {g.failed}"
        ]
        out += [f"  failed {f.spec_id}: {f.reason}" for f in g.failures[:20]]
        if s:
            out.append(f"structural checks: {s.arcs_passing}/{s.arcs} arcs pass")
            out += [
                f"  {arc_id}: {'; '.join(problems)}"
                for arc_id, problems in list(s.failing_arcs.items())[:20]
            ]
        if j:
            out += [
                f"judges: {j.judges_line()}",
                j.judged_line(),
                "  (details: amg report validation)",
            ]
        if self.export and self.export.dropped:
            out.append(
                f"dropped {self.export.dropped} failing arc(s) from the export (--drop-failing)"
            )
        out += (
            self.export.lines()
            if self.export
            else ["nothing exported: no arc of the chosen splits was rendered"]
        )
        return out

    def table(self):
        """The arcs per split and cell, a rich table printed above ``lines()`` (None: no cells)."""
        if not self.cells:
            return None
        from rich import box
        from rich.table import Table

        from .llm.model import display_spec

        title = f"amg build ({display_spec(self.generator)})"
        if self.design:
            title += f"\ndesign {self.design}"
        table = Table(title=title, box=box.SIMPLE_HEAD)
        for col in ("split", "cell", "arcs"):
            table.add_column(col, justify="right" if col == "arcs" else "left")
        for split, cells in self.cells.items():
            for cell, n in cells.items():
                table.add_row(split, cell, str(n))
            table.add_row(
                split, "[bold]total[/bold]", f"[bold]{sum(cells.values())}[/bold]", end_section=True
            )
        return table


def design_label(design: Design) -> str:
    """'paper (built in)' or 'my_design (my-design/design.toml)': what a summary names."""
    src = design.source
    return f"{design.name} ({'built in' if src.builtin else src.design.origin})"


def _one_blas_thread() -> None:
    """Let numpy's and scipy's OpenBLAS start one thread, not one per core, when the build
    imports them (pandas for Parquet, statsmodels for the card's Wilson intervals). Its idle
    worker threads busy-wait after start-up: about 0.2 s of CPU of a 3 s build on 2 cores, for a
    job that does no linear algebra. A value the user set is kept; once numpy is imported the
    setting no longer matters, so it is left alone."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@dataclasses.dataclass
class _Build:
    """An open workspace with what a build renders and judges with."""

    ws: Workspace
    design: Design
    splits: list[str]
    renderer: Renderer
    judges: list[Judge]


@contextmanager
def _prepared(
    workspace: str | Path,
    split: str,
    generator: str,
    seed: int,
    n_per_cell: int | None,
    judges: list[str | ModelRef] | None,
    allow_same_family: bool,
    model_options: dict | None,
    design: Design | None,
    renderer_options: dict,
    *,
    out: str | Path | None = None,
    batch: bool = False,
) -> Iterator[_Build]:
    """Everything that can be refused, refused before any work (a workspace this call created
    is removed again when it is refused: nothing is left on disk); then the open workspace with
    the renderer and the judges. ``out``: refused when it cannot be created (a real build)."""
    _one_blas_thread()
    design = design or design_for(workspace)
    splits = design.resolve_splits(split)
    require_sound_design(
        design,
        offline_renderer=ModelRef.parse(generator).offline,
        offline_judge=not judges or any(ModelRef.parse(j).offline for j in judges),
    )
    for s in splits:  # a size the catalog cannot fill fails here, naming the largest that works
        check_plan(s, seed, n_per_cell, design=design)
    if out is not None:
        can_create(Path(out))
    with open_workspace(workspace, create=True) as ws:
        renderer = get_renderer(
            generator,
            workspace=ws,
            design=design,
            **renderer_options,
            **ModelRef.parse(generator, options=model_options).model_options(),
        )
        judge_objs = resolve_judges(  # default: offline heuristic
            ws, judge_refs(judges, options=model_options), design=design
        )
        check_families(judge_objs, {renderer.family}, allow_same_family)
        if batch:  # a server without a batch API is refused before any work, as --dry-run does
            for m in [
                getattr(renderer, "model", None),
                *(getattr(j, "model", None) for j in judge_objs if not j.heuristic),
            ]:
                if m is not None:
                    m.check_batch_api()
        yield _Build(ws, design, splits, renderer, judge_objs)


def plan_build(
    workspace: str | Path,
    split: str = "all",
    generator: str = "offline",
    seed: int = 0,
    n_per_cell: int | None = None,
    judges: list[str | ModelRef] | None = None,
    allow_same_family: bool = False,
    model_options: dict | None = None,
    design: Design | None = None,
    **renderer_options,
) -> BuildSummary:
    """What ``build`` would do, counted and changing nothing (no plan saved, no run recorded, no
    new workspace kept): the arcs to render and the generator's and judges' calls
    (``BuildSummary.judge_calls``). Refuses what ``build`` refuses. The models' planned calls
    are counted in a dry run (``with run_context(dry_run=True)``, as ``amg build --dry-run``
    enters), at batch prices in one of ``batch``."""
    with _prepared(
        workspace,
        split,
        generator,
        seed,
        n_per_cell,
        judges,
        allow_same_family,
        model_options,
        design,
        renderer_options,
    ) as b:
        ws, renderer = b.ws, b.renderer
        gen = plan_generate(
            ws, renderer, b.splits, seed=seed, n_per_cell=n_per_cell, design=b.design
        )
        specs, todo = pending(
            ws, renderer, b.splits, seed=seed, n_per_cell=n_per_cell, save=False, design=b.design
        )
        new = {s.id for s in todo}
        calls = planned_judge_calls(
            ws, b.judges, [s.id for s in specs if s.id not in new], len(todo)
        )
        summary = BuildSummary(
            splits=b.splits,
            generator=renderer.name,
            generate=gen,
            design=design_label(b.design),
            judge_calls=calls,
        )
        ws.discard_if_unused()
        return summary


@fewer_collections()  # ~0.4 s of the CPU of an offline build was garbage collection
def build(
    workspace: str | Path,
    out: str | Path,
    split: str = "all",
    generator: str = "offline",
    seed: int = 0,
    n_per_cell: int | None = None,
    drop_failing: bool = False,
    show_progress: bool = True,
    judges: list[str | ModelRef] | None = None,
    allow_same_family: bool = False,
    model_options: dict | None = None,
    batch: bool = False,
    wait: bool = True,
    poll_interval: float | None = None,
    design: Design | None = None,
    **renderer_options,
) -> BuildSummary:
    """Build ``design`` (default: the one ``workspace`` was built from, else the paper's);
    ``plan_build`` counts what it would do instead.

    ``judges``: specs or references (default: the offline heuristic judges); ``judge_refs``
    gives the specs one base URL (``--judge-base-url``), for the ``openai:`` ones.
    ``model_options`` (``timeout``, ``max_tokens``, ``structured_output``) go to every model
    the build uses: an LLM generator and LLM judges given as specs.

    ``batch``: the generation and judge calls go to the providers' batch APIs
    (``llm.batch.run_batched``), in waves: every arc's first draft in one batch, then the
    re-asks of drafts that failed their checks together with the judge questions of the arcs
    rendered so far, and so on; the export is written once, by the pass that defers nothing.
    ``wait=False`` (``--no-wait``) submits and raises ``BatchesPending``; a re-run collects the
    stored batches instead of submitting again."""
    with _prepared(
        workspace,
        split,
        generator,
        seed,
        n_per_cell,
        judges,
        allow_same_family,
        model_options,
        design,
        renderer_options,
        out=out,
        batch=batch,
    ) as b:
        ws, renderer, judge_objs, splits, design = b.ws, b.renderer, b.judges, b.splits, b.design
        steps = functools.partial(
            _steps,
            ws,
            out,
            splits,
            renderer,
            judge_objs,
            seed=seed,
            n_per_cell=n_per_cell,
            drop_failing=drop_failing,
            allow_same_family=allow_same_family,
            show_progress=show_progress,
            design=design,
        )
        run_id = ws.start_run(
            "build",
            {
                "split": split,
                "generator": generator,
                "seed": seed,
                "n_per_cell": n_per_cell,
                "out": str(out),
                **({"batch": True} if batch else {}),
            },
        )
        status = "failed"
        # Fully offline (template renderer, heuristic judges): seconds of work, no model calls,
        # so no cyclic collection at all; with a model the collector runs, less often.
        offline = renderer.name == "offline" and all(j.heuristic for j in judge_objs)
        try:
            with paused() if offline else nullcontext():
                if batch:
                    summary = _batched(
                        ws,
                        steps,
                        wait=wait,
                        show_progress=show_progress,
                        poll_interval=poll_interval,
                    )
                else:
                    summary = steps()
            status = "ok" if summary.generate.failed == 0 else "partial"
            return summary
        except (Exception, KeyboardInterrupt) as e:
            if batch:
                from .llm.batch import BatchesPending

                # --no-wait or Ctrl-C: the batches keep running; a re-run collects them
                if isinstance(e, (BatchesPending, KeyboardInterrupt)):
                    status = "batches pending"
            raise
        finally:
            ws.finish_run(run_id, status)


def _steps(
    ws: Workspace,
    out,
    splits,
    renderer,
    judge_objs,
    *,
    seed,
    n_per_cell,
    drop_failing,
    allow_same_family,
    show_progress,
    design,
    deferring=lambda: False,
) -> BuildSummary:
    gen = generate(
        ws,
        renderer,
        splits,
        seed=seed,
        n_per_cell=n_per_cell,
        show_progress=show_progress,
        design=design,
    )
    summary = BuildSummary(
        splits=splits, generator=renderer.name, generate=gen, design=design_label(design)
    )
    summary.structure = validate_structure(ws, splits)
    summary.judging = judge_arcs(
        ws, splits, judge_objs, allow_same_family=allow_same_family, show_progress=show_progress
    )
    if deferring():  # --batch: calls of this pass are still to be answered; no export yet
        return summary
    if ws.arc_ids(splits=splits):  # with no arc rendered at all there is nothing to export
        summary.export = export(ws, out, splits, drop_failing=drop_failing)
    summary.cells = {s: _cells(ws, s) for s in splits}
    return summary


def _batched(
    ws: Workspace, steps, *, wait: bool, show_progress: bool, poll_interval: float | None
) -> BuildSummary:
    """``steps`` run by ``run_batched`` until a pass defers nothing; the summary counts what
    every pass rendered and judged (the last pass alone would call it "already done")."""
    from .llm.batch import DEFAULT_POLL_S, deferring, run_batched

    rendered = judged = 0  # done by the passes before the last (a failure is retried each pass)
    last: list[BuildSummary] = []

    def one_pass() -> BuildSummary:
        nonlocal rendered, judged
        if last:
            g, j = last[-1].generate, last[-1].judging
            rendered += g.rendered_now
            judged += (j.judged_now - j.failures) if j else 0
        last.append(steps(deferring=deferring))
        return last[-1]

    summary = run_batched(
        ws,
        one_pass,
        wait=wait,
        show_progress=show_progress,
        poll_interval=DEFAULT_POLL_S if poll_interval is None else poll_interval,
    )
    g = summary.generate
    summary.generate = g.model_copy(
        update={
            "rendered_now": g.rendered_now + rendered,
            "already_done": g.already_done - rendered,
        }
    )
    if (j := summary.judging) is not None:
        summary.judging = j.model_copy(
            update={"judged_now": j.judged_now + judged, "already_done": j.already_done - judged}
        )
    return summary


def _cells(ws: Workspace, split: str) -> dict[str, int]:
    """Rendered arcs per planned cell, in plan order (``card.cell_counts``'s names)."""
    rows = ws.db.execute(
        "select specs.factor, specs.level, specs.outcome, count(arcs.id) from specs "
        "left join arcs on arcs.id = specs.id where specs.split = ? group by 1, 2, 3 "
        "order by min(specs.rowid)",
        [split],
    ).fetchall()
    outcomes = Counter((f, lv) for f, lv, _, _ in rows)
    return {f"{f}/{lv}" + (f" ({o})" if outcomes[(f, lv)] > 1 else ""): n for f, lv, o, n in rows}
