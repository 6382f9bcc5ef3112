"""catalog: check domain files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ._app import app, fail, handles_errors

catalog_app = typer.Typer(help="The domain catalog: check domain files.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("check")
@handles_errors
def check(
    folder: Annotated[Optional[Path], typer.Argument(
        help="A folder of your domain files (DOMAIN.toml), checked together with the built-in "
             "ones (a file of the same name replaces the built-in one). Default: the built-in "
             "catalog alone.")] = None,
) -> None:
    """Apply every rule of the domain catalog: one line per problem (file, key, line, rule); exit 1 if any."""
    from ..validate.catalog import catalog_files, catalog_problems

    files = catalog_files([folder] if folder is not None else [])
    problems = catalog_problems(files)
    for p in problems:
        typer.echo(str(p))
    if problems:
        fail(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {len(files)} domain "
             "files")
    typer.echo(f"{len(files)} domain files, no problems")
