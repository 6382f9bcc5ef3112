"""Browsing mining results (what the viewer's Mining page reads): sources, the hedge list a page
at a time, one candidate with the turns around it, read from the mined file."""

from __future__ import annotations

import shutil

from agentmemgate.corpora import mine_hedges
from agentmemgate.corpora.browse import candidate, hedge_page, mine_sources
from agentmemgate.view.data import Reader

from .paths import LOCOMO


def test_a_mined_file_browsed_through_the_read_only_viewer(ws, tmp_path):
    src = shutil.copy(LOCOMO, tmp_path / "locomo.json")
    s = mine_hedges(ws, src, corpus="locomo")
    r = Reader(ws.path)
    (source,) = mine_sources(r)
    assert (source["corpus"], source["conversations"], source["turns_scanned"]) == (
        "locomo",
        s.conversations,
        s.turns_scanned,
    )
    assert (source["candidates"], source["hedges"]) == (s.prefilter_hits, s.hedges)

    everything, total = hedge_page(r, source["source_key"], hedges_only=False, size=1000)
    assert total == len(everything) == s.prefilter_hits
    first, n = hedge_page(r, source["source_key"], hedges_only=False, page=1, size=2)
    assert n == total and first == everything[2:4]
    kept, n_kept = hedge_page(r, None)
    assert n_kept == s.hedges and all(x["kept"] for x in kept)

    c = candidate(r, kept[0]["source_key"], kept[0]["candidate_id"])
    assert c["text"] and c["extractions"] and c["context_note"] == ""
    assert [text for _, text, own in c["context"] if own] == [c["text"]]
    assert len(c["context"]) > 1  # the turns before it, read again from the mined file

    (tmp_path / "locomo.json").unlink()  # moved away: its own turn still shows, with a note
    gone = candidate(r, kept[0]["source_key"], kept[0]["candidate_id"])
    assert gone["context"] == [(c["speaker"], c["text"], True)]
    assert "no longer at" in gone["context_note"]
    assert candidate(r, kept[0]["source_key"], "no-such-id") is None
    r.close()
