"""The options several command modules share (typer ``Annotated`` aliases; each command gives the
default). Options one module uses stay in that module."""

from pathlib import Path
from typing import Annotated, Any

import typer

from ..defaults import DEFAULT_WORKSPACE


def workspace_option(workspace: Path) -> str:
    """`` --workspace DIR`` for a command to suggest, or '' for the default workspace."""
    import shlex

    return (
        ""
        if Path(workspace) == DEFAULT_WORKSPACE
        else f" --workspace {shlex.quote(str(workspace))}"
    )


WorkspaceOpt = Annotated[
    Path, typer.Option("--workspace", help="Workspace folder (SQLite database).")
]
SplitOpt = Annotated[
    str,
    typer.Option(
        "--split",
        help="A split or group of the design (the paper's: core, heldout, controlled, "
        "corrections, paper = the first three) or all.",
    ),
]
DesignOpt = Annotated[
    str | None,
    typer.Option(
        "--design",
        help="A design: a built-in name (paper) or a design folder or file (amg design "
        "init DIR). Default: the workspace's, else paper.",
    ),
]
CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalog",
        help="A folder of domain files (DOMAIN.toml) added to the built-in catalog (a "
        "file of the same name replaces the built-in one); repeatable.",
    ),
]
NoProgressOpt = Annotated[bool, typer.Option("--no-progress", help="Do not draw progress bars.")]


def model_server(role: str, help: str, *older: str) -> Any:
    """The option naming the server of the model ``--ROLE`` names: ``--ROLE-base-url`` on every
    command (``--generator-base-url``, ``--judge-base-url``, ``--model-base-url`` ...), with the
    names the command had before (``--base-url``) kept as aliases."""
    return Annotated[str | None, typer.Option(f"--{role}-base-url", *older, help=help)]


GeneratorBaseUrlOpt = model_server(
    "generator",
    "OpenAI-compatible server for openai:MODEL (vLLM, Ollama, llama.cpp), e.g. "
    "http://localhost:8000/v1.",
    "--base-url",
)
HtmlOpt = Annotated[
    bool,
    typer.Option(
        "--html",
        help="Also write the report as one self-contained HTML page beside the Markdown "
        "(tables and figures embedded; opens with no server and no network).",
    ),
]


# Options many commands take, each meaning something of the command's own (what the seed seeds,
# what --out receives): one declaration of the flag, its type and its limits; the help is the
# command's.
def seed_option(help: str) -> Any:
    return Annotated[int, typer.Option("--seed", help=help)]


def out_option(help: str, *older: str, **extra: Any) -> Any:
    """``--out PATH`` (``older``: names the option had before, kept as aliases)."""
    return Annotated[Path | None, typer.Option("--out", *older, help=help, **extra)]


def concurrency_option(help: str) -> Any:
    return Annotated[int, typer.Option("--concurrency", min=1, help=help)]


def limit_option(help: str) -> Any:
    return Annotated[int | None, typer.Option("--limit", min=1, help=help)]


def replace_option(help: str) -> Any:
    return Annotated[bool, typer.Option("--replace", help=help)]


def allow_same_family_option(help: str) -> Any:
    return Annotated[bool, typer.Option("--allow-same-family", help=help)]


def resamples_option(help: str) -> Any:
    return Annotated[int, typer.Option("--resamples", min=0, help=help)]


def json_option(help: str) -> Any:
    return Annotated[bool, typer.Option("--json", help=help)]


def host_option(help: str) -> Any:
    """``--host``: where a served app listens (its help says who can reach it from there)."""
    return Annotated[str, typer.Option("--host", help=help)]


JsonOpt = json_option("Print the report as one JSON object.")
PortOpt = Annotated[int, typer.Option("--port", help="Port to serve on.")]
CorpusOpt = Annotated[
    str,
    typer.Option(
        "--corpus", help="longmemeval, locomo, or auto (detected from the file's structure)."
    ),
]
