"""natural: evaluation sets from public corpora (``amg natural build|list|show``)."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import app, group, handles_errors, show
from ._llm import LlmRun, llm_command
from ._options import (
    DEFAULT_WORKSPACE,
    CorpusOpt,
    NoProgressOpt,
    WorkspaceOpt,
    json_option,
    limit_option,
    model_server,
)

FielderBaseUrlOpt = model_server(
    "fielder", "OpenAI-compatible server for an openai: --fielder.", "--base-url"
)

natural_app = group(
    help="Natural evaluation sets: corpus questions whose answer depends on "
    "a fact that changes during the conversation.",
    no_args_is_help=True,
)
app.add_typer(natural_app, name="natural")


# No --batch: the fielder asks one question at a time, so each would be a batch (and a wait) alone.
@natural_app.command("build")
@handles_errors
@llm_command(batch=False)
def build(
    path: Annotated[Path, typer.Argument(help="LongMemEval (oracle/_s/_m) or LoCoMo JSON file.")],
    corpus: CorpusOpt = "auto",
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Set name (default: from the corpus and form, e.g. longmemeval-oracle-ku).",
        ),
    ] = None,
    limit: limit_option("Keep only the first N selected questions.") = None,
    fielder: Annotated[
        str,
        typer.Option(
            "--fielder",
            help="Who names each question's field: offline "
            "(rule natural-field.v1) or provider:model (rubric "
            "natural_field).",
        ),
    ] = "offline",
    base_url: FielderBaseUrlOpt = None,
    llm: LlmRun = LlmRun(),
    no_progress: NoProgressOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Select the questions whose answer depends on a changing fact; store them with a field each."""
    from ..corpora.loaders import check_corpus_path

    check_corpus_path(path)  # before a workspace is created
    from ..corpora.natural import build_natural_set, plan_natural_set
    from ..llm.ref import ModelRef
    from ..workspace import open_workspace

    options = llm.options([fielder])
    with open_workspace(workspace, create=True) as ws:
        how = dict(progress=not no_progress, fielder=ModelRef.parse(fielder, base_url, options))
        if llm.dry_run:
            plan = plan_natural_set(ws, path, corpus, name, limit, **how)
            ws.discard_if_unused()
            return llm.finish(plan)
        info = build_natural_set(ws, path, corpus, name, limit, **how)
    llm.finish(info)
    typer.echo(f"run: amg eval run --natural {info.name}")


@natural_app.command("list")
@handles_errors
def list_sets(workspace: WorkspaceOpt = DEFAULT_WORKSPACE) -> None:
    """The workspace's natural sets with their counts, rules and licenses."""
    from ..corpora.natural import list_natural_sets
    from ..workspace import Workspace

    sets = list_natural_sets(Workspace(workspace, create=False))
    if not sets:
        typer.echo("No natural sets (build one with `amg natural build --corpus longmemeval FILE`)")
    for s in sets:
        show(s)


@natural_app.command("show")
@handles_errors
def show_cmd(
    name: Annotated[str, typer.Argument(help="A natural set's name.")],
    json_: json_option(
        "Every item as one JSON line (sessions, question, gold answer, evidence, field, license)."
    ) = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """One line per item (question, gold answer, field or why it was refused), or JSON lines."""
    from ..corpora.natural import export_items, load_items, natural_set
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    if json_:
        for d in export_items(ws, name):
            typer.echo(json.dumps(d, ensure_ascii=False))
        return
    show(natural_set(ws, name))
    for item, _ in load_items(ws, name):
        field = item.field.attribute if item.field else f"refused: {item.field_refused}"
        typer.echo(
            f"{item.item_id}\t{len(item.sessions)} sessions, {item.turns()} turns\t"
            f"{item.question}\tgold: {item.gold_answer}\tfield: {field}"
        )
