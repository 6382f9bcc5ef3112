"""The labeling app run by ``amg annotate`` (``streamlit run app.py``): one page per secret link.

Blind by construction: the page reads the database only through ``queues`` (display payloads and
the caller's own labels; for the adjudicator, the labels given without names). Conversation text,
speaker names, dates and questions are rendered with ``st.text`` so HTML and markdown stay inert;
only the package's own rubric text is rendered as markdown. Widget keys never contain item ids.

Keys: 1-9 choose a label, Enter submits, B goes back, N goes forward to an item already labeled.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
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


def render_item(d: ItemDisplay, target_title: str) -> None:
    if d.question:
        st.markdown("**Question**")
        st.text(d.question)
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
    for i, t in enumerate(d.turns):
        if t.date and t.date != last_date:
            st.text(f"--- session of {t.date} ---")
            last_date = t.date
        if i == d.target:
            with st.container(border=True):
                st.markdown(f"**▶ {target_title}**")
                _turn(t)
        else:
            _turn(t)


def _instructions(ls: LabelSet) -> None:
    with st.expander("Instructions and label definitions"):
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


def _submit(token: str, item_id: str) -> None:
    if item_id != st.session_state.get("shown_item"):  # a stale Enter from a past rerun
        return
    label = st.session_state.choices.get(item_id) or st.session_state.own.get(item_id)
    if label is None:
        return
    started = st.session_state.get("shown_at", time.time())
    try:
        queues.record_label(_workspace(), token, item_id, label,
                            shown_at=st.session_state.get("shown_iso"),
                            active_seconds=time.time() - started)
    except AmgError as e:
        st.session_state.flash = str(e)
        return
    st.session_state.choices.pop(item_id, None)
    st.session_state.pos += 1


def _mark_shown(item_id: str) -> None:
    if st.session_state.get("shown_item") != item_id:
        st.session_state.shown_item = item_id
        st.session_state.shown_at = time.time()
        st.session_state.shown_iso = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _controls(token: str, item_id: str, ls: LabelSet, own: str | None, pos: int) -> None:
    chosen = st.session_state.choices.get(item_id) or own
    st.session_state.own[item_id] = own
    cols = st.columns(len(ls.choices))
    for i, (col, lab) in enumerate(zip(cols, ls.choices), 1):
        with col:
            st.button(f"{i} · {display_name(lab)}", key=f"choice_{i}",
                      type="primary" if lab == chosen else "secondary",
                      shortcut=str(i) if i <= 9 else None, on_click=_choose, args=(item_id, lab),
                      width="stretch")
    back, submit, nxt = st.columns([1, 2, 1])
    with back:
        st.button("◀ Back (B)", key="back", shortcut="B", disabled=pos == 0, on_click=_move,
                  args=(-1,), width="stretch")
    with submit:
        st.button("Submit (Enter)", key="submit", shortcut="Enter", type="primary",
                  disabled=chosen is None, on_click=_submit, args=(token, item_id), width="stretch")
    with nxt:
        st.button("Next (N) ▶", key="next", shortcut="N", disabled=own is None, on_click=_move,
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


def labeling_page(ws: Workspace, token: str, me: queues.Person) -> None:
    items = queues.annotator_queue(ws, token)
    n = len(items)
    done = sum(it.own_label is not None for it in items)
    if "pos" not in st.session_state:
        st.session_state.pos = next((i for i, it in enumerate(items) if it.own_label is None), n)
    pos = max(0, min(st.session_state.pos, n))
    st.session_state.pos = pos
    st.title("Audit")
    st.text(f"Signed in as {me.name}")
    st.progress(done / n if n else 1.0, text=f"{done} of {n} labeled")
    if flash := st.session_state.pop("flash", None):
        st.error(flash)
    if pos >= n:
        st.success(f"All {n} items are labeled. Thank you! You can go back to change a label.")
        st.button("◀ Back (B)", key="back", shortcut="B", disabled=n == 0, on_click=_move, args=(-1,))
        return
    item = items[pos]
    st.subheader(f"Item {pos + 1} of {n}")
    _instructions(me.label_set)
    _mark_shown(item.display.id)
    render_item(item.display, "Statement to label" if item.display.kind == "statement"
                else "Highlighted turn")
    _controls(token, item.display.id, me.label_set, item.own_label, pos)


def adjudication_page(ws: Workspace, token: str, me: queues.Person) -> None:
    items = queues.adjudication_queue(ws, token)
    n = len(items)
    done = sum(it.own_label is not None for it in items)
    if "pos" not in st.session_state:
        st.session_state.pos = next((i for i, it in enumerate(items) if it.own_label is None), n)
    pos = max(0, min(st.session_state.pos, n))
    st.session_state.pos = pos
    st.title("Adjudication")
    st.text(f"Signed in as {me.name} (adjudicator). Disagreements come first; "
            "annotator names are hidden.")
    st.progress(done / n if n else 1.0, text=f"{done} of {n} resolved")
    if flash := st.session_state.pop("flash", None):
        st.error(flash)
    if pos >= n:
        st.success(f"All {n} items with two or more labels are resolved." if n else
                   "No item has two or more labels yet.")
        st.button("◀ Back (B)", key="back", shortcut="B", disabled=n == 0, on_click=_move, args=(-1,))
        return
    item = items[pos]
    st.subheader(f"Item {pos + 1} of {n}" + (" · disagreement" if item.disagreement else " · agreement"))
    _instructions(me.label_set)
    _mark_shown(item.display.id)
    render_item(item.display, "Statement to label" if item.display.kind == "statement"
                else "Highlighted turn")
    st.markdown("**Labels given (names hidden)**")
    st.text(", ".join(f"{display_name(lab)} x{k}" for lab, k in queues.summarize_given(item.labels_given)))
    _controls(token, item.display.id, me.label_set, item.own_label, pos)


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
