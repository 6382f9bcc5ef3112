"""build / generate / validate / export: the benchmark-construction commands."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._app import app, design_splits, display_spec, handles_errors, load_rooms
from ._llm import (BatchOpt, MaxTokensOpt, NoWaitOpt, PriceOpt, StructuredChoice, StructuredOpt,
                   TimeoutOpt, batch_mode, batched, exit_for, model_options, print_costs)

WORKSPACE = typer.Option(Path("amg-workspace"), "--workspace", help="Workspace folder (SQLite database).")
OUT = typer.Option(Path("exports"), "--out", help="Export folder; files go to OUT/<split>/.")
SPLIT = typer.Option("all", "--split", help="A split or group of the design (the paper's: core, heldout, "
                                           "controlled, corrections, paper = the first three) or all.")
DESIGN = typer.Option(None, "--design", help="A design: a built-in name (paper) or a design folder or "
                                             "file (amg design init DIR). Default: the workspace's, "
                                             "else paper.")
CATALOG = typer.Option(None, "--catalog", help="A folder of domain files (DOMAIN.toml) added to the "
                                               "built-in catalog (a file of the same name replaces "
                                               "the built-in one); repeatable.")
GENERATOR = typer.Option("offline", "--generator",
                         help="offline (template renderer, no key) or provider:model, e.g. openai:gpt-4o-mini.")
SEED = typer.Option(0, "--seed", help="Planner seed; the same seed reproduces the same arcs.")
N_PER_CELL = typer.Option(None, "--n-per-cell", help="Scale the design's cell sizes so its largest "
                                                      "plan cell has N arcs (others in proportion, "
                                                      "controls by their own count). Default: the "
                                                      "design's sizes.")
NO_PROGRESS = typer.Option(False, "--no-progress", help="Do not draw progress bars.")
BASE_URL = typer.Option(None, "--base-url",
                        help="OpenAI-compatible server for openai:MODEL (vLLM, Ollama, llama.cpp), "
                             "e.g. http://localhost:8000/v1.")
CONCURRENCY = typer.Option(4, "--concurrency", min=1, help="Model calls in flight at once (LLM generators).")
MAX_ATTEMPTS = typer.Option(3, "--max-attempts", min=1,
                            help="Tries per arc when an LLM reply fails validation (the error is sent back).")
DRY_RUN = typer.Option(False, "--dry-run",
                       help="Print the model calls the run would make (cached answers not counted), "
                            "their expected input and output tokens and estimated cost per model, "
                            "and stop.")


def _renderer_options(generator: str, base_url: str | None, concurrency: int, max_attempts: int) -> dict:
    from ..errors import BadInput

    if base_url and generator == "offline":
        raise BadInput("--base-url needs an LLM generator such as --generator openai:MODEL")
    return {"base_url": base_url, "concurrency": concurrency, "max_attempts": max_attempts}


def _note_unused_domains(design) -> None:
    """A domain file the user supplied that the design does not draw from is checked but never
    used: say so (a design names the domains it draws from; the paper's pins its 30)."""
    from ..design_checks import unused_domains

    if unused := unused_domains(design):
        typer.echo(f"note: design {design.name!r} does not draw from {', '.join(unused)} (checked, "
                   "not used): list it under `domains` in a design of yours (amg design init DIR)",
                   err=True)


def _print_dry_run(g, judges=None) -> None:
    total = g.planned_calls + (judges.total if judges else 0)
    typer.echo(f"dry run: {g.planned} arcs planned, {g.planned - g.already_done} to render, "
               f"{total} model calls")
    if judges is not None:
        typer.echo(f"  generator: {g.planned_calls}")
        for spec, n in judges.by_judge.items():
            typer.echo(f"  judge {spec}: {n}")
        for spec in judges.heuristic:
            typer.echo(f"  judge {spec}: 0 (heuristic, no model calls)")
DROP_FAILING = typer.Option(False, "--drop-failing",
                            help="Leave arcs that fail realism or recovery out of the export (the card says which and why).")


def judged_line(j) -> str:
    """How many judge questions this run asked and how many got an answer (never "judged" for a
    question whose every call failed)."""
    return (f"asked now {j.judged_now}: {j.judged_now - j.failures} answered, {j.failures} judge "
            f"failures; already stored {j.already_done}")


def export_line(s) -> str:
    if not any(s.counts.values()):
        return f"nothing exported to {s.out_dir}: no arcs in the chosen splits"
    line = f"exported to {s.out_dir}: " + ", ".join(f"{k} {v}" for k, v in s.counts.items())
    if s.kept:  # the root manifest counts and hashes them too: say where they came from
        line += ("; kept from an earlier export in that folder: "
                 + ", ".join(f"{k} {v}" for k, v in s.kept.items()))
    return line


def _print_build(summary) -> None:
    # Summary lines are printed whole (soft_wrap): in a plain log at 80 columns a wrapped line
    # would leave a number alone on the next line. Each line is kept short instead.
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title=f"amg build ({display_spec(summary.generator)})", box=box.SIMPLE_HEAD)
    for col in ("split", "cell", "arcs"):
        table.add_column(col, justify="right" if col == "arcs" else "left")
    for split, cells in summary.cells.items():
        for cell, n in cells.items():
            table.add_row(split, cell, str(n))
        table.add_row(split, "[bold]total[/bold]", f"[bold]{sum(cells.values())}[/bold]", end_section=True)
    if summary.cells:
        console.print(table)

    def line(text: str) -> None:
        console.print(text, soft_wrap=True, highlight=False)

    g, s = summary.generate, summary.structure
    line(f"rendered now: {g.rendered_now}, already done: {g.already_done}, "
         f"render failures: {g.failed}")
    for f in g.failures[:20]:
        line(f"  failed {f.spec_id}: {escape(f.reason)}")
    if s:
        line(f"structural checks: {s.arcs_passing}/{s.arcs} arcs pass")
        for arc_id, problems in list(s.failing_arcs.items())[:20]:
            line(f"  {arc_id}: {escape('; '.join(problems))}")
    if j := summary.judging:
        line("judges: " + ", ".join(f"{display_spec(x.spec)} ({x.family}"
                                    f"{', heuristic' if x.heuristic else ''})" for x in j.judges))
        line(judged_line(j))
        line("  (details: amg report validation)")
    if summary.export and summary.export.dropped:
        line(f"dropped {summary.export.dropped} failing arc(s) from the export (--drop-failing)")
    if summary.export:
        line(escape(export_line(summary.export)))
    else:
        line("nothing exported: no arc of the chosen splits was rendered")


