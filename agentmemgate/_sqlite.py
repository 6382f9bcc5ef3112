"""``sqlite_utils`` without the pandas and numpy imports it makes when it is first imported.

sqlite-utils imports pandas and numpy (when installed) only to add their scalar types to its
column-type table (``sqlite_utils.db.COLUMN_TYPE_MAPPING``); that import was most of the start-up
time of every ``amg`` command (about 0.45 s of CPU here). This module imports sqlite-utils with the
two hidden and gives the table the same entries the first time it is asked about a numpy or pandas
type, so a table created from numpy values gets the column types it always got. Every module of the
package uses ``from ._sqlite import sqlite_utils`` (or ``..``) instead of ``import sqlite_utils``.
"""

from __future__ import annotations

import sys
import threading

_HIDDEN = ("pandas", "numpy")
_NUMPY_TYPES = {
    **{f"{k}{b}": "INTEGER" for k in ("int", "uint") for b in (8, 16, 32, 64)},
    "float16": "REAL",
    "float32": "REAL",
    "float64": "REAL",
}
_lock = threading.Lock()


class _LateTypes(dict):
    """sqlite-utils' column-type table, with numpy's and pandas's types added when first needed
    (by then the value being stored proves that library is imported)."""

    def _add_late_types(self) -> None:
        np, pd = sys.modules.get("numpy"), sys.modules.get("pandas")
        if np is not None:
            self.update(
                {getattr(np, name): t for name, t in _NUMPY_TYPES.items() if hasattr(np, name)}
            )
        if pd is not None:
            self[pd.Timestamp] = "TEXT"

    def __missing__(self, key):
        if getattr(key, "__module__", "").split(".")[0] in _HIDDEN:
            self._add_late_types()
            if dict.__contains__(self, key):
                return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def _import():
    with _lock:
        if "sqlite_utils.db" in sys.modules:
            return sys.modules["sqlite_utils"]
        hidden = [name for name in _HIDDEN if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # import_module raises ImportError
        try:
            import sqlite_utils
            import sqlite_utils.db as db
        finally:
            for name in hidden:
                if sys.modules.get(name, False) is None:
                    del sys.modules[name]
        if hidden:
            db.COLUMN_TYPE_MAPPING = _LateTypes(db.COLUMN_TYPE_MAPPING)
        return sqlite_utils


sqlite_utils = _import()

_PLAIN = (str, int, float, bool, bytes, type(None))


def upsert_rows(db, table: str, rows: list[dict], pk: str | tuple[str, ...]) -> None:
    """``db[table].upsert_all(rows, pk=pk)`` in one ``executemany``: the same statement
    sqlite-utils issues (``INSERT ... ON CONFLICT(pk) DO UPDATE SET`` every other column, values
    JSON-encoded where they are lists or dicts), without its per-row Python work (a fifth of the
    time of storing an offline build's 3,000 verdicts). The table must exist with every column
    of ``rows``; the caller owns the transaction."""
    if not rows:
        return
    jsonify = sys.modules["sqlite_utils.db"].jsonify_if_needed
    cols = list(rows[0])
    pks = [pk] if isinstance(pk, str) else list(pk)
    q = ", ".join(f"[{c}]" for c in cols)
    rest = [c for c in cols if c not in pks]
    do = (
        ("DO UPDATE SET " + ", ".join(f"[{c}] = excluded.[{c}]" for c in rest))
        if rest
        else "DO NOTHING"
    )
    sql = (
        f"INSERT INTO [{table}] ({q}) VALUES ({', '.join('?' * len(cols))}) "
        f"ON CONFLICT({', '.join(f'[{c}]' for c in pks)}) {do}"
    )
    db.conn.executemany(
        sql, [[v if isinstance(v, _PLAIN) else jsonify(v) for v in map(r.get, cols)] for r in rows]
    )
