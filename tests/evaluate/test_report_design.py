"""The eval report follows the workspace's design: one "by level of FACTOR" table and figure per
factor with cells (the paper's Tables 6 and 7 for its own), split titles and order from it."""

from __future__ import annotations

import json

import pytest
from extend_design import DISTANCE_LEVELS, extended_design

from agentmemgate.design import paper_design
from agentmemgate.evaluate import compute_report, report_markdown, run_eval, write_report
from agentmemgate.evaluate._report_md import FIGURE2, FIGURE3, level_views
from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

N = 2  # arcs per plan cell
SPLITS = ["controlled", "distance"]


def test_the_paper_design_has_the_papers_tables_6_and_7():
    design = paper_design()
    views = level_views(design, list(design.splits))
    assert [(v.factor.name, v.split, v.paper and v.paper[0], v.figure[1]) for v in views] == [
        ("hedge_strength", "controlled", "Table 6", FIGURE2),
        ("confirmation_wording", "controlled", "Table 7", FIGURE3),
    ]
    hedge = design.factor("hedge_strength")
    assert views[0].levels == tuple(lv.name for lv in hedge.levels if not lv.control)
    assert views[1].levels == design.levels("confirmation_wording")
    assert level_views(design, ["core", "heldout"]) == []


@pytest.fixture(scope="module")
def extended(tmp_path_factory):
    """The extended design (a new hedge level and a distance split), built offline and run."""
    root = tmp_path_factory.mktemp("extended")
    folder, design = extended_design(root)
    ws = Workspace(root / "ws")
    generate(
        ws,
        get_renderer("offline", design=design),
        SPLITS,
        n_per_cell=N,
        design=design,
        show_progress=False,
    )
    run_eval(ws, SPLITS, ["literal-ungated", "literal-gated"], show_progress=False)
    return root, design, ws


def _rows(md: str, heading: str) -> list[str]:
    """The first cells of the table under ``heading``."""
    part = md.split(heading, 1)[1].split("\n## ", 1)[0]
    return [
        line.split(" | ")[0].lstrip("| ")
        for line in part.splitlines()
        if line.startswith("| ")
        and not line.startswith("| Level")
        and not line.startswith("| Wording level")
    ]


def test_a_new_hedge_level_gets_its_row_in_design_order(extended):
    _, design, ws = extended
    md = report_markdown(compute_report(ws))
    hedge = [lv for lv in design.factor("hedge_strength").levels if not lv.control]
    counts = {c.level: n for c, n in design.cell_counts("controlled", N)}
    assert _rows(
        md, "## At-end contamination by hedge-strength level (controlled-difficulty; Table 6)"
    ) == [f"{lv.name.replace('_', ' ')} (n={counts[lv.name]})" for lv in hedge]
    assert "conditional" in [lv.name for lv in hedge]


def test_a_structure_factor_gets_a_by_level_table_and_figure(extended, tmp_path):
    _, design, ws = extended
    r = compute_report(ws)
    md = report_markdown(r, images=True)
    title = design.split("distance").title
    heading = f"## By level of distance ({title})"
    assert heading in md and design.factor("distance").description in md
    counts = {c.level: n for c, n in design.cell_counts("distance", N)}
    rows = _rows(md, heading)
    for measure in ("Contamination while pending", "Contamination at end", "Task probes correct"):
        assert [x for x in rows if measure in x] == [
            f"{lv.replace('_', ' ')}: {measure} (n={counts[lv]})" for lv in DISTANCE_LEVELS
        ]
    assert "![By level of distance](figure_distance_distance.png)" in md
    arcs = next(x for x in md.splitlines() if x.startswith("- Arcs: "))
    for split in SPLITS:
        assert f"{design.split(split).title} {design.arcs_in(split, N)}" in arcs

    paths = write_report(r, tmp_path / "rep")
    assert sorted(p.name for p in paths if p.suffix == ".png") == sorted(
        [FIGURE2, FIGURE3, "figure_distance_distance.png"]
    )
    by_level = json.loads((tmp_path / "rep" / "eval.json").read_text())["systems"]["literal-gated"][
        "distance"
    ]["by_level"]
    assert list(by_level) == list(DISTANCE_LEVELS)
    assert {lv: by_level[lv]["end_contamination"]["n"] for lv in by_level} == counts


def test_splits_default_to_the_designs(extended):
    _, design, ws = extended
    r = compute_report(ws)
    assert r.meta.splits == list(design.split_names)
    assert list(r.systems["literal-gated"]) == SPLITS  # in the design's order, as scored
    assert {d.split for d in r.differences} == set(SPLITS)