@app.command()
@handles_errors
def build(
    split: str = SPLIT,
    generator: str = GENERATOR,
    seed: int = SEED,
    n_per_cell: Optional[int] = N_PER_CELL,
    workspace: Path = WORKSPACE,
    out: Path = OUT,
    no_progress: bool = NO_PROGRESS,
    judge: Optional[list[str]] = typer.Option(
        None, "--judge", help="Judge: offline (heuristic judges, the default) or provider:model; repeatable."),
    judge_base_url: Optional[str] = typer.Option(
        None, "--judge-base-url", help="OpenAI-compatible server for openai:MODEL judges (vLLM, Ollama, llama.cpp)."),
    allow_same_family: bool = typer.Option(
        False, "--allow-same-family", help="Allow a judge from the generator's model family (reports say so)."),
    drop_failing: bool = DROP_FAILING,
    base_url: Optional[str] = BASE_URL,
    concurrency: int = CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    dry_run: bool = DRY_RUN,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
    design: Optional[str] = DESIGN,
    catalog: Optional[list[Path]] = CATALOG,
) -> None:
    """Build the benchmark splits end to end: generate, check, judge, export."""
    specs = [generator, *(judge or [])]
    options = model_options(timeout, max_tokens, structured_output, specs, price)
    # a mistyped split or design is refused before anything is imported or created
    chosen, _ = design_splits(workspace, split, design, catalog)
    _note_unused_domains(chosen)
    load_rooms()  # the dataset card's Evaluation section
    from ..pipeline import build as run_build

    with batch_mode(batch, no_wait, specs, dry_run) as poll:
        summary = run_build(workspace, out, split=split, generator=generator, seed=seed,
                            n_per_cell=n_per_cell, show_progress=not no_progress,
                            judges=judge or None, allow_same_family=allow_same_family,
                            drop_failing=drop_failing, judge_base_url=judge_base_url,
                            model_options=options, dry_run=dry_run,
                            batch=batch and not dry_run, wait=not no_wait, poll_interval=poll,
                            design=chosen, **_renderer_options(generator, base_url, concurrency, max_attempts))
    if dry_run:
        _print_dry_run(summary.generate, summary.judge_calls)
        print_costs(planned=True)
        return
    _print_build(summary)
    print_costs()
    exit_for(summary.generate.failed + len(summary.structure.failing_arcs if summary.structure else {})
             + (summary.judging.failures if summary.judging else 0))


