"""The generated reference pages: the CLI (every command of the ``amg`` typer app with its usage,
help, arguments and options) and the workspace tables (every table the migrations create, with
its columns). Generated, so they cannot drift from the code.

Used as an MkDocs hook (``hooks:`` in ``mkdocs.yml``): the pages are added to the site at build
time. ``python docs/gen_reference.py cli|workspace`` prints one page.
"""

from __future__ import annotations

import logging
import sys

log = logging.getLogger("mkdocs.plugins.gen_reference")

CLI_PAGE = "reference/cli.md"
WORKSPACE_PAGE = "reference/workspace.md"
SLOTS_PAGE = "reference/slots.md"


# -- the CLI ---------------------------------------------------------------------------------------


def walk(cmd, path=()):
    """Every command under ``cmd`` with its path of names (typer vendors its own click)."""
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from walk(sub, path + (name,))


def root_command():
    from typer.main import get_command

    from agentmemgate.cli import app

    return get_command(app)


def _context(path, cmd, root):
    import typer._click as click  # typer >= 0.24 vendors click

    ctx = click.Context(root, info_name="amg")
    node = root
    for name in path:
        node = node.commands[name]
        ctx = click.Context(node, info_name=name, parent=ctx)
    return ctx


def _text(s: str, cell: bool = False) -> str:
    """Help text as Markdown: code spans kept, ``<``, ``>`` and ``*`` outside them escaped (and
    in a table cell, ``|``, which would end the cell)."""
    parts = s.split("`")
    for i in range(0, len(parts), 2):
        p = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        p = p.replace("*", r"\*")
        parts[i] = p.replace("|", r"\|") if cell else p
    return "`".join(parts)


def _code(s: str) -> str:
    """A code span in a table cell (a pipe inside it does not end the cell)."""
    return f"`{s}`"


def _cell(s: str) -> str:
    return _text(" ".join(s.split()), cell=True)


def render_cli() -> str:
    root = root_command()
    out = [
        "# CLI reference",
        "",
        "Every command of `amg`, generated from the program itself when the site is built: its "
        "usage line, what it does, its arguments and its options with their defaults. "
        "`amg COMMAND --help` prints the same. Exit status, every command: 0 all done; 2 finished "
        "with recorded failures (a re-run retries them); 1 could not run (one `Error:` line).",
        "",
    ]
    for path, cmd in walk(root):
        if getattr(cmd, "hidden", False):
            continue
        name = " ".join(("amg",) + path)
        depth = 2 if len(path) <= 1 else 3
        out += [f"{'#' * depth} {name}", ""]
        ctx = _context(path, cmd, root)
        if cmd.help:
            out += [_text(cmd.help.strip()), ""]
        out += ["```text", cmd.get_usage(ctx).strip(), "```", ""]
        subs = getattr(cmd, "commands", None) or {}
        if subs:
            out += ["| Command | What it does |", "|---|---|"]
            for sub_name, sub in subs.items():
                if getattr(sub, "hidden", False):
                    continue
                anchor = "-".join(("amg",) + path + (sub_name,))
                short = (
                    sub.get_short_help_str(limit=300) if hasattr(sub, "get_short_help_str") else ""
                )
                out.append(f"| [`{sub_name}`](#{anchor}) | {_cell(short)} |")
            out.append("")
        args = [p for p in cmd.params if p.param_type_name == "argument"]
        opts = [p for p in cmd.params if p.param_type_name == "option" and not p.hidden]
        if args:
            out += ["| Argument | Description |", "|---|---|"]
            for p in args:
                rec = p.get_help_record(ctx)
                out.append(
                    f"| {_code(rec[0] if rec else p.name)} | {_cell(rec[1] or '') if rec else ''} |"
                )
            out.append("")
        if opts:
            out += ["| Option | Description |", "|---|---|"]
            for p in opts:
                rec = p.get_help_record(ctx)
                if rec:
                    out.append(f"| {_code(rec[0])} | {_cell(rec[1] or '')} |")
            out.append("")
    return "\n".join(out)


# -- the workspace tables --------------------------------------------------------------------------

