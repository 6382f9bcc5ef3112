"""build / generate / export: the benchmark-construction commands."""

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, design_splits, handles_errors, load_rooms, show
from ._llm import (  # build's --dry-run sits before the other LLM options
    DryRunOpt,
    LlmRun,
    llm_command,
)
from ._options import (
    DEFAULT_WORKSPACE,
    CatalogOpt,
    DesignOpt,
    GeneratorBaseUrlOpt,
    NoProgressOpt,
    SplitOpt,
    WorkspaceOpt,
    allow_same_family_option,
    concurrency_option,
    out_option,
    seed_option,
)

OutOpt = out_option(
    "Export folder; files go to OUT/<split>/. Default: ./exports, or WORKSPACE/exports "
    "when --workspace names another workspace.",
    show_default=False,
)


def out_folder(out: Path | None, workspace: Path) -> Path:
    """``--out``, else ``./exports`` for the default workspace and ``WORKSPACE/exports`` for any
    other, so two workspaces never export into one folder by default."""
    if out is not None:
        return out
    return Path("exports") if Path(workspace) == DEFAULT_WORKSPACE else Path(workspace) / "exports"


GeneratorOpt = Annotated[
    str,
    typer.Option(
        "--generator",
        help="offline (template renderer, no key) or provider:model, e.g. openai:gpt-4o-mini.",
    ),
]
SeedOpt = seed_option("Planner seed; the same seed reproduces the same arcs.")
NPerCellOpt = Annotated[
    int | None,
    typer.Option(
        "--n-per-cell",
        help="Scale the design's cell sizes so its largest plan cell has N arcs "
        "(others in proportion, controls by their own count). Default: the "
        "design's sizes.",
    ),
]
ConcurrencyOpt = concurrency_option("Model calls in flight at once (LLM generators).")
MaxAttemptsOpt = Annotated[
    int,
    typer.Option(
        "--max-attempts",
        min=1,
        help="Tries per arc when an LLM reply fails validation (the error is sent back).",
    ),
]
DropFailingOpt = Annotated[
    bool,
    typer.Option(
        "--drop-failing",
        help="Leave arcs that fail realism or recovery out of the export (the card "
        "says which and why).",
    ),
]


def _generator_ref(generator: str, base_url: str | None):
    """The generator's reference; a base URL for an offline generator is refused."""
    from ..errors import BadInput
    from ..llm.ref import ModelRef

    ref = ModelRef.parse(generator, base_url)
    if base_url and ref.offline:
        raise BadInput(
            "--generator-base-url needs an LLM generator such as --generator openai:MODEL"
        )
    return ref


def _renderer_options(
    generator: str, base_url: str | None, concurrency: int, max_attempts: int
) -> dict:
    _generator_ref(generator, base_url)
    return {"base_url": base_url, "concurrency": concurrency, "max_attempts": max_attempts}


def _note_unused_domains(design) -> None:
    """A domain file the user supplied that the design does not draw from is checked but never
    used: say so (a design names the domains it draws from; the paper's pins its 30)."""
    from ..design_checks import unused_domains

    if unused := unused_domains(design):
        typer.echo(
            f"note: design {design.name!r} does not draw from {', '.join(unused)} (checked, "
            "not used): list it under `domains` in a design of yours (amg design init DIR)",
            err=True,
        )