@app.command()
@handles_errors
def generate(
    split: str = SPLIT,
    generator: str = GENERATOR,
    seed: int = SEED,
    n_per_cell: Optional[int] = N_PER_CELL,
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
    base_url: Optional[str] = BASE_URL,
    concurrency: int = CONCURRENCY,
    max_attempts: int = MAX_ATTEMPTS,
    dry_run: bool = DRY_RUN,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
    design: Optional[str] = DESIGN,
    catalog: Optional[list[Path]] = CATALOG,
) -> None:
    """Plan and render arcs into the workspace (resumes where a previous run stopped)."""
    from ..generate import generate as run_generate, get_renderer
    from ..generate.planner import check_plan
    from ..design_checks import require_sound_design
    from ..workspace import open_workspace

    chosen, splits = design_splits(workspace, split, design, catalog)
    _note_unused_domains(chosen)
    options = _renderer_options(generator, base_url, concurrency, max_attempts)
    llm_options = model_options(timeout, max_tokens, structured_output, [generator], price)
    require_sound_design(chosen, offline_renderer=generator == "offline", offline_judge=False)
    for s in splits:  # refused before a workspace exists
        check_plan(s, seed, n_per_cell, design=chosen)
    with open_workspace(workspace, create=True) as ws:
        renderer = get_renderer(generator, workspace=ws, design=chosen, **options, **llm_options)
        summary = batched(ws, batch, no_wait, [generator], lambda: run_generate(
            ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, dry_run=dry_run,
            show_progress=not no_progress, design=chosen), show_progress=not no_progress,
            dry_run=dry_run)
        if dry_run:
            ws.discard_if_unused()
    if dry_run:
        _print_dry_run(summary)
        print_costs(planned=True)
        return
    typer.echo(f"planned {summary.planned}, rendered now {summary.rendered_now}, "
               f"already done {summary.already_done}, failed {summary.failed}")
    for f in summary.failures[:20]:
        typer.echo(f"  failed {f.spec_id}: {f.reason}")
    print_costs()
    exit_for(summary.failed)


@app.command("export")
@handles_errors
def export_cmd(
    split: str = SPLIT,
    workspace: Path = WORKSPACE,
    out: Path = OUT,
    drop_failing: bool = DROP_FAILING,
    design: Optional[str] = DESIGN,
) -> None:
    """Export the workspace's arcs as JSONL, Parquet, a dataset card and a manifest."""
    from ..exports import export
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    _, splits = design_splits(ws, split, design)
    load_rooms()  # the dataset card's Evaluation section
    s = export(ws, out, splits, drop_failing=drop_failing)
    typer.echo(export_line(s))
