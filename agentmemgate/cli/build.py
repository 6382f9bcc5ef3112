"""build / generate / validate / export: the benchmark-construction commands."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from ._app import app, handles_errors

WORKSPACE = typer.Option(Path("amg-workspace"), "--workspace", help="Workspace folder (SQLite database).")
OUT = typer.Option(Path("exports"), "--out", help="Export folder; files go to OUT/<split>/.")
SPLIT = typer.Option("all", "--split", help="core, heldout, controlled or all.")
GENERATOR = typer.Option("offline", "--generator",
                         help="offline (template renderer, no key) or provider:model, e.g. openai:gpt-4o-mini.")
SEED = typer.Option(0, "--seed", help="Planner seed; the same seed reproduces the same arcs.")
N_PER_CELL = typer.Option(None, "--n-per-cell", help="Arcs per design cell (default: the paper's sizes).")
NO_PROGRESS = typer.Option(False, "--no-progress", help="Do not draw progress bars.")


def _print_build(summary) -> None:
    console = Console()
    table = Table(title=f"amg build ({summary.generator})")
    for col in ("split", "cell", "arcs"):
        table.add_column(col)
    for split, cells in summary.cells.items():
        for cell, n in cells.items():
            table.add_row(split, cell, str(n))
        table.add_row(split, "[bold]total[/bold]", f"[bold]{sum(cells.values())}[/bold]")
    console.print(table)
    g, s = summary.generate, summary.structure
    console.print(f"rendered now: {g.rendered_now}, already done: {g.already_done}, "
                  f"render failures: {g.failed}")
    for f in g.failures[:20]:
        console.print(f"  failed {f.spec_id}: {f.reason}")
    if s:
        console.print(f"structural checks: {s.arcs_passing}/{s.arcs} arcs pass")
        for arc_id, problems in list(s.failing_arcs.items())[:20]:
            console.print(f"  {arc_id}: {'; '.join(problems)}")
    if summary.export:
        console.print(f"exported to {summary.export.out_dir}: "
                      + ", ".join(f"{k} {v}" for k, v in summary.export.counts.items()))


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
) -> None:
    """Build the benchmark splits end to end: generate, check, export."""
    from ..pipeline import build as run_build

    summary = run_build(workspace, out, split=split, generator=generator, seed=seed,
                        n_per_cell=n_per_cell, show_progress=not no_progress)
    _print_build(summary)
    if summary.generate.failed or (summary.structure and summary.structure.failing_arcs):
        raise typer.Exit(2)


@app.command()
@handles_errors
def generate(
    split: str = SPLIT,
    generator: str = GENERATOR,
    seed: int = SEED,
    n_per_cell: Optional[int] = N_PER_CELL,
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
) -> None:
    """Plan and render arcs into the workspace (resumes where a previous run stopped)."""
    from ..generate import generate as run_generate, get_renderer, resolve_splits
    from ..workspace import Workspace

    ws = Workspace(workspace)
    renderer = get_renderer(generator, workspace=ws)
    summary = run_generate(ws, renderer, resolve_splits(split), seed=seed, n_per_cell=n_per_cell,
                           show_progress=not no_progress)
    typer.echo(f"planned {summary.planned}, rendered now {summary.rendered_now}, "
               f"already done {summary.already_done}, failed {summary.failed}")
    if summary.failed:
        raise typer.Exit(2)


@app.command("export")
@handles_errors
def export_cmd(
    split: str = SPLIT,
    workspace: Path = WORKSPACE,
    out: Path = OUT,
) -> None:
    """Export the workspace's arcs as JSONL, Parquet, a dataset card and a manifest."""
    from ..exports import export
    from ..generate import resolve_splits
    from ..workspace import Workspace

    s = export(Workspace(workspace), out, resolve_splits(split))
    typer.echo(f"exported to {s.out_dir}: " + ", ".join(f"{k} {v}" for k, v in s.counts.items()))
