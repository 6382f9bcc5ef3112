"""The labeling app run by ``amg annotate`` (``streamlit run app.py``): one page per secret link.

Blind by construction: the page reads the database only through ``queues`` (display payloads and
the caller's own labels; for the adjudicator, the labels given without names). Conversation text,
speaker names, dates and questions are rendered with ``st.text`` so HTML and markdown stay inert;
only the package's own words are rendered as markdown or HTML (a session separator shows a date we
formatted ourselves, escaped). Widget keys never contain item ids.

Layout for a laptop screen: the choices, Submit, Back and Next sit in the sidebar, which stays in
view while the conversation scrolls; the instructions are open on the first item only; a small
page script (our code and the item's position, nothing else) scrolls the highlighted turn into
view once per item.

Sign-in: the token from the link is kept in the server-side session and taken out of the address
bar (``history.replaceState``, so no history entry keeps it); a reload starts a new session, which
shows the sign-in page with the way back (open the link again; saved labels are kept).

Keys: 1-9 choose a label, Enter submits, B goes back, N goes forward to an item already labeled.
Submit stays enabled so that a fast "1, Enter" is not lost while the "1" rerun is in flight; keys
are applied in the order they were pressed, and where Streamlit has folded several into one rerun
(losing their order) only where the order cannot matter (see ``keys``). Enter on an
unchanged saved label moves on without logging a duplicate (which would overwrite the item's
active seconds and mark it as changed).
"""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from agentmemgate.annotate_app import queues
from agentmemgate.annotate_app._assets import script, style
from agentmemgate.annotate_app._item_view import (  # noqa: F401  (session_label: re-exported)
    TARGET_KEY,
    instructions,
    options_text,
    question,
    render_item,
    session_label,
)
from agentmemgate.annotate_app.items import ItemDisplay
from agentmemgate.annotate_app.keys import (
    Place,
    apply_presses,
    key_script,
    mark_shown,
    place,
    presses,
)
from agentmemgate.annotate_app.labels import LabelSet, display_name
from agentmemgate.errors import AmgError
from agentmemgate.streamlit_launch import app_workspace
from agentmemgate.workspace import Workspace

# Our own containers' keys; Streamlit gives each the CSS class .st-key-KEY.
HEAD_KEY, CHAT_KEY = "amg-head", "amg-chat"
READY_KEY = "amg-ready"  # the first page's button that the key script presses
PICKS_KEY, CHOSEN_KEY = "amg-picks", "amg-chosen"  # see keys.key_script
RELOAD_NOTE = (
    "Reloading this page or opening it in a new tab signs you out: the token is kept "
    "on the server, not in the address bar. Your saved labels are kept; open your "
    "personal link again to continue where you left off."
)

# Our own styling. The conversation scrolls in its own panel, sized by the page script to the
# room left below the title and instructions (unbounded where the script does not run); the
# instructions take at most 30% of the screen; the highlighted turn stands out; a session break is
# a dated rule across the conversation.
_STYLE = style("page.css")


def _workspace() -> Workspace:
    """One connection per browser session: a session's reruns and callbacks run one at a time."""
    if st.session_state.get("_ws") is None:
        st.session_state._ws = Workspace(app_workspace())
    return st.session_state._ws


def _opening() -> None:
    """A tab's first run after signing in: only a button the key script presses once it runs
    (a person whose browser runs no script presses it by hand)."""
    st.caption("Opening the audit…")
    st.button("Open", key=READY_KEY)


# Runs in the page each time its text changes: once per item, as the position is in the comment.
# It holds no item data. 1. Take the token out of the address bar without adding a history entry.
# 2. Size the conversation panel to the screen (again when the instructions open or close or the
#    window changes), start the item at the top and, if the highlighted turn is out of sight,
#    scroll it to three quarters down the panel, so that what leads up to it shows above it.
def _page_script(nonce: str, *, scroll: bool = False, has_target: bool = False) -> None:
    st.html(
        script(
            "page_script.js",
            nonce=nonce,
            scroll=str(scroll).lower(),
            head=HEAD_KEY,
            chat=CHAT_KEY,
            target=TARGET_KEY,
            has_target=str(has_target).lower(),
        ),
        unsafe_allow_javascript=True,
    )  # our constant code and a position: no data


