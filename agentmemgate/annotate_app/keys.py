"""The audit app's keys: the script that takes them in the browser, and the state machine on the
server that applies the presses in order (``app`` draws the buttons and calls these).

Keys: 1-9 choose a label, Enter submits, B goes back, N goes forward to an item already labeled.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from dataclasses import dataclass, field

import streamlit as st

from ..errors import AmgError
from ..workspace import Workspace
from . import queues
from ._assets import script
from .labels import display_name

# Drawn first on every page, it runs once per browser tab and takes the labeling keys itself
# (they never reach Streamlit's own shortcut handlers). Streamlit binds a button's shortcut only
# once the button is drawn and enabled, so a key pressed the moment a page first appears, or while
# a run redraws it, would reach no handler and be lost without a sign. Here a key whose button is
# drawn, current and enabled presses it; one that comes while the page is still being drawn waits
# for its button (in the order pressed, up to KEY_WAIT_S); one the drawn page has no enabled
# button for is refused with a note on the page. A number key only chooses, in the page (no run);
# Enter then sends the choice and the submit as one press of a hidden button ("pick_N"), so a
# label costs the server one run instead of two. After a press, the next key waits for the run
# it started to end: a press that arrives as a run starts can stop it before the earlier press's
# callback has run, and that press is lost (61 of 513 labels under the crowd benchmark when a
# number key was a press and Enter did not wait for its run). Keys typed into a field,
# with Ctrl, Alt or Cmd, or on a page without the labeling controls (sign-in) are left alone.
# What a press does is decided on the server, as for a click. Streamlit runs the script only
# after it has painted the page, so a tab's first page with labeling controls is drawn only once
# the script has run: the first run draws an "Open" button (``app._opening``), which the script
# presses as soon as it runs.
KEY_WAIT_S = 10


def key_script(head: str, ready: str, chosen: str) -> None:
    """Draw the key script (first on every page); ``head``: the key of the container only pages
    with labeling controls draw, ``ready``: the key of the first page's Open button, ``chosen``:
    the key of the "Your choice" line."""
    st.html(
        script(
            "key_script.js",
            submit="submit",
            back="back",
            next="next",
            choice="choice_",
            pick="pick_",
            head=head,
            ready=ready,
            chosen=chosen,
            wait_ms=KEY_WAIT_S * 1000,
        ),
        unsafe_allow_javascript=True,
    )  # our constant code: no data


# -- keys: the buttons' callbacks record presses; each run applies them in order -----------------
# Two things in Streamlit lose or reorder fast presses, so the callbacks only record them:
# - Reading or writing st.session_state is a yield point: a callback that touches it while a newer
#   press is already waiting is aborted there (the first press of a fast "2, Enter" was lost). The
#   callbacks therefore get a plain object as an argument and never touch st.session_state.
# - Presses that reach the server while a run is busy are folded into one rerun, whose callbacks
#   run in page order, not in the order of the presses. Each run's presses form a batch; batches
#   are applied in order, a batch only where the order of its presses cannot change the outcome
#   (otherwise the page says so and saves nothing the annotator may not have meant).
TOO_FAST = (
    "Keys came faster than the page could follow, so none of them was applied: press them again."
)


class Presses:
    """One browser session's key presses, in batches (one per run's callbacks)."""

    def __init__(self) -> None:
        self.batches: list[list[tuple]] = []
        self.open = False

    def press(self, *action) -> None:  # the buttons' callback: no Streamlit call in here
        if not self.open:
            self.batches.append([])
            self.open = True
        self.batches[-1].append(action)

    def close(self) -> None:
        """At the start of every run's script: later presses form the next batch."""
        self.open = False

    def take(self) -> list[list[tuple]]:
        out, self.batches = self.batches, []
        return out


def presses() -> Presses:
    if st.session_state.get("_presses") is None:
        st.session_state._presses = Presses()
    return st.session_state._presses


@dataclass
class Place:
    """Where a browser session is in its queue, in one plain object kept in the session.

    Applying presses changes only this object: a run that a newer press interrupts stops at its
    next ``st`` call, so a batch taken from ``Presses`` is applied whole (its label stored, the
    position moved) or not taken at all, never halfway."""

    pos: int | None = None  # None until the queue is first shown
    queue: list[str] = field(default_factory=list)  # item ids, server-side only
    choices: dict[str, str] = field(default_factory=dict)  # chosen but not yet submitted
    own: dict[str, str | None] = field(default_factory=dict)  # the saved label shown with it
    shown_item: str | None = None
    shown_at: float = 0.0
    shown_iso: str | None = None
    flash: str | None = None  # a message for the next page only
    feedback: str | None = None  # a qualification item's answer, shown once

    def pop_flash(self) -> str | None:
        out, self.flash = self.flash, None
        return out

    def pop_feedback(self) -> str | None:
        out, self.feedback = self.feedback, None
        return out


