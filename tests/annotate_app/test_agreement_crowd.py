"""The agreement report on crowd audits: Fleiss' kappa and Gwet's AC1/AC2 in Markdown, HTML and
JSON; screened-out people and check items left out; each person's agreement with the final
label."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentmemgate.annotate_app import agreement_report, import_labels
from agentmemgate.annotate_app.chance import coefficient, rating_counts
from agentmemgate.cli import app

from .test_study import two_careful_one_screened

runner = CliRunner()


def test_open_audit_report_leaves_out_screened_people_and_checks(tmp_path):
    ws = two_careful_one_screened(tmp_path, gold=2, min_gold_accuracy=1.0)
    rep = agreement_report(ws, "crowd", resamples=0)
    assert rep.n_annotators == 2 and rep.screened_out == 1
    assert rep.n_items == 10  # the two gold items are not audited items
    assert rep.fleiss_kappa.n == rep.gwet_ac1.n == rep.n_items_multi == 10
    assert rep.gwet_ac1.value == 1.0 and rep.gwet_ac2 is None
    assert any(
        n.startswith("1 screened-out person left out: p0003 (gold: 0 of")
        for n in rep.diagnostics.notes
    )
    assert {d.annotator: d.vs_final.value for d in rep.diagnostics.per_annotator} == {
        "p0001": 1.0,
        "p0002": 1.0,
    }
    everyone = agreement_report(ws, "crowd", resamples=0, include_screened=True)
    assert everyone.n_annotators == 3 and everyone.screened_included

    res = runner.invoke(
        app,
        ["report", "agreement", "crowd", "--json", "--resamples", "0", "--workspace", str(ws.path)],
    )
    data = json.loads(res.stdout)
    for key in ("fleiss_kappa", "gwet_ac1"):
        assert {"value", "ci_low", "ci_high", "n"} <= set(data[key])
    assert "gwet_ac2" not in data  # nominal task: AC2 does not apply
    res = runner.invoke(
        app,
        ["report", "agreement", "crowd", "--html", "--resamples", "0", "--workspace", str(ws.path)],
    )
    assert res.exit_code == 0, res.output
    assert "Gwet's AC1: 1.000" in res.stdout and "Screened-out people: 1, left out" in res.stdout
    page = (ws.path / "reports" / "agreement-crowd" / "report.html").read_text()
    assert "Fleiss&#x27; kappa" in page or "Fleiss' kappa" in page


def test_ordered_task_adds_ac2_and_the_numbers_match_the_estimator(tmp_path, arcs_ws):
    """A difficulty audit of an ordered factor: AC2 over the scale with ordinal weights, the same
    numbers ``chance`` gives on the same labels."""
    rows = ["item_id,annotator,label"]
    levels = ["confident_no_date", "weakly_hedged", "strongly_hedged"]
    for i in range(8):
        for who, shift in (("ana", 0), ("ben", 0), ("cy", 1 if i % 3 == 0 else 0)):
            rows.append(f"I{i},{who},{levels[min(2, (i % 3) + shift)]}")
    f = tmp_path / "l.csv"
    f.write_text("\n".join(rows) + "\n")
    import_labels(arcs_ws, "hs", f, task="difficulty:hedge_strength")
    rep = agreement_report(arcs_ws, "hs", resamples=0)
    assert rep.ordered and rep.gwet_ac2 is not None and rep.gwet_ac2.weights == "ordinal"
    by_item: dict[str, list[str]] = {}
    for line in rows[1:]:
        item, _, lab = line.split(",")
        by_item.setdefault(item, []).append(lab)
    scale = list(rep.labels[:-1])
    want = coefficient(rating_counts(list(by_item.values()), scale), "gwet", "ordinal")
    assert rep.gwet_ac2.value == want.value and rep.gwet_ac2.ci_low == want.ci_low
    assert 0 < rep.gwet_ac2.value < 1 and rep.fleiss_kappa.value < rep.gwet_ac2.value
