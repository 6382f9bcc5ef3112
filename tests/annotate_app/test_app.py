"""The Streamlit pages through AppTest: login, labeling, back, progress, adjudication, blindness."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from agentmemgate.annotate_app import annotator_queue, create_audit, record_label
from agentmemgate.workspace import Workspace

from .conftest import APP, STATEMENTS, token_of


def run(token: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=30)
    if token is not None:
        at.query_params["token"] = token
    return opened(at.run())


def opened(at: AppTest) -> AppTest:
    """Press the first page's Open button, as the key script does in a browser."""
    ready = [b for b in at.button if b.key == "amg-ready"]
    return ready[0].click().run() if ready else at


def rendered(at: AppTest) -> list[str]:
    """Every element's and container's protobuf as sent to the browser, in page order (main
    area, sidebar, then anything else); the page's root and its areas carry none."""
    return [str(node.proto) for node in at if getattr(node, "proto", None) is not None]


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


def page_scripts(at: AppTest) -> list[str]:
    """The per-page scripts (the key script, the same on every page, left out)."""
    return [
        h.proto.body
        for h in at.html
        if h.proto.unsafe_allow_javascript and "amg keys" not in h.proto.body
    ]


def key_scripts(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.html if "amg keys" in h.proto.body]


def separators(at: AppTest) -> list[str]:
    """The session breaks' labels, in page order."""
    return [
        h.proto.body.split(">", 1)[1].rsplit("<", 1)[0]
        for h in at.html
        if 'class="amg-session"' in h.proto.body
    ]


