"""mine / statements / classify / report classifier: public-corpus hedges and classifier validation."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import app, group, handles_errors, report_app, show
from ._llm import DryRunOpt, LlmRun, PriceOpt, llm_command
from ._options import (
    DEFAULT_WORKSPACE,
    CorpusOpt,
    JsonOpt,
    NoProgressOpt,
    WorkspaceOpt,
    allow_same_family_option,
    concurrency_option,
    json_option,
    limit_option,
    model_server,
    out_option,
    replace_option,
    resamples_option,
    seed_option,
)

mine_app = group(
    help="Mine public corpora (LongMemEval, LoCoMo) for natural hedges.", no_args_is_help=True
)
statements_app = group(
    help="Statement sets for validating the evidence-type classifier.", no_args_is_help=True
)
app.add_typer(mine_app, name="mine")
app.add_typer(statements_app, name="statements")

ConcurrencyOpt = concurrency_option("Parallel model calls.")
_SPEC_SERVER = "OpenAI-compatible server for openai:MODEL specs (vLLM, Ollama)."
MinerBaseUrlOpt = model_server("miner", _SPEC_SERVER, "--base-url")
ClassifierBaseUrlOpt = model_server("classifier", _SPEC_SERVER, "--base-url")
VotersBaseUrlOpt = model_server(
    "voters", "OpenAI-compatible server for the openai:MODEL voters.", "--base-url"
)
RelabelBaseUrlOpt = model_server(
    "relabel",
    "OpenAI-compatible server for an openai:MODEL "
    "relabeler (a second server counts as another family).",
)


def _existing(path: Path):
    """Only ``mine`` and ``statements import`` may create a workspace; the rest need one."""
    from ..workspace import Workspace

    return Workspace(path, create=False)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for x in values or [] for v in x.split(",") if v.strip()]


@mine_app.command("hedges")
@handles_errors
@llm_command
def mine_hedges(
    path: Annotated[
        Path, typer.Argument(help="Corpus file: LongMemEval (oracle/_s/_m) or LoCoMo JSON.")
    ],
    corpus: CorpusOpt = "auto",
    miner: Annotated[
        str,
        typer.Option(
            "--miner",
            help="offline (prefilter + rule-based stage 2), offline-scorer (a learned "
            "scorer decides what stage 2 keeps, the rules name it) or a model spec "
            "provider:model for LLM stage 2.",
        ),
    ] = "offline",
    out: out_option("Write one candidate per line (JSONL; carries the corpus license).") = None,
    limit: limit_option("Only the first N conversations (a quick look at a big file).") = None,
    lexicon: Annotated[
        Path | None,
        typer.Option(
            "--lexicon",
            help="Your own stage-1 cue lexicon (TOML, the shape of the packaged cues.vN.toml).",
        ),
    ] = None,
    prefilter: Annotated[
        str,
        typer.Option(
            "--prefilter",
            help="lexicon (stage 1: the cue "
            "lexicon picks the turns stage 2 sees; its held-out "
            "recall is in the summary) or none (every turn goes "
            "to stage 2, as the paper's LLM miner; see --dry-run "
            "for the cost).",
        ),
    ] = "lexicon",
    dry_run: DryRunOpt = False,
    price: PriceOpt = None,
    concurrency: ConcurrencyOpt = 4,
    base_url: MinerBaseUrlOpt = None,
    no_progress: NoProgressOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    llm: LlmRun = LlmRun(),
) -> None:
    """Find plans and hedges (stage 1 prefilter, stage 2 extraction) and link their outcomes."""
    from ..corpora.loaders import check_corpus_path

    check_corpus_path(path)  # before a workspace is created
    from ..corpora import mine_hedges as run
    from ..corpora import plan_mine_hedges
    from ..llm.ref import ModelRef

    options = llm.options([miner])
    from ..workspace import open_workspace

    how = dict(corpus=corpus, limit=limit, lexicon=lexicon, prefilter=prefilter)
    with open_workspace(workspace, create=True) as ws:
        if llm.dry_run:
            plan = llm.run(
                ws,
                [miner],
                lambda: plan_mine_hedges(
                    ws, path, miner=ModelRef.parse(miner, base_url, options), **how
                ),
            )
            ws.discard_if_unused()
            return llm.finish(plan)
        summary = llm.run(
            ws,
            [miner],
            lambda: run(
                ws,
                path,
                miner=ModelRef.parse(miner, base_url, options),
                out=out,
                concurrency=concurrency,
                progress=not no_progress,
                echo=typer.echo,
                **how,
            ),
            show_progress=not no_progress,
        )
    llm.finish(summary, summary.errors)


@statements_app.command("sample")
@handles_errors
def statements_sample(
    name: Annotated[str, typer.Argument(help="Name of the new statement set.")],
    size: Annotated[int, typer.Option("--size", min=1, help="How many statements to draw.")],
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            help="Mined source(s) to draw from (default: all; see `amg statements list`).",
        ),
    ] = None,
    miner: Annotated[
        str | None,
        typer.Option(
            "--miner",
            help="Whose stage-2 verdicts define the strata (default: latest LLM miner, "
            "else the offline one).",
        ),
    ] = None,
    stratify_by: Annotated[
        str, typer.Option("--stratify-by", help="Comma list from corpus, stage2, speaker, source.")
    ] = "corpus,stage2",
    allocation: Annotated[
        str, typer.Option("--allocation", help="equal or proportional.")
    ] = "equal",
    kept_only: Annotated[
        bool, typer.Option("--kept-only", help="Only statements stage 2 kept.")
    ] = False,
    seed: seed_option("Sampling seed.") = 0,
    replace: replace_option("Overwrite an existing set.") = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Build a statement set from mined corpora by stratified random sampling."""
    from ..corpora import sample_statements

    n = sample_statements(
        _existing(workspace),
        name,
        size,
        sources=_split(source) or None,
        miner=miner,
        stratify_by=tuple(_split([stratify_by])),
        allocation=allocation,
        kept_only=kept_only,
        seed=seed,
        replace=replace,
    )
    typer.echo(f"Statement set {name}: {n} statements")


