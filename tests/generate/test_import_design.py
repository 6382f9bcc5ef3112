"""amg import checks splits, factors, levels, outcomes and wordings against the workspace's
design: one line naming the field, the value and the choices, with a did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extend_design import extended_design
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import paper_design
from agentmemgate.exports import export
from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def extended(tmp_path_factory):
    """A workspace built from the extended design, and its exported controlled and distance
    arcs."""
    root = tmp_path_factory.mktemp("ext")
    _, design = extended_design(root)
    ws = Workspace(root / "ws")
    splits = ["controlled", "distance"]
    generate(
        ws,
        get_renderer("offline", design=design),
        splits,
        n_per_cell=1,
        design=design,
        show_progress=False,
    )
    export(ws, root / "out", splits)
    return root, design


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _one_line(res, *needles):
    assert res.exit_code == 1 and res.output.count("\n") == 1 and "Traceback" not in res.output
    for n in needles:
        assert n in res.output, res.output


def test_a_paper_workspace_refuses_what_its_design_lacks(extended, tmp_path):
    root, _ = extended
    paper = paper_design()
    distance = _records(root / "out" / "distance" / "data.jsonl")[:1]
    _one_line(
        amg("import", _write(tmp_path / "d.jsonl", distance), "--workspace", tmp_path / "ws"),
        "Unknown split 'distance'; choose one of: " + ", ".join(paper.split_names),
    )
    moved = amg(
        "import", tmp_path / "d.jsonl", "--split", "controlled", "--workspace", tmp_path / "ws"
    )
    _one_line(moved, "Unknown factor 'distance'; choose one of: " + ", ".join(paper.factors))
    conditional = [
        r
        for r in _records(root / "out" / "controlled" / "data.jsonl")
        if r["level"] == "conditional"
    ][:1]
    _one_line(
        amg("import", _write(tmp_path / "c.jsonl", conditional), "--workspace", tmp_path / "ws"),
        "Unknown level 'conditional' of factor 'hedge_strength'; choose one of: "
        + ", ".join(paper.levels("hedge_strength")),
    )
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("split", "cor", "Unknown split 'cor'; choose one of: {splits}; did you mean 'core'?"),
        (
            "factor",
            "outcomes",
            "Unknown factor 'outcomes'; choose one of: {factors}; did you mean 'outcome'?",
        ),
        (
            "level",
            "came_tru",
            "Unknown level 'came_tru' of factor 'outcome'; choose one of: "
            "{outcome_levels}; did you mean 'came_true'?",
        ),
        (
            "outcome",
            "abandon",
            "Unknown outcome 'abandon'; choose one of: came_true, abandoned, open, "
            "control, correction; did you mean 'abandoned'?",
        ),
        (
            "plan_wording",
            "weakly_hedge",
            "Unknown plan_wording 'weakly_hedge'; choose one of: "
            "{plan_wordings}; did you mean 'weakly_hedged'?",
        ),
        (
            "confirmation_wording",
            "verbatum",
            "Unknown confirmation_wording 'verbatum'; choose one of: "
            "{confirmations}; did you mean 'verbatim'?",
        ),
    ],
)
def test_a_mistyped_label_names_field_value_and_choices(extended, tmp_path, field, value, needle):
    root, _ = extended
    paper = paper_design()
    record = next(
        r
        for r in _records(root / "out" / "controlled" / "data.jsonl")
        if r["factor"] == "confirmation_wording"
        and r["plan_wording"] in paper.levels("hedge_strength")
    )
    record = {**record, "factor": "outcome", "level": "came_true", "split": "core"}
    record[field] = value
    needle = needle.format(
        splits=", ".join(paper.split_names),
        factors=", ".join(paper.factors),
        outcome_levels=", ".join(paper.levels("outcome")),
        plan_wordings=", ".join(paper.levels("hedge_strength") + ("correction",)),
        confirmations=", ".join(paper.levels("confirmation_wording")),
    )
    _one_line(
        amg("import", _write(tmp_path / "x.jsonl", [record]), "--workspace", tmp_path / "ws"),
        "x.jsonl line 1",
        needle,
        "nothing was imported",
    )


def test_a_workspace_of_the_extended_design_takes_its_splits_and_levels(extended, tmp_path):
    root, design = extended
    distance = _records(root / "out" / "distance" / "data.jsonl")
    for r in distance:
        r["id"] += "-copy"  # new arcs in the same workspace
    res = amg("import", _write(tmp_path / "more.jsonl", distance), "--workspace", root / "ws")
    assert res.exit_code == 0, res.output
    assert f"new {len(distance)}" in res.output and f"distance {len(distance)}" in res.output
    arcs = list(Workspace(root / "ws", create=False).arcs("distance"))
    copies = [a for a in arcs if a.id.endswith("-copy")]
    assert len(copies) == len(distance)
    # the pending window comes from the split's structure when the record has none
    assert all(
        a.spec.pending_window == design.split("distance").structure.pending_window for a in copies
    )
