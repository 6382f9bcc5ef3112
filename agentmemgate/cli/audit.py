"""``amg audit ...``, ``amg annotate`` and ``amg report agreement``: blind human audits."""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

import typer

from ._app import app, handles_errors, load_rooms, report_app

audit_app = typer.Typer(help="Blind human audits: create, import, export, list, relink.",
                        no_args_is_help=True)
app.add_typer(audit_app, name="audit")

WORKSPACE = typer.Option(Path("amg-workspace"), "--workspace", help="Workspace folder.")
BASE_URL = typer.Option("http://127.0.0.1:8501", "--base-url",
                        help="Where annotators reach `amg annotate`; links are BASE_URL/?token=...")


def _ws(path: Path):
    """An existing workspace (only ``audit create`` and ``audit import`` may make one)."""
    from ..workspace import Workspace

    return Workspace(path, create=False)


def _new_ws(path: Path):
    from ..workspace import open_workspace

    return open_workspace(path, create=True)


def _check_task(task: str, workspace: Path) -> None:
    """Refuse a mistyped task, or a factor the workspace's design lacks, before a workspace is
    made."""
    from ..annotate_app.labels import parse_task
    from ..design.stored import design_for

    if parse_task(task)[1] is not None:
        parse_task(task, design_for(workspace))


@audit_app.command("create")
@handles_errors
def create(
    name: str = typer.Argument(..., help="Audit name (letters, digits, '.', '_', '-')."),
    task: str = typer.Option(..., "--task", help="evidence_type, equivalence, realism, "
                             "answer_assertion or difficulty[:FACTOR] (FACTOR: a factor of "
                             "the workspace's design, e.g. difficulty:hedge_strength)."),
    source: str = typer.Option(..., "--from", help="Item source: arcs, arcs:SPLIT (a split of the "
                               "workspace's design), a registered "
                               "PREFIX:ARG (statements:SET, equivalence:NAME, answers:SYSTEM) or a "
                               "JSONL file."),
    sample: Optional[int] = typer.Option(None, "--sample", help="Freeze N items (default: all)."),
    stratify_by: Optional[str] = typer.Option(None, "--stratify-by",
                                              help="Spread the sample evenly over this item field "
                                                   "(e.g. reference, level, split, turn; "
                                                   "answer_assertion: verdict by default)."),
    annotators: str = typer.Option("annotator", "--annotators",
                                   help="Comma-separated annotator names; each gets a link."),
    overlap: Optional[int] = typer.Option(None, "--overlap",
                                          help="Annotators per item (default: all of them)."),
    seed: int = typer.Option(0, "--seed", help="Seed for sampling, assignment and queue order."),
    adjudicator: Optional[str] = typer.Option(None, "--adjudicator",
                                              help="Name of the adjudicator (not an annotator); "
                                                   "gets an adjudication link."),
    base_url: str = BASE_URL,
    workspace: Path = WORKSPACE,
) -> None:
    """Freeze a set of items as an audit, assign them and print each person's secret link."""
    _check_task(task, workspace)
    from ..annotate_app.audits import create_audit

    load_rooms()  # the answers:SYSTEM source

    with _new_ws(workspace) as ws:
        res = create_audit(ws, name, task, source, sample_n=sample, stratify_by=stratify_by,
                           annotators=annotators.split(","), overlap=overlap, seed=seed,
                           adjudicator=adjudicator, base_url=base_url)
    typer.echo(f"Audit {res.name!r}: {res.n_items} {res.task} items, {res.n_references} with a "
               f"reference label (hidden from annotators).")
    for note in res.notes:
        typer.echo(note)
    typer.echo("Personal links (secret; shown once; `amg audit relink` issues a new one):")
    for person, url in res.links.items():
        typer.echo(f"  {person} ({res.assignments[person]} items): {url}")
    if res.adjudicator:
        typer.echo(f"  {res.adjudicator} (adjudicator): {res.adjudicator_link}")
    from ..annotate_app.server import is_loopback

    url = urlsplit(base_url)  # plain http to another machine: serve beyond 127.0.0.1 (https: a proxy)
    lab = url.scheme == "http" and url.hostname and not is_loopback(url.hostname)
    typer.echo(f"Serve them with: amg annotate --workspace {workspace}"
               + (" --host 0.0.0.0" if lab else "")
               + (f" --port {url.port}" if url.port and url.port != 8501 else ""))


