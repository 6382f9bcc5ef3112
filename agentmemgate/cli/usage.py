"""``amg usage``: what the workspace's model calls cost, from its call log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ._app import app, handles_errors
from .build import WORKSPACE


@app.command("usage")
@handles_errors
def usage(
    since: Optional[str] = typer.Option(None, "--since", help="Only calls from this date (UTC), "
                                        "e.g. 2026-11-30 or 2026-11-30T14:00."),
    as_json: bool = typer.Option(False, "--json", help="Print the sums as one JSON object."),
    workspace: Path = WORKSPACE,
) -> None:
    """Sum cost and tokens by command, model and purpose from the workspace's call log."""
    from ..llm.usage_log import usage_lines, usage_rows
    from ..workspace import Workspace

    report = usage_rows(Workspace(workspace, create=False), since)
    typer.echo(json.dumps(report, indent=2) if as_json else "\n".join(usage_lines(report)))
