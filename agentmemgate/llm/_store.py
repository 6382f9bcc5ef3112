"""The cache and call log tables, on a connection of the LLM layer's own.

Worker threads write here while the main thread stores arcs through the workspace's connection;
a separate connection (WAL, busy timeout) keeps the two transactions apart, and a lock keeps this
connection's statements from interleaving across threads. ``synchronous=NORMAL`` (safe in WAL
mode) keeps commits durable across a killed process; only an OS crash could lose the last few.
Plain SQL rather than sqlite-utils' insert helpers: these run once per call on the hot path.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from .._sqlite import sqlite_utils
from ..workspace import DB_NAME, Workspace, now

CACHE_VERSION = 1  # part of every cache key: raising it makes every cached answer unreachable


class CallStore:
    def __init__(self, workspace: Workspace):
        conn = sqlite3.connect(workspace.path / DB_NAME, timeout=30, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA synchronous = NORMAL")
        self.db = sqlite_utils.Database(conn)
        self._lock = threading.Lock()
        self._cols = {t: [c.name for c in self.db[t].columns] for t in ("llm_cache", "llm_calls")}

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            cur = self.db.execute("select * from llm_cache where key = ?", [key])
            row = cur.fetchone()
            return None if row is None else dict(zip([d[0] for d in cur.description], row))

    def has(self, key: str) -> bool:
        with self._lock:
            return (
                self.db.execute("select 1 from llm_cache where key = ?", [key]).fetchone()
                is not None
            )

    def _insert(self, table: str, rows: list[dict[str, Any]], verb: str = "insert") -> None:
        cols = [c for c in self._cols[table] if c != "id"]
        stamp = now()
        sql = f"{verb} into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})"
        with self._lock, self.db.conn:
            self.db.conn.executemany(
                sql, [[{**r, "created_at": stamp}.get(c) for c in cols] for r in rows]
            )

    def put(self, row: dict[str, Any]) -> None:
        self._insert("llm_cache", [row], verb="insert or replace")

    def log(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._insert("llm_calls", rows)

    def strategy(self, endpoint: str, model: str) -> str | None:
        """The structured-output strategy remembered for this server and model, if any."""
        with self._lock:
            row = self.db.execute(
                "select strategy from llm_strategies where endpoint = ? and model = ?",
                [endpoint, model],
            ).fetchone()
        return row[0] if row else None

    def remember(self, endpoint: str, model: str, strategy: str, reason: str) -> None:
        with self._lock, self.db.conn:
            self.db.conn.execute(
                "insert or replace into llm_strategies (endpoint, model, strategy, reason, "
                "updated_at) values (?, ?, ?, ?, ?)",
                [endpoint, model, strategy, reason, now()],
            )

    def batched_through(self, endpoint: str) -> bool:
        """Whether a batch was submitted to this server from this workspace."""
        with self._lock:
            return (
                self.db.execute(
                    "select 1 from llm_batches where endpoint = ? limit 1", [endpoint]
                ).fetchone()
                is not None
            )

    def close(self) -> None:
        self.db.conn.close()
