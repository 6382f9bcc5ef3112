"""The labeling app run by ``amg annotate`` (``streamlit run app.py``): one page per secret link.

Blind by construction: the page reads the database only through ``queues`` (display payloads and
the caller's own labels; for the adjudicator, the labels given without names). Conversation text,
speaker names, dates and questions are rendered with ``st.text`` so HTML and markdown stay inert;
only the package's own rubric text is rendered as markdown. Widget keys never contain item ids.

Keys: 1-9 choose a label, Enter submits, B goes back, N goes forward to an item already labeled.
Submit stays enabled so that a fast "1, Enter" is not lost while the "1" rerun is in flight;
Enter on an unchanged saved label moves on without logging a duplicate (which would overwrite the
item's active seconds and mark it as changed).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import sqlite3
import sys
import time

import streamlit as st

from agentmemgate.annotate_app import queues
from agentmemgate.annotate_app.items import DisplayTurn, ItemDisplay
from agentmemgate.annotate_app.labels import LabelSet, display_name
from agentmemgate.errors import AmgError
from agentmemgate.workspace import DEFAULT_WORKSPACE, Workspace

WORKSPACE_ENV = "AMG_WORKSPACE"


def workspace_path() -> str:
    """From ``AMG_WORKSPACE`` (set by ``amg annotate``) or ``-- --workspace DIR`` after the script."""
    if os.environ.get(WORKSPACE_ENV):
        return os.environ[WORKSPACE_ENV]
    argv = sys.argv[1:]
    if "--workspace" in argv and argv.index("--workspace") + 1 < len(argv):
        return argv[argv.index("--workspace") + 1]
    return str(DEFAULT_WORKSPACE)


def _workspace() -> Workspace:
    """One connection per browser session: a session's reruns and callbacks run one at a time."""
    if st.session_state.get("_ws") is None:
        st.session_state._ws = Workspace(workspace_path())
    return st.session_state._ws


# -- rendering of one item (plain text only) ---------------------------------------------------
def _turn(t: DisplayTurn) -> None:
    with st.chat_message("assistant" if t.role == "assistant" else "user"):
        st.text(t.speaker or t.role.capitalize())
        st.text(t.text)


def _session_dates(turns: list[DisplayTurn]) -> list[str | None]:
    """Each turn's session date; an undated turn (statement context from a corpus) belongs to the
    session of the next dated turn, so no session header falls between a statement and its context."""
    out: list[str | None] = [t.date for t in turns]
    nxt = None
    for i in range(len(out) - 1, -1, -1):
        out[i] = nxt = out[i] or nxt
    prev = None
    for i, d in enumerate(out):
        out[i] = prev = d or prev
    return out


def _question(d: ItemDisplay) -> None:
    if d.question:
        st.markdown("**Question**")
        st.text(d.question)


def render_item(d: ItemDisplay, target_title: str) -> None:
    _question(d)
    if d.pair is not None:
        p = d.pair
        st.markdown("**Field**")
        st.text(p.field)
        if p.description:
            st.text(p.description)
        left, right = st.columns(2)
        with left, st.container(border=True):
            st.text(p.a_name)
            st.text(p.a)
        with right, st.container(border=True):
            st.text(p.b_name)
            st.text(p.b)
    last_date = None
    for i, (t, date) in enumerate(zip(d.turns, _session_dates(d.turns))):
        if date and date != last_date:
            st.text(f"--- session of {date} ---")
            last_date = date
        if i == d.target:
            with st.container(border=True):
                st.markdown(f"**:orange[▶ {target_title}]**")  # our own words: markdown is safe
                _turn(t)
        else:
            _turn(t)


def _instructions(ls: LabelSet, expanded: bool) -> None:
    """Open until the person's first saved label; each label button also carries its definition."""
    with st.expander("Instructions and label definitions", expanded=expanded):
        st.markdown(ls.instructions)  # package rubric text: trusted
        for i, lab in enumerate(ls.choices, 1):
            st.markdown(f"**{i} · {display_name(lab)}**: {ls.definitions.get(lab, '')}")