@statements_app.command("import")
@handles_errors
def statements_import(
    name: Annotated[str, typer.Argument(help="Name of the new statement set.")],
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL: id, text, optional context [{speaker, text}] and reference label."
        ),
    ],
    license: Annotated[
        str | None,
        typer.Option("--license", help="License of the statements (kept with every export)."),
    ] = None,
    replace: replace_option("Overwrite an existing set.") = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Import statements made elsewhere as a statement set."""
    from ..corpora import import_statements
    from ..workspace import open_workspace

    with open_workspace(workspace, create=True) as ws:
        n = import_statements(ws, name, file, license=license, replace=replace)
    typer.echo(f"Statement set {name}: {n} statements imported")


@statements_app.command("label")
@handles_errors
@llm_command
def statements_label(
    name: Annotated[str, typer.Argument(help="Statement set to label.")],
    voters: Annotated[
        list[str],
        typer.Option(
            "--voters",
            help="Classifier or model spec(s), comma separated: offline or provider:model.",
        ),
    ],
    votes: Annotated[
        int,
        typer.Option("--votes", min=1, help="Votes per voter (majority wins; ties are flagged)."),
    ] = 3,
    relabel: Annotated[
        str | None,
        typer.Option("--relabel", help="A model of another family that relabels every statement."),
    ] = None,
    relabel_votes: Annotated[
        int,
        typer.Option("--relabel-votes", min=1, help="Votes of the relabeling model (majority)."),
    ] = 1,
    allow_same_family: allow_same_family_option(
        "Allow a relabel by the voters' own model family."
    ) = False,
    concurrency: ConcurrencyOpt = 4,
    base_url: VotersBaseUrlOpt = None,
    relabel_base_url: RelabelBaseUrlOpt = None,
    no_progress: NoProgressOpt = False,
    replace: replace_option(
        "Vote on statements whose reference label was imported, and overwrite those labels."
    ) = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    llm: LlmRun = LlmRun(),
) -> None:
    """Reference labels by majority of model votes, and a relabel by another family."""
    specs = [*_split(voters), relabel]
    options = llm.options(specs)
    ws = _existing(workspace)
    from ..classify.labeling import label_statements, plan_labels
    from ..llm.ref import ModelRef

    how = dict(
        voters=ModelRef.each(_split(voters), base_url, options),  # --voters-base-url: openai: ones
        votes=votes,
        relabel=ModelRef.parse(relabel, relabel_base_url, options)
        if relabel or relabel_base_url
        else None,
        relabel_votes=relabel_votes,
        allow_same_family=allow_same_family,
        replace=replace,
    )
    if llm.dry_run:
        n = llm.run(ws, specs, lambda: plan_labels(ws, name, **how), show_progress=False)
        return llm.finish(f"dry run: {n} votes to cast")
    summary = llm.run(
        ws,
        specs,
        lambda: label_statements(
            ws, name, concurrency=concurrency, progress=not no_progress, **how
        ),
        show_progress=not no_progress,
    )
    llm.finish(summary, summary.errors)


@statements_app.command("list")
@handles_errors
def statements_list(
    name: Annotated[str | None, typer.Argument(help="A set to show item by item.")] = None,
    as_json: json_option("Machine-readable output.") = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """List statement sets (and mined sources), or the statements of one set."""

    ws = _existing(workspace)
    from ..corpora.mining import sources
    from ..corpora.statements import list_sets, load_set

    if name:
        items = load_set(ws, name)
        if as_json:
            typer.echo(json.dumps([s.model_dump() for s in items], indent=2, ensure_ascii=False))
            return
        for s in items:
            text = " ".join(s.text.split())
            typer.echo(
                f"{s.id}\t{s.reference_status or 'unlabeled'}\t{s.reference or '-'}\t"
                f"{s.relabel or '-'}\t{text[:90]}"
            )
        return
    sets, srcs = list_sets(ws), sources(ws)
    if as_json:
        typer.echo(
            json.dumps(
                {"sets": [s.model_dump() for s in sets], "mined_sources": srcs},
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for s in sets:
        status = ", ".join(f"{k} {v}" for k, v in sorted(s.by_status.items()))
        typer.echo(f"{s.name}: {s.n} statements ({status}); origin {s.origin}")
    for r in srcs:
        typer.echo(
            f"mined source {r['source_key']} ({r['corpus']}): {r['conversations']} "
            f"conversations, {r['turns_scanned']} turns scanned"
        )
    if not sets and not srcs:
        typer.echo("No statement sets or mined sources yet.")


@app.command("classify")
@handles_errors
@llm_command
def classify(
    statements: Annotated[str, typer.Option("--statements", help="Statement set to classify.")],
    classifier: Annotated[
        str,
        typer.Option(
            "--classifier",
            help="offline (lexicon baseline, "
            "newest version; offline:lexicon.v1 pins one) or "
            "provider:model.",
        ),
    ] = "offline",
    rubric: Annotated[
        str,
        typer.Option(
            "--rubric", help="evidence_type (the gate's prompt), truth_now or should_store."
        ),
    ] = "evidence_type",
    method: Annotated[
        str,
        typer.Option(
            "--method", help="auto (logprobs if the API gives them, else votes), logprobs or votes."
        ),
    ] = "auto",
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            min=1,
            help="Sampled votes per statement when probabilities come from votes.",
        ),
    ] = 5,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Repeated runs (stability).")] = 1,
    out: out_option("JSONL: id, reference, probs, predicted, run.") = None,
    concurrency: ConcurrencyOpt = 4,
    base_url: ClassifierBaseUrlOpt = None,
    no_progress: NoProgressOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    llm: LlmRun = LlmRun(),
) -> None:
    """Store per-statement evidence-type distributions for a statement set."""
    options = llm.options([classifier])
    ws = _existing(workspace)
    from ..classify import classify_set, plan_classify_set
    from ..llm.ref import ModelRef

    ref = ModelRef.parse(classifier, base_url, options)
    how = dict(runs=runs, rubric=rubric, method=method, samples=samples, progress=not no_progress)
    if llm.dry_run:
        n = llm.run(ws, [classifier], lambda: plan_classify_set(ws, statements, ref, **how))
        return llm.finish(f"dry run: {n} (statement, run) pairs to classify")
    r = llm.run(
        ws,
        [classifier],
        lambda: classify_set(ws, statements, ref, concurrency=concurrency, out=out, **how),
        show_progress=not no_progress,
    )
    llm.finish(r, r.errors)


@report_app.command("classifier")
@handles_errors
def report_classifier(
    name: Annotated[str, typer.Argument(help="Statement set.")],
    classifier: Annotated[
        list[str] | None,
        typer.Option(
            "--classifier",
            help="Classifier results to report (repeat; the first is compared with "
            "the others). Default: all, in the order they were run.",
        ),
    ] = None,
    agreed_only: Annotated[
        bool,
        typer.Option(
            "--agreed-only",
            help="Only items both model families agreed on, or whose reference people gave "
            "(imported, or a crowd audit's final labels).",
        ),
    ] = False,
    resamples: resamples_option("Bootstrap resamples.") = 2000,
    seed: seed_option("Bootstrap seed.") = 0,
    out_dir: out_option(
        "Where PNG plots go (default: WORKSPACE/reports/classifier/SET).", "--out-dir"
    ) = None,
    as_json: JsonOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """AUROC, accuracy, per-class precision/recall, macro-F1, confusion, stability."""
    ws = _existing(workspace)  # before the metrics stack is imported
    from ..classify import classifier_report

    rep = classifier_report(
        ws,
        name,
        classifiers=classifier or None,
        agreed_only=agreed_only,
        resamples=resamples,
        seed=seed,
        out_dir=out_dir,
    )
    show(rep.model_dump_json(indent=2) if as_json else rep)
