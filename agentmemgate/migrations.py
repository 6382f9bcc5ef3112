"""Workspace schema migrations: named functions, only ever appended, each run once in a transaction.

Never edit a migration that has shipped; add a new one below it.

Order is the order of this file, not of the numbers. A number is a label fixed when its migration
was written; work written in parallel reserved numbers ahead, so some were never used (m008, m011,
m013, m015, m017) and one landed out of order (m018 runs before m016). A new migration takes the
next number above the highest in use and goes at the end.

Never rename or renumber a migration, even to tidy the numbers: ``apply`` records each one by its
function name in ``_migrations``, so a workspace that ran it under the old name would run it again
under the new one, against tables it already has.
"""

from __future__ import annotations

from collections.abc import Callable

from ._sqlite import sqlite_utils

MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = []


def migration(fn: Callable[[sqlite_utils.Database], None]):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_arcs(db: sqlite_utils.Database) -> None:
    db["specs"].create(
        {"id": str, "split": str, "factor": str, "level": str, "outcome": str, "json": str},
        pk="id",
    )
    db["arcs"].create(
        {"id": str, "split": str, "generator": str, "json": str, "created_at": str},
        pk="id",
    )
    db["arcs"].create_index(["split"])
    db["render_failures"].create(
        {
            "id": str,
            "split": str,
            "generator": str,
            "reason": str,
            "attempts": int,
            "created_at": str,
        },
        pk="id",
    )
    db["checks"].create(
        {"arc_id": str, "check": str, "passed": int, "detail": str, "created_at": str},
        pk=("arc_id", "check"),
    )
    db["runs"].create(
        {
            "id": int,
            "command": str,
            "params": str,
            "started_at": str,
            "finished_at": str,
            "status": str,
        },
        pk="id",
    )


def apply(db: sqlite_utils.Database) -> list[str]:
    """Run every migration not yet recorded; return the names applied now."""
    db["_migrations"].create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
    done = {r["name"] for r in db["_migrations"].rows}
    applied = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        with db.conn:
            fn(db)
            db["_migrations"].insert({"name": fn.__name__, "applied_at": _now()})
        applied.append(fn.__name__)
    return applied


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@migration
def m002_audits(db: sqlite_utils.Database) -> None:
    """Blind human audits. Display payloads, hidden references and the label log are separate
    tables so the annotator page can be served by queries that never touch the hidden ones."""
    db["audits"].create(
        {
            "name": str,
            "task": str,
            "label_set": str,
            "source": str,
            "params": str,
            "created_at": str,
        },
        pk="name",
    )
    db["audit_items"].create(
        {"audit": str, "item_id": str, "position": int, "payload": str},
        pk=("audit", "item_id"),
    )
    db["audit_item_strata"].create(
        {"audit": str, "item_id": str, "strata": str},
        pk=("audit", "item_id"),
    )
    db["audit_references"].create(
        {"audit": str, "item_id": str, "label": str, "source": str, "created_at": str},
        pk=("audit", "item_id"),
    )
    db["audit_annotators"].create(
        {"audit": str, "name": str, "role": str, "token_hash": str, "created_at": str},
        pk=("audit", "name"),
    )
    db["audit_annotators"].create_index(["token_hash"], unique=True)
    db["audit_assignments"].create(
        {"audit": str, "annotator": str, "item_id": str, "position": int},
        pk=("audit", "annotator", "item_id"),
    )
    db["audit_labels"].create(
        {
            "id": int,
            "audit": str,
            "item_id": str,
            "annotator": str,
            "role": str,
            "label": str,
            "rubric": str,
            "source": str,
            "shown_at": str,
            "created_at": str,
            "active_seconds": float,
        },
        pk="id",
    )
    db["audit_labels"].create_index(["audit", "annotator", "item_id"])
    for op in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER audit_labels_append_only_{op.lower()} BEFORE {op} ON audit_labels "
            "BEGIN SELECT RAISE(ABORT, 'audit_labels is append-only'); END"
        )


