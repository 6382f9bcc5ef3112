"""How mined candidates sit in the workspace: small rows that refer to turns.

A candidate used to carry its turn and two context turns as text: on LongMemEval_s that copied the
assistant's long answers once for every user turn after them (about half the input size). Now:

* the candidate's own turn is stored once in ``mined_turns``, zlib-compressed (offline stage 2,
  outcome linking and the exported span need it);
* context turns are references (``context_refs``), read back from the source file when something
  needs their text: an LLM prompt or an export. Candidates remember which item of the file their
  conversation is and are read in file order, so that costs one forward pass over the file; a
  context turn that is itself a candidate is read from the workspace;
* candidate rows keep what no column holds: item, session and turn index, cues, spans.

Rows written before migration m009 have every text inline in ``json`` and no ``context_refs``;
they load unchanged and need no source file.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .._sqlite import sqlite_utils
from ..errors import BadInput
from .loaders import iter_conversations
from .model import Candidate, ContextTurn, Conversation
from .prefilter import turn_key

COLUMNS = (
    "c.id, c.corpus, c.conversation_id, c.source_ref, c.speaker, c.date, c.json, c.context_refs"
)
_LOOKUP = 500  # keys per SQL lookup (old SQLite builds allow 999 parameters)


def _z(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 6)


_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _encode_refs(source_ref: str, turn_index: int, refs: list[str]) -> list[str | int]:
    """Context refs as offsets from the candidate's turn where the ref follows from its own
    (LongMemEval "q/s/6" -> "q/s/4" is -2; LoCoMo "D5:20" -> "D5:18" too), else in full: a
    LongMemEval_s workspace holds hundreds of thousands of these."""
    m = _TRAILING_NUMBER.match(source_ref)
    out: list[str | int] = []
    for i, ref in enumerate(refs):
        offset = i - len(refs)  # context turns are the ones right before the candidate's
        if m and ref == f"{m.group(1)}{int(m.group(2)) + offset}":
            out.append(offset)
        else:
            out.append(ref)
    return out


def _decode_refs(source_ref: str, refs: list[str | int]) -> list[str]:
    m = _TRAILING_NUMBER.match(source_ref)
    return [r if isinstance(r, str) else f"{m.group(1)}{int(m.group(2)) + r}" for r in refs]


def candidate_rows(
    key: str, conv: Conversation, cands: Sequence[Candidate], first_position: int, item: int
) -> tuple[list[dict], list[dict]]:
    """(candidate rows, turn rows) for the candidates of ``conv``, item ``item`` of the source."""
    rows, turns = [], {}
    for n, cand in enumerate(cands):
        turns[cand.id] = (cand.speaker, cand.turn_text)
        rest = {
            "item": item,
            "session_index": cand.session_index,
            "turn_index": cand.turn_index,
            "prefilter_cues": cand.prefilter_cues,
            "cue_spans": cand.cue_spans,
        }
        rows.append(
            {
                "source_key": key,
                "id": cand.id,
                "position": first_position + n,
                "corpus": cand.corpus,
                "conversation_id": cand.conversation_id,
                "source_ref": cand.source_ref,
                "speaker": cand.speaker,
                "date": cand.date,
                "json": json.dumps(rest, separators=(",", ":")),
                "context_refs": json.dumps(
                    _encode_refs(cand.source_ref, cand.turn_index, cand.context_refs),
                    separators=(",", ":"),
                ),
            }
        )
    turn_rows = [
        {"source_key": key, "key": k, "speaker": sp, "text_z": _z(text)}
        for k, (sp, text) in turns.items()
    ]
    return rows, turn_rows


# -- writing (inside stage 1's transaction) ------------------------------------------------------
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
        conn.executemany(
            f"{verb} into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
            [[r[c] for c in cols] for r in rows],
        )


def save(conn: sqlite3.Connection, rows: list[dict], turn_rows: list[dict]) -> None:
    _insert(conn, "mined_turns", turn_rows, "insert or ignore")
    _insert(conn, "mined_candidates", rows, "insert or replace")


def save_sessions(conn: sqlite3.Connection, key: str, session_ids: Iterable[str]) -> None:
    _insert(
        conn,
        "mined_sessions",
        [{"source_key": key, "session_id": s} for s in session_ids],
        "insert or ignore",
    )


def checkpoint(conn: sqlite3.Connection, key: str, values: dict) -> None:
    conn.execute(
        f"update mine_sources set {', '.join(f'{k} = ?' for k in values)} where source_key = ?",
        [*values.values(), key],
    )


def forget(db: sqlite_utils.Database, key: str) -> None:
    """Drop a source's stage-1 results (a new lexicon starts stage 1 over)."""
    for table in ("mined_candidates", "mined_turns", "mined_sessions"):
        db[table].delete_where("source_key = ?", [key])


