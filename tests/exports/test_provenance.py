"""The manifest and the card record what the arcs were built from (design and its files,
catalog, seed, --n-per-cell, imported files), and claim a rebuild only when one reproduces them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from extend_design import extended_design
from typer.testing import CliRunner

from agentmemgate import __version__
from agentmemgate.cli import app
from agentmemgate.design import paper_design
from agentmemgate.exports import export
from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args):
    return runner.invoke(app, [str(a) for a in args])


def _built(card: str) -> list[str]:
    return card.split("## How it was built", 1)[1].split("\n## ", 1)[0].strip().splitlines()


def _provenance(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())["provenance"]


def test_a_paper_build_records_its_design_catalog_seed_and_the_command(small_build):
    root, _ = small_build
    design = paper_design()
    src = design.source
    for folder in [root / "out"] + [root / "out" / s for s in design.splits]:
        lines = _built((folder / "README.md").read_text())
        assert "- Design: `paper` (built in); sha256 of its files:" in lines
        assert f"  - `design.toml` `{src.sha256}`" in lines
        for rel, f in src.files.items():
            assert f"  - `{rel}` `{f.sha256}`" in lines
        catalog = src.catalog_sha256(design.domains)
        assert (
            f"- Catalog: the {len(design.domains)} domain files the design draws from "
            f"(built in), sha256 `{catalog}`"
        ) in lines
        assert "- Seed: 0; `--n-per-cell`: 2" in lines
        assert (
            f"- Reproduce: with toolkit {__version__}, `amg build --design paper --seed 0 "
            "--n-per-cell 2` rebuilds these arcs (data.jsonl and turns.parquet) byte for "
            "byte."
        ) in lines
        assert any("template realizations of the paper's design" in x for x in lines)
        p = _provenance(folder)
        assert p["design"]["name"] == "paper" and p["design"]["sha256"] == src.sha256
        assert p["design"]["files"] == {
            "design.toml": src.sha256,
            **{k: f.sha256 for k, f in src.files.items()},
        }
        assert p["design"]["catalog_sha256"] == catalog
        assert {
            s: (x["seed"], x["n_per_cell"], x["design_sha256"]) for s, x in p["plans"].items()
        } == {
            s: (0, 2, src.sha256)
            for s in (design.splits if folder == root / "out" else [folder.name])
        }
        assert p["imports"] == [] and p["not_reproducible"] == []
        assert p["reproduce"] == {
            "commands": ["amg build --design paper --seed 0 --n-per-cell 2"],
            "toolkit_version": __version__,
        }


def test_a_filtered_import_says_where_it_came_from_and_claims_no_rebuild(small_build, tmp_path):
    root, _ = small_build
    lines = (root / "out" / "core" / "data.jsonl").read_text().splitlines()
    k = len(lines) - 1
    sub = tmp_path / "sub.jsonl"
    sub.write_text("\n".join(lines[:k]) + "\n", encoding="utf-8")
    sha = hashlib.sha256(sub.read_bytes()).hexdigest()
    assert amg("import", sub, "--workspace", tmp_path / "ws").exit_code == 0
    assert amg("export", "--workspace", tmp_path / "ws", "--out", tmp_path / "out").exit_code == 0
    card = (tmp_path / "out" / "core" / "README.md").read_text()
    built = _built(card)
    assert f"- Imported with `amg import`: {k} arcs from `sub.jsonl` (sha256 `{sha}`)" in built
    assert f"- Not reproducible from a seed: {k} arcs imported with `amg import`." in built
    assert "paper's design" not in card and "byte for byte" not in card
    assert not any(x.startswith("- Design:") for x in built)
    p = _provenance(tmp_path / "out" / "core")
    assert p["imports"] == [{"source": "sub.jsonl", "sha256": sha, "arcs": k}]
    assert p["reproduce"] is None and p["plans"] == {}


def test_an_import_without_provenance_shows_no_empty_sha(small_build, tmp_path):
    root, _ = small_build
    records = [
        json.loads(x) for x in (root / "out" / "heldout" / "data.jsonl").read_text().splitlines()
    ]
    for r in records:
        del r["provenance"]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert amg("import", bare, "--workspace", tmp_path / "ws").exit_code == 0
    assert amg("export", "--workspace", tmp_path / "ws", "--out", tmp_path / "out").exit_code == 0
    built = _built((tmp_path / "out" / "README.md").read_text())
    assert "- Generator: `imported` (imported arcs (the file gave no provenance))" in built
    assert "``" not in "\n".join(built) and not any(x.startswith("- Seed") for x in built)
    sha = hashlib.sha256(bare.read_bytes()).hexdigest()
    assert (
        f"- Imported with `amg import`: {len(records)} arcs from `bare.jsonl` (sha256 `{sha}`)"
        in built
    )


def test_a_users_design_is_named_with_its_files_and_rebuilt_from_a_folder(tmp_path):
    folder, design = extended_design(tmp_path)
    ws = Workspace(tmp_path / "ws")
    splits = ["controlled", "distance"]
    generate(
        ws,
        get_renderer("offline", design=design),
        splits,
        seed=4,
        n_per_cell=1,
        design=design,
        show_progress=False,
    )
    export(ws, tmp_path / "out", splits)
    built = _built((tmp_path / "out" / "distance" / "README.md").read_text())
    assert any(f"template realizations of design `{design.name}`" in x for x in built)
    assert f"- Design: `{design.name}`; sha256 of its files:" in built
    plan = hashlib.sha256((folder / "phrases" / "plan.toml").read_bytes()).hexdigest()
    assert f"  - `phrases/plan.toml` `{plan}`" in built
    assert plan != paper_design().source.files["phrases/plan.toml"].sha256  # the user's own file
    assert (
        f"- Reproduce: with toolkit {__version__}, `amg build --design DIR --seed 4 "
        "--n-per-cell 1` rebuilds these arcs (data.jsonl and turns.parquet) byte for byte "
        f"(DIR is a folder holding design `{design.name}` with the files above)."
    ) in built
    p = _provenance(tmp_path / "out")
    assert p["design"]["name"] == design.name and p["design"]["sha256"] == design.source.sha256
    assert set(p["plans"]) == set(splits)


def test_splits_planned_apart_or_by_an_older_design_version(tmp_path):
    folder, design = extended_design(tmp_path, conditional=False)
    ws = Workspace(tmp_path / "ws")
    renderer = get_renderer("offline", design=design)
    generate(ws, renderer, ["core"], seed=1, n_per_cell=1, design=design, show_progress=False)
    generate(ws, renderer, ["distance"], seed=2, n_per_cell=1, design=design, show_progress=False)
    export(ws, tmp_path / "out", ["core", "distance"])
    built = _built((tmp_path / "out" / "README.md").read_text())
    assert "- Seed and `--n-per-cell` per split: core 1 (1), distance 2 (1)" in built
    assert (
        "- Reproduce: with toolkit " + __version__ + ", `amg build --design DIR --split core "
        "--seed 1 --n-per-cell 1` then `amg build --design DIR --split distance --seed 2 "
        "--n-per-cell 1` rebuilds"
    ) in "\n".join(built)

    # The design file is edited and only one split built again: the other was planned by the
    # earlier version, which the workspace no longer holds.
    toml = folder / "design.toml"
    toml.write_text(toml.read_text() + "\n# edited\n")
    from agentmemgate.design import load_design

    edited = load_design(folder)
    generate(
        ws,
        get_renderer("offline", design=edited),
        ["distance"],
        seed=2,
        n_per_cell=1,
        design=edited,
        show_progress=False,
    )
    export(ws, tmp_path / "out", ["core", "distance"])
    built = _built((tmp_path / "out" / "README.md").read_text())
    assert (
        f"- Not reproducible from a seed: core planned with another version of design "
        f"`{design.name}` than the one stored with the workspace."
    ) in built
    assert _provenance(tmp_path / "out" / "distance")["reproduce"] is not None
    assert _provenance(tmp_path / "out" / "core")["reproduce"] is None
