"""``amg audit ...``, ``amg annotate`` and ``amg report agreement``: blind human audits."""

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from ._app import app, group, handles_errors, load_rooms, report_app, show
from ._options import (
    DEFAULT_WORKSPACE,
    HtmlOpt,
    JsonOpt,
    PortOpt,
    WorkspaceOpt,
    host_option,
    out_option,
    resamples_option,
    seed_option,
)

audit_app = group(
    help="Blind human audits: create, import, export, list, relink.", no_args_is_help=True
)
app.add_typer(audit_app, name="audit")

FastSecondsOpt = Annotated[
    float,
    typer.Option(
        "--fast-seconds",
        min=0.0,
        help="Count labels made faster than this many seconds as too fast.",
    ),
]
IncludeScreenedOpt = Annotated[
    bool,
    typer.Option(
        "--include-screened", help="Count the labels of people an open audit screened out."
    ),
]
BaseUrlOpt = Annotated[
    str,
    typer.Option(
        "--base-url", help="Where annotators reach `amg annotate`; links are BASE_URL/?token=..."
    ),
]
DEFAULT_BASE_URL = "http://127.0.0.1:8501"
NameArg = Annotated[str, typer.Argument(help="Audit name.")]


def _ws(path: Path):
    """An existing workspace (only ``audit create`` and ``audit import`` may make one)."""
    from ..workspace import Workspace

    return Workspace(path, create=False)


def _new_ws(path: Path):
    from ..workspace import open_workspace

    return open_workspace(path, create=True)


def _say_if_new(path: Path, existed: bool) -> None:
    """A workspace these commands made is named, so a mistyped --workspace shows at once."""
    if not existed:
        typer.echo(f"Made a new workspace at {str(path)!r} (there was none there).")


def _exists(path: Path) -> bool:
    from ..workspace import DB_NAME

    return (Path(path) / DB_NAME).is_file()


def _check_task(task: str, workspace: Path) -> None:
    """Refuse a mistyped task, or a factor the workspace's design lacks, before a workspace is
    made."""
    from ..annotate_app.labels import parse_task
    from ..design.stored import design_for
    from ._app import unknown_names_explained

    if parse_task(task)[1] is not None:
        with unknown_names_explained(workspace):
            parse_task(task, design_for(workspace))