@app.command()
@handles_errors
@llm_command
def build(
    split: SplitOpt = "all",
    generator: GeneratorOpt = "offline",
    seed: SeedOpt = 0,
    n_per_cell: NPerCellOpt = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    out: OutOpt = None,
    no_progress: NoProgressOpt = False,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Judge: offline (heuristic judges, the default) or provider:model; repeatable.",
        ),
    ] = None,
    judge_base_url: Annotated[
        str | None,
        typer.Option(
            "--judge-base-url",
            help="OpenAI-compatible server for openai:MODEL judges (vLLM, Ollama, llama.cpp).",
        ),
    ] = None,
    allow_same_family: allow_same_family_option(
        "Allow a judge from the generator's model family (reports say so)."
    ) = False,
    drop_failing: DropFailingOpt = False,
    base_url: GeneratorBaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 4,
    max_attempts: MaxAttemptsOpt = 3,
    dry_run: DryRunOpt = False,
    llm: LlmRun = LlmRun(),
    design: DesignOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Build the benchmark splits end to end: generate, check, judge, export."""
    specs = [generator, *(judge or [])]
    options = llm.options(specs)
    # a mistyped split or design is refused before anything is imported or created
    chosen, _ = design_splits(workspace, split, design, catalog)
    _note_unused_domains(chosen)
    load_rooms()  # the dataset card's Evaluation section
    from ..pipeline import build as run_build
    from ..pipeline import plan_build
    from ..validate.judging import judge_refs

    common = dict(
        split=split,
        generator=generator,
        seed=seed,
        n_per_cell=n_per_cell,
        judges=judge_refs(judge, judge_base_url, options),
        allow_same_family=allow_same_family,
        model_options=options,
        design=chosen,
        **_renderer_options(generator, base_url, concurrency, max_attempts),
    )
    with llm.batch_mode(specs) as poll:
        if llm.dry_run:
            summary = plan_build(workspace, **common)
        else:
            summary = run_build(
                workspace,
                out_folder(out, workspace),
                show_progress=not no_progress,
                drop_failing=drop_failing,
                batch=llm.batch,
                wait=not llm.no_wait,
                poll_interval=poll,
                **common,
            )
    llm.finish(summary, summary.failures)


@app.command()
@handles_errors
@llm_command
def generate(
    split: SplitOpt = "all",
    generator: GeneratorOpt = "offline",
    seed: SeedOpt = 0,
    n_per_cell: NPerCellOpt = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    no_progress: NoProgressOpt = False,
    base_url: GeneratorBaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 4,
    max_attempts: MaxAttemptsOpt = 3,
    dry_run: DryRunOpt = False,
    llm: LlmRun = LlmRun(),
    design: DesignOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Plan and render arcs into the workspace (resumes where a previous run stopped)."""
    from ..design_checks import require_sound_design
    from ..generate import generate as run_generate
    from ..generate import get_renderer, plan_generate
    from ..generate.planner import check_plan
    from ..workspace import open_workspace

    chosen, splits = design_splits(workspace, split, design, catalog)
    _note_unused_domains(chosen)
    ref = _generator_ref(generator, base_url)
    ref = ref.replace(options=llm.options([generator]))
    require_sound_design(chosen, offline_renderer=ref.offline, offline_judge=False)
    for s in splits:  # refused before a workspace exists
        check_plan(s, seed, n_per_cell, design=chosen)
    with open_workspace(workspace, create=True) as ws:
        renderer = get_renderer(
            ref, workspace=ws, design=chosen, concurrency=concurrency, max_attempts=max_attempts
        )
        summary = llm.run(
            ws,
            [generator],
            lambda: (
                plan_generate(ws, renderer, splits, seed=seed, n_per_cell=n_per_cell, design=chosen)
                if llm.dry_run
                else run_generate(
                    ws,
                    renderer,
                    splits,
                    seed=seed,
                    n_per_cell=n_per_cell,
                    show_progress=not no_progress,
                    design=chosen,
                )
            ),
            show_progress=not no_progress,
        )
        if llm.dry_run:
            ws.discard_if_unused()
    llm.finish(summary.plan_lines() if llm.dry_run else summary, summary.failed)


@app.command("export")
@handles_errors
def export_cmd(
    split: SplitOpt = "all",
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    out: OutOpt = None,
    drop_failing: DropFailingOpt = False,
    design: DesignOpt = None,
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="dataset: JSONL, Parquet, a dataset card and a manifest per split; "
            "longmemeval: one LongMemEval instance per probe point (OUT/longmemeval/SPLIT.json), "
            "for memory harnesses that read LongMemEval.",
        ),
    ] = "dataset",
) -> None:
    """Export the workspace's arcs as JSONL, Parquet, a dataset card and a manifest (or in
    LongMemEval's layout)."""
    from ..workspace import Workspace

    if format_ not in ("dataset", "longmemeval"):
        from ..errors import BadInput

        raise BadInput(f"--format must be dataset or longmemeval, not {format_!r}")
    ws = Workspace(workspace, create=False)
    _, splits = design_splits(ws, split, design)
    if format_ == "longmemeval":
        if drop_failing:
            from ..errors import BadInput

            raise BadInput("--drop-failing applies to --format dataset only")
        from ..exports.longmemeval import export_longmemeval

        return show(export_longmemeval(ws, out_folder(out, workspace), splits))
    from ..exports import export

    load_rooms()  # the dataset card's Evaluation section
    show(export(ws, out_folder(out, workspace), splits, drop_failing=drop_failing))
