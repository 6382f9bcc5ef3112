"""``amg usage``: what the workspace's model calls cost, from its call log."""

import json
from typing import Annotated

import typer

from ._app import app, handles_errors
from ._options import DEFAULT_WORKSPACE, WorkspaceOpt, json_option


@app.command("usage")
@handles_errors
def usage(
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="Only calls from this date (UTC), e.g. 2026-11-30 or 2026-11-30T14:00."
        ),
    ] = None,
    as_json: json_option("Print the sums as one JSON object.") = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Sum cost and tokens by command, model and purpose from the workspace's call log."""
    from ..llm.usage_log import usage_lines, usage_rows
    from ..workspace import Workspace

    report = usage_rows(Workspace(workspace, create=False), since)
    typer.echo(json.dumps(report, indent=2) if as_json else "\n".join(usage_lines(report)))
