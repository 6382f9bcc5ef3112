"""eval: score memory systems on the splits (``amg eval run|answers|show``, ``amg report eval``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._app import app, handles_errors, report_app
from ._llm import (BatchOpt, DryRunOpt, MaxTokensOpt, NoWaitOpt, PriceOpt, StructuredChoice,
                   StructuredOpt, TimeoutOpt, batched, exit_for, model_options, print_costs)
from .build import NO_PROGRESS, WORKSPACE

eval_app = typer.Typer(help="Score memory systems on the splits (the paper's evaluation protocol).",
                       no_args_is_help=True)
app.add_typer(eval_app, name="eval")

SPLITS_OPT = typer.Option(None, "--split", help="A split or group of the workspace's design (the "
                                                "paper's: core, heldout, controlled, corrections, "
                                                "paper = the first three) or all; repeat for "
                                                "several. Default: all.")
JUDGE = typer.Option("offline", "--judge", help="Equivalence (and answer) judge: offline "
                                                "(heuristic rules) or provider:model.")
JUDGE_BASE_URL = typer.Option(None, "--judge-base-url",
                              help="OpenAI-compatible server for an openai: judge.")
ALLOW_SAME = typer.Option(False, "--allow-same-family",
                          help="Allow a judge from the arcs' generator family (reports say so).")
CONCURRENCY = typer.Option(4, "--concurrency", min=1,
                           help="Arcs in flight at once (turns within an arc stay in order).")


def _splits(workspace, values: Optional[list[str]]) -> list[str]:
    from ._app import design_splits

    out: list[str] = []
    for v in values or ["all"]:
        for s in design_splits(workspace, v)[1]:
            if s not in out:
                out.append(s)
    return out


@eval_app.command("run")
@handles_errors
def run(
    split: Optional[list[str]] = SPLITS_OPT,
    system: Optional[list[str]] = typer.Option(
        None, "--system", help="A memory system by name, e.g. literal-gated, "
                               "cautious-gated\\[no-retry], full-context, no-memory, mem0 or a "
                               "plug-in (`amg eval systems` lists them); repeat for several. "
                               "Default: the paper's component systems, both plan-typed readings "
                               "and the retry ablation."),
    model: str = typer.Option("offline", "--model", help="Components' model: offline (documented "
                                                         "rules) or provider:model; answering "
                                                         "systems (products, baselines) need "
                                                         "provider:model."),
    base_url: Optional[str] = typer.Option(None, "--base-url",
                                           help="OpenAI-compatible server for an openai: --model."),
    embedder: Optional[str] = typer.Option(None, "--embedder", help="Products' embedder, "
                                           "provider:model (products that embed; others ignore it)."),
    embedder_base_url: Optional[str] = typer.Option(
        None, "--embedder-base-url", help="Server of an openai: --embedder, when it is not "
                                          "--base-url."),
    graph_url: Optional[str] = typer.Option(
        None, "--graph-url", help="Graph products' store server (graphiti): a FalkorDB "
                                  "(falkor://host:6379) or Neo4j (bolt://host:7687) URL; default: "
                                  "an embedded FalkorDB per conversation."),
    judge: str = JUDGE,
    judge_base_url: Optional[str] = JUDGE_BASE_URL,
    allow_same_family: bool = ALLOW_SAME,
    concurrency: int = CONCURRENCY,
    no_retry: bool = typer.Option(False, "--no-retry",
                                  help="Run the chosen systems without the plan-frame retry."),
    permissive_matcher: bool = typer.Option(
        False, "--permissive-matcher", help="Run the chosen systems with the permissive field "
                                            "matcher of Section 6.3."),
    natural: Optional[list[str]] = typer.Option(
        None, "--natural", help="Run on a natural set (see `amg natural list`) instead of the "
                                "splits; repeat for several. Default systems: the paper's four."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="With --natural: only the "
                                        "first N items of each set (a quick look)."),
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    dry_run: DryRunOpt = False,
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
) -> None:
    """Run memory systems on the workspace's arcs (or natural sets); store every trace and score
    (resumable)."""
    from ..errors import BadInput
    from ..workspace import Workspace

    options = model_options(timeout, max_tokens, structured_output, [model, judge], price)
    variants = (["no-retry"] if no_retry else []) + (["permissive"] if permissive_matcher else [])
    if natural:
        from ..evaluate.natural import run_natural

        if split:
            raise BadInput("--natural runs natural sets, not splits: drop --split (or run the "
                           "splits in another command)")
        if dry_run:  # run_natural has no dry run: refused rather than run for real
            raise BadInput("--dry-run is not available with --natural yet: try --limit N for a "
                           "small first run")
        ws = Workspace(workspace, create=False)
        ns = batched(ws, batch, no_wait, [model, judge], lambda: run_natural(
            ws, natural, system or None, model=model, base_url=base_url, judge=judge,
            judge_base_url=judge_base_url, concurrency=concurrency, variants=variants,
            limit=limit, llm_options=options, show_progress=not no_progress),
            show_progress=not no_progress)
        typer.echo("\n".join(ns.lines()))
        print_costs()
        exit_for(ns.failed)
        return
    if limit is not None:
        raise BadInput("--limit applies to --natural runs only")
    ws = Workspace(workspace, create=False)
    from ..evaluate import run_eval

    s = batched(ws, batch, no_wait, [model, judge], lambda: run_eval(
        ws, _splits(ws, split), system or None, model=model, base_url=base_url, judge=judge,
        judge_base_url=judge_base_url, allow_same_family=allow_same_family,
        concurrency=concurrency, variants=variants, llm_options=options, embedder=embedder,
        embedder_base_url=embedder_base_url, graph_url=graph_url, show_progress=not no_progress,
        dry_run=dry_run),
        show_progress=not no_progress, dry_run=dry_run)
    if dry_run:
        typer.echo("\n".join(s.lines()))
        print_costs(planned=True, unestimated=any(a.calls is None for a in s.answering))
        return
    kinds = sorted({"offline rules" if i.offline else "LLM" for i in s.systems})
    typer.echo(f"systems: {', '.join(s.names)} ({', '.join(kinds)}); "
               f"judge: {s.judge.spec}{' (heuristic)' if s.judge.heuristic else ''}")
    typer.echo(f"{s.arcs} arcs x {len(s.systems)} systems: ran now {s.ran_now}, re-scored "
               f"{s.rescored}, already stored {s.already_done}, failed {s.failed}; "
               f"{s.component_calls} {'system' if s.answering else 'component'} calls; "
               f"{s.seconds:.1f} s")
    for e in s.failure_examples:
        typer.echo(f"  failed {e}")
    typer.echo("report: amg report eval; one arc: amg eval show ARC_ID --system NAME")
    print_costs()
    exit_for(s.failed)


@eval_app.command("answers")
@handles_errors
def answers(
    file: Path = typer.Argument(..., help='JSONL, one line per arc and session: {"arc_id": ..., '
                                          '"after_session": 0, "answer": "..."}.'),
    name: str = typer.Option(..., "--name", help="Name of the answering system in reports, e.g. mem0."),
    judge: str = JUDGE,
    judge_base_url: Optional[str] = JUDGE_BASE_URL,
    allow_same_family: bool = ALLOW_SAME,
    concurrency: int = CONCURRENCY,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    dry_run: DryRunOpt = False,
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
) -> None:
    """Score a black-box memory system from its answers to each arc's probe after every session."""
    from ..workspace import Workspace

    options = model_options(timeout, max_tokens, structured_output, [judge], price)
    ws = Workspace(workspace, create=False)
    from ..evaluate import run_answers
    s = batched(ws, batch, no_wait, [judge], lambda: run_answers(
        ws, file, name, judge=judge, judge_base_url=judge_base_url,
        allow_same_family=allow_same_family, concurrency=concurrency, llm_options=options,
        show_progress=not no_progress, dry_run=dry_run), show_progress=not no_progress,
        dry_run=dry_run)
    if dry_run:
        typer.echo(f"dry run: {s} answers to judge (one answer-judge call each; the value "
                   "comparisons that follow depend on the verdicts and are not counted)")
        print_costs(planned=True)
        return
    typer.echo(f"{s.name}: {s.answers} answers for {s.arcs} arcs ("
               + ", ".join(f"{k} {v}" for k, v in s.splits.items())
               + f"); judge {s.judge.spec}{' (heuristic)' if s.judge.heuristic else ''}"
               + (f", answers read by {s.answer_rubric}" if s.answer_rubric else "") + ": scored now "
               f"{s.scored_now}, already stored {s.already_done}, failed {s.failed}")
    for e in s.failure_examples:
        typer.echo(f"  failed {e}")
    from ..evaluate.answer_accuracy import accuracy_line

    typer.echo(accuracy_line(s.judge.spec, s.answer_rubric))
    typer.echo("report: amg report eval")
    print_costs()
    exit_for(s.failed)


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
    typer.echo(f"component systems take options in brackets: [{', '.join(OPTIONS)}], e.g. "
               "literal-gated[oracle,permissive]")


