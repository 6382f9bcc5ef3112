"""Workspace schema migrations: named functions, only ever appended, each run once in a transaction.

Never edit a migration that has shipped; add a new one below it.
"""

from __future__ import annotations

from typing import Callable

import sqlite_utils

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
        {"id": str, "split": str, "generator": str, "reason": str, "attempts": int, "created_at": str},
        pk="id",
    )
    db["checks"].create(
        {"arc_id": str, "check": str, "passed": int, "detail": str, "created_at": str},
        pk=("arc_id", "check"),
    )
    db["runs"].create(
        {"id": int, "command": str, "params": str, "started_at": str, "finished_at": str, "status": str},
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

    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@migration
def m002_audits(db: sqlite_utils.Database) -> None:
    """Blind human audits. Display payloads, hidden references and the label log are separate
    tables so the annotator page can be served by queries that never touch the hidden ones."""
    db["audits"].create(
        {"name": str, "task": str, "label_set": str, "source": str, "params": str, "created_at": str},
        pk="name",
    )
    db["audit_items"].create(
        {"audit": str, "item_id": str, "position": int, "payload": str}, pk=("audit", "item_id"),
    )
    db["audit_item_strata"].create(
        {"audit": str, "item_id": str, "strata": str}, pk=("audit", "item_id"),
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
        {"id": int, "audit": str, "item_id": str, "annotator": str, "role": str, "label": str,
         "rubric": str, "source": str, "shown_at": str, "created_at": str, "active_seconds": float},
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
        {"key": str, "family": str, "requested_model": str, "resolved_model": str, "purpose": str,
         "system": str, "prompt": str, "schema_name": str, "response_text": str,
         "logprobs_json": str, "input_tokens": int, "output_tokens": int, "cached_tokens": int,
         "latency_s": float, "created_at": str},
        pk="key",
    )
    db["llm_calls"].create(
        {"id": int, "created_at": str, "cache_key": str, "family": str, "requested_model": str,
         "resolved_model": str, "purpose": str, "attempt": int, "status": str, "http_status": int,
         "retry_after_s": float, "input_tokens": int, "output_tokens": int, "cached_tokens": int,
         "latency_s": float, "error": str},
        pk="id",
    )
    db["llm_calls"].create_index(["cache_key"])