@migration
def m003_llm_calls(db: sqlite_utils.Database) -> None:
    """The LLM layer's content-addressed response cache and its per-attempt call log (no keys)."""
    db["llm_cache"].create(
        {
            "key": str,
            "family": str,
            "requested_model": str,
            "resolved_model": str,
            "purpose": str,
            "system": str,
            "prompt": str,
            "schema_name": str,
            "response_text": str,
            "logprobs_json": str,
            "input_tokens": int,
            "output_tokens": int,
            "cached_tokens": int,
            "latency_s": float,
            "created_at": str,
        },
        pk="key",
    )
    db["llm_calls"].create(
        {
            "id": int,
            "created_at": str,
            "cache_key": str,
            "family": str,
            "requested_model": str,
            "resolved_model": str,
            "purpose": str,
            "attempt": int,
            "status": str,
            "http_status": int,
            "retry_after_s": float,
            "input_tokens": int,
            "output_tokens": int,
            "cached_tokens": int,
            "latency_s": float,
            "error": str,
        },
        pk="id",
    )
    db["llm_calls"].create_index(["cache_key"])


@migration
def m004_corpora_statements(db: sqlite_utils.Database) -> None:
    """Mined hedges (stage 1 per source, stage 2 per miner), statement sets, their model votes and
    classifier distributions. Results are stored as each finishes, so interrupted runs resume."""
    db["mine_sources"].create(
        {
            "source_key": str,
            "path": str,
            "corpus": str,
            "variant": str,
            "license": str,
            "lexicon": str,
            "conversations": int,
            "duplicate_sessions": int,
            "turns_scanned": int,
            "sentences_scanned": int,
            "stage1_done": int,
            "created_at": str,
        },
        pk="source_key",
    )
    db["mined_candidates"].create(
        {
            "source_key": str,
            "id": str,
            "position": int,
            "corpus": str,
            "conversation_id": str,
            "source_ref": str,
            "speaker": str,
            "date": str,
            "json": str,
        },
        pk=("source_key", "id"),
    )
    db["mined_extractions"].create(
        {
            "source_key": str,
            "candidate_id": str,
            "miner": str,
            "kept": int,
            "text": str,
            "attribute": str,
            "plan_value": str,
            "hedge_level": str,
            "reject_reason": str,
            "llm_calls": int,
            "cached_calls": int,
            "outcome": str,
            "outcome_ref": str,
            "outcome_evidence": str,
            "created_at": str,
        },
        pk=("source_key", "candidate_id", "miner"),
    )
    db["statement_sets"].create(
        {"name": str, "origin": str, "params": str, "created_at": str},
        pk="name",
    )
    db["statements"].create(
        {
            "set_name": str,
            "id": str,
            "position": int,
            "text": str,
            "context": str,
            "reference": str,
            "reference_status": str,
            "relabel": str,
            "stratum": str,
            "corpus": str,
            "license": str,
            "origin": str,
        },
        pk=("set_name", "id"),
    )
    db["statement_votes"].create(
        {
            "set_name": str,
            "statement_id": str,
            "role": str,
            "voter": str,
            "family": str,
            "vote": int,
            "label": str,
            "rubric": str,
            "created_at": str,
        },
        pk=("set_name", "statement_id", "role", "voter", "vote"),
    )
    db["classifications"].create(
        {
            "set_name": str,
            "statement_id": str,
            "classifier": str,
            "run": int,
            "probs": str,
            "p_commit": float,
            "predicted": str,
            "method": str,
            "rubric": str,
            "rubric_sha256": str,
            "created_at": str,
        },
        pk=("set_name", "statement_id", "classifier", "run"),
    )


@migration
def m005_judge_verdicts(db: sqlite_utils.Database) -> None:
    """Validation judges: one row per (task, item, criterion, judge) -- a verdict or a recorded
    judge failure -- beside the hidden intended level (never sent to a judge); the runs that name
    which judges a report covers; and equivalence value pairs."""
    db["judge_verdicts"].create(
        {
            "task": str,
            "item_id": str,
            "criterion": str,
            "judge": str,
            "family": str,
            "heuristic": int,
            "same_family": int,
            "split": str,
            "factor": str,
            "intended": str,
            "verdict": str,
            "confidence": float,
            "rationale": str,
            "status": str,
            "error": str,
            "options": str,
            "option_seed": int,
            "rubric": str,
            "rubric_sha256": str,
            "item_sha256": str,
            "input_sha256": str,
            "run_id": int,
            "created_at": str,
        },
        pk=("task", "item_id", "criterion", "judge"),
    )
    db["judge_verdicts"].create_index(["judge", "task"])
    db["validation_runs"].create(
        {
            "id": int,
            "kind": str,
            "splits": str,
            "checks": str,
            "judges": str,
            "allow_same_family": int,
            "generator_families": str,
            "params": str,
            "created_at": str,
        },
        pk="id",
    )
    db["equivalence_pairs"].create(
        {
            "pair_set": str,
            "id": str,
            "position": int,
            "field": str,
            "description": str,
            "reference": str,
            "candidate": str,
            "kind": str,
            "borderline": int,
            "expected": str,
            "arc_id": str,
            "split": str,
        },
        pk=("pair_set", "id"),
    )