@audit_app.command("create")
@handles_errors
def create(
    name: Annotated[str, typer.Argument(help="Audit name (letters, digits, '.', '_', '-').")],
    task: Annotated[
        str,
        typer.Option(
            "--task",
            help="evidence_type, equivalence, realism, answer_assertion or "
            "difficulty[:FACTOR] (FACTOR: a factor of the workspace's design, e.g. "
            "difficulty:hedge_strength).",
        ),
    ],
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="Item source: arcs, arcs:SPLIT (a split of the workspace's design), a "
            "registered PREFIX:ARG (statements:SET, equivalence:NAME, answers:SYSTEM) "
            "or a JSONL file.",
        ),
    ],
    sample: Annotated[
        int | None, typer.Option("--sample", help="Freeze N items (default: all).")
    ] = None,
    stratify_by: Annotated[
        str | None,
        typer.Option(
            "--stratify-by",
            help="Spread the sample evenly over this item field (e.g. reference, "
            "level, split, turn; answer_assertion: verdict by default).",
        ),
    ] = None,
    annotators: Annotated[
        str | None,
        typer.Option(
            "--annotators",
            help="Comma-separated annotator names; each gets a link (default: one, 'annotator').",
        ),
    ] = None,
    overlap: Annotated[
        int | None, typer.Option("--overlap", help="Annotators per item (default: all of them).")
    ] = None,
    seed: seed_option("Seed for sampling, assignment and queue order.") = 0,
    adjudicator: Annotated[
        str | None,
        typer.Option(
            "--adjudicator",
            help="Name of the adjudicator (not an annotator); gets an adjudication link.",
        ),
    ] = None,
    base_url: BaseUrlOpt = DEFAULT_BASE_URL,
    open_: Annotated[
        bool,
        typer.Option(
            "--open",
            help="An open audit: one study link for a crowd platform; items are assigned as "
            "people arrive, each to --overlap people (default 3).",
        ),
    ] = False,
    per_person: Annotated[
        int | None,
        typer.Option("--per-person", help="Open audits: items per person (default: all)."),
    ] = None,
    reclaim_after: Annotated[
        float,
        typer.Option(
            "--reclaim-after",
            help="Open audits: minutes after which an idle person's unlabeled item goes back "
            "to the pool.",
        ),
    ] = 30.0,
    id_param: Annotated[
        str,
        typer.Option(
            "--id-param",
            help="Open audits: the URL parameter carrying the platform's participant id "
            "(PROLIFIC_PID; MTurk: workerId).",
        ),
    ] = "PROLIFIC_PID",
    gold: Annotated[
        int, typer.Option("--gold", help="Open audits: gold items (with a reference) per person.")
    ] = 0,
    gold_from: Annotated[
        str | None,
        typer.Option(
            "--gold-from",
            help="JSONL file of gold items (as --from FILE reads it, each with a reference); "
            "default: the source's own items with a reference.",
        ),
    ] = None,
    attention: Annotated[
        int,
        typer.Option(
            "--attention", help="Open audits: attention checks per person (written for the task)."
        ),
    ] = 0,
    min_gold_accuracy: Annotated[
        float | None,
        typer.Option(
            "--min-gold-accuracy",
            help="Screen out a person whose gold accuracy falls below this share (0-1).",
        ),
    ] = None,
    max_attention_failures: Annotated[
        int | None,
        typer.Option(
            "--max-attention-failures",
            help="Screen out a person who fails more attention checks than this.",
        ),
    ] = None,
    qualify: Annotated[
        int,
        typer.Option(
            "--qualify",
            help="Open audits: a qualification round of N gold items first, the answer shown "
            "after each.",
        ),
    ] = 0,
    qualify_pass: Annotated[
        float,
        typer.Option("--qualify-pass", help="Share of the qualification items to get right (0-1)."),
    ] = 0.8,
    completion_code: Annotated[
        str | None,
        typer.Option("--completion-code", help="Code shown (and recorded) when a person finishes."),
    ] = None,
    screenout_code: Annotated[
        str | None,
        typer.Option(
            "--screenout-code", help="Code shown (and recorded) when a person is screened out."
        ),
    ] = None,
    redirect: Annotated[
        str | None,
        typer.Option(
            "--redirect",
            help="Send people here when they finish or are screened out; {code} is replaced "
            "by their code.",
        ),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Freeze a set of items as an audit and print each person's secret link (with --open: one
    study link for a crowd platform)."""
    _check_task(task, workspace)
    from ..annotate_app.audits import create_audit
    from ..annotate_app.study_options import StudyOptions

    load_rooms()  # the answers:SYSTEM source
    study = None
    if open_:
        study = StudyOptions(
            overlap=3 if overlap is None else overlap,
            per_person=per_person,
            reclaim_after_minutes=reclaim_after,
            id_param=id_param,
            gold=gold,
            attention=attention,
            min_gold_accuracy=min_gold_accuracy,
            max_attention_failures=max_attention_failures,
            qualify=qualify,
            qualify_pass=qualify_pass,
            completion_code=completion_code,
            screenout_code=screenout_code,
            redirect=redirect,
        ).check()
    else:
        _fixed_only(
            per_person=per_person,
            reclaim_after=reclaim_after != 30.0,
            id_param=id_param != "PROLIFIC_PID",
            gold=gold,
            gold_from=gold_from,
            attention=attention,
            min_gold_accuracy=min_gold_accuracy,
            max_attention_failures=max_attention_failures,
            qualify=qualify,
            qualify_pass=qualify_pass != 0.8,
            completion_code=completion_code,
            screenout_code=screenout_code,
            redirect=redirect,
        )

    existed = _exists(workspace)
    with _new_ws(workspace) as ws:
        res = create_audit(
            ws,
            name,
            task,
            source,
            sample_n=sample,
            stratify_by=stratify_by,
            annotators=annotators.split(",") if annotators is not None else None,
            overlap=overlap,
            seed=seed,
            adjudicator=adjudicator,
            base_url=base_url,
            study=study,
            gold_from=gold_from,
        )
    _say_if_new(workspace, existed)
    show(res)
    from ..streamlit_launch import is_loopback

    url = urlsplit(
        base_url
    )  # plain http to another machine: serve beyond 127.0.0.1 (https: a proxy)
    lab = url.scheme == "http" and url.hostname and not is_loopback(url.hostname)
    typer.echo(
        f"Serve them with: amg annotate --workspace {workspace}"
        + (" --host 0.0.0.0" if lab else "")
        + (f" --port {url.port}" if url.port and url.port != 8501 else "")
    )


def _fixed_only(**given) -> None:
    """Refuse an open audit's option on a fixed-roster audit, naming it."""
    from ..errors import BadInput

    used = [k for k, v in given.items() if v not in (None, False, 0)]
    if used:
        flag = "--" + used[0].replace("_", "-")
        raise BadInput(f"{flag} applies to open audits: add --open (one study link for a crowd)")


