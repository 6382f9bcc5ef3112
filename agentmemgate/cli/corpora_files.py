"""``amg corpora``: where the public corpora (LoCoMo, LongMemEval) live, and fetching them."""

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, group, handles_errors
from ._options import NoProgressOpt

corpora_app = group(
    help="The public corpora (LoCoMo, LongMemEval): where the toolkit looks "
    "for them, and fetching them from their public homes.",
    no_args_is_help=True,
)
app.add_typer(corpora_app, name="corpora")


@corpora_app.command("fetch")
@handles_errors
def fetch(
    corpus: Annotated[str, typer.Argument(help="longmemeval or locomo.")],
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            help="Corpora folder to fetch into (the file goes to TO/CORPUS/); default: "
            "$AMG_CORPORA, else the user's data folder.",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Download from this URL (a mirror) instead of the public home; the sha256 "
            "is checked all the same.",
        ),
    ] = None,
    no_progress: NoProgressOpt = False,
) -> None:
    """Download a corpus from its public home, check its sha256, and put it where amg looks (resumable)."""
    from ..corpora.public import fetch as fetch_corpus

    report = fetch_corpus(corpus, to, url, progress=not no_progress)
    src = report.source
    for f in report.files:
        if f.made == "downloaded":
            typer.echo(f"Fetched {f.path} ({src.size:,} bytes, {src.version}), sha256 verified")
        elif f.made == "cut":
            typer.echo(f"Wrote {f.path} (cut from {src.name}), sha256 verified")
        else:
            typer.echo(f"Already there: {f.path}, sha256 verified")
    typer.echo(f"Source: {src.home}; license: {src.license}")


@corpora_app.command("list")
@handles_errors
def list_files(
    folder: Annotated[
        Path | None,
        typer.Option(
            "--folder",
            help="Corpora folder to look in (default: $AMG_CORPORA, else the user's data folder).",
        ),
    ] = None,
) -> None:
    """Where the toolkit looks for the corpora, and which of their files are there."""
    from ..corpora.home import described_dir, fetch_hint
    from ..corpora.public import status

    typer.echo(f"Corpora folder: {folder}" if folder else f"Corpora folder: {described_dir()}")
    for f in status(folder):
        state = {
            "verified": "present, sha256 verified",
            "missing": f"missing: {fetch_hint(f.corpus)}",
            "differs": "present, but not the published file (sha256 differs)",
        }[f.state]
        typer.echo(f"  {f.corpus}/{f.name}: {state}")