@migration
def m006_statement_speaker(db: sqlite_utils.Database) -> None:
    """Who made each statement and when (shown in evidence-type audits of statement sets)."""
    db["statements"].add_column("speaker", str)
    db["statements"].add_column("date", str)


@migration
def m007_llm_strategies(db: sqlite_utils.Database) -> None:
    """Structured output on any server: the strategy that works per (endpoint, model), the
    strategy each cached answer, call and structured result (verdict, stage-2 extraction) used, a
    note per call-log row (re-asks, strategy moves), stage-2 failures with their reasons, and how
    many valid votes stand behind each classifier distribution (classifier answers are one plain
    word, read from the text or its first token's logprobs: no structured-output strategy)."""
    db["llm_strategies"].create(
        {"endpoint": str, "model": str, "strategy": str, "reason": str, "updated_at": str},
        pk=("endpoint", "model"),
    )
    db["llm_cache"].add_column("strategy", str)
    db["llm_calls"].add_column("strategy", str)
    db["llm_calls"].add_column("note", str)
    db["judge_verdicts"].add_column("strategy", str)
    db["classifications"].add_column("valid_votes", int)
    db["mined_extractions"].add_column("strategy", str)
    db["mined_failures"].create(
        {
            "source_key": str,
            "candidate_id": str,
            "miner": str,
            "kind": str,
            "error": str,
            "created_at": str,
        },
        pk=("source_key", "candidate_id", "miner"),
    )


@migration
def m009_miner_checkpoints_and_turns(db: sqlite_utils.Database) -> None:
    """Mining at LongMemEval_s scale: a stage-1 checkpoint per source (instances done, so a killed
    run resumes there), the session ids already scanned (LongMemEval repeats sessions across
    questions), candidates' own turn texts (stored once, compressed; context turns become
    references read back from the source file), and which offline rules answered stage 2.
    Rows written before this migration keep their full JSON and still load."""
    db["mine_sources"].add_column("stage1_items", int)
    db["mine_sources"].add_column("stage1_bytes", int)
    db["mine_sources"].add_column("offline_rules", str)
    db["mined_candidates"].add_column("context_refs", str)
    # WITHOUT ROWID: the key is the table, not a second index beside it (half the key bytes)
    db.execute(
        "CREATE TABLE mined_sessions (source_key TEXT, session_id TEXT, "
        "PRIMARY KEY (source_key, session_id)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE mined_turns (source_key TEXT, key TEXT, speaker TEXT, text_z BLOB, "
        "PRIMARY KEY (source_key, key)) WITHOUT ROWID"
    )


@migration
def m010_arc_imports(db: sqlite_utils.Database) -> None:
    """Where imported arcs came from (``amg import``): file, line and the line's sha256."""
    db["arc_imports"].create(
        {"arc_id": str, "source": str, "line": int, "sha256": str, "imported_at": str},
        pk="arc_id",
    )