def test_pasted_token_signs_in_without_touching_the_address(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run()
    assert not at.exception
    assert "Reloading this page" in at.info[0].value  # the way back after a reload, said up front
    at.text_input(key="token_input").input(token_of(made.links["ana"]))
    at.button(key="login").click().run()
    assert "token" not in at.query_params  # kept in the server-side session only
    assert at.sidebar.subheader[0].value == "Item 1 of 4"
    assert "Signed in as ana" in texts(at)
    submit(at, 1)
    assert at.sidebar.subheader[0].value == "Item 2 of 4"

    bad = run("not-a-token")
    assert not bad.exception
    assert "not valid" in bad.error[0].value
    assert [b.key for b in bad.button] == ["login"]  # no item is shown


def test_link_token_moves_from_the_address_into_the_session(tmp_path, monkeypatch):
    """The first run signs in and sends the script that takes the token out of the address bar
    (replaceState: no history entry keeps it); the next run drops it from the query string the
    browser still sends. A reload is a new session: the sign-in page says what happened."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    assert "Signed in as ana" in texts(at)
    [script] = page_scripts(at)
    assert 'searchParams.delete("token")' in script and "history.replaceState" in script
    assert token not in script
    submit(at, 2)
    assert "token" not in at.query_params
    assert at.sidebar.subheader[0].value == "Item 2 of 4"  # still signed in, from the session
    at.button(key="choice_1").click().run()
    assert "Your choice: speculation" in texts(at)

    reloaded = run()  # the browser reloads the clean address: a new session, no token
    assert reloaded.text_input(key="token_input") is not None
    assert "open your personal link again" in reloaded.info[0].value
    again = run(token)  # the link opened again: labels kept, back at the first unlabeled item
    assert again.sidebar.subheader[0].value == "Item 2 of 4"
    assert again.get("progress")[0].proto.text == "1 of 4 labeled"


def test_a_bad_link_then_a_pasted_token(tmp_path, monkeypatch):
    """A stale token in the address must not come back and override the token pasted after it."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run("stale-token")
    assert "not valid" in at.error[0].value
    at.text_input(key="token_input").input(token_of(made.links["ana"]))
    at.button(key="login").click().run()
    assert not at.exception
    assert "token" not in at.query_params
    assert "Signed in as ana" in texts(at)
    submit(at, 1)
    assert at.sidebar.subheader[0].value == "Item 2 of 4"


def test_sign_out(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    submit(at, 1)
    at.button(key="sign_out").click().run()
    assert at.success[0].value == "You are signed out. Your saved labels are kept."
    assert [b.key for b in at.button] == ["login"]
    assert "Signed in as ana" not in texts(at)
    assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 1


def test_choices_sit_in_the_sidebar_and_instructions_close_after_the_first_item(
    tmp_path, monkeypatch
):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    in_sidebar = {b.key for b in at.sidebar.button}
    assert {f"choice_{i}" for i in range(1, 6)} | {"submit", "back", "next"} <= in_sidebar
    assert at.expander[0].proto.expanded  # the first item: instructions open
    submit(at, 1)
    assert not at.expander[0].proto.expanded  # from the second item on: closed
    at.button(key="back").click().run()
    assert not at.expander[0].proto.expanded  # a label is saved: no longer the first item
    [script] = page_scripts(at)
    assert "item 0" in script  # the position, so it runs once per item; no item data


def test_every_page_draws_the_key_script_first_and_names_its_own_buttons(tmp_path, monkeypatch):
    """Keys pressed before a page is drawn wait for their buttons (or are refused visibly): the
    script that takes them is the page's first element, the same constant code on every page
    (sign-in, item, end), and names the buttons the page draws for the keys."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    pages = [run()]  # sign-in
    at = run(token_of(made.links["ana"]))
    pages.append(at)
    shortcuts = {b.key: b.proto.shortcut for b in at.sidebar.button if b.proto.shortcut}
    assert shortcuts == {
        **{f"choice_{i}": str(i) for i in range(1, 6)},
        "submit": "enter",
        "back": "b",
        "next": "n",
    }
    for i in range(4):
        submit(at, 1)
    assert "All 4 items are labeled" in at.success[0].value
    assert {b.key: b.proto.shortcut for b in at.button if b.proto.shortcut} == {"back": "b"}
    pages.append(at)
    for page in pages:  # the first element of every page, the same code on each
        assert "amg keys" in page.main.children[0].proto.body
    scripts = [key_scripts(p) for p in pages]
    assert all(len(s) == 1 for s in scripts) and len({s[0] for s in scripts}) == 1
    script = scripts[0][0]
    for name in (
        '".st-key-" + name',
        '"choice_" + key',
        'enter: "submit"',
        'b: "back"',
        'n: "next"',
        '".st-key-amg-head"',
        '"Key " + k.label + " did nothing: "',
    ):
        assert name in script, name
    assert token_of(made.links["ana"]) not in script


def test_a_tabs_first_page_waits_for_the_key_script(tmp_path, monkeypatch):
    """Streamlit runs a page's scripts only after painting it, so the first run after the link
    opens draws no item, only the Open button the key script presses once it runs (a person
    whose browser runs no script presses it); later runs of the tab never show it."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["token"] = token_of(made.links["ana"])
    at.run()
    assert [b.key for b in at.button] == ["amg-ready"] and not at.subheader
    assert ".st-key-amg-ready button" in key_scripts(at)[0]
    at.button(key="amg-ready").click().run()
    assert at.subheader[0].value.startswith("Item 1 of") and not [
        b for b in at.button if b.key == "amg-ready"
    ]
    submit(at, 1)
    assert not [b for b in at.button if b.key == "amg-ready"]


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
        (queue[0], "speculation", "ana", "annotator")
    ]

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
    while (
        "ID-spec-1"
        != annotator_queue(ws, token)[int(at.subheader[0].value.split()[1]) - 1].display.id
    ):
        submit(at, 4)
    hostile = STATEMENTS[0]["text"]
    assert hostile in texts(at)  # st.text: shown literally, no markdown or HTML
    assert "<script>alert(1)</script> Nice!" in texts(at)
    assert not any("Seattle" in m.value or "script" in m.value for m in at.markdown)
    assert separators(at) == ["Session of Fri 1 Mar 2024"]


def _walk_pages(at: AppTest, n: int, label_key: int) -> list[list[str]]:
    pages = []
    for i in range(n):
        pages.append(rendered(at))
        assert any(f"Item {i + 1} of {n}" in p for p in pages[-1])  # a whole page, not nothing
        submit(at, label_key)
    pages.append(rendered(at))
    return pages


def test_annotator_page_never_carries_references_or_other_labels(tmp_path, monkeypatch):
    """Same items, different references and a colleague's labels: ana's pages are identical."""
    _, made1 = make(tmp_path, monkeypatch, "one", annotators=["ana", "ben"], adjudicator="dee")
    pages1 = _walk_pages(run(token_of(made1.links["ana"])), 4, 4)

    flipped = {x["id"]: "explicit_correction" for x in STATEMENTS}
    ws2, made2 = make(
        tmp_path,
        monkeypatch,
        "two",
        references=flipped,
        annotators=["ana", "ben"],
        adjudicator="dee",
    )
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
    ana, ben, dee = (
        token_of(made.links["ana"]),
        token_of(made.links["ben"]),
        token_of(made.adjudicator_link),
    )
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
    assert ws.db.execute(
        "select item_id, annotator, role, label from audit_labels where role = 'adjudicator'"
    ).fetchall() == [("ID-other-3", "dee", "adjudicator", "other")]


def test_adjudication_page_is_blind_to_references(tmp_path, monkeypatch):
    pages = []
    for name, refs in [("one", None), ("two", {x["id"]: "other" for x in STATEMENTS})]:
        ws, made = make(
            tmp_path,
            monkeypatch,
            name,
            references=refs,
            annotators=["ana", "ben"],
            adjudicator="dee",
        )
        for who in ("ana", "ben"):
            tok = token_of(made.links[who])
            for q in annotator_queue(ws, tok):
                record_label(ws, tok, q.display.id, "speculation" if who == "ana" else "other")
        pages.append(_walk_pages(run(token_of(made.adjudicator_link)), 4, 2))
    assert pages[0] == pages[1]


@pytest.mark.parametrize("who", ["ana", "dee"])
def test_empty_queue_pages(tmp_path, monkeypatch, who):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"], adjudicator="dee", sample_n=1)
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
    ws, made = make(
        tmp_path, monkeypatch, "w", annotators=["ana", "ben", "cy"], overlap=1, sample_n=1
    )
    idle = next(p for p, n in made.assignments.items() if n == 0)
    at = run(token_of(made.links[idle]))
    assert not at.exception
    assert "No items are assigned to you" in at.info[0].value
    assert not at.success and not at.get("progress")
    assert [b.key for b in at.button] == ["sign_out"]


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


def test_a_number_key_then_enter_is_one_run_that_saves_the_choice(tmp_path, monkeypatch):
    """The key script sends "3, Enter" as one press of the hidden pick_3: the label is saved and
    the next item shown; on a saved item a different pick replaces the label, the same logs
    nothing."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    assert [at.button(key=f"pick_{i}").label for i in (1, 5)] == [
        "Submit speculation",
        "Submit can't tell",
    ]
    at.button(key="pick_3").click().run()
    assert not at.exception and not at.error
    assert at.subheader[0].value == "Item 2 of 4"
    at.button(key="back").click().run()
    assert "Your choice: explicit correction (saved)" in texts(at)
    at.button(key="pick_3").click().run()  # the same label: moves on, logs nothing
    assert at.subheader[0].value == "Item 2 of 4"
    at.button(key="back").click().run()
    at.button(key="pick_1").click().run()  # a new label: replaces the saved one
    labels = [lab for (lab,) in ws.db.execute("select label from audit_labels order by id")]
    assert labels == ["explicit_correction", "speculation"]


def test_label_buttons_carry_definitions_and_full_names(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    b = at.button(key="choice_3")
    assert (
        b.label == "explicit correction" and b.proto.shortcut == "3"
    )  # the key is drawn beside it
    assert b.help.startswith("asserts, with corrective intent")
    assert at.button(key="choice_5").help == "the statement and its context do not let you decide."


def test_session_header_does_not_split_a_statement_from_its_context(tmp_path, monkeypatch):
    """Corpus context turns carry no date; the statement does. The header goes above the context."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    while (
        annotator_queue(ws, token)[int(at.subheader[0].value.split()[1]) - 1].display.id
        != "ID-spec-1"
    ):
        submit(at, 4)
    chat = at.container(key="amg-chat")  # the conversation panel (CSS class .st-key-amg-chat)
    elements = [n for n in chat if not isinstance(n, Block)]  # its elements, in page order
    order = ["break" if n.type == "html" else getattr(n, "value", None) for n in elements]
    order = [x for x in order if x in ("break", "I live in Boston now", STATEMENTS[0]["text"])]
    assert order == ["break", "I live in Boston now", STATEMENTS[0]["text"]]