# -- state and callbacks -----------------------------------------------------------------------
def _reset_if_new_person(token: str) -> None:
    who = hashlib.sha256(token.encode()).hexdigest()
    if st.session_state.get("who") != who:
        for k in list(st.session_state.keys()):
            if k != "_ws":
                del st.session_state[k]
        st.session_state.who = who
        st.session_state.choices = {}  # item id -> label chosen but not yet submitted
        st.session_state.own = {}  # item id -> the saved label shown with it


def _choose(item_id: str, label: str) -> None:
    if item_id == st.session_state.get("shown_item"):  # ignore a stale button from a past rerun
        st.session_state.choices[item_id] = label


def _move(delta: int) -> None:
    st.session_state.pos += delta


def _submit(token: str, item_id: str, n_choices: int) -> None:
    if item_id != st.session_state.get("shown_item"):  # a stale Enter from a past rerun
        return
    own = st.session_state.own.get(item_id)
    label = st.session_state.choices.get(item_id) or own
    if label is None:
        st.session_state.flash = f"Choose a label first: press 1-{min(n_choices, 9)}."
        return
    if label == own:  # unchanged: move on, log nothing
        st.session_state.choices.pop(item_id, None)
        st.session_state.pos += 1
        return
    started = st.session_state.get("shown_at", time.time())
    try:
        queues.record_label(_workspace(), token, item_id, label,
                            shown_at=st.session_state.get("shown_iso"),
                            active_seconds=time.time() - started)
    except AmgError as e:  # the page never shows item ids: an arc id names its level
        st.session_state.flash = (str(e) if item_id not in str(e) else
                                  "This label was not saved: the item is no longer in your queue. "
                                  "Reload the page.")
        return
    except sqlite3.OperationalError:  # still locked after the busy timeout
        st.session_state.flash = "The database is busy; your label was not saved. Press Enter again."
        return
    st.session_state.choices.pop(item_id, None)
    st.session_state.pos += 1


def _mark_shown(item_id: str) -> None:
    if st.session_state.get("shown_item") != item_id:
        st.session_state.shown_item = item_id
        st.session_state.shown_at = time.time()
        st.session_state.shown_iso = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _controls(token: str, item: ItemDisplay, ls: LabelSet, own: str | None, pos: int) -> None:
    item_id = item.id
    chosen = st.session_state.choices.get(item_id) or own
    st.session_state.own[item_id] = own
    if item.question:  # long conversations push the question out of sight: repeat it here
        _question(item)
    # A wrapping row of content-width buttons: full label names, in scale order, 1..n.
    with st.container(horizontal=True, gap="small"):
        for i, lab in enumerate(ls.choices, 1):
            st.button(f"{i} · {display_name(lab)}", key=f"choice_{i}",
                      type="primary" if lab == chosen else "secondary",
                      help=ls.definitions.get(lab) or None,
                      shortcut=str(i) if i <= 9 else None, on_click=_choose, args=(item_id, lab))
    back, submit, nxt = st.columns([1, 2, 1])
    with back:
        st.button("◀ Back", key="back", shortcut="B", disabled=pos == 0, on_click=_move,
                  args=(-1,), width="stretch")
    with submit:
        st.button("Submit", key="submit", shortcut="Enter",
                  type="primary" if chosen is not None else "secondary",
                  on_click=_submit, args=(token, item_id, len(ls.choices)), width="stretch")
    with nxt:
        st.button("Next ▶", key="next", shortcut="N", disabled=own is None, on_click=_move,
                  args=(1,), width="stretch")
    st.caption(f"Keys: 1-{min(len(ls.choices), 9)} choose · Enter submit · B back · N next (labeled items)")
    if chosen is not None:
        st.text(f"Your choice: {display_name(chosen)}" + ("" if chosen != own else " (saved)"))