# -- sign-in: the token lives in the server-side session ---------------------------------------
def _sign_in(token: str) -> None:
    token = token.strip()
    who = hashlib.sha256(token.encode()).hexdigest()
    if st.session_state.get("who") != who:
        _forget_everything()
        presses().take()  # another person's presses, if any, are dropped
        st.session_state.who = who
        st.session_state._place = Place()  # choices, saved labels shown, position: none yet
    st.session_state.token = token or None


def _forget_everything() -> None:
    """Keeps the connection, the link token already taken from the address (see below), the
    press log the buttons' callbacks hold and whether the tab has run before."""
    for k in list(st.session_state.keys()):
        if k not in ("_ws", "_url_token", "_presses", "_ran"):
            del st.session_state[k]


def _sign_out() -> None:
    _forget_everything()
    st.session_state.signed_out = True


def signed_in_token() -> str | None:
    """The caller's token. A ``?token=`` in the address signs in once; the page script takes it out
    of the address bar, and the next run (whose query string the browser still sends) deletes it
    from ``st.query_params`` too, which then matches the address bar, so Streamlit pushes no
    history entry."""
    if "token" in st.query_params:
        from_url = st.query_params.get("token") or ""
        if st.session_state.get("_url_token") == from_url:
            del st.query_params["token"]
        else:
            _sign_in(from_url)
            st.session_state._url_token = from_url
    return st.session_state.get("token")


def _controls(token: str, item: ItemDisplay, ls: LabelSet, own: str | None, pos: int) -> None:
    """The sidebar's decision block: choices 1..n in scale order, Submit, Back and Next."""
    item_id, keys, here = item.id, presses(), place()
    chosen = here.choices.get(item_id) or own
    here.own[item_id] = own
    for i, lab in enumerate(ls.choices, 1):
        st.button(
            display_name(lab),
            key=f"choice_{i}",  # Streamlit shows the key beside it
            type="primary" if lab == chosen else "secondary",
            help=ls.definitions.get(lab) or None,
            width="stretch",
            shortcut=str(i) if i <= 9 else None,
            on_click=keys.press,
            args=("choose", lab),
        )
    with st.container(key=PICKS_KEY):  # hidden: the key script's "choose and submit" presses
        for i, lab in enumerate(ls.choices[:9], 1):
            st.button(
                f"Submit {display_name(lab)}",
                key=f"pick_{i}",
                on_click=keys.press,
                args=("pick", lab),
            )
    st.button(
        "Submit",
        key="submit",
        shortcut="Enter",
        width="stretch",
        type="primary" if chosen is not None else "secondary",
        on_click=keys.press,
        args=("submit",),
    )
    if flash := here.pop_flash():
        st.error(flash)
    back, nxt = st.columns(2)
    with back:
        st.button(
            "◀ Back",
            key="back",
            shortcut="B",
            disabled=pos == 0,
            on_click=keys.press,
            args=("move", -1),
            width="stretch",
        )
    with nxt:
        st.button(
            "Next ▶",
            key="next",
            shortcut="N",
            disabled=own is None,
            on_click=keys.press,
            args=("move", 1),
            width="stretch",
        )
    st.container(key=CHOSEN_KEY).text(
        f"Your choice: {display_name(chosen)}" + ("" if chosen != own else " (saved)")
        if chosen is not None
        else "Your choice: none yet"
    )
    st.caption(
        f"Keys: 1-{min(len(ls.choices), 9)} choose · Enter submit · B back · N next (labeled items)"
    )


def _account(signed_in: str, note: str = RELOAD_NOTE) -> None:
    """Bottom of the sidebar: who is signed in, what a reload does, and a way to sign out."""
    st.divider()
    st.text(signed_in)
    st.caption(note)
    st.button("Sign out", key="sign_out", on_click=_sign_out)


