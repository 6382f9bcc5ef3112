"""Each page of ``amg view`` under AppTest: what an empty workspace says, what an evaluated one
shows, and what is never shown."""

from __future__ import annotations

import sqlite3

import pytest

from agentmemgate.view.app import TITLES

from ._apptest import run, shown, texts
from .conftest import HOSTILE, HOSTILE_RATIONALE

FILLS = {
    "overview": "amg build",
    "arcs": "amg build",
    "results": "amg eval run",
    "trace": "amg eval run",
    "audits": "amg audit create",
    "mining": "amg mine hedges",
}


@pytest.mark.parametrize("page", list(TITLES))
def test_an_empty_workspace_says_which_command_fills_each_page(monkeypatch, empty_ws, page):
    at = run(monkeypatch, empty_ws, page)
    assert not at.error
    assert any(FILLS[page] in i.value for i in at.info), [i.value for i in at.info]


@pytest.mark.parametrize("page", list(TITLES))
def test_every_page_renders_an_evaluated_workspace(monkeypatch, viewed, page):
    path, _, _ = viewed
    at = run(monkeypatch, path, page)
    assert not at.error, [e.value for e in at.error]
    assert TITLES[page] in [t.value for t in at.title]


def _gated_vs_ungated(path) -> tuple[str, int]:
    """An arc where the two systems first differ at some turn, and that turn."""
    from agentmemgate.view.data import Reader
    from agentmemgate.view.trace import first_difference

    r = Reader(path)
    for (arc,) in r.rows(
        "select arc_id from eval_traces where system = 'literal-gated' order by rowid"
    ):
        t = first_difference(r.trace(arc, "literal-gated"), r.trace(arc, "literal-ungated"))
        if t is not None:
            return arc, t
    raise AssertionError("no arc where gated and ungated differ")


def test_an_arc_reads_as_a_chat_with_its_turns_marked_and_its_ground_truth(monkeypatch, viewed):
    path, _, _ = viewed
    arc, _ = _gated_vs_ungated(path)
    at = run(monkeypatch, path, "arcs", arc=arc)
    page = shown(at)
    assert "initial turn" in page and "plan turn" in page
    assert "after session" in page and "current value" in page  # ground truth per session
    assert "Structural checks" in page and "passed" in page
    assert "literal-gated" in page and "literal-ungated" in page  # the systems that ran on it


def test_audit_labels_show_once_the_audit_is_closed(monkeypatch, viewed):
    path, _, _ = viewed
    db = sqlite3.connect(path / "workspace.db")
    item = db.execute("select item_id from audit_labels where audit = 'open'").fetchone()[0]
    arc = item.split(":")[0]
    at = run(monkeypatch, path, "arcs", arc=arc)
    labels = next(df.value for df in at.dataframe if "who" in df.value.columns)
    assert set(labels["audit"]) == {"done"}  # the closed audit's labels, who said what
    assert {"ana", "bo"} >= set(labels["who"])
    assert "Audit open is still open" in shown(at)

    done = shown(run(monkeypatch, path, "audits", audit="done"))
    assert "Cohen's kappa" in done and "ana: yes; bo: no" in done  # the one disagreement
    still = shown(run(monkeypatch, path, "audits", audit="open"))
    assert "still open" in still and "ana: yes" not in still


def test_no_token_hash_or_key_is_ever_shown(monkeypatch, viewed):
    path, _, tokens = viewed
    db = sqlite3.connect(path / "workspace.db")
    secrets = [h for (h,) in db.execute("select token_hash from audit_annotators")]
    secrets += [t for people in tokens.values() for t in people.values()]
    labeled = db.execute("select item_id from audit_labels limit 1").fetchone()[0].split(":")[0]
    views = [(page, {}) for page in TITLES] + [
        ("audits", {"audit": "done"}),
        ("audits", {"audit": "open"}),
        ("arcs", {"arc": labeled}),
    ]
    for page, params in views:
        page_text = shown(run(monkeypatch, path, page, **params))
        assert not any(s in page_text for s in secrets), (page, params)


def test_the_side_by_side_trace_marks_the_first_differing_turn(monkeypatch, viewed):
    from agentmemgate.view.data import Reader

    path, _, _ = viewed
    arc, t = _gated_vs_ungated(path)
    label = [f"s{si} t{ti}" for si, ti, _ in Reader(path).dialog(arc).turns()][t]
    at = run(monkeypatch, path, "trace", arc=arc, system="literal-gated", compare="literal-ungated")
    assert [w.value for w in at.warning] == [f"First difference: turn {label} (marked below)."]
    marked = [m.value for m in at.markdown if "First turn where the systems differ" in m.value]
    assert len(marked) == 1
    page = shown(at)
    assert "staged" in page and "committed" in page  # the gate's decision on each side


def test_a_deep_link_opens_the_arc_and_the_system(monkeypatch, viewed):
    path, _, _ = viewed
    arc, _ = _gated_vs_ungated(path)
    at = run(monkeypatch, path, "trace", arc=arc, system="literal-ungated")
    assert at.text_input(key="arc").value == arc
    assert at.selectbox(key="system").value == "literal-ungated"
    assert any(x.startswith("literal-ungated: ") for x in texts(at))


