"""LongMemEval in and out: the export's questions answered by a harness, read back and scored by
the black-box protocol (pending contamination as exposure, premature writes, end, accuracy)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.evaluate import compute_report
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from agentmemgate.pipeline import build

    root = tmp_path_factory.mktemp("lme")
    build(root / "ws", root / "out", split="core", n_per_cell=1, show_progress=False)
    r = amg("export", "--format", "longmemeval", "--workspace", root / "ws", "--out", root / "out")
    assert r.exit_code == 0, r.output
    refs = json.loads((root / "out" / "longmemeval" / "core.json").read_text())
    return root, refs


def hypotheses(path, refs, answer):
    path.write_text(
        "".join(
            json.dumps({"question_id": r["question_id"], "hypothesis": answer(r)}) + "\n"
            for r in refs
        )
    )
    return path


def test_round_trip_scores_what_the_hypotheses_say(exported, tmp_path):
    root, refs = exported
    ws_dir = root / "ws"
    # a system that always answers the current value: no exposure, every probe right
    right = hypotheses(tmp_path / "right.jsonl", refs, lambda r: f"The user uses {r['answer']}.")
    r = amg(
        "eval",
        "answers",
        right,
        "--format",
        "longmemeval",
        "--name",
        "right",
        "--workspace",
        ws_dir,
    )
    assert r.exit_code == 0, r.output
    assert f"right: {len(refs)} answers" in r.output
    # one that asserts the plan at every probe inside the pending window
    plan = hypotheses(
        tmp_path / "plan.jsonl",
        refs,
        lambda r: (
            f"The user uses {r['amg_plan_value'] if r['amg_in_pending_window'] else r['answer']}."
        ),
    )
    r = amg(
        "eval", "answers", plan, "--format", "longmemeval", "--name", "plan", "--workspace", ws_dir
    )
    assert r.exit_code == 0, r.output
    report = compute_report(
        Workspace(ws_dir, create=False), ["core"], systems_wanted=["right", "plan"]
    )
    rows = {row.system: row for row in report.summary}
    at_risk = {r["amg_arc_id"] for r in refs if r["amg_at_risk"]}
    came_true = {
        r["amg_arc_id"]
        for r in refs
        if r["amg_outcome"] == "came_true" and r["amg_in_pending_window"]
    }
    arcs = {r["amg_arc_id"] for r in refs}
    ok = rows["right"]
    assert ok.pending_source == "answers (exposure)"
    assert (ok.pending_contamination.k, ok.pending_contamination.n) == (0, len(at_risk))
    assert (ok.task_accuracy.k, ok.task_accuracy.n) == (len(arcs), len(arcs))
    assert (ok.premature_write.k, ok.premature_write.n) == (0, len(came_true))
    bad = rows["plan"]
    assert bad.pending_contamination.k == len(at_risk)
    assert bad.premature_write.k == len(came_true)
    open_arcs = {r["amg_arc_id"] for r in refs if r["amg_outcome"] == "open"}
    assert bad.end_contamination.k == len(open_arcs)  # an open plan's end probe is in its window
    # the answers are stored per probed session, with nothing at sessions never asked
    n_rows = (
        Workspace(ws_dir, create=False)
        .db.execute("select count(*) from eval_answers where name = 'plan'")
        .fetchone()[0]
    )
    assert n_rows == len(refs)


def test_a_json_list_of_hypotheses_is_read_too(exported, tmp_path):
    root, refs = exported
    path = tmp_path / "h.json"
    path.write_text(
        json.dumps(
            [
                {"question_id": r["question_id"], "hypothesis": r["answer"], "autoeval_label": {}}
                for r in refs
            ]
        )
    )
    r = amg(
        "eval",
        "answers",
        path,
        "--format",
        "longmemeval",
        "--name",
        "listed",
        "--workspace",
        root / "ws",
    )
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    "edit, needle",
    [
        (
            lambda rows: rows + [{"question_id": "nope_after0", "hypothesis": "x"}],
            "unknown question_id 'nope_after0'",
        ),
        (lambda rows: rows + rows[:1], "duplicate hypothesis for question_id"),
        (lambda rows: rows[1:], "has no hypothesis for question_id"),
        (
            lambda rows: [{"question_id": rows[0]["question_id"]}] + rows[1:],
            "hypothesis: Field required",
        ),
        (lambda rows: [], "no hypotheses"),
    ],
)
def test_a_bad_hypothesis_file_is_one_line_and_stores_nothing(exported, tmp_path, edit, needle):
    root, refs = exported
    rows = [{"question_id": r["question_id"], "hypothesis": r["answer"]} for r in refs]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in edit(rows)))
    r = amg(
        "eval",
        "answers",
        path,
        "--format",
        "longmemeval",
        "--name",
        "bad",
        "--workspace",
        root / "ws",
    )
    assert r.exit_code == 1 and needle in r.output, r.output
    assert "Traceback" not in r.output
    ws = Workspace(root / "ws", create=False)
    assert ws.db.execute("select count(*) from eval_answers where name = 'bad'").fetchone()[0] == 0
