"""eval: score memory systems on the splits (``amg eval run|answers|show``, ``amg report eval``)."""

from pathlib import Path
from typing import Annotated

import typer

from ._app import app, group, handles_errors, report_app
from ._llm import BatchOpt, LlmRun, NoWaitOpt, llm_command
from ._options import (
    DEFAULT_WORKSPACE,
    HtmlOpt,
    JsonOpt,
    NoProgressOpt,
    WorkspaceOpt,
    allow_same_family_option,
    concurrency_option,
    limit_option,
    model_server,
    out_option,
    workspace_option,
)

eval_app = group(
    help="Score memory systems on the splits (the paper's evaluation protocol).",
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")

SplitsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--split",
        help="A split or group of the workspace's design (the paper's: core, heldout, "
        "controlled, corrections, paper = the first three) or all; repeat for "
        "several. Default: all.",
    ),
]
JudgeOpt = Annotated[
    str,
    typer.Option(
        "--judge",
        help="Equivalence (and answer) judge: offline (heuristic rules) or provider:model.",
    ),
]
JudgeBaseUrlOpt = model_server("judge", "OpenAI-compatible server for an openai: judge.")
ModelBaseUrlOpt = model_server(
    "model", "OpenAI-compatible server for an openai: --model.", "--base-url"
)
EmbedderBaseUrlOpt = model_server(
    "embedder", "Server of an openai: --embedder, when it is not --model-base-url's."
)
AllowSameOpt = allow_same_family_option(
    "Allow a judge from the arcs' generator family (reports say so)."
)
ConcurrencyOpt = concurrency_option("Arcs in flight at once (turns within an arc stay in order).")


def _splits(workspace, values: list[str] | None) -> list[str]:
    from ._app import design_splits

    out: list[str] = []
    for v in values or ["all"]:
        for s in design_splits(workspace, v)[1]:
            if s not in out:
                out.append(s)
    return out


@eval_app.command("run")
@handles_errors
@llm_command
def run(
    split: SplitsOpt = None,
    system: Annotated[
        list[str] | None,
        typer.Option(
            "--system",
            help="A memory system by name, e.g. literal-gated, "
            "cautious-gated[no-retry], full-context, no-memory, mem0 or a plug-in "
            "(`amg eval systems` lists them); repeat for several. Default: the "
            "paper's component systems, both plan-typed readings and the retry "
            "ablation.",
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Components' model: offline (documented rules) or provider:model; "
            "answering systems (products, baselines) need provider:model.",
        ),
    ] = "offline",
    base_url: ModelBaseUrlOpt = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="Products' embedder, provider:model (products that embed; others ignore it).",
        ),
    ] = None,
    embedder_base_url: EmbedderBaseUrlOpt = None,
    graph_url: Annotated[
        str | None,
        typer.Option(
            "--graph-url",
            help="Graph products' store server (graphiti): a FalkorDB "
            "(falkor://host:6379) or Neo4j (bolt://host:7687) URL; default: an "
            "embedded FalkorDB per conversation.",
        ),
    ] = None,
    judge: JudgeOpt = "offline",
    judge_base_url: JudgeBaseUrlOpt = None,
    allow_same_family: AllowSameOpt = False,
    concurrency: ConcurrencyOpt = 4,
    no_retry: Annotated[
        bool,
        typer.Option("--no-retry", help="Run the chosen systems without the plan-frame retry."),
    ] = False,
    permissive_matcher: Annotated[
        bool,
        typer.Option(
            "--permissive-matcher",
            help="Run the chosen systems with the permissive field matcher of Section 6.3.",
        ),
    ] = False,
    natural: Annotated[
        list[str] | None,
        typer.Option(
            "--natural",
            help="Run on a natural set (see `amg natural list`) instead of the splits; "
            "repeat for several. Default systems: the paper's four.",
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            min=1,
            help="Run model-backed systems N times, each run with LLM cache entries of its "
            "own (runs 2 to N are named NAME#2 ...); the report gives each measure's spread "
            "across the runs. Systems of offline rules run once.",
        ),
    ] = 1,
    limit: limit_option(
        "With --natural: only the first N items of each set (a quick look)."
    ) = None,
    llm: LlmRun = LlmRun(),
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    no_progress: NoProgressOpt = False,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
) -> None:
    """Run memory systems on the workspace's arcs (or natural sets); store every trace and score
    (resumable)."""
    from ..errors import BadInput
    from ..evaluate import EvalOptions
    from ..llm.ref import ModelRef
    from ..workspace import Workspace

    options = llm.options([model, judge])
    variants = (["no-retry"] if no_retry else []) + (["permissive"] if permissive_matcher else [])
    run = EvalOptions(
        model=ModelRef.parse(model, base_url, options),
        judge=ModelRef.parse(judge, judge_base_url, options),
        embedder=ModelRef.parse(embedder, embedder_base_url)
        if embedder is not None or embedder_base_url
        else None,
        graph_url=graph_url,
        allow_same_family=allow_same_family,
        concurrency=concurrency,
        variants=variants,
        repeat=repeat,
    )
    if natural:
        from ..evaluate.natural import run_natural

        if split:
            raise BadInput(
                "--natural runs natural sets, not splits: drop --split (or run the "
                "splits in another command)"
            )
        if repeat > 1:
            raise BadInput("--repeat applies to the splits, not to --natural runs yet")
        if llm.dry_run:  # run_natural has no dry run: refused rather than run for real
            raise BadInput(
                "--dry-run is not available with --natural yet: try --limit N for a small first run"
            )
        ws = Workspace(workspace, create=False)
        ns = llm.run(
            ws,
            [model, judge],
            lambda: run_natural(
                ws,
                natural,
                system or None,
                run,
                limit=limit,
                show_progress=not no_progress,
            ),
            show_progress=not no_progress,
        )
        ns.workspace_option = workspace_option(workspace)
        return llm.finish(ns, ns.failed)
    if limit is not None:
        raise BadInput("--limit applies to --natural runs only")
    ws = Workspace(workspace, create=False)
    from ..evaluate import plan_eval, run_eval

    if llm.dry_run:
        p = llm.run(
            ws,
            [model, judge],
            lambda: plan_eval(ws, _splits(ws, split), system or None, run).dry_run(),
        )
        return llm.finish(p, unestimated=any(a.calls is None for a in p.answering))
    s = llm.run(
        ws,
        [model, judge],
        lambda: run_eval(
            ws,
            _splits(ws, split),
            system or None,
            run,
            show_progress=not no_progress,
        ),
        show_progress=not no_progress,
    )
    s.workspace_option = workspace_option(workspace)
    llm.finish(s, s.failed)