def test_sessions_are_separated_by_dated_rules(arcs_ws, monkeypatch):
    made = create_audit(arcs_ws, "diff", "difficulty:outcome", "arcs", annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(arcs_ws.path))
    at = run(token_of(made.links["ana"]))
    assert separators(at) == [
        "Session of Mon 1 Jan 2024",
        "Session of Tue 9 Jan 2024 · 8 days later",
    ]


def test_a_session_label_is_our_words_or_the_escaped_date():
    from agentmemgate.annotate_app.app import session_label

    assert session_label("2024-02-02", "2024-02-01") == "Session of Fri 2 Feb 2024 · 1 day later"
    assert session_label("2024-02-02T10:00:00", None) == "Session of Fri 2 Feb 2024"
    assert session_label("last <b>spring</b>", None) == "Session of last <b>spring</b>"


def test_an_odd_date_is_shown_inert(tmp_path, monkeypatch):
    src = tmp_path / "odd.jsonl"
    src.write_text(
        json.dumps(
            {
                "id": "x1",
                "text": "I might move",
                "date": "<img src=x onerror=1>",
                "reference": "speculation",
            }
        )
        + "\n"
    )
    ws = Workspace(tmp_path / "odd")
    made = create_audit(ws, "odd", "evidence_type", str(src), annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(ws.path))
    at = run(token_of(made.links["ana"]))
    [body] = [
        h.proto.body for h in at.html if "amg-session" in h.proto.body and "<div" in h.proto.body
    ]
    assert "<img" not in body and "&lt;img src=x onerror=1&gt;" in body


