"""catalog: check domain files, and ask a model to propose new ones."""

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, fail, group, handles_errors
from ._llm import DryRunOpt, LlmRun, PriceOpt, llm_command
from ._options import DEFAULT_WORKSPACE, CatalogOpt, WorkspaceOpt, model_server, out_option

ModelBaseUrlOpt = model_server(
    "model",
    "OpenAI-compatible server for openai:MODEL (vLLM, Ollama, "
    "llama.cpp), e.g. http://localhost:8000/v1.",
    "--base-url",
)

catalog_app = group(
    help="The domain catalog: check domain files; propose new ones with a model.",
    no_args_is_help=True,
)
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("check")
@handles_errors
def check(
    folder: Annotated[
        Path | None,
        typer.Argument(
            help="A folder of your domain files (DOMAIN.toml), checked together with the built-in "
            "ones (a file of the same name replaces the built-in one). Default: the built-in "
            "catalog alone."
        ),
    ] = None,
    design: Annotated[
        str | None,
        typer.Option(
            "--design",
            help="A design (built-in name, or its folder or file) whose own catalog keys the files "
            "may hold; each domain it draws from must then supply them.",
        ),
    ] = None,
) -> None:
    """Apply every rule of the domain catalog: one line per problem (file, key, line, rule); exit 1 if any."""
    from ..validate.catalog import check_catalog_for

    files, problems = check_catalog_for([folder] if folder is not None else [], design)
    for p in problems:
        typer.echo(str(p))
    if problems:
        fail(
            f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {len(files)} domain "
            "files"
        )
    typer.echo(f"{len(files)} domain files, no problems")


@catalog_app.command("propose")
@handles_errors
@llm_command
def propose(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model that writes the files, provider:model (e.g. "
            "openai:gpt-4o-mini; a local server: openai:NAME --model-base-url "
            "URL).",
        ),
    ] = None,
    attribute: Annotated[
        list[str] | None,
        typer.Option(
            "--attribute",
            help="A new attribute to propose a domain file for, in snake_case (e.g. "
            "preferred_airline); repeatable.",
        ),
    ] = None,
    count: Annotated[
        int | None,
        typer.Option(
            "--count",
            help="Instead of --attribute: let the model name N new attributes on --theme first.",
        ),
    ] = None,
    theme: Annotated[
        str | None,
        typer.Option(
            "--theme", help="With --count: what the new domains are about (e.g. \"travel\")."
        ),
    ] = None,
    out: out_option(
        "Folder the files that pass `amg catalog check` are written to "
        "(OUT/NAME.toml; rejected replies go to OUT/rejected/ for review)."
    ) = None,
    catalog: CatalogOpt = None,
    max_attempts: Annotated[
        int,
        typer.Option(
            "--max-attempts",
            min=1,
            help="Tries per file: a file that fails the check is asked again with its problems.",
        ),
    ] = 3,
    base_url: ModelBaseUrlOpt = None,
    dry_run: DryRunOpt = False,
    price: PriceOpt = None,
    llm: LlmRun = LlmRun(),
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Ask a model for new domain files; write those that pass the catalog check, re-ask the others with their problems."""
    from ..generate.propose import check_request, plan_proposals, propose_domains
    from ..llm.ref import ModelRef
    from ..workspace import open_workspace

    check_request(model, attribute or (), count, theme, out, catalog or (), max_attempts)
    options = llm.options([model])
    how = dict(
        out=out,
        attributes=attribute or (),
        count=count,
        theme=theme,
        catalogs=catalog or (),
        max_attempts=max_attempts,
        echo=typer.echo,
    )
    with open_workspace(workspace, create=True) as ws:
        if llm.dry_run:
            plan = llm.run(
                ws,
                [model],
                lambda: plan_proposals(ws, ModelRef.parse(model, base_url, options), **how),
            )
            ws.discard_if_unused()
            return llm.finish(plan)
        summary = llm.run(
            ws,
            [model],
            lambda: propose_domains(ws, ModelRef.parse(model, base_url, options), **how),
        )
    llm.finish(summary, summary.failures)