# What each table holds, as a user reading the workspace needs to know it. A table the migrations
# create without an entry here fails the docs build (strict), so a new table gets described.
TABLES = {
    "_migrations": "The migrations applied to this workspace, by name and time.",
    "specs": "The planned arcs: one row per arc id with its split, factor, level, outcome and the whole spec as JSON.",
    "arcs": "The rendered (or imported) arcs: the whole arc as JSON, with its generator.",
    "render_failures": "Arcs that could not be rendered, with the reason and the number of attempts; a re-run tries them again.",
    "checks": "Structural check results, one row per (arc, check), passed or not, with a detail line.",
    "runs": "Every command run on the workspace: its parameters, start and end, and status.",
    "audits": "Blind human audits: name, task, label set, source and parameters (frozen when the audit is created).",
    "audit_items": "The items of each audit as annotators see them (display payload only).",
    "audit_item_strata": "The strata each audit item was sampled from.",
    "audit_references": "Reference labels (design labels, model votes, judge verdicts); never served to an annotator's page.",
    "audit_annotators": "Annotators and adjudicators of each audit; only a hash of each secret link's token is kept.",
    "audit_assignments": "Which items each annotator labels, in which order.",
    "audit_labels": "The label log: append-only (the database refuses updates and deletes); the latest label per (annotator, item) counts.",
    "audit_participants": "The people who came to an open audit's study link: their platform id (and the platform's study and session ids), their plan of slots, when they were last seen, their status (working, done, screened out, full) and the code they were shown.",
    "audit_sessions": "One secret token per arrival at an open audit's study link (only its hash), so a person may work in several tabs.",
    "audit_checks": "The gold, attention and qualification items of an open audit and the label each expects; never served to an annotator's page.",
    "llm_cache": "The content-addressed cache of model answers: the request, the reply, tokens and latency. A call whose key is here is never sent again.",
    "llm_calls": "The call log: one row per attempt (model asked and model that answered, purpose, status, tokens, cost in USD or null when unknown, the command that made it, whether it went through a batch). Never an API key.",
    "llm_strategies": "The structured-output strategy that works for each (server, model), so the next run starts with it.",
    "llm_batches": "Batches submitted to a provider's batch API (`--batch`): provider id, state, counts and files.",
    "llm_batch_requests": "Every request of every batch, with its cache key, try and outcome.",
    "mine_sources": "Each mined corpus file: corpus, form, license, lexicon, counts and the stage-1 checkpoint.",
    "mined_candidates": "Stage-1 candidates: turns the prefilter flagged, with references to their context turns.",
    "mined_sessions": "The sessions of a mined source already scanned (a session recurring across questions is scanned once).",
    "mined_turns": "The mined candidates' own turns, compressed.",
    "mined_extractions": "Stage-2 results per (candidate, miner): kept or not, span, attribute, plan value, hedge level, outcome link.",
    "mined_failures": "Stage-2 calls that failed, with the reason; a re-run retries them.",
    "statement_sets": "Statement sets (sampled from mined corpora or imported) for validating the classifier.",
    "statements": "The statements of each set: text, context, speaker and date, reference label and its status (agreed, disputed).",
    "statement_votes": "Model votes on statements (voters and the relabelling family) under a fixed rubric.",
    "classifications": "Per-statement evidence-type distributions per classifier and run: probabilities, P(commit), the method (logprobs or votes) and the valid votes.",
    "judge_verdicts": "Validation judges' verdicts, one row per (task, item, criterion, judge): verdict, rationale, the options and their shuffle seed, or a recorded failure.",
    "validation_runs": "Each validation run: splits, checks, judges and whether same-family judging was allowed.",
    "equivalence_pairs": "(reference, candidate) value pairs built by `amg validate equivalence-pairs`.",
    "arc_imports": "Where each imported arc came from: file, line, the line's sha256 and the whole file's.",
    "eval_systems": "The systems evaluated, one row per run key (name, options, model, source hashes) with their provenance.",
    "eval_traces": "One trace per (system, arc): every read, extraction, match, classification, staging and store snapshot.",
    "eval_failures": "Evaluation failures per (system, arc) and stage; a re-run retries them.",
    "eval_scores": "Per-arc scores per (system, judge): every measure the arc counts in.",
    "eval_judges": "The equivalence and answer judges results were scored with.",
    "eval_answer_sets": "Black-box answer sets (`amg eval answers`) and where they came from.",
    "eval_answers": "The answers of each answer set, one per (arc, session), with the answer judge's verdict.",
    "eval_product_answers": "What an answering system (product, baseline, plug-in) retrieved and answered after each session, under which opaque namespace, and what its store held then (`store`: Mem0's memories, Graphiti's edges; NULL where no store is read).",
    "eval_runs": "Each `amg eval run`: parameters, systems, splits, judge and status.",
    "natural_sets": "Natural evaluation sets: corpus and form, license, source path and sha256, selection and field rules, counts.",
    "natural_items": "One row per natural question: conversation, question, gold answer, the field or why it was refused, and the whole item as compressed JSON.",
    "design": "The design the workspace was built from: its name, the sha256 of its file, and the design with every file it names.",
    "split_plans": "How each split was planned: design and its sha256, seed and `--n-per-cell`.",
}