def place() -> Place:
    if st.session_state.get("_place") is None:
        st.session_state._place = Place()
    return st.session_state._place


def _current_item(here: Place) -> str | None:
    """The item keys act on: the one at the current position, once its page has begun to be drawn.
    A key that comes before the next item was drawn at all acts on nothing, and the page says so
    (the annotator has not seen that item)."""
    pos = here.pos or 0
    item = here.queue[pos] if 0 <= pos < len(here.queue) else None
    if item is not None and item != here.shown_item:
        here.flash = "That key came before the next item was shown; press it again."
        return None
    return item


def apply_presses(ws: Workspace, token: str, n_choices: int) -> None:
    keys, here = presses(), place()  # st calls: a newer press may stop the run here, before...
    for batch in keys.take():  # ...the presses are taken; from here on no st call is made
        _apply_batch(here, ws, token, batch, n_choices)


def _apply_batch(
    here: Place, ws: Workspace, token: str, batch: list[tuple], n_choices: int
) -> None:
    if len(batch) == 1 and batch[0][0] == "pick":  # a number key, then Enter: one intent
        if (item_id := _current_item(here)) is not None:
            here.choices[item_id] = batch[0][1]
            _submit(here, ws, token, item_id, n_choices)
        return
    batch = [b for a in batch for b in ([("choose", a[1]), ("submit",)] if a[0] == "pick" else [a])]
    moves = [a[1] for a in batch if a[0] == "move"]
    labels = list(dict.fromkeys(a[1] for a in batch if a[0] == "choose"))
    submit = any(a[0] == "submit" for a in batch)
    if moves:
        if labels or submit:
            here.flash = TOO_FAST
        else:
            here.pos = (here.pos or 0) + sum(moves)
        return
    if len(labels) > 1:
        here.flash = (
            f"Two labels came at once ({display_name(labels[0])} and "
            f"{display_name(labels[1])}): press the one you mean."
        )
        return
    if (item_id := _current_item(here)) is None:
        return
    if labels:
        before = here.choices.get(item_id) or here.own.get(item_id)
        here.choices[item_id] = labels[0]
        if submit and before not in (
            None,
            labels[0],
        ):  # "2, Enter" or "Enter, 2"? Ask, save nothing
            here.flash = (
                f"Keys came faster than the page could follow: your choice "
                f"is now {display_name(labels[0])}. Press Enter to submit it."
            )
            return
    if submit:
        _submit(here, ws, token, item_id, n_choices)


def _submit(here: Place, ws: Workspace, token: str, item_id: str, n_choices: int) -> None:
    own = here.own.get(item_id)
    label = here.choices.get(item_id) or own
    if label is None:
        here.flash = f"Choose a label first: press 1-{min(n_choices, 9)}."
        return
    if label == own:  # unchanged: move on, log nothing
        here.choices.pop(item_id, None)
        here.pos = (here.pos or 0) + 1
        return
    try:
        feedback = queues.record_label(
            ws,
            token,
            item_id,
            label,
            shown_at=here.shown_iso,
            active_seconds=time.time() - (here.shown_at or time.time()),
        )
    except AmgError as e:  # the page never shows item ids: an arc id names its level
        here.flash = (
            str(e)
            if item_id not in str(e)
            else "This label was not saved: the item is no longer in your queue. "
            "Open your personal link again to see your queue as it is now."
        )
        return
    except sqlite3.OperationalError:  # still locked after the busy timeout
        here.flash = "The database is busy; your label was not saved. Press Enter again."
        return
    here.choices.pop(item_id, None)
    here.pos = (here.pos or 0) + 1
    if feedback:
        here.feedback = feedback


def mark_shown(item_id: str) -> None:
    """Called before anything of the item is drawn, so a key pressed on what the page shows acts
    on that item (see ``_current_item``)."""
    here = place()
    if here.shown_item != item_id:
        here.shown_item = item_id
        here.shown_at = time.time()
        here.shown_iso = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
