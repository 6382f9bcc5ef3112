"""The LongMemEval export: one instance per probe point, in the layout LongMemEval's own code
reads (its evaluator ``src/evaluation/evaluate_qa.py``, its reader ``run_generation.py`` and its
retrieval code's evidence conventions)."""

from __future__ import annotations

import datetime as dt
import json

from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.exports.longmemeval import pending_sessions, probe_points
from agentmemgate.workspace import Workspace

# What LongMemEval's evaluator grades by (it raises NotImplementedError on any other type).
LME_TYPES = {
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
}
LME_KEYS = {
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
}


def _export(small_build, tmp_path):
    root, _ = small_build
    r = CliRunner().invoke(
        app,
        [
            "export",
            "--format",
            "longmemeval",
            "--workspace",
            str(root / "ws"),
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    return Workspace(root / "ws", create=False), tmp_path / "longmemeval"


def test_one_instance_per_probe_point_cut_at_the_probe(small_build, tmp_path):
    ws, folder = _export(small_build, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    for split, n in manifest["counts"]["questions"].items():
        # LongMemEval's evaluator: json.load, else one JSON object per line
        refs = json.loads((folder / f"{split}.json").read_text(encoding="utf-8"))
        arcs = {a.id: a for a in ws.arcs(split)}
        assert len(refs) == n == sum(len(probe_points(a)) for a in arcs.values())
        assert len({r["question_id"] for r in refs}) == n
        for r in refs:
            assert LME_KEYS <= set(r) and r["question_type"] in LME_TYPES
            assert "_abs" not in r["question_id"]  # LongMemEval reads _abs as abstention
            arc = arcs[r["amg_arc_id"]]
            i = r["amg_after_session"]
            # the haystack is the arc cut after the probe's session, in LongMemEval's shapes
            assert len(r["haystack_sessions"]) == len(r["haystack_dates"]) == i + 1
            assert len(r["haystack_session_ids"]) == i + 1
            assert [[t["content"] for t in s] for s in r["haystack_sessions"]] == [
                [t.text for t in s.turns] for s in arc.sessions[: i + 1]
            ]
            assert all(
                set(t) == {"role", "content", "has_answer"}
                for s in r["haystack_sessions"]
                for t in s
            )
            for d in r["haystack_dates"] + [r["question_date"]]:
                dt.datetime.strptime(d, "%Y/%m/%d (%a) %H:%M")
            assert r["question_date"] >= r["haystack_dates"][-1]
            # the answer is the value current then; the plan value rides along
            assert r["answer"] == r["amg_current_value"] == arc.expected_value_after_session[i]
            assert r["amg_plan_value"] == arc.spec.plan_value
            assert r["question"] == arc.spec.field.probe_question
            assert r["amg_probe"] == ("end" if i == len(arc.sessions) - 1 else "pending")
            assert r["amg_in_pending_window"] == (i in pending_sessions(arc))
            # evidence: LongMemEval's retrieval code finds it by "answer" in the session id
            # and has_answer on the user turns of those sessions
            ids = r["haystack_session_ids"]
            assert set(r["answer_session_ids"]) <= set(ids)
            for sid, sess in zip(ids, r["haystack_sessions"]):
                marked = any(t["has_answer"] for t in sess)
                assert ("answer" in sid) == (sid in r["answer_session_ids"]) == marked
                assert not any(t["has_answer"] for t in sess if t["role"] == "assistant")
            assert r["answer_session_ids"], "every probe has the statement of its value"


def test_probe_points_cover_the_pending_window_and_the_end(small_build, tmp_path):
    ws, _ = _export(small_build, tmp_path)
    for arc in ws.arcs("core"):
        points = probe_points(arc)
        sessions = [p.after_session for p in points]
        last = len(arc.sessions) - 1
        assert sessions[-1] == last and points[-1].place == "end"
        window = pending_sessions(arc)
        assert set(sessions) == set(window) | {last}
        if arc.spec.outcome in ("abandoned", "came_true"):
            assert list(window) == list(range(arc.plan_turn.session, arc.outcome_turn.session))
        if arc.spec.outcome == "open":
            assert points[-1].in_pending_window


def test_the_dataset_export_is_untouched_and_bad_formats_refused(small_build, tmp_path):
    root, _ = small_build
    r = CliRunner().invoke(
        app, ["export", "--format", "lme", "--workspace", str(root / "ws"), "--out", str(tmp_path)]
    )
    assert r.exit_code == 1 and "--format must be dataset or longmemeval" in r.output
    assert not any(tmp_path.iterdir())
