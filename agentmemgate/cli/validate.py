"""validate: structural checks, judges (realism, blind level recovery), equivalence pairs; reports."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._app import app, design_splits, display_spec, fail, handles_errors, report_app
from ._llm import (BatchOpt, DryRunOpt, MaxTokensOpt, NoWaitOpt, PriceOpt, StructuredChoice,
                   StructuredOpt, TimeoutOpt, batched, exit_for, model_options, print_costs)
from .build import DESIGN, NO_PROGRESS, SPLIT, WORKSPACE, judged_line

JUDGE = typer.Option(None, "--judge", help="Judge: offline (heuristic judges) or provider:model; "
                                           "repeat for several judges. Default: offline.")
ALLOW_SAME = typer.Option(False, "--allow-same-family",
                          help="Allow a judge from the generator's model family (reports say so).")
BASE_URL = typer.Option(None, "--base-url", help="OpenAI-compatible server for openai: judges.")
CONCURRENCY = typer.Option(4, "--concurrency", min=1, help="Judge calls in flight at once.")

validate_app = typer.Typer(help="Validate the benchmark: structural checks and judges.",
                           invoke_without_command=True)
app.add_typer(validate_app, name="validate")


def _print_validation(s) -> None:
    if s.structure:
        st = s.structure
        typer.echo(f"structural checks: {st.arcs_passing}/{st.arcs} arcs pass")
        for arc_id, problems in st.failing_arcs.items():
            typer.echo(f"  {arc_id}: {'; '.join(problems)}")
    if s.judging:
        j = s.judging
        judges = ", ".join(f"{display_spec(x.spec)} ({x.family}{', heuristic' if x.heuristic else ''})"
                           for x in j.judges)
        typer.echo(f"judges: {judges}; generator family: {', '.join(j.generator_families) or 'none'}")
        if j.same_family_judges:
            typer.echo(f"same-family judging allowed for: {', '.join(j.same_family_judges)}")
        typer.echo(f"{', '.join(j.checks)}: {judged_line(j)}")
        for e in j.failure_examples:
            typer.echo(f"  judge failure {e}")
    if s.report and s.report.judges:
        for spec, b in s.report.by_judge.items():
            typer.echo(f"blind level recovery ({display_spec(spec)}): {b.recovery.overall.fmt()}")
            for c, p in b.realism.items():
                typer.echo(f"realism {c} ({display_spec(spec)}): {p.fmt()}")
        typer.echo("full report: amg report validation")


@validate_app.callback()
@handles_errors
def validate(
    ctx: typer.Context,
    split: str = SPLIT,
    judge: Optional[list[str]] = JUDGE,
    checks: str = typer.Option("structure,realism,recovery", "--checks",
                               help="Comma-separated subset of structure, realism, recovery."),
    allow_same_family: bool = ALLOW_SAME,
    base_url: Optional[str] = BASE_URL,
    concurrency: int = CONCURRENCY,
    seed: int = typer.Option(0, "--seed", help="Seed of the per-arc option order (recorded)."),
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    dry_run: DryRunOpt = False,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
    design: Optional[str] = DESIGN,
) -> None:
    """Run structural checks, realism and blind level recovery on the arcs; store every verdict."""
    if ctx.invoked_subcommand is not None:
        return
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split, design)
    options = model_options(timeout, max_tokens, structured_output, judge or [], price)
    ws = Workspace(workspace, create=False)
    from ..validate import run_validation
    if not ws.arc_ids(splits=splits):  # nothing to check is not a pass
        fail(f"No arcs in workspace {str(ws.path)!r} (split {split}): run `amg build` or "
             "`amg generate` first")
    if dry_run:
        from ..validate.dry_run import plan_validation

        calls = batched(ws, batch, no_wait, judge or [], lambda: plan_validation(
            ws, splits, judge, checks, allow_same_family=allow_same_family, base_url=base_url,
            seed=seed, model_options=options), dry_run=True)
        typer.echo(f"dry run: {calls.total} judge calls")
        for spec, n in calls.by_judge.items():
            typer.echo(f"  judge {display_spec(spec)}: {n}")
        for spec in calls.heuristic:
            typer.echo(f"  judge {display_spec(spec)}: 0 (heuristic, no model calls)")
        print_costs(planned=True)
        return
    s = batched(ws, batch, no_wait, judge or [], lambda: run_validation(
        ws, splits, judge, checks, allow_same_family=allow_same_family, base_url=base_url,
        concurrency=concurrency, seed=seed, show_progress=not no_progress,
        model_options=options), show_progress=not no_progress)
    _print_validation(s)
    print_costs()
    # Like build: 2 when something needs a look (failing arcs, or judge calls that failed and
    # will be retried by a re-run).
    exit_for(len(s.structure.failing_arcs if s.structure else {})
             + (s.judging.failures if s.judging else 0))


@validate_app.command("equivalence-pairs")
@handles_errors
def equivalence_pairs(
    split: str = SPLIT,
    judge: str = typer.Option("offline", "--judge", help="First judge: offline (normalized-string, "
                                                         "heuristic) or provider:model."),
    rejudge: Optional[str] = typer.Option(None, "--rejudge", help="Second judge, of another family, "
                                                                  "e.g. anthropic:claude-sonnet-4-5."),
    n: int = typer.Option(150, "--n", help="Pairs to sample."),
    borderline_share: Optional[float] = typer.Option(
        None, "--borderline-share", help="Share of borderline pairs in the sample (default: halfway "
                                         "between the candidates' share and 1, i.e. over-sampled)."),
    name: str = typer.Option("default", "--name", help="Pair set name (audits use equivalence:NAME)."),
    seed: int = typer.Option(0, "--seed", help="Sampling and position-shuffle seed."),
    allow_same_family: bool = typer.Option(False, "--allow-same-family",
                                           help="Allow a re-judge of the first judge's family."),
    base_url: Optional[str] = BASE_URL,
    rejudge_base_url: Optional[str] = typer.Option(None, "--rejudge-base-url",
                                                   help="OpenAI-compatible server for the re-judge."),
    concurrency: int = CONCURRENCY,
    json_: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    workspace: Path = WORKSPACE,
    no_progress: bool = NO_PROGRESS,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    structured_output: StructuredOpt = StructuredChoice.auto,
    price: PriceOpt = None,
    dry_run: DryRunOpt = False,
    batch: BatchOpt = False,
    no_wait: NoWaitOpt = False,
) -> None:
    """Build (reference, candidate) value pairs, judge them, re-judge with another family; report agreement."""
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split)
    options = model_options(timeout, max_tokens, structured_output, [judge, rejudge], price)
    ws = Workspace(workspace, create=False)
    from ..validate.pairs import report_markdown, run_equivalence_pairs
    r = batched(ws, batch, no_wait, [judge, rejudge],
                lambda: run_equivalence_pairs(
        ws, splits, judge, rejudge, n=n, borderline_share=borderline_share, seed=seed,
        pair_set=name, allow_same_family=allow_same_family, base_url=base_url,
        rejudge_base_url=rejudge_base_url, concurrency=concurrency,
        show_progress=not no_progress, model_options=options, dry_run=dry_run),
        show_progress=not no_progress, dry_run=dry_run)
    if dry_run:
        typer.echo(f"dry run: {sum(r.values())} judge calls")
        for spec, calls in r.items():
            typer.echo(f"  judge {display_spec(spec)}: {calls}")
        print_costs(planned=True)
        return
    typer.echo(r.model_dump_json(indent=2) if json_ else report_markdown(r))
    if not json_:
        print_costs()
    exit_for(sum(j.failures for j in r.per_judge.values()))


@report_app.command("validation")
@handles_errors
def report_validation(
    split: str = SPLIT,
    judge: Optional[list[str]] = typer.Option(
        None, "--judge", help="Judges to report (repeat; the first is the headline). "
                              "Default: those of the latest validation run."),
    json_: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="Where validation.md, .json and "
                                           "PNG heatmaps go (default: WORKSPACE/reports/validation)."),
    workspace: Path = WORKSPACE,
) -> None:
    """Blind recovery (per factor, confusion), realism, inter-judge agreement, failing arcs."""
    from ..workspace import Workspace

    _, splits = design_splits(workspace, split)
    ws = Workspace(workspace, create=False)
    from ..validate.report import save_validation_report

    r, paths = save_validation_report(ws, splits, judge or None, out_dir)
    if json_:
        typer.echo(r.model_dump_json(indent=2))
    else:
        typer.echo(paths[0].read_text(encoding="utf-8"))
        typer.echo(f"wrote {', '.join(str(p) for p in paths[:2])} and {len(paths) - 2} PNG(s)", err=True)


@report_app.command("equivalence")
@handles_errors
def report_equivalence(
    name: str = typer.Option("default", "--name", help="Pair set name."),
    json_: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    workspace: Path = WORKSPACE,
) -> None:
    """Agreement between the equivalence judge and its re-judge on a stored pair set."""
    from ..workspace import Workspace

    ws = Workspace(workspace, create=False)
    from ..validate.pairs import equivalence_report, report_markdown

    r = equivalence_report(ws, name)
    typer.echo(r.model_dump_json(indent=2) if json_ else report_markdown(r))