@audit_app.command("import")
@handles_errors
def import_(
    name: str = typer.Argument(..., help="Audit name; created if it does not exist."),
    file: Path = typer.Argument(..., help="CSV, long format: item_id,annotator,label[,role] "
                                "(as `amg audit export` writes it; with --reference: "
                                "item_id,label[,source])."),
    reference: bool = typer.Option(False, "--reference",
                                   help="Import reference labels instead of annotator labels."),
    task: Optional[str] = typer.Option(None, "--task", help="Task of a new audit (default: inferred "
                                       "from the labels in the file)."),
    workspace: Path = WORKSPACE,
) -> None:
    """Import labels made elsewhere, or reference labels, from a CSV file."""
    if task is not None:
        _check_task(task, workspace)
    from ..annotate_app.audits import import_labels

    with _new_ws(workspace) as ws:
        res = import_labels(ws, name, file, reference=reference, task=task)
    what = ("reference labels" if res.reference else " and ".join(
        x for x in (f"labels by {', '.join(res.annotators)}" if res.annotators else "",
                    f"resolutions by {', '.join(res.adjudicators)}" if res.adjudicators else "") if x))
    typer.echo(f"{'Created' if res.created else 'Updated'} {res.task} audit {res.audit!r}: "
               f"{res.n_rows} {what} for {res.n_items} items.")


@audit_app.command("export")
@handles_errors
def export(
    name: str = typer.Argument(..., help="Audit name."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default: "
                                       "WORKSPACE/audit-exports/NAME)."),
    workspace: Path = WORKSPACE,
) -> None:
    """Write the audit's label log as CSV and JSONL (and its reference labels as CSV)."""
    from ..annotate_app.audits import export_audit

    for p in export_audit(_ws(workspace), name, out):
        typer.echo(str(p))


@audit_app.command("list")
@handles_errors
def list_(workspace: Path = WORKSPACE) -> None:
    """List audits with their progress per annotator."""
    from ..annotate_app.audits import list_audits

    audits = list_audits(_ws(workspace))
    if not audits:
        typer.echo("No audits yet (create one with `amg audit create`).")
    for a in audits:
        people = ", ".join(f"{k} {v}" for k, v in a.annotators.items()) or "no annotators"
        typer.echo(f"{a.name}\t{a.task}\t{a.n_items} items\t{a.n_references} references\t"
                   f"{a.n_labels} labels logged\t{people}\tfrom {a.source}")


@audit_app.command("relink")
@handles_errors
def relink(
    name: str = typer.Argument(..., help="Audit name."),
    person: str = typer.Argument(..., help="Annotator or adjudicator name."),
    base_url: str = BASE_URL,
    workspace: Path = WORKSPACE,
) -> None:
    """Issue a new secret link for one person (their old link stops working; labels are kept)."""
    from ..annotate_app.audits import relink as do_relink

    typer.echo(do_relink(_ws(workspace), name, person, base_url))


@app.command("annotate")
@handles_errors
def annotate(
    workspace: Path = WORKSPACE,
    port: int = typer.Option(8501, "--port", help="Port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to listen on: 127.0.0.1 (this machine only), 0.0.0.0 "
                                  "(every interface, for a lab server) or one of this machine's "
                                  "addresses. Beyond this machine, links are secrets sent over "
                                  "plain HTTP unless the app is behind TLS."),
) -> None:
    """Serve the labeling app (on 127.0.0.1 unless --host); annotators open their personal links."""
    from ..annotate_app.server import launch

    raise typer.Exit(launch(workspace, port, host))


@report_app.command("agreement")
@handles_errors
def agreement(
    name: str = typer.Argument(..., help="Audit name."),
    json_: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    fast_seconds: float = typer.Option(2.0, "--fast-seconds", min=0.0,
                                       help="Flag decisions made faster than this many seconds."),
    resamples: int = typer.Option(2000, "--resamples", min=0,
                                  help="Bootstrap resamples over items for the kappa, alpha and "
                                       "macro-F1 intervals (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed (reported)."),
    workspace: Path = WORKSPACE,
) -> None:
    """Human-human agreement and human-vs-reference accuracy for an audit (markdown + PNG)."""
    ws = _ws(workspace)
    from ..annotate_app.agreement import save_agreement_report

    report, path = save_agreement_report(ws, name, fast_seconds, resamples=resamples, seed=seed)
    if json_:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(path.read_text(encoding="utf-8"))
    typer.echo(f"wrote {path}, {path.with_name('report.json')} and {len(report.plots)} PNG(s)",
               err=True)
