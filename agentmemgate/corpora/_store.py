"""How mined candidates sit in the workspace: small rows that refer to turns stored once.

A candidate used to carry its turn and two context turns as text; on LongMemEval_s that copied
most of the assistant's long answers into the workspace (about half the input size). Now each
needed turn is stored once per source in ``mined_turns``, zlib-compressed, and candidate rows
keep the keys (``context_refs``). Rows written before migration m009 have their texts inline in
``json`` and no ``context_refs``; they load unchanged.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

import sqlite_utils

from .model import Candidate, ContextTurn, Conversation
from .prefilter import turn_key

_LOOKUP = 500  # keys per SQL lookup (SQLite allows 999 parameters by default on old builds)


def _z(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 6)


def candidate_rows(key: str, conv: Conversation, cands: Sequence[Candidate],
                   first_position: int) -> tuple[list[dict], list[dict]]:
    """(candidate rows, turn rows) for one conversation's candidates."""
    rows, turns = [], {}
    for n, cand in enumerate(cands):
        ctx_keys = [turn_key(conv.corpus, conv.conversation_id, r) for r in cand.context_refs]
        turns[cand.id] = (cand.speaker, cand.turn_text)
        for k, t in zip(ctx_keys, cand.context):
            turns[k] = (t.speaker, t.text)
        slim = cand.model_copy(update={"turn_text": "", "context": []})
        rows.append({"source_key": key, "id": cand.id, "position": first_position + n,
                     "corpus": cand.corpus, "conversation_id": cand.conversation_id,
                     "source_ref": cand.source_ref, "speaker": cand.speaker, "date": cand.date,
                     "json": slim.model_dump_json(), "context_refs": json.dumps(ctx_keys)})
    turn_rows = [{"source_key": key, "key": k, "speaker": sp, "text_z": _z(text)}
                 for k, (sp, text) in turns.items()]
    return rows, turn_rows


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN ... COMMIT around raw statements. (sqlite-utils' table methods commit on their own,
    which would let a kill -9 separate candidates from the checkpoint that covers them.)"""
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict], verb: str) -> None:
    if rows:
        cols = list(rows[0])
        conn.executemany(f"{verb} into {table} ({', '.join(cols)}) values "
                         f"({', '.join('?' * len(cols))})", [[r[c] for c in cols] for r in rows])


def save(conn: sqlite3.Connection, rows: list[dict], turn_rows: list[dict]) -> None:
    """Store inside the caller's ``transaction`` (stage 1 commits them with its checkpoint)."""
    _insert(conn, "mined_turns", turn_rows, "insert or ignore")
    _insert(conn, "mined_candidates", rows, "insert or replace")


def save_sessions(conn: sqlite3.Connection, key: str, session_ids: Iterable[str]) -> None:
    _insert(conn, "mined_sessions", [{"source_key": key, "session_id": s} for s in session_ids],
            "insert or ignore")


def checkpoint(conn: sqlite3.Connection, key: str, values: dict) -> None:
    conn.execute(f"update mine_sources set {', '.join(f'{k} = ?' for k in values)} "
                 "where source_key = ?", [*values.values(), key])


def load(db: sqlite_utils.Database, key: str,
         rows: Iterable[tuple[str, str | None]]) -> list[Candidate]:
    """Candidates from ``(json, context_refs)`` rows, texts filled in from ``mined_turns``."""
    rows = list(rows)
    wanted: set[str] = set()
    parsed = []
    for raw, refs in rows:
        cand = Candidate.model_validate_json(raw)
        ctx = json.loads(refs) if refs is not None else None
        if ctx is not None:
            wanted.add(cand.id)
            wanted.update(ctx)
        parsed.append((cand, ctx))
    texts = _texts(db, key, sorted(wanted))
    out = []
    for cand, ctx in parsed:
        if ctx is not None:  # m009 storage; None = a row with its texts inline (older workspace)
            cand.turn_text = texts[cand.id][1]
            cand.context = [ContextTurn(speaker=texts[k][0], text=texts[k][1]) for k in ctx]
        out.append(cand)
    return out


def _texts(db: sqlite_utils.Database, key: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for i in range(0, len(keys), _LOOKUP):
        chunk = keys[i:i + _LOOKUP]
        sql = (f"select key, speaker, text_z from mined_turns where source_key = ? and key in "
               f"({','.join('?' * len(chunk))})")
        for k, speaker, blob in db.execute(sql, [key, *chunk]):
            out[k] = (speaker, zlib.decompress(blob).decode("utf-8"))
    return out


def forget(db: sqlite_utils.Database, key: str) -> None:
    """Drop a source's stage-1 results (a new lexicon starts stage 1 over)."""
    for table in ("mined_candidates", "mined_turns", "mined_sessions"):
        db[table].delete_where("source_key = ?", [key])