# -- pages -------------------------------------------------------------------------------------
def login_page(message: str | None = None) -> None:
    st.title("AgentMemGate audit")
    if message:
        st.error(message)
    st.write("Open the personal link you were given, or paste its token here.")

    def _login() -> None:
        tok = (st.session_state.get("token_input") or "").strip()
        if tok:
            st.query_params["token"] = tok

    st.text_input("Access token", key="token_input", type="password")
    st.button("Open", key="login", on_click=_login)


def task_title(ls: LabelSet) -> str:
    """The task in words (never the audit's name, which its creator may have made telling)."""
    return display_name(ls.task) + (f" ({display_name(ls.factor)})" if ls.factor else "")


def _item_page(items: list, n_done: int, title: str, signed_in: str, progress_word: str,
               empty_text: str, done_text: str) -> int | None:
    """The part both pages share: header, progress, flash, end/empty states. Returns the position
    of the item to show, or None when there is none."""
    n = len(items)
    if "pos" not in st.session_state:
        st.session_state.pos = next((i for i, it in enumerate(items) if it.own_label is None), n)
    pos = max(0, min(st.session_state.pos, n))
    st.session_state.pos = pos
    st.title(title)
    st.text(signed_in)
    if n == 0:
        st.info(empty_text)
        return None
    st.progress(n_done / n, text=f"{n_done} of {n} {progress_word}")
    if flash := st.session_state.pop("flash", None):
        st.error(flash)
    if pos >= n:
        st.success(done_text)
        st.button("◀ Back", key="back", shortcut="B", on_click=_move, args=(-1,))
        return None
    return pos


def _items_word(n: int) -> str:
    return f"{n} item is" if n == 1 else f"all {n} items are"


def labeling_page(ws: Workspace, token: str, me: queues.Person) -> None:
    items = queues.annotator_queue(ws, token)
    done = sum(it.own_label is not None for it in items)
    pos = _item_page(
        items, done, f"Audit: {task_title(me.label_set)}", f"Signed in as {me.name}",
        "labeled", "No items are assigned to you in this audit. If you expected some, ask the "
        "person who sent you the link.",
        f"{_items_word(len(items)).capitalize()} labeled. Thank you! You can go back to change "
        "a label.")
    if pos is None:
        return
    item = items[pos]
    st.subheader(f"Item {pos + 1} of {len(items)}")
    _instructions(me.label_set, expanded=done == 0)
    _mark_shown(item.display.id)
    render_item(item.display, "Statement to label" if item.display.kind == "statement"
                else "Highlighted turn")
    _controls(token, item.display, me.label_set, item.own_label, pos)


def adjudication_page(ws: Workspace, token: str, me: queues.Person) -> None:
    items = queues.adjudication_queue(ws, token)
    done = sum(it.own_label is not None for it in items)
    pos = _item_page(
        items, done, f"Adjudication: {task_title(me.label_set)}",
        f"Signed in as {me.name} (adjudicator). Disagreements come first; annotator names are "
        "hidden.", "resolved", "No item has two or more labels yet; come back when the annotators "
        "have labeled some.",
        f"{_items_word(len(items)).capitalize()} with two or more labels resolved.")
    if pos is None:
        return
    item = items[pos]
    st.subheader(f"Item {pos + 1} of {len(items)}" +
                 (" · disagreement" if item.disagreement else " · agreement"))
    _instructions(me.label_set, expanded=done == 0)
    _mark_shown(item.display.id)
    render_item(item.display, "Statement to label" if item.display.kind == "statement"
                else "Highlighted turn")
    st.markdown("**Labels given (names hidden)**")
    st.text(", ".join(f"{display_name(lab)} x{k}" for lab, k in queues.summarize_given(item.labels_given)))
    _controls(token, item.display, me.label_set, item.own_label, pos)


def main() -> None:
    st.set_page_config(page_title="AgentMemGate audit", layout="centered")
    token = st.query_params.get("token")
    if not token:
        login_page()
        return
    _reset_if_new_person(token)
    try:
        ws = _workspace()
        me = queues.resolve_token(ws, token)
    except AmgError as e:
        login_page(str(e))
        return
    if me.role == "adjudicator":
        adjudication_page(ws, token, me)
    else:
        labeling_page(ws, token, me)


main()
