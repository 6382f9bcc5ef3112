"""How one audit item is drawn on the labeling page: plain text only (``st.text``), so HTML and
markdown in conversation text, speaker names, dates and questions stay inert; only the package's
own words are rendered as markdown or HTML (a session separator shows a date formatted here,
escaped)."""

from __future__ import annotations

import datetime as dt
import html

import streamlit as st

from .items import DisplayTurn, ItemDisplay
from .labels import LabelSet, display_name

# Our own containers' keys; Streamlit gives each the CSS class .st-key-KEY.
TARGET_KEY, INSTRUCTIONS_KEY = "amg-target", "amg-instructions"


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


def _parse_date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def session_label(date: str, previous: str | None) -> str:
    """ "Session of Tue 9 Jan 2024 · 8 days later": our own words, from a date we parse. A date we
    cannot parse is shown as given (escaped by the caller)."""
    day = _parse_date(date)
    if day is None:
        return f"Session of {date}"
    text = f"Session of {day.strftime('%a')} {day.day} {day.strftime('%b %Y')}"
    before = _parse_date(previous) if previous else None
    if before is not None and day > before:
        gap = (day - before).days
        text += f" · {gap} day{'s' if gap != 1 else ''} later"
    return text


def _session_break(date: str, previous: str | None) -> None:
    label = html.escape(session_label(date, previous))
    st.html(f'<div class="amg-session" role="separator" aria-label="{label}">{label}</div>')


def question(d: ItemDisplay) -> None:
    if d.question:
        st.markdown("**Question**")
        st.text(d.question)


ANSWER_ASK = "What does this answer assert as the user's current value?"


def _answer(d: ItemDisplay) -> None:
    """An answer item: the question the system was asked, its answer, the two neutral options."""
    p, a = d.pair, d.answer
    st.markdown("**Question the assistant was asked**")
    st.text(a.question)
    st.markdown("**The assistant's answer**")
    with st.container(border=True):
        st.text(a.text)
    st.markdown(f"**{ANSWER_ASK}**")  # our own words
    st.text(f"Field: {p.field}" + (f" ({p.description})" if p.description else ""))
    left, right = st.columns(2)
    with left, st.container(border=True):
        st.text(p.a_name)
        st.text(p.a)
    with right, st.container(border=True):
        st.text(p.b_name)
        st.text(p.b)


def options_text(d: ItemDisplay) -> list[str]:
    """The options beside the label buttons ("A: Boston"), so value A / value B are plain."""
    if d.kind != "answer" or d.pair is None:
        return []
    return [f"A: {d.pair.a}", f"B: {d.pair.b}"]


def render_item(d: ItemDisplay, target_title: str) -> None:
    """The item's content: an answer, a value pair and/or turns, with session breaks and the
    highlight."""
    if d.kind == "answer":
        _answer(d)
        return
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
            _session_break(date, last_date)
            last_date = date
        if i == d.target:
            with st.container(border=True, key=TARGET_KEY):
                st.markdown(f"**:orange[▶ {target_title}]**")  # our own words: markdown is safe
                _turn(t)
        else:
            _turn(t)


def instructions(ls: LabelSet, expanded: bool) -> None:
    """Open on the first item only; each label button also carries its definition as a tooltip."""
    with (
        st.expander("Instructions and label definitions", expanded=expanded),
        st.container(key=INSTRUCTIONS_KEY),
    ):
        st.markdown(ls.instructions)  # package rubric text: trusted
        for i, lab in enumerate(ls.choices, 1):
            st.markdown(f"**{i} · {display_name(lab)}**: {ls.definitions.get(lab, '')}")
