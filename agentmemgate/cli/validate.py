"""validate: structural checks, judges (realism, blind level recovery), equivalence pairs; reports."""

from typing import Annotated

import typer

from ._app import app, design_splits, display_spec, fail, group, handles_errors, report_app
from ._llm import LlmRun, llm_command
from ._options import (
    DEFAULT_WORKSPACE,
    DesignOpt,
    HtmlOpt,
    JsonOpt,
    NoProgressOpt,
    SplitOpt,
    WorkspaceOpt,
    allow_same_family_option,
    concurrency_option,
    model_server,
    out_option,
    seed_option,
)

JudgeBaseUrlOpt = model_server(
    "judge", "OpenAI-compatible server for openai: judges.", "--base-url"
)
RejudgeBaseUrlOpt = model_server("rejudge", "OpenAI-compatible server for the re-judge.")
ConcurrencyOpt = concurrency_option("Judge calls in flight at once.")

validate_app = group(
    help="Validate the benchmark: structural checks and judges.", invoke_without_command=True
)
app.add_typer(validate_app, name="validate")


@validate_app.callback()
@handles_errors
@llm_command
def validate(
    ctx: typer.Context,
    split: SplitOpt = "all",
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Judge: offline (heuristic judges) or provider:model; repeat for several "
            "judges. Default: offline.",
        ),
    ] = None,
    checks: Annotated[
        str,
        typer.Option("--checks", help="Comma-separated subset of structure, realism, recovery."),
    ] = "structure,realism,recovery",
    allow_same_family: allow_same_family_option(
        "Allow a judge from the generator's model family (reports say so)."
    ) = False,
    base_url: JudgeBaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 4,
    seed: seed_option("Seed of the per-arc option order (recorded).") = 0,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    no_progress: NoProgressOpt = False,
    llm: LlmRun = LlmRun(),
    design: DesignOpt = None,
) -> None:
    """Run structural checks, realism and blind level recovery on the arcs; store every verdict."""
    if ctx.invoked_subcommand is not None:
        return
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split, design)
    options = llm.options(judge or [])
    ws = Workspace(workspace, create=False)
    from ..validate import run_validation
    from ..validate.judging import judge_refs

    judges = judge_refs(judge, base_url, options)  # --judge-base-url: for the openai: judges
    if not ws.arc_ids(splits=splits):  # nothing to check is not a pass
        fail(
            f"No arcs in workspace {str(ws.path)!r} (split {split}): run `amg build` or "
            "`amg generate` first"
        )
    if llm.dry_run:
        from ..validate.dry_run import plan_validation

        return llm.finish(
            llm.run(
                ws,
                judge or [],
                lambda: plan_validation(
                    ws,
                    splits,
                    judges,
                    checks,
                    allow_same_family=allow_same_family,
                    seed=seed,
                ),
            )
        )
    s = llm.run(
        ws,
        judge or [],
        lambda: run_validation(
            ws,
            splits,
            judges,
            checks,
            allow_same_family=allow_same_family,
            concurrency=concurrency,
            seed=seed,
            show_progress=not no_progress,
        ),
        show_progress=not no_progress,
    )
    # Like build: 2 when something needs a look (failing arcs, or judge calls that failed and
    # will be retried by a re-run).
    llm.finish(s, s.failures)


@validate_app.command("equivalence-pairs")
@handles_errors
@llm_command
def equivalence_pairs(
    split: SplitOpt = "all",
    judge: Annotated[
        str,
        typer.Option(
            "--judge", help="First judge: offline (normalized-string, heuristic) or provider:model."
        ),
    ] = "offline",
    rejudge: Annotated[
        str | None,
        typer.Option(
            "--rejudge", help="Second judge, of another family, e.g. anthropic:claude-sonnet-4-5."
        ),
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Pairs to sample.")] = 150,
    borderline_share: Annotated[
        float | None,
        typer.Option(
            "--borderline-share",
            help="Share of borderline pairs in the sample (default: halfway "
            "between the candidates' share and 1, i.e. over-sampled).",
        ),
    ] = None,
    name: Annotated[
        str, typer.Option("--name", help="Pair set name (audits use equivalence:NAME).")
    ] = "default",
    seed: seed_option("Sampling and position-shuffle seed.") = 0,
    allow_same_family: allow_same_family_option(
        "Allow a re-judge of the first judge's family."
    ) = False,
    base_url: JudgeBaseUrlOpt = None,
    rejudge_base_url: RejudgeBaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 4,
    json_: JsonOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    no_progress: NoProgressOpt = False,
    llm: LlmRun = LlmRun(),
) -> None:
    """Build (reference, candidate) value pairs, judge them, re-judge with another family; report agreement."""
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split)
    options = llm.options([judge, rejudge])
    ws = Workspace(workspace, create=False)
    from ..llm.ref import ModelRef
    from ..validate.pairs import plan_equivalence_pairs, report_markdown, run_equivalence_pairs

    first = ModelRef.parse(judge, base_url, options)
    second = (
        ModelRef.parse(rejudge, rejudge_base_url, options) if rejudge or rejudge_base_url else None
    )
    how = dict(
        n=n,
        borderline_share=borderline_share,
        seed=seed,
        pair_set=name,
        allow_same_family=allow_same_family,
        concurrency=concurrency,
    )
    if llm.dry_run:  # the calls per judge spec
        calls = llm.run(
            ws, [judge, rejudge], lambda: plan_equivalence_pairs(ws, splits, first, second, **how)
        )
        return llm.finish(
            [
                f"dry run: {sum(calls.values())} judge calls",
                *(f"  judge {display_spec(s)}: {c}" for s, c in calls.items()),
            ]
        )
    r = llm.run(
        ws,
        [judge, rejudge],
        lambda: run_equivalence_pairs(
            ws, splits, first, second, show_progress=not no_progress, **how
        ),
        show_progress=not no_progress,
    )
    llm.finish(
        r.model_dump_json(indent=2) if json_ else report_markdown(r),
        sum(j.failures for j in r.per_judge.values()),
        costs=not json_,
    )


@report_app.command("validation")
@handles_errors
def report_validation(
    split: SplitOpt = "all",
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Judges to report (repeat; the first is the headline). Default: those of "
            "the latest validation run.",
        ),
    ] = None,
    json_: JsonOpt = False,
    html: HtmlOpt = False,
    out_dir: out_option(
        "Where validation.md, .json, .html and PNG heatmaps go (default: "
        "WORKSPACE/reports/validation).",
        '--out-dir',
    ) = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Blind recovery (per factor, confusion), realism, inter-judge agreement, failing arcs."""
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split)
    ws = Workspace(workspace, create=False)
    from ..validate.report import save_validation_report

    r, paths = save_validation_report(ws, splits, judge or None, out_dir, html=html)
    if json_:
        typer.echo(r.model_dump_json(indent=2))
    else:
        files = [p for p in paths if p.suffix != ".png"]
        typer.echo(paths[0].read_text(encoding="utf-8"))
        typer.echo(
            f"wrote {', '.join(str(p) for p in files)} and {len(paths) - len(files)} PNG(s)",
            err=True,
        )


@report_app.command("equivalence")
@handles_errors
def report_equivalence(
    name: Annotated[str, typer.Option("--name", help="Pair set name.")] = "default",
    json_: JsonOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Agreement between the equivalence judge and its re-judge on a stored pair set."""
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    from ..validate.pairs import equivalence_report, report_markdown

    r = equivalence_report(ws, name)
    typer.echo(r.model_dump_json(indent=2) if json_ else report_markdown(r))
