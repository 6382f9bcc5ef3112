"""Mining results read a page at a time, for browsing them (the viewer): the mined sources, the
hedge list, one candidate with the turns around it in its conversation. Reads only; the
candidate's own turn is where ``_store`` keeps it (``mined_turns``, under the candidate's id),
the turns around it are read again from the mined file when it is still there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ._store import _texts

if TYPE_CHECKING:
    from ..workspace import Workspace


def _has_rows(ws: Workspace, table: str) -> bool:
    return ws.db[table].exists() and bool(
        ws.db.execute(f'select exists (select 1 from "{table}")').fetchone()[0]
    )


def mine_sources(ws: Workspace) -> list[dict]:
    """Each mined file: corpus, variant, license, conversations and turns scanned, candidates and
    hedges kept."""
    if not ws.db["mine_sources"].exists():
        return []
    return list(
        ws.db.query(
            "select m.source_key, m.corpus, m.variant, m.license, m.conversations, "
            "m.turns_scanned, (select count(*) from mined_candidates c where c.source_key = "
            "m.source_key) as candidates, (select count(*) from mined_extractions e where "
            "e.source_key = m.source_key and e.kept = 1) as hedges from mine_sources m "
            "order by m.created_at"
        )
    )


def hedge_page(
    ws: Workspace, source_key: str | None, hedges_only: bool = True, page: int = 0, size: int = 50
) -> tuple[list[dict], int]:
    """One page of the miner's extractions (``hedges_only``: those it kept), and how many there
    are in all."""
    if not _has_rows(ws, "mined_extractions"):
        return [], 0
    where, args = ["1"], []
    if source_key:
        where.append("e.source_key = ?")
        args.append(source_key)
    if hedges_only:
        where.append("e.kept = 1")
    sql = f"from mined_extractions e where {' and '.join(where)}"
    total = ws.db.execute(f"select count(*) {sql}", args).fetchone()[0]
    rows = list(
        ws.db.query(
            "select e.source_key, e.candidate_id, e.miner, e.kept, e.text, e.attribute, "
            f"e.plan_value, e.hedge_level, e.reject_reason, e.outcome {sql} "
            "order by e.rowid limit ? offset ?",
            args + [size, page * size],
        )
    )
    return rows, total


def candidate(ws: Workspace, source_key: str, candidate_id: str) -> dict | None:
    """A mined candidate with its extraction, its own turn and the turns around it in its
    conversation (read from the mined file when it is where it was mined from)."""
    row = ws.db.execute(
        "select c.corpus, c.conversation_id, c.source_ref, c.speaker, c.date, c.json, "
        "c.context_refs, m.path from mined_candidates c join mine_sources m on "
        "m.source_key = c.source_key where c.source_key = ? and c.id = ?",
        [source_key, candidate_id],
    ).fetchone()
    if row is None:
        return None
    corpus, conv_id, ref, speaker, date, raw, refs, path = row
    rest = json.loads(raw)
    extractions = list(
        ws.db.query(
            "select miner, kept, text, attribute, plan_value, hedge_level, reject_reason, "
            "outcome, outcome_ref, outcome_evidence from mined_extractions where source_key = ? "
            "and candidate_id = ?",
            [source_key, candidate_id],
        )
    )
    out = {
        "id": candidate_id,
        "corpus": corpus,
        "conversation": conv_id,
        "ref": ref,
        "speaker": speaker,
        "date": date,
        "cues": rest.get("prefilter_cues", []),
        "extractions": extractions,
        "context": None,
        "context_note": "",
    }
    if refs is None:  # stored before turn references: the turn and its context are inline
        out["text"] = rest.get("turn_text", "")
        out["context"] = [
            (c.get("speaker", ""), c.get("text", ""), False) for c in rest.get("context", [])
        ] + [(speaker, out["text"], True)]
        return out
    out["text"] = _texts(ws.db, source_key, [candidate_id]).get(candidate_id, ("", ""))[1]
    out["context"], out["context_note"] = _context_from_file(
        path, corpus, rest.get("item"), rest.get("session_index"), ref
    )
    if out["context"] is None:
        out["context"] = [(speaker, out["text"], True)]
    return out


def _context_from_file(
    path: str | None, corpus: str, item: int | None, session: int | None, ref: str, around: int = 3
) -> tuple[list | None, str]:
    """The turns around ``ref`` in item ``item`` of the mined file: (turns, note)."""
    if not path or item is None or not Path(path).is_file():
        return None, (
            f"The turns around it are read from the mined file, which is no longer at {path!r}."
            if path
            else ""
        )
    from .loaders import iter_conversations

    try:
        conv = next(iter(iter_conversations(path, corpus, skip=item)), None)
    except Exception as e:
        return None, f"The mined file could not be read again ({type(e).__name__})."
    if conv is None:
        return None, "The mined file has changed since it was mined."
    for s in conv.sessions:
        refs = [t.ref for t in s.turns]
        if ref in refs:
            i = refs.index(ref)
            lo, hi = max(0, i - around), min(len(refs), i + around)
            return [(t.speaker, t.text, t.ref == ref) for t in s.turns[lo:hi]], ""
    return None, "The mined file has changed since it was mined."
