"""Labels ride in fields only: opaque stable ids, rows in a seeded order that follows no label."""

from __future__ import annotations

import json
import re

import pandas as pd

from agentmemgate.design import OUTCOME_KINDS, paper_design
from agentmemgate.generate import plan_split

DESIGN = paper_design()
SPLITS = DESIGN.split_names
# every split, factor and level name, every outcome, and the words they are made of
LABEL_WORDS = (
    DESIGN.level_identifiers()
    | set(OUTCOME_KINDS)
    | {"outcome", "hedge", "strength", "confirmation", "wording", "control", "completed"}
)


def _leaks(arc_id: str) -> set[str]:
    parts = set(re.split(r"[^a-z]+", arc_id.lower()))
    return {w for w in LABEL_WORDS if w in arc_id.lower() or w in parts}


def test_planned_ids_are_opaque_unique_and_stable():
    ids = {}
    for split in SPLITS:
        specs = plan_split(split, seed=0)
        assert all(re.fullmatch(r"arc-[0-9a-f]{12}", s.id) for s in specs)
        assert not any(_leaks(s.id) for s in specs)
        assert [s.id for s in plan_split(split, seed=0)] == [s.id for s in specs]  # same seed
        ids[split] = {s.id for s in specs}
        assert len(ids[split]) == len(specs)
        assert not ids[split] & {s.id for s in plan_split(split, seed=1)}  # another seed: others
    assert (
        not (ids["core"] & ids["heldout"])
        | (ids["core"] & ids["controlled"])
        | (ids["heldout"] & ids["controlled"])
    )


def test_exported_rows_carry_labels_as_fields_only(small_build):
    root, _ = small_build
    for split in SPLITS:
        rows = [json.loads(line) for line in (root / "out" / split / "data.jsonl").open()]
        assert not any(_leaks(r["id"]) for r in rows)
        assert all({"split", "factor", "level", "outcome"} <= set(r) for r in rows)
        turns = pd.read_parquet(root / "out" / split / "turns.parquet")
        assert set(turns["arc_id"]) == {r["id"] for r in rows}
        # turns.parquet follows the same row order as data.jsonl
        assert list(dict.fromkeys(turns["arc_id"])) == [r["id"] for r in rows]


def test_row_order_is_shuffled_not_grouped_by_label(tmp_path):
    from agentmemgate.pipeline import build

    build(tmp_path / "ws", tmp_path / "out", split="controlled", n_per_cell=6, show_progress=False)
    rows = [json.loads(line) for line in (tmp_path / "out/controlled/data.jsonl").open()]
    levels = [r["level"] for r in rows]
    # Grouped output would change level 8 times in 54 rows; a shuffle changes it most of the time.
    changes = sum(a != b for a, b in zip(levels, levels[1:]))
    assert changes > 30, levels
    planned = [s.id for s in plan_split("controlled", seed=0, n_per_cell=6)]
    assert [r["id"] for r in rows] != planned and sorted(r["id"] for r in rows) == sorted(planned)
    again = tmp_path / "again"
    build(again / "ws", again / "out", split="controlled", n_per_cell=6, show_progress=False)
    assert (again / "out/controlled/data.jsonl").read_bytes() == (
        tmp_path / "out/controlled/data.jsonl"
    ).read_bytes()


def test_audit_items_and_reports_show_no_label_in_ids(small_build, tmp_path):
    import shutil

    from agentmemgate.annotate_app import create_audit
    from agentmemgate.validate.report import save_validation_report
    from agentmemgate.workspace import Workspace

    root, _ = small_build
    shutil.copytree(root / "ws", tmp_path / "ws")
    ws = Workspace(tmp_path / "ws", create=False)
    create_audit(ws, "ev", "evidence_type", "arcs", annotators=["ana"])
    items = [i for (i,) in ws.db.execute("select item_id from audit_items where audit = 'ev'")]
    assert items and not any(_leaks(i.split(":")[0]) for i in items)
    _, paths = save_validation_report(ws, list(SPLITS), out_dir=tmp_path / "rep")
    md = paths[0].read_text()
    assert re.search(r"arc-[0-9a-f]{12}", md)  # failing arcs are listed by their opaque id
    for arc_id in re.findall(
        r"arc-[0-9a-f]{12}|\b(?:core|heldout|controlled)-[a-z_]+-[a-z_]+-\d+", md
    ):
        assert re.fullmatch(r"arc-[0-9a-f]{12}", arc_id), arc_id