@migration
def m012_eval(db: sqlite_utils.Database) -> None:
    """Evaluation (``amg eval``): the systems run (one row per run key: name + options + model +
    component hashes), one trace per (system run key, arc) stored as it finishes, failures a re-run
    retries, per-arc scores per judge, the judges used, black-box answer sets, and eval runs."""
    db["eval_systems"].create(
        {
            "run_key": str,
            "name": str,
            "info": str,
            "options": str,
            "model": str,
            "source_sha256": str,
            "created_at": str,
            "last_run_at": str,
        },
        pk="run_key",
    )
    db["eval_systems"].create_index(["name"])
    db["eval_traces"].create(
        {
            "run_key": str,
            "arc_id": str,
            "system": str,
            "split": str,
            "arc_sha256": str,
            "trace": str,
            "calls": int,
            "user_messages": int,
            "created_at": str,
        },
        pk=("run_key", "arc_id"),
    )
    db["eval_failures"].create(
        {
            "run_key": str,
            "arc_id": str,
            "system": str,
            "stage": str,
            "error": str,
            "created_at": str,
        },
        pk=("run_key", "arc_id"),
    )
    db["eval_scores"].create(
        {
            "run_key": str,
            "arc_id": str,
            "judge_key": str,
            "system": str,
            "split": str,
            "level": str,
            "arc_sha256": str,
            "score": str,
            "created_at": str,
        },
        pk=("run_key", "arc_id", "judge_key"),
    )
    db["eval_scores"].create_index(["judge_key", "system"])
    db["eval_judges"].create(
        {
            "judge_key": str,
            "kind": str,
            "spec": str,
            "family": str,
            "heuristic": int,
            "rubric": str,
            "rubric_sha256": str,
            "answer_rubric": str,
            "created_at": str,
            "last_used_at": str,
        },
        pk="judge_key",
    )
    db["eval_answer_sets"].create(
        {
            "name": str,
            "run_key": str,
            "path": str,
            "sha256": str,
            "arcs": int,
            "lines": int,
            "created_at": str,
        },
        pk="name",
    )
    db["eval_answers"].create(
        {"name": str, "arc_id": str, "after_session": int, "answer": str, "verdict": str},
        pk=("name", "arc_id", "after_session"),
    )
    db["eval_runs"].create(
        {
            "id": int,
            "params": str,
            "systems": str,
            "splits": str,
            "judge_key": str,
            "started_at": str,
            "finished_at": str,
            "status": str,
        },
        pk="id",
    )


@migration
def m014_product_answers(db: sqlite_utils.Database) -> None:
    """Answering systems run by ``amg eval run`` (products, baselines, plug-ins): which
    ``eval_systems`` rows are answering systems (``kind``; NULL = component), which answer sets
    came from a run rather than an uploaded file (``kind``: ``system``; NULL = file), and per
    (run key, arc, session) what the system retrieved and answered (stored when its arc finishes),
    with the opaque namespace it ran under."""
    db["eval_systems"].add_column("kind", str)
    db["eval_answer_sets"].add_column("kind", str)
    db["eval_product_answers"].create(
        {
            "run_key": str,
            "arc_id": str,
            "after_session": int,
            "system": str,
            "arc_sha256": str,
            "namespace": str,
            "date": str,
            "answer": str,
            "retrieved": str,
            "calls": int,
            "created_at": str,
        },
        pk=("run_key", "arc_id", "after_session"),
    )


@migration
def m018_call_costs(db: sqlite_utils.Database) -> None:
    """The call log keeps what each call cost (USD; null when the model has no known price, never
    0 for unknown) and the command that made it (``amg usage`` sums by command)."""
    db["llm_calls"].add_column("cost_usd", float)
    db["llm_calls"].add_column("command", str)


@migration
def m016_natural_sets(db: sqlite_utils.Database) -> None:
    """Natural evaluation sets (``amg natural build``): one row per set (corpus, license, source
    path and sha256, selection and field rules, counts: JSON in ``info``) and one per selected
    question, its whole item (sessions, question, gold, evidence, field) zlib-compressed JSON."""
    db["natural_sets"].create(
        {"name": str, "corpus": str, "info": str, "created_at": str}, pk="name"
    )
    db.execute(
        "CREATE TABLE natural_items (set_name TEXT, item_id TEXT, position INTEGER, "
        "conversation_id TEXT, question TEXT, gold_answer TEXT, field TEXT, "
        "field_refused TEXT, turns INTEGER, sha256 TEXT, item_z BLOB, "
        "PRIMARY KEY (set_name, item_id))"
    )


