"""`amg statements label`: majority of model votes, ties flagged, cross-family relabel."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.classify import label_statements, majority
from agentmemgate.cli import app
from agentmemgate.corpora import import_statements, load_set
from agentmemgate.errors import SameFamilyJudge
from agentmemgate.llm import get_model

runner = CliRunner()
TEXTS = {
    "s1": "I might move to Seattle next year.",
    "s2": "I love jazz.",
    "s3": "I saw the new museum.",
    "s4": "I moved to Denver last month.",
}
VOTES = {
    "s1": ["speculative"] * 3,
    "s2": ["other", "other", "completed_event"],
    "s3": ["speculative", "other", "completed_event"],
    "s4": ["other"] * 3,
}


def _set(ws, tmp_path, name="set"):
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps({"id": k, "text": v}) for k, v in TEXTS.items()))
    import_statements(ws, name, f)


def _scripted(name):
    model = get_model(f"scripted:{name}")

    def answer(request):
        sid = next(k for k, v in TEXTS.items() if v in request.prompt)
        vote = int(request.seed_key.split(":")[0].removeprefix("run") or 0)
        return VOTES[sid][vote]

    return model.respond_with(answer)


def test_majority():
    assert majority(["a", "a", "b"]) == "a"
    assert majority(["a", "b"]) is None and majority([]) is None


def test_votes_ties_and_cross_family_relabel(ws, tmp_path):
    _set(ws, tmp_path)
    model = _scripted("voter")
    s = label_statements(ws, "set", ["scripted:voter"], votes=3, relabel="offline")
    items = {x.id: x for x in load_set(ws, "set")}
    assert (items["s1"].reference, items["s1"].reference_status) == ("speculation", "agreed")
    assert (items["s2"].reference, items["s2"].reference_status) == ("other", "agreed")
    assert (items["s3"].reference, items["s3"].reference_status) == (None, "tie")
    assert (items["s4"].reference, items["s4"].relabel, items["s4"].reference_status) == (
        "other",
        "completed_event",
        "disputed",
    )
    assert (s.labeled, s.ties, s.agreed, s.disputed) == (3, 1, 2, 1)
    assert (s.agreement.k, s.agreement.n) == (2, 3)
    assert s.commit_hold_agreement.k == 3  # other vs completed_event both commit
    assert len(model.history) == 12 and {r.seed_key for r in model.history} == {
        "run0:vote0",
        "run1:vote0",
        "run2:vote0",
    }
    text = "\n".join(s.lines())
    assert "agreement 2/3 = 66.7%" in text and "Agreed: 2; disputed: 1" in text
    # resumable: nothing is asked again
    again = label_statements(ws, "set", ["scripted:voter"], votes=3, relabel="offline")
    assert len(model.history) == 12 and again.agreed == 2


def test_report_warns_when_references_are_the_classifiers_own_votes(ws, tmp_path):
    from agentmemgate.classify import classifier_report, classify_set

    _set(ws, tmp_path)
    label_statements(ws, "set", ["offline"])
    classify_set(ws, "set", "offline")
    rep = classifier_report(ws, "set", resamples=20, plots=False)
    assert rep.classifiers[0].reference_from_same_model
    assert "WARNING: the reference labels are this model's own votes" in "\n".join(rep.lines())


def test_relabel_must_come_from_another_family(ws, tmp_path):
    _set(ws, tmp_path)
    _scripted("a")
    _scripted("b")
    with pytest.raises(SameFamilyJudge, match="same family \\(scripted\\) as voter"):
        label_statements(ws, "set", ["scripted:a"], relabel="scripted:b")
    s = label_statements(ws, "set", ["scripted:a"], relabel="scripted:b", allow_same_family=True)
    assert s.agreed == 3 and s.ties == 1


def test_failed_votes_leave_statements_unlabeled_and_are_retried(ws, tmp_path):
    _set(ws, tmp_path)
    model = get_model("scripted:mute")
    model.respond_with(lambda r: "no idea")
    s = label_statements(ws, "set", ["scripted:mute"], votes=1)
    assert s.errors == 4 and s.labeled == 0 and s.unlabeled == 4
    assert "the reply 'no idea' is not one of: speculative" in s.first_error
    assert all(x.reference_status is None for x in load_set(ws, "set"))
    assert "Votes that failed: 4 (a re-run asks again)" in "\n".join(s.lines())
    # the re-asks carried the problem back; nothing invalid was cached, so a re-run asks again
    assert sum("NOT ACCEPTED" in r.prompt for r in model.history) == 8  # two re-asks per vote
    asked = len(model.history)
    label_statements(ws, "set", ["scripted:mute"], votes=1)
    assert len(model.history) == 2 * asked


def test_imported_reference_labels_are_kept_without_replace(ws, tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"id": k, "text": v, **({"reference": "other"} if k == "s2" else {})})
            for k, v in TEXTS.items()
        )
    )
    import_statements(ws, "mixed", f)
    model = _scripted("keep")
    s = label_statements(ws, "mixed", ["scripted:keep"], votes=3)
    items = {x.id: x for x in load_set(ws, "mixed")}
    assert (items["s2"].reference, items["s2"].reference_status) == ("other", "imported")
    assert not any(TEXTS["s2"] in r.prompt for r in model.history)  # not even voted on
    assert s.kept_imported == 1 and "Imported reference labels kept: 1" in "\n".join(s.lines())
    assert items["s1"].reference_status == "voted"
    s = label_statements(ws, "mixed", ["scripted:keep"], votes=3, replace=True)
    items = {x.id: x for x in load_set(ws, "mixed")}
    assert items["s2"].reference_status == "voted" and s.kept_imported == 0
    all_imported = tmp_path / "gold.jsonl"
    all_imported.write_text(
        json.dumps({"id": "g1", "text": "I moved.", "reference": "completed_event"})
    )
    import_statements(ws, "gold", all_imported)
    r = runner.invoke(
        app,
        ["statements", "label", "gold", "--voters", "scripted:keep", "--workspace", str(ws.path)],
    )
    assert r.exit_code == 1 and "imported reference label; pass --replace" in r.output
    assert {x.reference_status for x in load_set(ws, "gold")} == {"imported"}


def test_cli_label(tmp_path):
    ws = str(tmp_path / "ws")
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps({"id": k, "text": v}) for k, v in TEXTS.items()))
    assert (
        runner.invoke(app, ["statements", "import", "s", str(f), "--workspace", ws]).exit_code == 0
    )
    _scripted("cli")
    r = runner.invoke(
        app,
        [
            "statements",
            "label",
            "s",
            "--voters",
            "scripted:cli",
            "--votes",
            "3",
            "--relabel",
            "offline",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 0, r.output
    assert "Reference labels: 3 (ties flagged, no reference: 1)" in r.output
    r = runner.invoke(
        app,
        [
            "classify",
            "--statements",
            "s",
            "--classifier",
            "scripted:cli",
            "--no-progress",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app,
        [
            "report",
            "classifier",
            "s",
            "--resamples",
            "20",
            "--workspace",
            ws,
            "--out-dir",
            str(tmp_path / "plots"),
        ],
    )
    assert r.exit_code == 0, r.output
    calls = r.output.split(
        "Model calls in this workspace (call log, `amg classify` and `amg statements label`):\n"
    )[1].splitlines()[0]
    import sqlite3

    logged = (
        sqlite3.connect(f"{ws}/workspace.db")
        .execute(
            "select count(*) from llm_calls where command in ('amg classify', 'amg statements label')"
        )
        .fetchone()[0]
    )
    assert logged > 12  # 12 votes, then the classifier's calls
    assert calls.startswith(f"  scripted:cli: {logged} calls") and calls.endswith("; $0.00")
    r = runner.invoke(
        app,
        [
            "statements",
            "label",
            "s",
            "--voters",
            "scripted:cli",
            "--relabel",
            "scripted:x",
            "--workspace",
            ws,
        ],
    )
    assert r.exit_code == 1 and "Error: Relabeler" in r.output and "--allow-same-family" in r.output


def test_the_plan_counts_the_votes_not_cast_and_stores_nothing(ws, tmp_path):
    from agentmemgate.classify import plan_labels

    _set(ws, tmp_path)
    _scripted("voter")
    votes = 3
    want = len(TEXTS) * votes + len(TEXTS)  # the voter's votes and one relabel vote each
    assert plan_labels(ws, "set", ["scripted:voter"], votes=votes, relabel="offline") == want
    assert not ws.db["statement_votes"].exists() or ws.db["statement_votes"].count == 0
    assert all(x.reference_status != "voted" for x in load_set(ws, "set"))
    label_statements(ws, "set", ["scripted:voter"], votes=votes, relabel="offline")
    assert plan_labels(ws, "set", ["scripted:voter"], votes=votes, relabel="offline") == 0
