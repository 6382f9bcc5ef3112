"""``amg view``: browse a workspace read-only in the browser."""

import typer

from ..view.links import DEFAULT_PORT
from ._app import app, handles_errors
from ._options import DEFAULT_WORKSPACE, PortOpt, WorkspaceOpt, host_option


@app.command("view")
@handles_errors
def view(
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    port: PortOpt = DEFAULT_PORT,
    host: host_option(
        "Address to listen on: 127.0.0.1 (this machine only) or another of this "
        "machine's addresses (0.0.0.0: all). Beyond this machine, anyone who can "
        "reach the port can read the workspace."
    ) = "127.0.0.1",
) -> None:
    """Browse the workspace read-only: arcs, checks and verdicts, results, traces, audits, mining."""
    from ..view.server import launch

    raise typer.Exit(launch(workspace, port, host))