# -- pages -------------------------------------------------------------------------------------
def login_page(message: str | None = None) -> None:
    st.title("AgentMemGate audit")
    if message:
        st.error(message)
    elif st.session_state.pop("signed_out", False):
        st.success("You are signed out. Your saved labels are kept.")
    st.write("Open the personal link you were given, or paste its token here.")

    def _login() -> None:
        tok = (st.session_state.get("token_input") or "").strip()
        if tok:
            _sign_in(tok)  # into the session, never into the address

    st.text_input("Access token", key="token_input", type="password", on_change=_login)
    st.button("Open", key="login", on_click=_login)
    st.info("Signed out after a reload? " + RELOAD_NOTE)
    _page_script("sign-in")


def task_title(ls: LabelSet) -> str:
    """The task in words (never the audit's name, which its creator may have made telling)."""
    return display_name(ls.task) + (f" ({display_name(ls.factor)})" if ls.factor else "")


def _item_page(
    items: list,
    n_done: int,
    title: str,
    signed_in: str,
    progress_word: str,
    empty_text: str,
    done_text: str,
    tag=lambda item: "",
    total: int | None = None,
    note: str = RELOAD_NOTE,
):
    """The part both pages share: title, progress, end/empty states, the account block. Returns the
    position of the item to show and the sidebar slot for its controls, or None when there is
    no item to show. ``total``: the items planned (an open audit assigns them one at a time)."""
    n, here = len(items), place()
    planned = max(total or n, n)
    if here.pos is None:
        here.pos = next((i for i, it in enumerate(items) if it.own_label is None), n)
    pos = here.pos = max(0, min(here.pos, n))
    here.queue = [it.display.id for it in items]  # server-side only, for the keys
    if pos < n:
        mark_shown(items[pos].display.id)
    head = st.container(key=HEAD_KEY)  # title and instructions: the panel below fits around them
    head.title(title)
    with st.sidebar:
        if n and pos < n:
            st.subheader(f"Item {pos + 1} of {planned}{tag(items[pos])}")
        if n:
            st.progress(n_done / planned, text=f"{n_done} of {planned} {progress_word}")
        slot = st.container()
        _account(signed_in, note)
    if n == 0:
        st.info(empty_text)
    elif pos >= n:
        st.success(done_text)
        with slot:
            if flash := here.pop_flash():
                st.error(flash)
            st.button(
                "◀ Back",
                key="back",
                shortcut="B",
                on_click=presses().press,
                args=("move", -1),
                width="stretch",
            )
    if n == 0 or pos >= n:
        _page_script(f"end {pos}")
        return None
    return pos, slot, head


def _items_word(n: int) -> str:
    return f"{n} item is" if n == 1 else f"all {n} items are"


def _show_item(
    token: str,
    me: queues.Person,
    display: ItemDisplay,
    own: str | None,
    pos: int,
    slot,
    head,
    first: bool,
    given: list[str] | None = None,
) -> None:
    """Main area: instructions (open on the first item) and the question above the conversation
    panel; sidebar: the choices."""
    with slot:
        if given is not None:
            st.markdown("**Labels given (names hidden)**")
            st.text(
                ", ".join(f"{display_name(lab)} x{k}" for lab, k in queues.summarize_given(given))
            )
        if display.question:  # long conversations push the question out of sight: repeat it here
            question(display)
        if options := options_text(display):  # what "value A" and "value B" stand for
            st.markdown("**Options**")
            for line in options:
                st.text(line)
        _controls(token, display, me.label_set, own, pos)
    with head:
        instructions(me.label_set, expanded=first)
        if display.question:
            st.text(f"Question: {display.question}")
    with st.container(key=CHAT_KEY, border=True):
        render_item(
            display, "Statement to label" if display.kind == "statement" else "Highlighted turn"
        )
    _page_script(f"item {pos}", scroll=True, has_target=display.target is not None)


OPEN_NOTE = "Reloading this page keeps your place: your saved labels are kept."


