"""`amg audit items`, and audits in and out of Label Studio (blind tasks with a labeling config
for the task's labels; its JSON export read back as one annotator per user)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from agentmemgate.annotate_app import create_audit, import_labels
from agentmemgate.annotate_app.interop import audit_items
from agentmemgate.annotate_app.label_studio import export_label_studio
from agentmemgate.annotate_app.study import StudyOptions
from agentmemgate.cli import app
from agentmemgate.errors import BadInput
from agentmemgate.workspace import Workspace

from .conftest import STATEMENTS

runner = CliRunner()


def test_audit_items_lists_ids_what_is_shown_and_the_context(tmp_path, statements_file):
    ws = Workspace(tmp_path / "ws")
    create_audit(ws, "a", "evidence_type", str(statements_file), annotators=["ana"])
    res = audit_items(ws, "a")
    by = {it.item_id: it for it in res.items}
    assert set(by) == {s["id"] for s in STATEMENTS}
    assert by["ID-spec-1"].shown.endswith(STATEMENTS[0]["text"])
    assert by["ID-spec-1"].context == [
        "user: I live in Boston now",
        "assistant: <script>alert(1)</script> Nice!",
    ]
    out = runner.invoke(app, ["audit", "items", "a", "--workspace", str(ws.path)])
    assert out.exit_code == 0 and "ID-done-2\titem\tuser: I moved to Denver" in out.output
    data = json.loads(
        runner.invoke(app, ["audit", "items", "a", "--json", "--workspace", str(ws.path)]).stdout
    )
    assert len(data["items"]) == 4


def test_checks_are_named_for_the_owner(tmp_path):
    import csv

    from agentmemgate.annotate_app import export_audit, queues

    from .test_study import expected, source, work

    p, _ = source(tmp_path)
    ws = Workspace(tmp_path / "ws")
    made = create_audit(ws, "o", "evidence_type", str(p), study=StudyOptions(gold=1, attention=1))
    kinds = sorted(it.kind for it in audit_items(ws, "o").items)
    assert kinds.count("gold") == 1 and kinds.count("attention") == 1
    want = expected(ws)
    a = queues.arrive(ws, made.study_link.split("study=")[1], {"PROLIFIC_PID": "x"})
    work(ws, a.token, lambda i: want[i])
    rows = list(csv.DictReader(export_audit(ws, "o", tmp_path / "out")[0].open()))
    assert sorted(r["check"] for r in rows if r["check"]) == ["attention", "gold"]


def test_label_studio_export_is_blind_and_its_export_reads_back(tmp_path, statements_file):
    ws = Workspace(tmp_path / "ws")
    create_audit(ws, "a", "evidence_type", str(statements_file), annotators=["ana"])
    tasks_path, config_path = export_label_studio(ws, "a", tmp_path / "ls")
    tasks = json.loads(tasks_path.read_text())
    text = tasks_path.read_text()
    for s in STATEMENTS:  # no reference label travels with the tasks
        assert f'"{s["reference"]}"' not in text
    assert {t["data"]["item_id"] for t in tasks} == {s["id"] for s in STATEMENTS}
    config = ET.fromstring(config_path.read_text())
    choices = config.find("Choices")
    assert choices.get("name") == "label" and choices.get("toName") == "shown"
    aliases = [c.get("alias") for c in choices.findall("Choice")]
    assert aliases[-1] == "cant_tell" and "speculation" in aliases
    assert choices.find("Choice[@alias='cant_tell']").get("value") == "can't tell"

    # What Label Studio exports after two users labeled: values are the aliases (label ids),
    # one annotation cancelled, one in words rather than an id.
    def ann(user, choice, cancelled=False):
        return {
            "completed_by": user,
            "was_cancelled": cancelled,
            "lead_time": 4.5,
            "created_at": "2026-01-02T10:00:00Z",
            "result": [
                {
                    "from_name": "label",
                    "to_name": "shown",
                    "type": "choices",
                    "value": {"choices": [choice]},
                }
            ],
        }

    exported = [
        {
            "id": i,
            "data": t["data"],
            "annotations": [
                ann(7, "speculation"),
                ann({"id": 9, "email": "bo@lab.example"}, "can't tell"),
                ann(11, "other", cancelled=True),
            ],
        }
        for i, t in enumerate(tasks)
    ]
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported))
    res = import_labels(ws, "a", f, format="label-studio")
    assert res.annotators == ["bo_lab.example", "ls-user-7"] and res.n_rows == 8
    rows = ws.db.execute(
        "select annotator, label, active_seconds from audit_labels where source = 'import'"
    ).fetchall()
    assert {(a, lab) for a, lab, _ in rows} == {
        ("ls-user-7", "speculation"),
        ("bo_lab.example", "cant_tell"),
    }
    assert {s for *_, s in rows} == {4.5}

    res = runner.invoke(
        app, ["audit", "import", "copy", str(f), "--format", "label-studio", "--task",
              "evidence_type", "--workspace", str(ws.path)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output


def test_label_studio_files_that_do_not_fit_are_refused(tmp_path, statements_file):
    ws = Workspace(tmp_path / "ws")
    create_audit(ws, "a", "evidence_type", str(statements_file), annotators=["ana"])
    bad = tmp_path / "bad.json"
    for content, words in (
        ("{not json", "not a Label Studio JSON export"),
        ('{"a": 1}', "expected a list of tasks"),
        ('[{"data": {"text": "x"}}]', "has no data.item_id"),
        ('[{"data": {"item_id": "ID-spec-1"}, "annotations": []}]', "no completed annotations"),
    ):
        bad.write_text(content)
        with pytest.raises(BadInput, match=words):
            import_labels(ws, "a", bad, format="label-studio")
    with pytest.raises(BadInput, match="Unknown format 'xml'"):
        import_labels(ws, "a", bad, format="xml")
    res = runner.invoke(
        app, ["audit", "export", "a", "--format", "pdf", "--workspace", str(ws.path)]
    )
    assert res.exit_code == 1 and "choose labels or label-studio" in res.output