@eval_app.command("answers")
@handles_errors
@llm_command
def answers(
    file: Annotated[
        Path,
        typer.Argument(
            help='JSONL, one line per arc and session: {"arc_id": '
            '..., "after_session": 0, "answer": "..."} (--format longmemeval: one '
            '{"question_id": ..., "hypothesis": "..."} per question).'
        ),
    ],
    name: Annotated[
        str, typer.Option("--name", help="Name of the answering system in reports, e.g. mem0.")
    ],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="amg (an answer after every session) or longmemeval (a LongMemEval "
            "hypothesis file for the questions of `amg export --format longmemeval`).",
        ),
    ] = "amg",
    judge: JudgeOpt = "offline",
    judge_base_url: JudgeBaseUrlOpt = None,
    allow_same_family: AllowSameOpt = False,
    concurrency: ConcurrencyOpt = 4,
    llm: LlmRun = LlmRun(),
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    no_progress: NoProgressOpt = False,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
) -> None:
    """Score a black-box memory system from its answers to each arc's probe after every session."""
    from ..workspace import Workspace

    options = llm.options([judge])
    ws = Workspace(workspace, create=False)
    from ..evaluate import plan_answers, run_answers
    from ..llm.ref import ModelRef

    how = dict(
        judge=ModelRef.parse(judge, judge_base_url, options),
        allow_same_family=allow_same_family,
        format=format_,
    )
    if llm.dry_run:
        n = llm.run(ws, [judge], lambda: plan_answers(ws, file, name, **how))
        return llm.finish(
            f"dry run: {n} answers to judge (one answer-judge call each; the value "
            "comparisons that follow depend on the verdicts and are not counted)"
        )
    s = llm.run(
        ws,
        [judge],
        lambda: run_answers(
            ws, file, name, concurrency=concurrency, show_progress=not no_progress, **how
        ),
        show_progress=not no_progress,
    )
    s.workspace_option = workspace_option(workspace)
    llm.finish(s, s.failed)