def labeling_page(ws: Workspace, token: str, me: queues.Person) -> None:
    apply_presses(ws, token, len(me.label_set.choices))
    items = queues.annotator_queue(ws, token)  # an open audit assigns the next item here
    state = queues.study_state(ws, token)
    if state is not None and state.status != "working":
        study_end(state)
        return
    done = sum(it.own_label is not None for it in items)
    if feedback := place().pop_feedback():
        st.info(feedback)  # a qualification item's answer: the only one ever shown
    shown = _item_page(
        items,
        done,
        f"Audit: {task_title(me.label_set)}",
        f"Signed in as {me.name}",
        "labeled",
        "No items are assigned to you in this audit. If you expected some, ask the "
        "person who sent you the link.",
        f"{_items_word(len(items)).capitalize()} labeled. Thank you! You can go back to change "
        "a label.",
        total=state.planned if state is not None else None,
        note=OPEN_NOTE if state is not None else RELOAD_NOTE,
    )
    if shown is None:
        return
    pos, slot, head = shown
    item = items[pos]
    _show_item(token, me, item.display, item.own_label, pos, slot, head, first=done == 0)


def study_end(state: queues.StudyState) -> None:
    """The last page of an open audit: thanks, the code to copy and, with a redirect, the way
    back to the platform (followed at once; the link is there if the browser runs no script)."""
    st.title("Thank you")
    if state.status == "done":
        st.success("You have finished this study. Thank you!")
    elif state.status == "screened_out":
        st.info("Thank you for your time. The study ends here for you; your labels are kept.")
    else:
        st.info(queues.study.FULL)
    if state.code:
        st.text(f"Your code: {state.code}")
    if state.redirect:
        st.link_button("Back to the study platform", state.redirect)
        st.html(
            f"<script>window.location.assign({json.dumps(state.redirect)});</script>",
            unsafe_allow_javascript=True,
        )  # the address the audit's creator gave, with the code: no item data
    _page_script("end")


def study_page(ws: Workspace) -> bool:
    """Someone opened an open audit's study link (``?study=...&PROLIFIC_PID=...``): sign them in
    once per browser session, or show why not. Returns True when the page is drawn here."""
    query = {k: st.query_params.get(k) or "" for k in st.query_params}
    if st.session_state.get("_arrival") == query and st.session_state.get("token"):
        return False
    try:
        arrival = queues.arrive(ws, query["study"], query)
    except AmgError as e:
        st.title("AgentMemGate audit")
        st.error(str(e))
        return True
    if arrival.message:
        st.title("AgentMemGate audit")
        st.info(arrival.message)
        return True
    _sign_in(arrival.token)
    st.session_state._arrival = query
    return False


def adjudication_page(ws: Workspace, token: str, me: queues.Person) -> None:
    apply_presses(ws, token, len(me.label_set.choices))
    items = queues.adjudication_queue(ws, token)
    done = sum(it.own_label is not None for it in items)
    shown = _item_page(
        items,
        done,
        f"Adjudication: {task_title(me.label_set)}",
        f"Signed in as {me.name} (adjudicator). Disagreements come first; annotator names are "
        "hidden.",
        "resolved",
        "No item has two or more labels yet; come back when the annotators have labeled some.",
        f"{_items_word(len(items)).capitalize()} with two or more labels resolved.",
        tag=lambda it: " · disagreement" if it.disagreement else " · agreement",
    )
    if shown is None:
        return
    pos, slot, head = shown
    item = items[pos]
    _show_item(
        token,
        me,
        item.display,
        item.own_label,
        pos,
        slot,
        head,
        first=done == 0,
        given=item.labels_given,
    )


def main() -> None:
    presses().close()
    st.set_page_config(
        page_title="AgentMemGate audit", layout="centered", initial_sidebar_state="expanded"
    )
    st.html(_STYLE)
    first_run = not st.session_state.get("_ran")  # of this browser tab's session
    st.session_state._ran = True
    key_script(HEAD_KEY, READY_KEY, CHOSEN_KEY)
    if "study" in st.query_params and study_page(_workspace()):
        return
    token = signed_in_token()
    if not token:
        login_page()
        return
    try:
        ws = _workspace()
        me = queues.resolve_token(ws, token)
    except AmgError as e:
        _forget_everything()
        login_page(str(e))
        return
    if first_run:
        _opening()
        return
    if me.role == "adjudicator":
        adjudication_page(ws, token, me)
    else:
        labeling_page(ws, token, me)


main()
