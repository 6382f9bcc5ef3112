"""An open audit's pages through AppTest: arriving at the study link, items that look alike
whatever their kind, the qualification's feedback, and the last page with its code."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from agentmemgate.annotate_app import create_audit
from agentmemgate.annotate_app.study import StudyOptions
from agentmemgate.workspace import Workspace

from .conftest import APP
from .test_app import opened, rendered, texts

LABELS = ["speculation", "other", "completed_event"]


def make(tmp_path, monkeypatch, **opts):
    rows = [
        {"id": f"ID-{LABELS[i % 3]}-{i}", "text": f"Statement {i}", "reference": LABELS[i % 3]}
        for i in range(12)
    ]
    src = tmp_path / "items.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ws = Workspace(tmp_path / "ws")
    made = create_audit(ws, "crowd", "evidence_type", str(src), study=StudyOptions(**opts))
    monkeypatch.setenv("AMG_WORKSPACE", str(ws.path))
    return ws, made.study_link.split("study=", 1)[1]


def arrive(study: str, **params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["study"] = study
    for k, v in params.items():
        at.query_params[k] = v
    return opened(at.run())


def shape(at: AppTest) -> list[tuple[str, str]]:
    """What the page is made of, whatever the text: each element's kind and key, in order."""
    return [
        (type(n).__name__, str(getattr(n, "key", "") or ""))
        for n in at
        if getattr(n, "proto", None) is not None
    ]


def current(ws, name: str) -> str:
    return ws.db.execute(
        "select item_id from audit_assignments s where annotator = ? and not exists (select 1 "
        "from audit_labels l where l.item_id = s.item_id and l.annotator = s.annotator)",
        [name],
    ).fetchone()[0]


def test_arriving_with_a_platform_id_opens_the_first_item(tmp_path, monkeypatch):
    ws, study = make(tmp_path, monkeypatch, overlap=2, per_person=3)
    at = arrive(study, PROLIFIC_PID="abc123", STUDY_ID="s1", SESSION_ID="x1")
    assert not at.exception
    assert at.sidebar.subheader[0].value == "Item 1 of 3"
    assert "Signed in as p0001" in texts(at)
    assert "Reloading this page keeps your place" in " ".join(c.value for c in at.caption)
    at.button(key="choice_1").click().run()
    at.button(key="submit").click().run()
    assert at.sidebar.subheader[0].value == "Item 2 of 3"
    again = arrive(study, PROLIFIC_PID="abc123")  # a reload: the same person, where they were
    assert again.sidebar.subheader[0].value == "Item 2 of 3"


def test_an_arrival_without_an_id_sees_one_line_and_no_item(tmp_path, monkeypatch):
    ws, study = make(tmp_path, monkeypatch)
    at = arrive(study)
    assert not at.exception
    assert "PROLIFIC_PID" in at.info[0].value
    assert [b.key for b in at.button] == []
    assert "not valid" in arrive("wrong", PROLIFIC_PID="a").error[0].value


def test_gold_attention_and_regular_items_are_drawn_alike(tmp_path, monkeypatch):
    """The page is the same for every kind of item: the same elements and keys, the same words
    around the item; nothing names a check, a reference or an item id."""
    ws, study = make(tmp_path, monkeypatch, overlap=1, per_person=3, gold=2, attention=2)
    kinds = dict(ws.db.execute("select item_id, kind from audit_checks").fetchall())
    want = dict(ws.db.execute("select item_id, label from audit_checks").fetchall())
    at = arrive(study, PROLIFIC_PID="x")
    shapes = {}
    for step in range(7):
        item = current(ws, "p0001")
        page = "\n".join(rendered(at))
        for word in (r"\bgold\b", "attention", r"\breferences?\b", r"\bchecks?\b"):
            assert not re.search(word, page, re.IGNORECASE), word
        assert item not in page
        shapes.setdefault(kinds.get(item, "item"), set()).add(
            tuple((t, k) for t, k in shape(at) if t != "Markdown" or k)
        )
        label = want.get(item, "other")
        n = ["speculation", "completed_event", "explicit_correction", "other"].index(label) + 1
        at.button(key=f"choice_{n}").click().run()
        at.button(key="submit").click().run()
    assert set(shapes) == {"item", "gold", "attention"}
    assert len(set().union(*shapes.values())) == 1  # one shape for every item
    assert "You have finished this study" in at.success[0].value


def test_the_last_page_shows_the_code_and_redirects(tmp_path, monkeypatch):
    ws, study = make(
        tmp_path,
        monkeypatch,
        overlap=1,
        per_person=1,
        completion_code="CC-42",
        redirect="https://example.org/complete?cc={code}",
    )
    at = arrive(study, PROLIFIC_PID="x")
    at.button(key="choice_4").click().run()
    at.button(key="submit").click().run()
    assert "Your code: CC-42" in texts(at)
    [button] = at.get("link_button")
    assert button.proto.url == "https://example.org/complete?cc=CC-42"
    assert any(
        "window.location.assign" in h.proto.body and "cc=CC-42" in h.proto.body for h in at.html
    )
    assert ws.db.execute("select status, code from audit_participants").fetchone() == (
        "done",
        "CC-42",
    )


def test_the_qualification_feedback_shows_after_each_practice_item(tmp_path, monkeypatch):
    ws, study = make(tmp_path, monkeypatch, overlap=1, per_person=2, qualify=2, qualify_pass=0.5)
    at = arrive(study, PROLIFIC_PID="x")
    at.button(key="choice_5").click().run()  # can't tell: never a reference
    at.button(key="submit").click().run()
    assert at.info[0].value.startswith("Practice item: the answer is")
    assert at.sidebar.subheader[0].value == "Item 2 of 4"


def test_a_newcomer_to_a_full_study_is_told_so(tmp_path, monkeypatch):
    ws, study = make(tmp_path, monkeypatch, overlap=1, per_person=12)
    first = arrive(study, PROLIFIC_PID="first")
    assert first.sidebar.subheader[0].value == "Item 1 of 12"
    # every item is either held or labeled: nothing for a newcomer
    for i in range(11):
        first.button(key="choice_4").click().run()
        first.button(key="submit").click().run()
    late = arrive(study, PROLIFIC_PID="late")
    assert "all the labels it needs" in late.info[0].value
