"""validate: structural checks (and judges) over the workspace's arcs."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import app, handles_errors
from .build import SPLIT, WORKSPACE


@app.command()
@handles_errors
def validate(
    split: str = SPLIT,
    workspace: Path = WORKSPACE,
) -> None:
    """Run the structural checks on the workspace's arcs and store every verdict."""
    from ..generate import resolve_splits
    from ..validate import validate_structure
    from ..workspace import Workspace

    s = validate_structure(Workspace(workspace), resolve_splits(split))
    typer.echo(f"structural checks: {s.arcs_passing}/{s.arcs} arcs pass")
    for arc_id, problems in s.failing_arcs.items():
        typer.echo(f"  {arc_id}: {'; '.join(problems)}")
    if s.failing_arcs:
        raise typer.Exit(2)