def render_workspace() -> str:
    from agentmemgate._sqlite import sqlite_utils
    from agentmemgate.migrations import MIGRATIONS, apply

    db = sqlite_utils.Database(memory=True)
    apply(db)
    created: dict[str, str] = {"_migrations": "the migration runner itself"}
    altered: dict[str, list[str]] = {}
    trace = sqlite_utils.Database(memory=True)
    for fn in MIGRATIONS:
        before = {t: {c.name for c in trace[t].columns} for t in trace.table_names()}
        fn(trace)
        for t in trace.table_names():
            if t not in before:
                created[t] = fn.__name__
            elif {c.name for c in trace[t].columns} != before[t]:
                altered.setdefault(t, []).append(fn.__name__)
    out = [
        "# Workspace tables",
        "",
        "A workspace is a folder holding one SQLite database, `workspace.db` (WAL mode). Every "
        "result is stored there as it finishes, which is why an interrupted command resumes and a "
        "report can be made again without re-running anything. Open it with `sqlite3`, "
        "`sqlite-utils` or pandas (`pd.read_sql`); write to it only through `amg`.",
        "",
        "The schema grows by migrations: named steps that are only ever appended and each run "
        "once, in a transaction, the first time a newer toolkit opens the workspace. This page is "
        "generated from them: every table, what it holds, the migration that created it and its "
        "columns.",
        "",
    ]
    for t in sorted(
        db.table_names(), key=lambda t: list(created).index(t) if t in created else 999
    ):
        if t.startswith("sqlite_"):
            continue
        what = TABLES.get(t)
        if what is None:
            log.warning("workspace table %r has no description in docs/gen_reference.py TABLES", t)
            what = ""
        cols = ", ".join(f"`{c.name}` {c.type.lower() or 'any'}" for c in db[t].columns)
        by = created.get(t, "?")
        how = "created by " + (by if t == "_migrations" else f"`{by}`")
        if t in altered:
            how += "; columns added by " + ", ".join(f"`{m}`" for m in altered[t])
        out += [f"## `{t}`", "", _text(what), "", f"Columns: {cols}.", "", f"({how})", ""]
    return "\n".join(out)


# -- the phrase files' slots ----------------------------------------------------------------------


def render_slots() -> str:
    from agentmemgate.generate.slots import FILES, SLOTS

    out = [
        "# Phrase-file slots",
        "",
        "Every `{slot}` the offline renderer fills, by the phrase file that may use it. `amg "
        "design check` refuses a slot a file may not use and names the ones it may. `{Slot}`, "
        "with a capital first letter, is the same value capitalized. This page is generated "
        "from the renderer's own table (`agentmemgate/generate/slots.py`), so it cannot fall "
        "behind.",
        "",
        "A design adds slots of its own by declaring catalog keys (`[catalog_keys]` in "
        "`design.toml`, see [Designs](designs.md#catalog-keys-of-your-own)): each key gives "
        "`{slot}`, one of the domain's items drawn per arc, and `{you_slot}`, the same in the "
        "second person, to every file below but the session openers.",
        "",
    ]
    for file, what in FILES.items():
        out += [f"## `{file}`", "", _text(what), "", "| slot | what it holds |", "|---|---|"]
        out += [
            f"| `{{{s.name}}}` | {_cell(s.means)}"
            + (" (differs between domains)" if s.domain else "")
            + " |"
            for s in SLOTS
            if file in s.files
        ]
        out.append("")
    out += [
        "A reply sentence of more than six words needs a slot that differs between domains (or "
        "a design's own), so that no sentence repeats word for word across the dataset. A plan "
        "turn names the plan value (`{plan}`, `{switch_plan}`, `{switching_plan}` or "
        "`{switched_plan}`).",
        "",
    ]
    return "\n".join(out)


# -- the hook --------------------------------------------------------------------------------------


def on_files(files, config):
    from mkdocs.structure.files import File

    for page, render in (
        (CLI_PAGE, render_cli),
        (WORKSPACE_PAGE, render_workspace),
        (SLOTS_PAGE, render_slots),
    ):
        files.append(File.generated(config, page, content=render()))
    return files


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "cli"
    print({"cli": render_cli, "workspace": render_workspace, "slots": render_slots}[which]())