def test_realism_question_is_shown_next_to_the_choices(arcs_ws, monkeypatch):
    made = create_audit(arcs_ws, "real", "realism", "arcs", annotators=["ana"])
    monkeypatch.setenv("AMG_WORKSPACE", str(arcs_ws.path))
    at = run(token_of(made.links["ana"]))
    assert not at.exception
    question = next(t.value for t in at.sidebar.text if t.value.endswith("?"))
    assert f"Question: {question}" in [t.value for t in at.main.text]  # above the conversation


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
    assert at.error[0].value == (
        "This label was not saved: the item is no longer in your queue. "
        "Open your personal link again to see your queue as it is now."
    )
    assert shown not in "\n".join(rendered(at))


# -- presses folded into one rerun (AppTest runs every click queued before .run() in one run) -----
def _item_no(at: AppTest) -> int:
    return int(at.sidebar.subheader[0].value.split()[1])


def test_a_choice_and_enter_in_one_rerun_save_the_choice(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    at = run(token)
    first = annotator_queue(ws, token)[0].display.id
    at.button(key="choice_2").click()
    at.button(key="submit").click()
    at.run()  # one batch: "2, Enter" is the only order that labels a fresh item
    assert _item_no(at) == 2
    assert ws.db.execute("select item_id, label from audit_labels").fetchall() == [
        (first, "completed_event")
    ]


def test_presses_whose_order_matters_save_nothing(tmp_path, monkeypatch):
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    at.button(key="choice_1").click().run()  # chosen: speculation
    at.button(key="choice_4").click()
    at.button(key="submit").click()
    at.run()  # "4, Enter" (save other) or "Enter, 4" (save speculation)? Ask.
    assert _item_no(at) == 1
    assert at.error[0].value.startswith(
        "Keys came faster than the page could follow: your choice is now other."
    )
    assert "Your choice: other" in texts(at)

    at.button(key="choice_2").click()
    at.button(key="choice_3").click()
    at.run()
    assert at.error[0].value == (
        "Two labels came at once (completed event and explicit correction): press the one you mean."
    )
    assert "Your choice: other" in texts(at)

    at.button(key="submit").click().run()  # now alone: saves "other"
    assert _item_no(at) == 2
    at.button(key="choice_1").click()
    at.button(key="back").click()
    at.run()
    assert at.error[0].value.startswith("Keys came faster than the page could follow, so none")
    assert _item_no(at) == 2 and "Your choice: none yet" in texts(at)
    assert [r[0] for r in ws.db.execute("select label from audit_labels")] == ["other"]


def test_a_key_before_the_next_item_is_drawn_acts_on_nothing(tmp_path, monkeypatch):
    """Here the run that would draw the next item is simulated as not having started."""
    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    at = run(token_of(made.links["ana"]))
    at.session_state["_place"].shown_item = "an item drawn earlier"
    at.button(key="choice_1").click().run()
    assert at.error[0].value == "That key came before the next item was shown; press it again."
    assert "Your choice: none yet" in texts(at)
    at.button(key="choice_1").click().run()  # the item has been drawn now
    assert "Your choice: speculation" in texts(at)


def test_the_buttons_callbacks_leave_session_state_alone():
    """A callback that touches st.session_state is cut short when a newer press is waiting."""
    import inspect

    from agentmemgate.annotate_app.keys import Presses

    assert "st." not in inspect.getsource(Presses.press)
    p = Presses()
    p.press("choose", "x")
    p.press("submit")
    p.close()
    p.press("move", -1)
    assert p.take() == [[("choose", "x"), ("submit",)], [("move", -1)]] and p.take() == []


# -- answer_assertion: a black-box system's answers (source registered by the evaluate room) ------
HOSTILE_ANSWER = "<b>{v}</b> **now**, [link](http://x.example) <script>alert(1)</script>"


def _answers_audit(small_build, tmp_path, monkeypatch, name: str, verdicts=None, **kw):
    """An answer_assertion audit of four answers; ``verdicts`` replaces every stored verdict
    (another judge), which must change nothing an annotator is shown."""
    from evaluate.answer_ws import answers_workspace

    ws = answers_workspace(small_build, tmp_path / name)
    for arc in ws.arcs("core"):  # every answer after session 0 (a stratum of the sample)
        ws.db.execute(
            "update eval_answers set answer = ? where arc_id = ? and after_session = 0",
            [HOSTILE_ANSWER.format(v=arc.spec.plan_value), arc.id],
        )
    if verdicts is not None:
        ws.db.execute("update eval_answers set verdict = ?", [verdicts])
    ws.db.conn.commit()
    made = create_audit(
        ws,
        "ans",
        "answer_assertion",
        "answers:mem0",
        annotators=["ana", "ben"],
        sample_n=4,
        stratify_by="after_session",
        seed=2,
        **kw,
    )
    monkeypatch.setenv("AMG_WORKSPACE", str(ws.path))
    return ws, made


def test_answer_items_show_question_answer_and_lettered_options(small_build, tmp_path, monkeypatch):
    ws, made = _answers_audit(small_build, tmp_path, monkeypatch, "w")
    token = token_of(made.links["ana"])
    at = run(token)
    assert not at.exception
    assert at.title[0].value == "Audit: answer assertion"
    assert [at.button(key=f"choice_{i}").label for i in range(1, 6)] == [
        "value A",
        "value B",
        "both",
        "neither",
        "can't tell",
    ]
    assert at.button(key="choice_1").help.startswith("the answer asserts Value A")
    hostile = 0
    for _ in range(4):
        d = annotator_queue(ws, token)[int(at.subheader[0].value.split()[1]) - 1].display
        main, side = [t.value for t in at.main.text], [t.value for t in at.sidebar.text]
        assert d.answer.question in main and d.answer.text in main  # plain text, as stored
        hostile += "<script>alert(1)</script>" in d.answer.text
        assert ["Value A", d.pair.a, "Value B", d.pair.b] == [
            t for t in main if t in ("Value A", "Value B", d.pair.a, d.pair.b)
        ]
        assert side[:2] == [f"A: {d.pair.a}", f"B: {d.pair.b}"]  # beside the buttons
        assert any("What does this answer assert" in m.value for m in at.markdown)
        assert not any("script" in m.value or "x.example" in m.value for m in at.markdown)
        submit(at, 2)
    assert at.success[0].value.startswith("All 4 items are labeled.")
    labels = ws.db.execute("select label from audit_labels where annotator = 'ana'").fetchall()
    assert labels == [("value_b",)] * 4
    assert hostile >= 1  # markup in an answer was shown literally, never as markdown or HTML


def test_answer_pages_never_carry_the_verdict_the_plan_or_the_arc(
    small_build, tmp_path, monkeypatch
):
    """Same answers, a different judge's verdicts: ana's pages are identical and name nothing the
    judge said, which option is the plan value, the arc, its split, level or outcome."""
    ws1, made1 = _answers_audit(small_build, tmp_path, monkeypatch, "one")
    pages1 = _walk_pages(run(token_of(made1.links["ana"])), 4, 1)
    other = json.dumps({"asserted": [], "rationale": "A different judge said nothing."})
    ws2, made2 = _answers_audit(small_build, tmp_path, monkeypatch, "two", verdicts=other)
    assert (
        ws1.db.execute("select item_id, label from audit_references").fetchall()
        != ws2.db.execute("select item_id, label from audit_references").fetchall()
    )
    pages2 = _walk_pages(run(token_of(made2.links["ana"])), 4, 1)
    assert pages1 == pages2
    blob = re.sub(r"\$\$ID-[0-9a-f]+-", "$$ID-", "\n".join(p for page in pages1 for p in page))
    secrets = {
        "plan_option",
        "verdict",
        "rationale",
        "offline",
        "answer_cues",
        "came_true",
        "abandoned",
        "heuristic",
        "ben",
    }
    for arc_id, raw, after in ws1.db.execute(
        "select arc_id, verdict, after_session from eval_answers"
    ).fetchall():
        secrets |= {arc_id, json.loads(raw)["rationale"]}
    for item_id, strata in ws1.db.execute("select item_id, strata from audit_item_strata"):
        secrets.add(item_id)
        s = json.loads(strata)
        secrets |= {s["split"], s["level"], s["outcome"]} - {"open"}
    for secret in secrets:
        assert secret not in blob, secret


def test_the_adjudicator_sees_answer_items_with_their_options(small_build, tmp_path, monkeypatch):
    ws, made = _answers_audit(small_build, tmp_path, monkeypatch, "w", adjudicator="dee")
    for who, label in (("ana", "value_a"), ("ben", "neither")):
        tok = token_of(made.links[who])
        for q in annotator_queue(ws, tok):
            record_label(ws, tok, q.display.id, label)
    at = run(token_of(made.adjudicator_link))
    assert not at.exception
    assert at.title[0].value == "Adjudication: answer assertion"
    side = [t.value for t in at.sidebar.text]
    assert "neither x1, value A x1" in side
    assert side[side.index("neither x1, value A x1") + 1].startswith("A: ")
    assert any(t.value.startswith("B: ") for t in at.sidebar.text)


class _Interrupting:
    """st.session_state as Streamlit runs it while a newer press waits: once armed, the next
    access stops the run (Streamlit raises its rerun exception there)."""

    def __init__(self, state: dict) -> None:
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "armed", False)

    def _check(self) -> None:
        if self.armed:
            raise RuntimeError("run stopped: a newer press is waiting")

    def get(self, key, default=None):
        self._check()
        return self.state.get(key, default)

    def __getattr__(self, key):
        self._check()
        return self.state[key]

    def __setattr__(self, key, value) -> None:
        self._check()
        self.state[key] = value