def test_a_filter_returns_the_arcs_the_report_counted(monkeypatch, viewed):
    from agentmemgate.evaluate import compute_report
    from agentmemgate.view.data import Reader

    path, _, _ = viewed
    report = compute_report(Reader(path)).to_json()
    s = report["systems"]["literal-ungated"]["core"]["end_contamination"]
    at = run(
        monkeypatch,
        path,
        "arcs",
        split="core",
        system="literal-ungated",
        measure="end_contamination",
        value="yes",
    )
    assert at.markdown[0].value.startswith(f"**{s['k']}** arc")
    rows = next(df.value for df in at.dataframe)
    assert len(rows) == s["k"] and set(rows["end_contamination"]) == {"yes"}
    at = run(
        monkeypatch,
        path,
        "arcs",
        split="core",
        system="literal-ungated",
        measure="end_contamination",
        value="no",
    )
    assert at.markdown[0].value.startswith(f"**{s['n'] - s['k']}** arc")


def test_results_link_each_number_to_its_arcs(monkeypatch, viewed):
    path, _, _ = viewed
    at = run(monkeypatch, path, "results", split="core")
    table = next(df.value for df in at.dataframe if "arcs where it holds" in df.value.columns)
    row = table[(table.system == "literal-ungated") & (table.measure == "end_contamination")]
    assert row["arcs where it holds"].iloc[0] == (
        "arcs?split=core&system=literal-ungated&measure=end_contamination&value=yes"
    )


def test_hostile_text_is_shown_as_written(monkeypatch, viewed):
    path, arc, _ = viewed
    at = run(monkeypatch, path, "arcs", arc=arc)
    assert HOSTILE in [t.value for t in at.text]  # st.text: shown literally
    assert not any(HOSTILE in m.value or "amgPwned" in m.value for m in at.markdown)
    assert HOSTILE_RATIONALE in [t.value for t in at.text]
    at = run(monkeypatch, path, "trace", arc=arc, system="literal-gated")
    assert HOSTILE in [t.value for t in at.text]


def test_a_bad_link_says_so_in_one_line(monkeypatch, viewed):
    path, _, _ = viewed
    at = run(monkeypatch, path, "arcs", arc="no-such-arc")
    assert at.error[0].value.startswith("No such arc")
    at = run(monkeypatch, path, "arcs", split="core", measure="end_contamination")
    assert "Choose the system" in at.warning[0].value


def test_a_link_naming_what_the_workspace_lacks_says_so_and_what_is_shown(monkeypatch, viewed):
    path, _, _ = viewed
    arc, _ = _gated_vs_ungated(path)
    at = run(monkeypatch, path, "trace", arc=arc, system="literal-gatd", compare="bogus")
    warned = " ".join(w.value for w in at.warning).replace("\\", "")  # Markdown escapes
    assert "system literal-gatd, which this workspace does not have" in warned
    assert "(did you mean 'literal-gated'?)" in warned and "side by side with bogus" in warned
    assert f"showing {at.selectbox(key='system').value}." in warned
    at = run(monkeypatch, path, "results", split="nosuch")
    assert any("nosuch" in w.value for w in at.warning)


def test_the_audits_page_shows_people_and_resolutions(monkeypatch, tmp_path):
    import json

    from agentmemgate.annotate_app import annotator_queue, create_audit, record_label
    from agentmemgate.workspace import Workspace

    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps({"id": f"S{i}", "text": f"t{i}"}) + "\n" for i in range(3)))
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws, "lab", "evidence_type", str(src), annotators=["ana", "ben"],
        adjudicator="cat",
    )  # fmt: skip
    tok = {p: u.split("token=")[1] for p, u in made.links.items()}
    for who, lab in (("ana", "speculation"), ("ben", "other")):
        for q in annotator_queue(ws, tok[who]):
            record_label(ws, tok[who], q.display.id, lab)
    item = annotator_queue(ws, tok["ana"])[0].display.id
    record_label(ws, made.adjudicator_link.split("token=")[1], item, "other")
    ws.db.conn.close()
    page = "\n".join(texts(run(monkeypatch, tmp_path / "ws", "audits", audit="lab")))
    assert "2 done" in page and "cat (adjudicator)" in page
    assert "Adjudications" in page and item in page and "speculation x1" in page


def test_an_open_audit_counts_its_items_without_checks_and_closes_when_nobody_works(tmp_path):
    import json

    from agentmemgate.annotate_app import (
        annotator_queue,
        create_audit,
        list_audits,
        queues,
        record_label,
    )
    from agentmemgate.annotate_app.disagreements import audit_closed
    from agentmemgate.annotate_app.study import StudyOptions
    from agentmemgate.view.data import Reader
    from agentmemgate.workspace import Workspace

    src = tmp_path / "s.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": f"S{i}", "text": f"t{i}", "reference": "other"}) + "\n"
            for i in range(4)
        )
    )
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws, "o", "evidence_type", str(src), study=StudyOptions(overlap=1, gold=1, attention=1)
    )
    a = queues.arrive(ws, made.study_link.split("study=")[1], {"PROLIFIC_PID": "x"})
    r = Reader(tmp_path / "ws")
    assert [x.n_items for x in list_audits(r)] == [3]
    assert not audit_closed(r, "o")
    while todo := [q for q in annotator_queue(ws, a.token) if q.own_label is None]:
        record_label(ws, a.token, todo[0].display.id, "other")
    assert queues.study_state(ws, a.token).status in ("done", "screened_out")
    assert audit_closed(Reader(tmp_path / "ws"), "o")