@audit_app.command("add")
@handles_errors
def add(
    name: NameArg,
    people: Annotated[list[str], typer.Argument(help="Names of the people to add.")],
    items: Annotated[
        int | None,
        typer.Option(
            "--items",
            help="Items each new person gets: those with the fewest people assigned so far "
            "(default: every item).",
        ),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Add annotators to a fixed-roster audit and print their secret links."""
    from ..annotate_app.audits import add_people

    show(add_people(_ws(workspace), name, people, items=items))


@audit_app.command("people")
@handles_errors
def people(
    name: NameArg,
    json_: JsonOpt = False,
    fast_seconds: FastSecondsOpt = 2.0,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Each person's status, items labeled, gold accuracy, attention failures and speed."""
    from ..annotate_app.people import people_report, to_json

    report = people_report(_ws(workspace), name, fast_seconds)
    if json_:
        typer.echo(to_json(report))
        return
    show(report)


@audit_app.command("labels")
@handles_errors
def labels(
    name: NameArg,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="majority, dawid-skene or mace (the last two need the crowd extra: "
            "pip install 'agentmemgate[crowd]').",
        ),
    ] = "majority",
    out: out_option("Write the final labels to FILE (.csv or .jsonl).") = None,
    json_: JsonOpt = False,
    include_screened: IncludeScreenedOpt = False,
    to_statements: Annotated[
        str | None,
        typer.Option(
            "--to-statements",
            help="Make the final labels the reference labels of this statement set (status "
            "human), for amg classify and amg report classifier.",
        ),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """One final label per item from everyone's labels, with its support and confidence."""
    from ..annotate_app.final_labels import final_labels, write_final_labels
    from ..annotate_app.final_labels import to_statements as write_set

    ws = _ws(workspace)
    res = final_labels(ws, name, method, include_screened=include_screened)
    if out is not None:
        write_final_labels(res, out)
    if to_statements is not None:
        done = write_set(ws, res, to_statements)
    if json_:
        typer.echo(res.model_dump_json(indent=2))
    else:
        show(res)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)
    if to_statements is not None:
        typer.echo("\n".join(done.lines()), err=json_)


@audit_app.command("import")
@handles_errors
def import_(
    name: Annotated[str, typer.Argument(help="Audit name; created if it does not exist.")],
    file: Annotated[
        Path,
        typer.Argument(
            help="CSV, long format: item_id,annotator,label[,role] (as `amg audit export` writes "
            "it; with --reference: item_id,label[,source]); or with --format label-studio a "
            "Label Studio JSON export."
        ),
    ],
    reference: Annotated[
        bool,
        typer.Option("--reference", help="Import reference labels instead of annotator labels."),
    ] = False,
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="Task of a new audit (default: inferred from the labels in the file; "
            "custom: the file's own labels).",
        ),
    ] = None,
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="csv, or label-studio (a Label Studio JSON export of tasks `amg audit export "
            "--format label-studio` wrote; one annotator per Label Studio user).",
        ),
    ] = "csv",
    include_screened: IncludeScreenedOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Import labels made elsewhere (CSV or Label Studio), or reference labels (CSV). From an
    open audit's export, rows of check items are skipped, and screened-out people's labels are
    left out unless --include-screened."""
    from ..annotate_app.labels import CUSTOM

    if task is not None and task != CUSTOM:
        _check_task(task, workspace)
    from ..annotate_app.interop import import_labels

    existed = _exists(workspace)
    with _new_ws(workspace) as ws:
        res = import_labels(
            ws,
            name,
            file,
            reference=reference,
            task=task,
            format=format_,
            include_screened=include_screened,
        )
    _say_if_new(workspace, existed)
    show(res)


@audit_app.command("export")
@handles_errors
def export(
    name: NameArg,
    out: out_option(
        "Output folder (default: WORKSPACE/audit-exports/NAME, and its label-studio "
        "folder for --format label-studio)."
    ) = None,
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="labels (the label log as CSV and JSONL, the items and the references) or "
            "label-studio "
            "(blind tasks and a labeling config for Label Studio).",
        ),
    ] = "labels",
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Write the audit's label log as CSV and JSONL (and its items and reference labels as CSV),
    or its items as Label Studio tasks."""
    from ..annotate_app.interop import export_audit

    if format_ == "label-studio":
        from ..annotate_app.label_studio import export_label_studio

        paths = export_label_studio(_ws(workspace), name, out)
    elif format_ in ("labels", "csv"):  # csv: as `audit import` names the files it reads back
        paths = export_audit(_ws(workspace), name, out)
    else:
        from ..errors import BadInput

        raise BadInput(f"Unknown format {format_!r}; choose labels or label-studio")
    for p in paths:
        typer.echo(str(p))


