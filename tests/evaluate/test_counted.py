"""The score that counts is the same wherever it is read: ``amg report eval``, ``amg eval show``
and the viewer count the same scores, and leave out the same ones (an arc rebuilt since it was
scored)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.evaluate import compute_report, run_eval
from agentmemgate.evaluate.counted import arc_result, counting_judge, system_runs
from agentmemgate.view.data import Reader
from agentmemgate.workspace import Workspace

SYSTEMS = ["literal-gated", "literal-ungated"]
MEASURE = "end_contamination"


def show(ws_path, arc_id: str, system: str) -> str:
    r = CliRunner().invoke(
        app, ["eval", "show", arc_id, "--system", system, "--workspace", ws_path]
    )
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """The core split run by two systems, then one arc rewritten (its first turn): its stored
    scores were made on the text before."""
    from agentmemgate.pipeline import build

    root = tmp_path_factory.mktemp("counted")
    build(root / "ws", root / "out", split="core", n_per_cell=1, show_progress=False)
    ws = Workspace(root / "ws", create=False)
    run_eval(ws, ["core"], SYSTEMS, show_progress=False)
    arcs = list(ws.arcs("core"))
    arc = next(a for a in arcs if a.spec.outcome == "open")
    arc.sessions[0].turns[0].text += " (said again, later)"
    ws.save_arc(arc)
    ws.db.conn.close()
    return root / "ws", arc.id, [a.id for a in arcs]


def test_a_rebuilt_arcs_old_score_counts_nowhere(rebuilt):
    """``amg eval show`` used to print the stored score of a rebuilt arc (the report left it out);
    now it says the score is not counted, as the report and the viewer have it."""
    path, changed, arcs = rebuilt
    ws = Workspace(path, create=False)
    report = compute_report(ws, ["core"])
    assert report.meta.systems["literal-gated"].arcs_scored == len(arcs) - 1
    run = system_runs(ws)["literal-gated"]
    got = arc_result(ws, run, changed)
    assert got.stale and got.score is None and got.judge == counting_judge(ws).spec == "offline"

    out = show(path, changed, "literal-gated")
    assert "Note: the arc was rebuilt after this trace was made" in out
    assert "Measures (judge offline): not counted" in out
    assert not re.search(rf"^  {MEASURE}: (yes|no)", out, re.M)

    r = Reader(path)
    assert changed not in r.scores("literal-gated", arcs)
    traced = r.trace(changed, "literal-gated")
    assert traced["stale"] and traced["score"] is None
    r.close()


def test_show_and_the_viewer_count_what_the_report_counts(rebuilt):
    """Over every arc, the measure outcomes ``eval show`` prints and the viewer lists add up to
    the report's k/n."""
    path, changed, arcs = rebuilt
    ws = Workspace(path, create=False)
    report = compute_report(ws, ["core"]).to_json()
    r = Reader(path)
    for system in SYSTEMS:
        stat = report["systems"][system]["core"][MEASURE]
        shown = [
            m.group(1)
            for a in arcs
            if (m := re.search(rf"^  {MEASURE}: (yes|no)", show(path, a, system), re.M))
        ]
        assert (shown.count("yes"), len(shown)) == (stat["k"], stat["n"])
        viewed = [
            s["values"][MEASURE] for s in r.scores(system, arcs).values() if MEASURE in s["values"]
        ]
        assert (sum(viewed), len(viewed)) == (stat["k"], stat["n"])
    r.close()
