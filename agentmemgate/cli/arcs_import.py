"""import: bring arcs in the data.jsonl export format into a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._app import app, handles_errors
from ._llm import exit_for
from .build import WORKSPACE


@app.command("import")
@handles_errors
def import_cmd(
    file: Path = typer.Argument(..., help="JSONL file, one arc per line, in the data.jsonl export format."),
    split: Optional[str] = typer.Option(
        None, "--split", help="A split of the workspace's design (the paper's: core, heldout, "
                              "controlled, corrections): the split of every arc (default: each "
                              "line's own 'split')."),
    workspace: Path = WORKSPACE,
    replace: bool = typer.Option(
        False, "--replace", help="Overwrite arcs whose id is already in the workspace with other content."),
) -> None:
    """Import arcs (ids and provenance kept) for validate, audits, export and evaluation."""
    from ..generate.importer import import_arcs

    s = import_arcs(workspace, file, split=split, replace=replace)
    typer.echo(f"imported {s.arcs} arc(s) from {s.source} into {workspace}: new {s.new}, "
               f"replaced {s.replaced}, unchanged {s.unchanged} ("
               + ", ".join(f"{k} {v}" for k, v in s.by_split.items()) + ")")
    for move, n in s.split_changes.items():
        typer.echo(f"  --split relabelled {n} arc(s): {move}")
    if s.ignored_keys:
        typer.echo(f"  ignored keys the format does not define: {', '.join(s.ignored_keys)}")
    typer.echo(f"structural checks: {s.arcs_passing}/{s.arcs} arcs pass")
    failing = list(s.failing_arcs.items())
    for arc_id, problems in failing[:20]:
        typer.echo(f"  {arc_id}: {'; '.join(problems)}")
    if len(failing) > 20:
        typer.echo(f"  ... and {len(failing) - 20} more (the dataset card lists every check)")
    exit_for(len(s.failing_arcs))
