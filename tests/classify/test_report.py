"""`amg classify` and `amg report classifier`: stored distributions, metrics, plots, JSON."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from agentmemgate.classify import classifier_report, classify_set, plan_classify_set, stored
from agentmemgate.cli import app
from agentmemgate.corpora import import_statements
from agentmemgate.errors import BadInput
from agentmemgate.llm import get_model

runner = CliRunner()
ROWS = [
    ("I might move to Seattle next year.", "speculation"),
    ("I'm thinking about adopting a dog.", "speculation"),
    ("We're planning to switch to a new bank soon.", "speculation"),
    ("Not sure whether to take the Denver job.", "speculation"),
    ("I moved to Denver last month.", "completed_event"),
    ("I finally bought a new bike yesterday.", "completed_event"),
    ("I just started at Acme.", "completed_event"),
    ("Actually, I was wrong: I live in Boston.", "explicit_correction"),
    ("I love jazz.", "other"),
    ("Can you recommend a hotel?", "other"),
    ("I usually run in the morning.", "other"),
    ("My favorite color is green.", "other"),
]


def _import(ws, tmp_path, rows=ROWS, name="gold"):
    f = tmp_path / f"{name}.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"id": f"s{i}", "text": t, "reference": r, "license": "MIT"})
            for i, (t, r) in enumerate(rows)
        )
    )
    import_statements(ws, name, f)


def test_the_plan_counts_the_pairs_not_stored_and_stores_nothing(ws, tmp_path):
    _import(ws, tmp_path)
    assert plan_classify_set(ws, "gold", "offline", runs=2) == 24
    assert stored(ws, "gold") == []
    classify_set(ws, "gold", "offline")
    assert plan_classify_set(ws, "gold", "offline", runs=2) == 12  # run 0 is stored


def test_classify_offline_runs_and_report(ws, tmp_path):
    _import(ws, tmp_path)
    out = tmp_path / "dist.jsonl"
    r = classify_set(ws, "gold", "offline", runs=2, out=out)
    assert (r.new, r.already_done, r.errors, r.written) == (24, 0, 0, 24)
    line = json.loads(out.read_text().splitlines()[0])
    assert set(line) >= {"id", "reference", "probs", "predicted", "run", "license"}
    assert line["license"] == "MIT" and line["classifier"] == "offline:lexicon.v2"
    again = classify_set(ws, "gold", "offline", runs=2)
    assert (again.new, again.already_done) == (0, 24)

    rep = classifier_report(ws, "gold", resamples=200, out_dir=tmp_path / "plots")
    c = rep.classifiers[0]
    assert (c.n, c.n_commit, c.n_hold, c.runs) == (12, 8, 4, 2)
    rows = stored(ws, "gold", "offline:lexicon.v2")
    run0 = {x.statement_id: x.p_commit for x in rows if x.run == 0}
    y = [int(r != "speculation") for _, r in ROWS]
    assert c.auroc.value == pytest.approx(roc_auc_score(y, [run0[f"s{i}"] for i in range(12)]))
    assert c.accuracy.n == 12 and len(c.per_class) == 4 and c.macro_f1.resamples == 200
    assert sum(map(sum, c.confusion)) == 12
    assert c.stability.same_label_all_runs.k == 12 and c.stability.sd_mean == 0
    assert (tmp_path / "plots" / "offline_lexicon.v2-confusion.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "roc.png").is_file()
    text = "\n".join(rep.lines())
    for needle in (
        "AUROC, P(commit) vs reference commit/hold:",
        "Argmax accuracy (4 classes): ",
        "Macro-F1:",
        "Stability over 2 runs",
        "200 resamples, seed 0",
        "Source licenses: MIT",
    ):
        assert needle in text


def test_two_classifiers_are_compared_on_shared_statements(ws, tmp_path):
    _import(ws, tmp_path)
    classify_set(ws, "gold", "offline")
    model = get_model("scripted:truth")
    model.respond_with(lambda r: "no" if "might" in r.prompt or "thinking" in r.prompt else "yes")
    res = classify_set(ws, "gold", "scripted:truth", rubric="truth_now", method="votes", samples=1)
    assert res.errors == 0
    rep = classifier_report(ws, "gold", resamples=100, plots=False)
    assert [c.kind for c in rep.classifiers] == ["evidence_type", "binary"]
    binary = rep.classifiers[1]
    assert binary.accuracy is None and binary.per_class == [] and binary.routing_accuracy.n == 12
    d = rep.differences[0]
    assert (d.a, d.b) == ("offline:lexicon.v2", "scripted:truth|truth_now.v1|votes:k=1")
    assert d.difference.value == pytest.approx(rep.classifiers[0].auroc.value - binary.auroc.value)
    assert d.difference.n == 12


def test_one_class_reference_is_undefined(ws, tmp_path):
    _import(ws, tmp_path, rows=[(t, "other") for t, r in ROWS if r == "other"], name="flat")
    classify_set(ws, "flat", "offline")
    rep = classifier_report(ws, "flat", resamples=50, plots=False)
    c = rep.classifiers[0]
    assert c.auroc.value is None and "undefined (n=4)" in "\n".join(rep.lines())
    spec = c.per_class[0]
    assert (spec.label, spec.support, spec.predicted) == ("speculation", 0, 0)
    assert spec.precision.value is None and spec.precision.n == 0  # nothing predicted: undefined
    assert c.per_class[0].recall.value is None and c.per_class[0].recall.n == 0


def test_report_errors(ws, tmp_path):
    _import(ws, tmp_path, rows=[("I love jazz.", "other")], name="one")
    with pytest.raises(BadInput, match="No classifier results on set 'one'"):
        classifier_report(ws, "one")
    classify_set(ws, "one", "offline")
    with pytest.raises(BadInput, match="No results for classifier 'nope'"):
        classifier_report(ws, "one", classifiers=["nope"])
    with pytest.raises(BadInput, match="that both families agreed on"):
        f = tmp_path / "u.jsonl"
        f.write_text(json.dumps({"id": "a", "text": "hi"}))
        import_statements(ws, "u", f)
        classify_set(ws, "u", "offline")
        classifier_report(ws, "u", agreed_only=True)
    with pytest.raises(BadInput, match="No statement set 'missing'"):
        classifier_report(ws, "missing")


def test_cli_classify_and_report(tmp_path):
    ws = str(tmp_path / "ws")
    f = tmp_path / "g.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"id": f"s{i}", "text": t, "reference": r}) for i, (t, r) in enumerate(ROWS)
        )
    )
    assert (
        runner.invoke(app, ["statements", "import", "g", str(f), "--workspace", ws]).exit_code == 0
    )
    r = runner.invoke(
        app,
        [
            "classify",
            "--statements",
            "g",
            "--runs",
            "3",
            "--workspace",
            ws,
            "--out",
            str(tmp_path / "d.jsonl"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "offline:lexicon.v2 on g: 36 new, 0 already done, 0 failed" in r.output
    r = runner.invoke(
        app,
        [
            "report",
            "classifier",
            "g",
            "--json",
            "--resamples",
            "100",
            "--workspace",
            ws,
            "--out-dir",
            str(tmp_path / "p"),
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["classifiers"][0]["stability"]["runs"] == 3 and data["resamples"] == 100
    r = runner.invoke(
        app,
        [
            "report",
            "classifier",
            "g",
            "--resamples",
            "100",
            "--workspace",
            ws,
            "--out-dir",
            str(tmp_path / "p"),
        ],
    )
    assert "Confusion (rows reference, columns predicted):" in r.output
    r = runner.invoke(app, ["classify", "--statements", "nope", "--workspace", ws])
    assert r.exit_code == 1 and r.output.startswith("Error: No statement set 'nope'")
    r = runner.invoke(
        app,
        [
            "classify",
            "--statements",
            "g",
            "--classifier",
            "offline",
            "--rubric",
            "should_store",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 1 and "evidence_type rubric only" in r.output
