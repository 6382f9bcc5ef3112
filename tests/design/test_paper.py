"""The paper's design: its counts (asserted here, and only here) and its exports."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from agentmemgate.design import paper_design

HERE = Path(__file__).parent


def test_the_paper_design_has_the_papers_cells():
    """Table 1 and Section 5: 60 core, 147 held-out (132 plans and 15 controls), 179
    controlled-difficulty conversations (386 in all), plus the 120 explicit corrections."""
    d = paper_design()
    assert {s: d.arcs_in(s) for s in d.splits} == {
        "core": 60,
        "heldout": 147,
        "controlled": 179,
        "corrections": 120,
    }
    assert sum(d.arcs_in(s) for s in d.resolve_splits("paper")) == 386
    assert [c.n for c in d.splits["heldout"].cells] == [44, 44, 44, 15]
    assert len(d.splits["controlled"].cells) == 9
    assert d.factors["hedge_strength"].level_names == (
        "strongly_hedged",
        "weakly_hedged",
        "confident_no_date",
        "scheduled_with_date",
        "completed_change",
    )
    assert d.ids == "sequential" and len(d.domains) == 30


def test_building_the_paper_design_reproduces_its_exports_byte_for_byte(tmp_path):
    """The dataset files of a default build are those the toolkit has always built at seed 0
    (``paper_exports.sha256``: data.jsonl bytes, turns.parquet rows)."""
    from agentmemgate.pipeline import build

    build(tmp_path / "ws", tmp_path / "out", show_progress=False)
    for line in (HERE / "paper_exports.sha256").read_text().splitlines():
        digest, rel = line.split("  ", 1)
        path = tmp_path / "out" / rel.split(" ")[0]
        if path.suffix == ".parquet":
            got = hashlib.sha256(
                pd.read_parquet(path).to_json(orient="records").encode()
            ).hexdigest()
        else:
            got = hashlib.sha256(path.read_bytes()).hexdigest()
        assert got == digest, rel
