"""The Streamlit pages through AppTest: login, labeling, back, progress, adjudication, blindness."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from agentmemgate.annotate_app import annotator_queue, create_audit, record_label
from agentmemgate.workspace import Workspace

from .conftest import APP, STATEMENTS, token_of


def run(token: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=30)
    if token is not None:
        at.query_params["token"] = token
    return at.run()


def rendered(at: AppTest) -> list[str]:
    """Every element's protobuf as sent to the browser, in page order."""
    out = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def make(tmp_path, monkeypatch, name: str, references: dict | None = None, **kw):
    """An evidence_type audit over the hostile statements; the app pointed at its workspace."""
    rows = [dict(x, reference=(references or {}).get(x["id"], x["reference"])) for x in STATEMENTS]
    src = tmp_path / f"{name}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ws = Workspace(tmp_path / name)
    made = create_audit(ws, "audit1", "evidence_type", str(src), **kw)
    monkeypatch.setenv("AMG_WORKSPACE", str(ws.path))
    return ws, made


def submit(at: AppTest, key_number: int) -> AppTest:
    at.button(key=f"choice_{key_number}").click().run()
    return at.button(key="submit").click().run()


def test_login_needs_a_valid_token(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run()
    assert not at.exception
    assert at.text_input(key="token_input") is not None
    at.text_input(key="token_input").input(token_of(made.links["ana"]))
    at.button(key="login").click().run()
    assert at.query_params["token"] == token_of(made.links["ana"])
    at = run(at.query_params["token"])  # the browser reloads with ?token=...
    assert at.subheader[0].value == "Item 1 of 4"
    assert "Signed in as ana" in texts(at)

    bad = run("not-a-token")
    assert not bad.exception
    assert "not valid" in bad.error[0].value
    assert len(bad.button) == 1  # the login button only: no item is shown


def test_labeling_going_back_and_progress(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    queue = [q.display.id for q in annotator_queue(ws, token)]
    at = run(token)
    assert at.get("progress")[0].proto.text == "0 of 4 labeled"
    assert at.title[0].value == "Audit: evidence type"  # the task, never the audit's name
    assert at.expander[0].proto.expanded  # instructions open until the first saved label
    at.button(key="choice_1").click().run()
    assert "Your choice: speculation" in texts(at)
    assert at.button(key="submit").disabled is False
    submit(at, 1)
    assert not at.exception
    assert at.subheader[0].value == "Item 2 of 4"
    assert at.get("progress")[0].proto.text == "1 of 4 labeled"
    assert ws.db.execute("select item_id, label, annotator, role from audit_labels").fetchall() == [
        (queue[0], "speculation", "ana", "annotator")]

    at.button(key="back").click().run()  # back to item 1: the saved label is shown
    assert at.subheader[0].value == "Item 1 of 4"
    assert "Your choice: speculation (saved)" in texts(at)
    submit(at, 4)  # change it to "other"
    assert at.subheader[0].value == "Item 2 of 4"
    log = ws.db.execute("select label from audit_labels where item_id = ? order by id", [queue[0]])
    assert [r[0] for r in log] == ["speculation", "other"]  # append-only; the latest counts
    assert annotator_queue(ws, token)[0].own_label == "other"

    for _ in range(3):
        submit(at, 5)  # can't tell is a label like any other
    assert "All 4 items are labeled" in at.success[0].value
    assert at.get("progress")[0].proto.text == "4 of 4 labeled"
    seconds = [r[0] for r in ws.db.execute("select active_seconds from audit_labels")]
    assert all(s is not None and 0 <= s < 300 for s in seconds)

    at = run(token)  # a new session resumes at the end; Next walks forward over labeled items
    assert "All 4 items are labeled" in at.success[0].value
    at.button(key="back").click().run()
    assert at.subheader[0].value == "Item 4 of 4"
    at.button(key="back").click().run()
    at.button(key="next").click().run()
    assert at.subheader[0].value == "Item 4 of 4"


def test_conversation_text_is_plain(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    while "ID-spec-1" != annotator_queue(ws, token)[int(at.subheader[0].value.split()[1]) - 1].display.id:
        submit(at, 4)
    hostile = STATEMENTS[0]["text"]
    assert hostile in texts(at)  # st.text: shown literally, no markdown or HTML
    assert "<script>alert(1)</script> Nice!" in texts(at)
    assert not any("Seattle" in m.value or "script" in m.value for m in at.markdown)
    assert "--- session of 2024-03-01 ---" in texts(at)


def _walk_pages(at: AppTest, n: int, label_key: int) -> list[list[str]]:
    pages = []
    for _ in range(n):
        pages.append(rendered(at))
        submit(at, label_key)
    pages.append(rendered(at))
    return pages


def test_annotator_page_never_carries_references_or_other_labels(tmp_path, monkeypatch):
    """Same items, different references and a colleague's labels: ana's pages are identical."""
    _, made1 = make(tmp_path, monkeypatch, "one", annotators=["ana", "ben"], adjudicator="dee")
    pages1 = _walk_pages(run(token_of(made1.links["ana"])), 4, 4)

    flipped = {x["id"]: "explicit_correction" for x in STATEMENTS}
    ws2, made2 = make(tmp_path, monkeypatch, "two", references=flipped, annotators=["ana", "ben"],
                      adjudicator="dee")
    ben = token_of(made2.links["ben"])
    for q in annotator_queue(ws2, ben):
        record_label(ws2, ben, q.display.id, "explicit_correction")
    pages2 = _walk_pages(run(token_of(made2.links["ana"])), 4, 4)

    assert pages1 == pages2
    blob = "\n".join(p for page in pages2 for p in page)
    # Streamlit's widget ids are hex hashes that change with the checkout path ("...cdeea13...")
    blob = re.sub(r"\$\$ID-[0-9a-f]+-", "$$ID-", blob)
    for secret in ["ben", "dee", "design"] + [x["id"] for x in STATEMENTS]:
        assert secret not in blob, secret


def test_difficulty_page_hides_the_intended_level(arcs_ws, monkeypatch):
    made = create_audit(arcs_ws, "diff", "difficulty:outcome", "arcs", annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(arcs_ws.path))
    at = run(token_of(made.links["ana"]))
    assert not at.exception
    blob = "\n".join(rendered(at))
    for arc_id in arcs_ws.arc_ids():
        assert arc_id not in blob  # arc ids name the level: never sent
    assert "Highlighted turn" in blob


def test_adjudication_page(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana", "ben"], adjudicator="dee")
    ana, ben, dee = (token_of(made.links["ana"]), token_of(made.links["ben"]),
                     token_of(made.adjudicator_link))
    ids = [x["id"] for x in STATEMENTS]
    for i in ids:
        record_label(ws, ana, i, "speculation")
        record_label(ws, ben, i, "speculation" if i != "ID-other-3" else "other")
    at = run(dee)
    assert not at.exception
    assert at.title[0].value == "Adjudication: evidence type"
    assert at.subheader[0].value == "Item 1 of 4 · disagreement"  # disagreements first
    assert "other x1, speculation x1" in texts(at)  # the labels given, names hidden
    blob = "\n".join(rendered(at))
    assert "ana" not in blob and "ben" not in blob
    assert not any(i in blob for i in ids)
    submit(at, 4)  # resolve as other
    assert at.subheader[0].value == "Item 2 of 4 · agreement"
    assert "speculation x2" in texts(at)
    assert ws.db.execute("select item_id, annotator, role, label from audit_labels where role = "
                         "'adjudicator'").fetchall() == [("ID-other-3", "dee", "adjudicator", "other")]


def test_adjudication_page_is_blind_to_references(tmp_path, monkeypatch):
    pages = []
    for name, refs in [("one", None), ("two", {x["id"]: "other" for x in STATEMENTS})]:
        ws, made = make(tmp_path, monkeypatch, name, references=refs, annotators=["ana", "ben"],
                        adjudicator="dee")
        for who in ("ana", "ben"):
            tok = token_of(made.links[who])
            for q in annotator_queue(ws, tok):
                record_label(ws, tok, q.display.id, "speculation" if who == "ana" else "other")
        pages.append(_walk_pages(run(token_of(made.adjudicator_link)), 4, 2))
    assert pages[0] == pages[1]


@pytest.mark.parametrize("who", ["ana", "dee"])
def test_empty_queue_pages(tmp_path, monkeypatch, who):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"], adjudicator="dee",
                    sample_n=1)
    token = token_of(made.links[who] if who == "ana" else made.adjudicator_link)
    if who == "ana":
        record_label(ws, token, annotator_queue(ws, token)[0].display.id, "other")
    at = run(token)
    assert not at.exception
    if who == "ana":
        assert at.success[0].value.startswith("1 item is labeled. Thank you!")
    else:
        assert "No item has two or more labels yet" in at.info[0].value
        assert not at.get("progress")  # no "0 of 0 resolved" bar


def test_annotator_with_no_items_is_told_so(tmp_path, monkeypatch):
    """overlap 1 over three people and one item: two of them have nothing to label."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana", "ben", "cy"], overlap=1,
                    sample_n=1)
    idle = next(p for p, n in made.assignments.items() if n == 0)
    at = run(token_of(made.links[idle]))
    assert not at.exception
    assert "No items are assigned to you" in at.info[0].value
    assert not at.success and not at.get("progress") and not at.button


def test_submit_is_never_disabled_and_asks_for_a_choice(tmp_path, monkeypatch):
    """A fast "1, Enter" must not hit a disabled Submit; Enter alone asks for a label."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    assert at.button(key="submit").disabled is False
    at.button(key="submit").click().run()
    assert not at.exception
    assert at.error[0].value == "Choose a label first: press 1-5."
    assert at.subheader[0].value == "Item 1 of 4"
    assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 0


def test_enter_on_an_unchanged_saved_label_logs_nothing(tmp_path, monkeypatch):
    """Walking forward over saved labels must not re-log them: a re-log would replace the item's
    active seconds with a sub-second one (a false "fast decision") and count it as changed."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    submit(at, 2)
    at.button(key="back").click().run()
    assert "Your choice: completed event (saved)" in texts(at)
    at.button(key="submit").click().run()  # Enter: unchanged
    assert at.subheader[0].value == "Item 2 of 4"
    at.button(key="back").click().run()
    submit(at, 2)  # the same label chosen again: still unchanged
    assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 1


def test_label_buttons_carry_definitions_and_full_names(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    b = at.button(key="choice_3")
    assert b.label == "3 · explicit correction"
    assert b.help.startswith("asserts, with corrective intent")
    assert at.button(key="choice_5").help == "the statement and its context do not let you decide."


def test_session_header_does_not_split_a_statement_from_its_context(tmp_path, monkeypatch):
    """Corpus context turns carry no date; the statement does. The header goes above the context."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    while annotator_queue(ws, token)[int(at.subheader[0].value.split()[1]) - 1].display.id != "ID-spec-1":
        submit(at, 4)
    shown = texts(at)
    header = shown.index("--- session of 2024-03-01 ---")
    assert header < shown.index("I live in Boston now") < shown.index(STATEMENTS[0]["text"])
    assert shown.count("--- session of 2024-03-01 ---") == 1


def test_realism_question_is_shown_next_to_the_choices(arcs_ws, monkeypatch):
    made = create_audit(arcs_ws, "real", "realism", "arcs", annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(arcs_ws.path))
    at = run(token_of(made.links["ana"]))
    assert not at.exception
    shown = texts(at)
    question = next(t for t in shown if t.endswith("?"))
    where = [i for i, t in enumerate(shown) if t == question]
    last_turn = len(shown) - 1 - shown[::-1].index("Noted.")  # the arc's last turn
    assert len(where) == 2 and where[0] < last_turn < where[1]  # above the chat and the buttons


def test_a_refused_label_does_not_echo_the_item_id(tmp_path, monkeypatch):
    """If saving fails (here: the item left the queue mid-session), the message must not carry the
    item id, which for arcs names the intended level."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    shown = annotator_queue(ws, token)[0].display.id
    at.button(key="choice_1").click().run()
    with ws.db.conn:
        ws.db.execute("delete from audit_assignments where item_id = ?", [shown])
    at.button(key="submit").click().run()
    assert not at.exception
    assert at.error[0].value == ("This label was not saved: the item is no longer in your queue. "
                                 "Reload the page.")
    assert shown not in "\n".join(rendered(at))