@audit_app.command("items")
@handles_errors
def items_(
    name: NameArg, json_: JsonOpt = False, workspace: WorkspaceOpt = DEFAULT_WORKSPACE
) -> None:
    """List an audit's items: id, kind, what is shown and its context."""
    from ..annotate_app.interop import audit_items

    res = audit_items(_ws(workspace), name)
    if json_:
        typer.echo(res.model_dump_json(indent=2))
        return
    show(res)


@audit_app.command("list")
@handles_errors
def list_(workspace: WorkspaceOpt = DEFAULT_WORKSPACE) -> None:
    """List audits with their progress per annotator."""
    from ..annotate_app.audits import list_audits

    audits = list_audits(_ws(workspace))
    if not audits:
        typer.echo("No audits yet (create one with `amg audit create`).")
    for a in audits:
        typer.echo(a.line())


@audit_app.command("relink")
@handles_errors
def relink(
    name: NameArg,
    person: Annotated[str, typer.Argument(help="Annotator or adjudicator name.")],
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Where annotators reach `amg annotate`; links are BASE_URL/?token=... "
            "Default: where the audit's links point (its --base-url); a new one "
            "is kept for later relinks.",
        ),
    ] = None,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Issue a new secret link for one person (their old link stops working; labels are kept)."""
    from ..annotate_app.audits import relink as do_relink

    typer.echo(do_relink(_ws(workspace), name, person, base_url))


@app.command("annotate")
@handles_errors
def annotate(
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
    port: PortOpt = 8501,
    host: host_option(
        "Address to listen on: 127.0.0.1 (this machine only), 0.0.0.0 (every "
        "interface, for a lab server) or one of this machine's addresses. Beyond "
        "this machine, links are secrets sent over plain HTTP unless the app is "
        "behind TLS."
    ) = "127.0.0.1",
) -> None:
    """Serve the labeling app (on 127.0.0.1 unless --host); annotators open their personal links."""
    from ..annotate_app.server import launch

    raise typer.Exit(launch(workspace, port, host))


@report_app.command("agreement")
@handles_errors
def agreement(
    name: NameArg,
    json_: JsonOpt = False,
    fast_seconds: FastSecondsOpt = 2.0,
    resamples: resamples_option(
        "Bootstrap resamples over items for the kappa, alpha and macro-F1 intervals (0: none)."
    ) = 2000,
    seed: seed_option("Bootstrap seed (reported).") = 0,
    html: HtmlOpt = False,
    include_screened: IncludeScreenedOpt = False,
    workspace: WorkspaceOpt = DEFAULT_WORKSPACE,
) -> None:
    """Human-human agreement and human-vs-reference accuracy for an audit (markdown + PNG)."""
    ws = _ws(workspace)
    from ..annotate_app.agreement import save_agreement_report

    report, path = save_agreement_report(
        ws,
        name,
        fast_seconds,
        resamples=resamples,
        seed=seed,
        html=html,
        include_screened=include_screened,
    )
    if json_:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(path.read_text(encoding="utf-8"))
    files = [path, path.with_name("report.json")] + (
        [path.with_name("report.html")] if html else []
    )
    typer.echo(f"wrote {', '.join(str(p) for p in files)} and {len(report.plots)} PNG(s)", err=True)