def _bound(help_text: str, option: str):
    return Annotated[str | None, typer.Option(option, metavar="P", help=help_text)]


@eval_app.command("check")
@handles_errors
def check(
    system: Annotated[
        str, typer.Option("--system", help="The system to check (as reports name it).")
    ],
    split: SplitsOpt = None,
    max_pending_contamination: _bound(
        "Fail when pending contamination (answering systems: exposure) exceeds P "
        "(a fraction, 0.05, or a percent, 5%).",
        "--max-pending-contamination",
    ) = None,
    max_end_contamination: _bound(
        "Fail when contamination at the end exceeds P.", "--max-end-contamination"
    ) = None,
    min_task_accuracy: _bound("Fail when task accuracy is below P.", "--min-task-accuracy") = None,
    max_premature_writes: _bound(
        "Fail when premature writes (came-true plans held as current before they came "
        "true) exceed P.",
        "--max-premature-writes",
    ) = None,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="Check the scores of this judge (default: the latest run's)."),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """A gate for CI: exit 1 with one line per bound missed (value, interval, bound), else 0."""
    from ..workspace import require_workspace

    require_workspace(workspace)
    from ..evaluate.check import check_system, parse_fraction
    from ..workspace import Workspace

    given = {
        "pending_contamination": (max_pending_contamination, "--max-pending-contamination"),
        "end_contamination": (max_end_contamination, "--max-end-contamination"),
        "task_accuracy": (min_task_accuracy, "--min-task-accuracy"),
        "premature_write": (max_premature_writes, "--max-premature-writes"),
    }
    bounds = {m: parse_fraction(v, opt) for m, (v, opt) in given.items() if v is not None}
    ws = Workspace(workspace, create=False)
    result = check_system(ws, system, _splits(ws, split), bounds, judge=judge)
    for line in result.lines():
        typer.echo(line)
    if not result.ok:
        raise typer.Exit(1)


@eval_app.command("systems")
@handles_errors
def systems() -> None:
    """Every system `amg eval run --system` can name: components, baselines, products, plug-ins."""
    from ..evaluate import available_systems
    from ..memory.registry import OPTIONS

    lines = available_systems()
    width = max(len(x.name) for x in lines)
    for x in lines:
        typer.echo(f"{x.name:<{width}}  {x.kind:<9}  {x.note}")
    typer.echo(
        f"component systems take options in brackets: [{', '.join(OPTIONS)}], e.g. "
        "literal-gated[oracle,permissive]"
    )


@eval_app.command("show")
@handles_errors
def show(
    arc_id: Annotated[str, typer.Argument(help="An arc id (as in data.jsonl).")],
    system: Annotated[
        str, typer.Option("--system", help="A system with results (run or answers).")
    ],
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """One arc turn by turn as a system handled it: extracted, matched, classified, staged, promoted."""
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    from ..evaluate import show_arc

    typer.echo(show_arc(ws, arc_id, system), nl=False)
    from ..view import viewer_hint

    typer.echo(viewer_hint(workspace, "trace", arc=arc_id, system=system), err=True)


@report_app.command("eval")
@handles_errors
def report_eval(
    split: SplitsOpt = None,
    system: Annotated[
        list[str] | None,
        typer.Option(
            "--system",
            help="Report only these systems (repeat; default: every system with results).",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Report the scores of this judge (default: that of the latest eval run).",
        ),
    ] = None,
    json_: JsonOpt = False,
    html: HtmlOpt = False,
    out: out_option(
        "Where eval.md, eval.json, eval.html and the figures go (default: WORKSPACE/reports/eval)."
    ) = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """The paper's Tables 2-7 and Figures 2-3 for whatever systems and splits were run."""
    import json

    from ..workspace import require_workspace

    require_workspace(workspace)  # before the statistics stack is imported
    from ..evaluate import save_eval_report

    splits = _splits(workspace, split)
    r, paths = save_eval_report(workspace, splits, judge, out, system or None, html=html)
    if json_:
        typer.echo(json.dumps(r.to_json(), indent=2))
    else:
        typer.echo(paths[0].read_text(encoding="utf-8"), nl=False)
        typer.echo(f"wrote {', '.join(str(p) for p in paths)}", err=True)
        from ..view import viewer_hint

        typer.echo(
            viewer_hint(workspace, "results", split=splits[0] if len(splits) == 1 else None),
            err=True,
        )
