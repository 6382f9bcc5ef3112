"""The "Extend the benchmark" guide (docs/how-to/extend.md), end to end through the ``amg`` CLI: a copy
of the paper's design gains a hedge level and a structure factor with data files only, and is
built, validated, audited, evaluated and reported. Sizes are scaled down (``--n-per-cell``); every
expected count comes from the design."""

from __future__ import annotations

import csv
import json

from extend_design import DISTANCE_LEVELS, add_conditional, add_conditional_rule, add_distance
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import load_design

runner = CliRunner()
N = 4  # --n-per-cell


def amg(*args: str, code: int = 0) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output
    return res.output


def test_a_new_level_and_a_new_factor_go_through_the_whole_toolkit(tmp_path):
    d, ws, out = tmp_path / "my-design", tmp_path / "ws-ext", tmp_path / "exports-ext"
    amg("design", "init", str(d), "--from", "paper")
    add_conditional(d, rule=False)
    missing = amg("design", "check", str(d), code=1)
    assert "recovery.toml: hedge_strength.rules: no rule gives level 'conditional'" in missing
    add_conditional_rule(d)
    add_distance(d, n=20, outcomes=("came_true", "open"))
    assert amg("design", "check", str(d)).strip().endswith("no problems")

    design = load_design(d)
    amg(
        "build",
        "--design",
        str(d),
        "--n-per-cell",
        str(N),
        "--workspace",
        str(ws),
        "--out",
        str(out),
    )
    counts = {s: design.arcs_in(s, N) for s in design.splits}
    for split, n in counts.items():
        assert len((out / split / "data.jsonl").read_text().splitlines()) == n

    # validation: the new level and the new factor are recovered blind
    report = json.loads(amg("report", "validation", "--workspace", str(ws), "--json"))
    by_factor = report["by_judge"]["offline"]["recovery"]["by_factor"]
    hedge, dist = by_factor["hedge_strength"], by_factor["distance"]
    assert "conditional" in hedge["levels"] and hedge["ordinal"]["order"][2] == "conditional"
    assert hedge["confusion"]["conditional"]["conditional"] >= 1
    assert dist["levels"] == list(DISTANCE_LEVELS) and dist["ordinal"] is not None
    assert dist["n"] == counts["distance"]

    # audit: the design's levels, ordinal agreement
    amg(
        "audit",
        "create",
        "distance-check",
        "--task",
        "difficulty:distance",
        "--from",
        "arcs:distance",
        "--annotators",
        "ann,bob",
        "--workspace",
        str(ws),
    )
    amg("audit", "export", "distance-check", "--workspace", str(ws))
    refs = list(csv.DictReader(open(ws / "audit-exports" / "distance-check" / "references.csv")))
    assert len(refs) == counts["distance"]
    labels = tmp_path / "labels.csv"
    with open(labels, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "annotator", "label"])
        for i, r in enumerate(refs):
            w.writerow([r["item_id"], "ann", r["label"]])
            w.writerow([r["item_id"], "bob", r["label"] if i % 3 else DISTANCE_LEVELS[1]])
    amg("audit", "import", "distance-check", str(labels), "--workspace", str(ws))
    agreement = amg("report", "agreement", "distance-check", "--workspace", str(ws))
    assert "labels: adjacent, one between, two between, can't tell (ordered)" in agreement
    assert "Krippendorff's alpha (ordinal)" in agreement

    # evaluation: Table 6 gains the level, the factor gets its own table and figure
    amg("eval", "run", "--workspace", str(ws))
    amg("report", "eval", "--workspace", str(ws), "--out", str(tmp_path / "report-ext"))
    md = (tmp_path / "report-ext" / "eval.md").read_text()
    table6 = md.split("## At-end contamination by hedge-strength level")[1].split("\n## ")[0]
    n_conditional = next(
        n for c, n in design.cell_counts("controlled", N) if c.level == "conditional"
    )
    assert f"| conditional (n={n_conditional}) |" in table6
    assert "## By level of distance (plan-outcome distance)" in md
    assert (tmp_path / "report-ext" / "figure_distance_distance.png").is_file()

    # the card says what the files were built from and how to rebuild them
    card = (out / "distance" / "README.md").read_text()
    assert "- Design: `my_design`" in card
    assert f"`amg build --design DIR --seed 0 --n-per-cell {N}`" in card
