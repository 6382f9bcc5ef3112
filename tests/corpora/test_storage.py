"""Candidate storage (migration m009): own turns stored once, context turns by reference; workspaces
mined before m009 keep working; a moved or deleted source file is named, not a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
import sqlite_utils

from agentmemgate import migrations
from agentmemgate.corpora import (
    load_corpus,
    mine_hedges,
    mined_statements,
    scan_conversation,
    source_key,
)
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.errors import BadInput
from agentmemgate.workspace import Workspace

from .paths import LOCOMO, LONGMEMEVAL


def _context_by_ref(path):
    out = {}
    for conv in load_corpus(path):
        for c in scan_conversation(conv).candidates:
            out[c.id] = [t.model_dump() for t in c.context]
    return out


def test_context_turns_are_references_and_read_back_verbatim(ws):
    s = mine_hedges(ws, LONGMEMEVAL)
    key = source_key(LONGMEMEVAL)
    refs = [
        json.loads(r[0])
        for r in ws.db.execute(
            "select context_refs from mined_candidates where source_key = ?", [key]
        )
    ]
    assert len(refs) == s.prefilter_hits and all(len(r) <= 2 for r in refs) and any(refs)
    stored = {
        r[0] for r in ws.db.execute("select key from mined_turns where source_key = ?", [key])
    }
    ids = {
        r[0] for r in ws.db.execute("select id from mined_candidates where source_key = ?", [key])
    }
    assert stored == ids  # only candidates' own turns; assistant answers stay in the source file
    expected = _context_by_ref(LONGMEMEVAL)
    assert {
        m.id: [t.model_dump() for t in m.context] for m in mined_statements(ws, key)
    } == expected


def test_a_moved_source_is_named_and_a_rerun_with_its_new_place_recovers(ws, tmp_path):
    src = tmp_path / "a" / LONGMEMEVAL.name
    src.parent.mkdir()
    shutil.copy(LONGMEMEVAL, src)
    mine_hedges(ws, src)
    moved = tmp_path / "b" / LONGMEMEVAL.name
    moved.parent.mkdir()
    src.rename(moved)
    with pytest.raises(BadInput, match=rf"{src.name}: not found.*new location"):
        list(mined_statements(ws, source_key(moved)))
    mine_hedges(ws, moved)  # same file: nothing is mined again, the stored path is updated
    assert len(list(mined_statements(ws, source_key(moved)))) > 0


def _old_workspace(path):
    """A workspace as main wrote it before m009: full candidate JSON, no checkpoint columns."""
    path.mkdir()
    db = sqlite_utils.Database(sqlite3.connect(path / "workspace.db"))
    db["_migrations"].create({"name": str, "applied_at": str}, pk="name")
    for fn in migrations.MIGRATIONS:
        if fn.__name__.startswith("m009"):
            continue
        fn(db)
        db["_migrations"].insert({"name": fn.__name__, "applied_at": "2026-01-01T00:00:00+00:00"})
    lex = load_lexicon()
    key = source_key(LOCOMO)
    rows = []
    for conv in load_corpus(LOCOMO):
        for c in scan_conversation(conv, lex).candidates:
            rows.append(
                {
                    "source_key": key,
                    "id": c.id,
                    "position": len(rows),
                    "corpus": c.corpus,
                    "conversation_id": c.conversation_id,
                    "source_ref": c.source_ref,
                    "speaker": c.speaker,
                    "date": c.date,
                    "json": c.model_dump_json(exclude={"context_refs"}),
                }
            )
    db["mined_candidates"].insert_all(rows)
    db["mine_sources"].insert(
        {
            "source_key": key,
            "path": str(LOCOMO.resolve()),
            "corpus": "locomo",
            "variant": "",
            "license": "CC BY-NC 4.0",
            "conversations": 2,
            "lexicon": f"{lex.ref}:{lex.sha256[:12]}",
            "duplicate_sessions": 0,
            "turns_scanned": 21,
            "sentences_scanned": 40,
            "stage1_done": 1,
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    )
    db.conn.commit()
    db.conn.close()
    return len(rows)


def test_a_workspace_mined_before_m009_keeps_working(tmp_path):
    n = _old_workspace(tmp_path / "old")
    ws = Workspace(tmp_path / "old", create=False)  # applies m009 only
    s = mine_hedges(ws, LOCOMO)  # stage 1 is done (same lexicon): stage 2 reads the old rows
    assert s.prefilter_hits == n and s.hedges >= 1
    rows = list(mined_statements(ws, source_key(LOCOMO), s.miner))
    expected = _context_by_ref(LOCOMO)
    assert {r.id: [t.model_dump() for t in r.context] for r in rows} == expected
    studio = next(r for r in rows if r.source_ref == "D1:6")
    assert studio.kept and studio.outcome == "came_true"