@migration
def m019_batches(db: sqlite_utils.Database) -> None:
    """Provider batch APIs (``--batch``): every batch submitted (its provider id, state and
    counts, so a re-run picks it up instead of submitting again), every request in it (custom id,
    cache key, try, the body as sent, and what came back: the raw reply, or why it failed), and a
    ``batch`` flag on the call log so batch prices (half the live price) can be applied."""
    db["llm_batches"].create(
        {
            "id": str,
            "provider": str,
            "model": str,
            "family": str,
            "endpoint": str,
            "state": str,
            "ended": int,
            "request_count": int,
            "counts": str,
            "input_file_id": str,
            "output_file_id": str,
            "error_file_id": str,
            "error": str,
            "created_at": str,
            "updated_at": str,
            "collected_at": str,
        },
        pk="id",
    )
    db["llm_batch_requests"].create(
        {
            "batch_id": str,
            "custom_id": str,
            "cache_key": str,
            "purpose": str,
            "try": int,
            "request_json": str,
            "status": str,
            "http_status": int,
            "error": str,
            "raw_json": str,
            "created_at": str,
            "updated_at": str,
        },
        pk=("batch_id", "custom_id"),
    )
    db["llm_batch_requests"].create_index(["cache_key"])
    db["llm_calls"].add_column("batch", int)


@migration
def m020_designs(db: sqlite_utils.Database) -> None:
    """The design a workspace was built from (``design``: its name, the sha256 of its file, and
    every file it was read with, so later commands read the same design even when its folder has
    changed), and how each split was last planned (``split_plans``: seed, ``--n-per-cell``, the
    design's sha256), which the manifest and the dataset card record."""
    db["design"].create(
        {"id": int, "name": str, "sha256": str, "bundle": str, "stored_at": str}, pk="id"
    )
    db["split_plans"].create(
        {
            "split": str,
            "design": str,
            "design_sha256": str,
            "seed": int,
            "n_per_cell": int,
            "planned_at": str,
        },
        pk="split",
    )


@migration
def m021_import_file_sha256(db: sqlite_utils.Database) -> None:
    """The sha256 of the whole file each imported arc came from (``arc_imports`` kept only its
    line's), which the manifest and the dataset card record."""
    db["arc_imports"].add_column("source_sha256", str)


@migration
def m022_audit_base_url(db: sqlite_utils.Database) -> None:
    """Where an audit's annotators reach ``amg annotate`` (``--base-url``, as its links name it),
    so ``amg audit relink`` issues a link to the same place; NULL for audits made before, and for
    audits imported from a file (no links)."""
    db["audits"].add_column("base_url", str)


@migration
def m023_product_store_snapshots(db: sqlite_utils.Database) -> None:
    """What an answering system's store held after each session (``AnsweringSystem.
    store_snapshot``: Mem0's memories, Graphiti's edges with their validity), JSON beside what it
    retrieved and answered; NULL where the system has no store to read, and for runs before."""
    db["eval_product_answers"].add_column("store", str)


@migration
def m024_open_audits(db: sqlite_utils.Database) -> None:
    """Open audits, where items are assigned as people arrive at one study link.

    ``audits.study_token_hash``: the hash of an open audit's study token (NULL for a fixed roster).
    ``audit_participants``: each person who arrived, with their platform id (and the platform's
    study and session ids), their plan of slots, when they were last seen (idle holds go back to
    the pool), their status and the code they were shown. ``audit_sessions``: one secret token
    per arrival, so a person may have several tabs. ``audit_checks``: the gold, attention and
    qualification items with the label they expect, kept apart from the display payloads as
    references are. ``audit_assignments`` gains when an item was assigned and how long choosing
    it took."""
    db["audits"].add_column("study_token_hash", str)
    db["audits"].create_index(["study_token_hash"], unique=True)
    db["audit_participants"].create(
        {
            "audit": str,
            "name": str,
            "platform_id": str,
            "study_id": str,
            "session_id": str,
            "plan": str,
            "arrived_at": str,
            "last_seen_at": str,
            "status": str,
            "status_at": str,
            "code": str,
            "reason": str,
        },
        pk=("audit", "name"),
    )
    db["audit_participants"].create_index(["audit", "platform_id"], unique=True)
    db["audit_sessions"].create(
        {"token_hash": str, "audit": str, "name": str, "created_at": str}, pk="token_hash"
    )
    db["audit_checks"].create(
        {"audit": str, "item_id": str, "kind": str, "label": str}, pk=("audit", "item_id")
    )
    db["audit_assignments"].add_column("assigned_at", str)
    db["audit_assignments"].add_column("assign_ms", float)
    db["audit_assignments"].create_index(["audit", "item_id"])
    db["audit_labels"].create_index(["audit", "item_id"])