def test_presses_once_taken_are_applied_whole_though_a_newer_press_stops_the_run(
    tmp_path, monkeypatch
):
    """A fast "1, Enter": Enter's press reaches the server while the run the "1" started is
    applying it. Applying touches no session state, so nothing stops it halfway: the label is
    stored and the page moves on (a half-applied "1" was lost, and Enter said "Choose a label
    first")."""
    import streamlit as st

    from agentmemgate.annotate_app import keys

    ws, made = make(tmp_path, monkeypatch, "w", annotators=["ana"])
    token = token_of(made.links["ana"])
    first = annotator_queue(ws, token)[0].display.id
    fake = _Interrupting({})

    class Stopping(keys.Presses):
        def take(self):
            out = super().take()
            object.__setattr__(fake, "armed", True)  # the "1"'s run is stopped from here on
            return out

    pressed = Stopping()
    pressed.press("choose", "other")
    pressed.close()
    pressed.press("submit")
    fake.state.update(_presses=pressed, _place=keys.Place(pos=0, queue=[first], own={first: None}))
    monkeypatch.setattr(st, "session_state", fake)
    keys.mark_shown(first)
    keys.apply_presses(ws, token, 5)
    here = fake.state["_place"]
    assert (here.pos, here.flash) == (1, None)
    assert ws.db.execute("select item_id, label from audit_labels").fetchall() == [(first, "other")]