@eval_app.command("show")
@handles_errors
def show(
    arc_id: str = typer.Argument(..., help="An arc id (as in data.jsonl)."),
    system: str = typer.Option(..., "--system", help="A system with results (run or answers)."),
    workspace: Path = WORKSPACE,
) -> None:
    """One arc turn by turn as a system handled it: extracted, matched, classified, staged, promoted."""
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    from ..evaluate import show_arc

    typer.echo(show_arc(ws, arc_id, system), nl=False)


@report_app.command("eval")
@handles_errors
def report_eval(
    split: Optional[list[str]] = SPLITS_OPT,
    system: Optional[list[str]] = typer.Option(None, "--system", help="Report only these systems "
                                               "(repeat; default: every system with results)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Report the scores of this judge "
                                                              "(default: that of the latest eval run)."),
    json_: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where eval.md, eval.json and the "
                                       "figures go (default: WORKSPACE/reports/eval)."),
    workspace: Path = WORKSPACE,
) -> None:
    """The paper's Tables 2-7 and Figures 2-3 for whatever systems and splits were run."""
    import json

    from ..workspace import require_workspace

    require_workspace(workspace)  # before the statistics stack is imported
    from ..evaluate import save_eval_report

    r, paths = save_eval_report(workspace, _splits(workspace, split), judge, out, system or None)
    if json_:
        typer.echo(json.dumps(r.to_json(), indent=2))
    else:
        typer.echo(paths[0].read_text(encoding="utf-8"), nl=False)
        typer.echo(f"wrote {', '.join(str(p) for p in paths)}", err=True)