# -- reading -------------------------------------------------------------------------------------
class SourceTexts:
    """Context turns read back from the mined file, one forward pass for reads in file order."""

    def __init__(self, path: str | Path, corpus: str, key: str):
        self.path, self.corpus, self.key = Path(path), corpus, key
        self._it: Iterator[Conversation] | None = None
        self._item = -1  # index of the conversation in self._turns
        self._turns: dict[str, tuple[str, str]] = {}

    def turn(self, item: int, ref: str) -> tuple[str, str]:
        if item != self._item:
            self._seek(item)
        if ref not in self._turns:
            raise BadInput(
                f"{self.path}: turn {ref} is not where it was when {self.key} was mined "
                "(has the file changed?); mine it again into a new workspace"
            )
        return self._turns[ref]

    def _seek(self, item: int) -> None:
        if not self.path.is_file():
            raise BadInput(
                f"{self.path}: not found; the candidates of {self.key} read their long "
                "context turns from it (run `amg mine hedges` with its new location)"
            )
        if self._it is None or item < self._item:
            self._it, self._item = iter_conversations(self.path, self.corpus, skip=item), item - 1
        for conv in self._it:
            self._item += 1
            if self._item == item:
                self._turns = {t.ref: (t.speaker, t.text) for s in conv.sessions for t in s.turns}
                return
        raise BadInput(
            f"{self.path}: has no item {item}; has the file changed since {self.key} was mined?"
        )


def load(
    db: sqlite_utils.Database,
    key: str,
    rows: Iterable[Sequence],
    source: SourceTexts | None = None,
    context: bool = True,
) -> list[Candidate]:
    """Candidates from rows of ``COLUMNS``. ``context=False`` leaves context turns out (offline
    stage 2 and outcome linking read none); otherwise long ones come from ``source``."""
    rows = list(rows)
    wanted: set[str] = set()
    for r in rows:
        if r[7] is not None:
            wanted.add(r[0])
            if context:
                wanted.update(
                    turn_key(r[1], r[2], ref) for ref in _decode_refs(r[3], json.loads(r[7]))
                )
    texts = _texts(db, key, sorted(wanted))
    out = []
    for cid, corpus, conv_id, ref, speaker, date, raw, refs in rows:
        if refs is None:  # written before m009: everything inline
            out.append(Candidate.model_validate_json(raw))
            continue
        rest = json.loads(raw)
        ctx_refs = _decode_refs(ref, json.loads(refs))
        ctx = []
        if context:
            for r in ctx_refs:
                sp_text = texts.get(turn_key(corpus, conv_id, r))
                if sp_text is None:
                    if source is None:
                        raise BadInput(
                            f"{key}: context turn {r} is stored by reference; its "
                            "source file is needed to read it"
                        )
                    sp_text = source.turn(rest["item"], r)
                ctx.append(ContextTurn(speaker=sp_text[0], text=sp_text[1]))
        out.append(
            Candidate(
                id=cid,
                corpus=corpus,
                conversation_id=conv_id,
                source_ref=ref,
                session_index=rest["session_index"],
                turn_index=rest["turn_index"],
                speaker=speaker,
                date=date,
                turn_text=texts[cid][1],
                context=ctx,
                prefilter_cues=rest["prefilter_cues"],
                cue_spans=[tuple(s) for s in rest["cue_spans"]],
                context_refs=ctx_refs,
            )
        )
    return out


def _texts(db: sqlite_utils.Database, key: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for i in range(0, len(keys), _LOOKUP):
        chunk = keys[i : i + _LOOKUP]
        sql = (
            f"select key, speaker, text_z from mined_turns where source_key = ? and key in "
            f"({','.join('?' * len(chunk))})"
        )
        for k, speaker, blob in db.execute(sql, [key, *chunk]):
            out[k] = (speaker, zlib.decompress(blob).decode("utf-8"))
    return out
