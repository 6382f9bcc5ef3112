import hashlib
import json

import pandas as pd

from agentmemgate.design import paper_design

REQUIRED = {
    "id",
    "split",
    "factor",
    "level",
    "outcome",
    "field",
    "initial_value",
    "plan_value",
    "sessions",
    "initial_turn",
    "plan_turn",
    "outcome_turn",
    "expected_value_after_session",
    "provenance",
}


def test_export_files_and_keys(small_build):
    root, summary = small_build
    out = root / "out"
    design = paper_design()
    assert summary.export.counts == {s: design.arcs_in(s, 2) for s in design.splits}
    for split in design.splits:
        folder = out / split
        rows = [json.loads(l) for l in (folder / "data.jsonl").read_text().splitlines()]
        assert rows and all(REQUIRED <= set(r) for r in rows)
        r = rows[0]
        assert set(r["field"]) == {"entity", "attribute", "description", "probe_question"}
        assert set(r["provenance"]) >= {"generator", "prompt_sha256", "seed", "toolkit_version"}
        assert r["provenance"]["generator"] == "offline"
        assert len(r["expected_value_after_session"]) == len(r["sessions"])
        assert all(t["role"] in ("user", "assistant") for s in r["sessions"] for t in s["turns"])
        turns = pd.read_parquet(folder / "turns.parquet")
        assert list(turns.columns) == [
            "arc_id",
            "session",
            "turn",
            "date",
            "role",
            "text",
            "is_plan_turn",
            "is_outcome_turn",
        ]
        assert turns["is_plan_turn"].sum() == len(rows)
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["counts"]["arcs"] == len(rows)
        for name, digest in manifest["files"].items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
        card = (folder / "README.md").read_text()
        assert card.startswith("---\nlicense: mit\n")
        assert "config_name: " + split in card
        assert "offline template renderer" in card


def test_pandas_and_datasets_read_the_export(small_build):
    root, _ = small_build
    df = pd.read_json(root / "out" / "core" / "data.jsonl", lines=True)
    assert len(df) == paper_design().arcs_in("core", 2)
    import datasets

    ds = datasets.load_dataset(
        "json",
        data_files=str(root / "out" / "controlled" / "data.jsonl"),
        split="train",
        cache_dir=str(root / "hf-cache"),
    )
    assert ds.num_rows == paper_design().arcs_in("controlled", 2)
    assert ds[0]["field"]["entity"] == "user"


def test_same_seed_byte_identical_exports(tmp_path):
    from agentmemgate.pipeline import build

    for name in ("a", "b"):
        build(
            tmp_path / name / "ws",
            tmp_path / name / "out",
            split="heldout",
            n_per_cell=2,
            seed=11,
            show_progress=False,
        )
    for f in ("data.jsonl", "turns.parquet", "README.md", "manifest.json"):
        assert (tmp_path / "a/out/heldout" / f).read_bytes() == (
            tmp_path / "b/out/heldout" / f
        ).read_bytes(), f
    build(
        tmp_path / "c" / "ws",
        tmp_path / "c" / "out",
        split="heldout",
        n_per_cell=2,
        seed=12,
        show_progress=False,
    )
    assert (tmp_path / "a/out/heldout/data.jsonl").read_bytes() != (
        tmp_path / "c/out/heldout/data.jsonl"
    ).read_bytes()


def test_changed_seed_replans_the_split(tmp_path):
    from agentmemgate.pipeline import build

    first = build(
        tmp_path / "ws", tmp_path / "out", split="core", n_per_cell=1, seed=1, show_progress=False
    )
    second = build(
        tmp_path / "ws", tmp_path / "out", split="core", n_per_cell=1, seed=2, show_progress=False
    )
    n = paper_design().arcs_in("core", 1)
    assert first.generate.rendered_now == n and second.generate.rendered_now == n
    import json

    seeds = {json.loads(l)["provenance"]["seed"] for l in open(tmp_path / "out/core/data.jsonl")}
    assert seeds == {2}


def test_a_one_split_export_counts_the_split_folders_it_keeps(small_build, tmp_path):
    """Re-exporting one split keeps the others' folders (by design); the root manifest hashes
    their files, so it counts them too and says they came from an earlier export."""
    import shutil

    from agentmemgate.exports import export
    from agentmemgate.workspace import Workspace

    root, _ = small_build
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    before = json.loads((out / "manifest.json").read_text())["counts"]["arcs"]
    s = export(Workspace(root / "ws", create=False), out, ["core"])
    m = json.loads((out / "manifest.json").read_text())
    assert s.counts == {"core": before["core"]}
    assert s.kept == {k: v for k, v in before.items() if k != "core"} and s.kept
    assert m["counts"]["arcs"] == before
    assert m["kept_from_an_earlier_export"] == sorted(s.kept)
    assert {f.split("/")[0] for f in m["files"] if "/" in f} == set(before)
