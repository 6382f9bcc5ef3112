"""import: bring arcs in the data.jsonl export format into a workspace."""

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, handles_errors, show
from ._llm import exit_for
from ._options import DEFAULT_WORKSPACE, WorkspaceOpt, replace_option


@app.command("import")
@handles_errors
def import_cmd(
    file: Annotated[
        Path, typer.Argument(help="JSONL file, one arc per line, in the data.jsonl export format.")
    ],
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="A split of the workspace's design (the paper's: core, heldout, "
            "controlled, corrections): the split of every arc (default: each line's "
            "own 'split').",
        ),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    replace: replace_option(
        "Overwrite arcs whose id is already in the workspace with other content."
    ) = False,
) -> None:
    """Import arcs (ids and provenance kept) for validate, audits, export and evaluation."""
    from ..generate.importer import import_arcs

    s = import_arcs(workspace, file, split=split, replace=replace)
    show(s)
    exit_for(len(s.failing_arcs))
