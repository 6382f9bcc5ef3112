"""What every page of the viewer shares: the workspace reader, caching, links, text rendering.

Text from the workspace (arcs, answers, corpora, rationales, names) goes through ``st.text``,
tables or charts, which show it as written; where it must sit inside our own Markdown (a heading
naming an arc), ``md`` escapes it first. Links are built from query parameters only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import streamlit as st

from ..schema import turn_label
from ..streamlit_launch import app_workspace
from ..suggest import did_you_mean
from .data import Dialog, Reader
from .links import page_url as url  # noqa: F401  (the pages' deep links)

ALL = "all"  # the "no filter" option of a select box (never a query parameter: it is the default)
PAGES: dict[str, st.Page] = {}  # page name -> its st.Page (its URL path), filled by app.main


def reader() -> Reader:
    """This browser session's read-only connection (a session runs one page at a time)."""
    r = st.session_state.get("_amg_reader")
    if r is None or str(r.path) != app_workspace():
        r = st.session_state["_amg_reader"] = Reader(app_workspace())
    r.refresh()
    return r


def cached(fn: Callable) -> Callable:
    """``fn(reader, *args)`` computed once per workspace state (``Reader.key``) and arguments."""

    @st.cache_data(show_spinner=False, max_entries=256)
    def run(_reader: Reader, key: tuple, name: str, *args, **kwargs):
        return fn(_reader, *args, **kwargs)

    if fn.__qualname__ == "<lambda>":
        raise TypeError("cache named functions: the name keys the cache")

    @functools.wraps(fn)
    def wrapper(r: Reader, *args, **kwargs):
        return run(r, r.key, f"{fn.__module__}.{fn.__qualname__}", *args, **kwargs)

    return wrapper


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&\"'=^%@/])")


def md(text: object) -> str:
    """``text`` for our own Markdown: every character Markdown (or Streamlit's extensions:
    colors, icons, math) could read is escaped, and line breaks become spaces."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def link(page: str, label: str, **params) -> None:
    """A link to another page of the app (``label``: our own words)."""
    q = {
        k: ("true" if v is True else str(v))
        for k, v in params.items()
        if v not in (None, "", False)
    }
    st.page_link(PAGES[page], label=label, query_params=q or None)


def empty(what: str, command: str) -> None:
    """A section with nothing to show says which command fills it."""
    st.info(f"{what} Run `{command}` to fill it.", icon=":material/info:")


def select(label: str, options: list, key: str, **kw):
    """A select box bound to the query parameter ``key``. A link naming a value that is not
    among ``options`` (a typo, a system not run here) says so, and which value is shown instead,
    rather than quietly showing another one."""
    asked = st.query_params.get(key)
    if asked is not None and asked not in [str(o) for o in options]:
        shown = kw.get("index", 0)
        instead = f"; showing {md(options[shown])}" if options and shown is not None else ""
        guess = did_you_mean(asked, [str(o) for o in options]).removeprefix("; ")
        st.warning(
            f"The link asks for {label.lower()} {md(asked)}, which this workspace does not have"
            f"{f' ({md(guess)})' if guess else ''}{instead}."
        )
    return st.selectbox(label, options, key=key, bind="query-params", **kw)


def choose(label: str, options: list[str], key: str, **kw) -> str:
    """A select box bound to the query parameter ``key``, with ``all`` first (the default)."""
    return select(label, [ALL, *options], key, **kw)


def none_if_all(value: str | None) -> str | None:
    return None if value in (None, "", ALL) else value


def facts(pairs: list[tuple[str, str]]) -> None:
    """(what, value) lines, as one block of text."""
    st.text("\n".join(f"{what}: {value}" for what, value in pairs))


def dialog(
    d: Dialog,
    under: Callable[[int, int, int], None] | None = None,
    after_session: Callable[[int], None] | None = None,
) -> None:
    """The conversation as a chat, marked turns flagged; ``under(t, session, turn)`` adds what
    happened at a turn, ``after_session(i)`` what came after session ``i``."""
    t = 0
    for si, (date, turns) in enumerate(d.sessions):
        st.markdown(f"**Session {si}** · {md(date)}")
        for ti, turn in enumerate(turns):
            with st.chat_message("assistant" if turn.role == "assistant" else "user"):
                if turn.mark:
                    st.badge(turn.mark, color="orange")
                st.text(f"{turn_label(si, ti)} {turn.speaker or turn.role}")
                st.text(turn.text)
                if under is not None:
                    under(t, si, ti)
            t += 1
        if after_session is not None:
            after_session(si)


def table(
    rows: list[dict],
    *,
    links: dict[str, str] | None = None,
    key: str | None = None,
    height: int | str = "auto",
    **kw,
):
    """Rows as a table. ``links``: column -> the label its link cells show (the cell holds a
    ``url``; the label may use ``\\1`` from a regex over the URL, see ``LinkColumn``)."""
    config = {
        c: st.column_config.LinkColumn(c, display_text=text) for c, text in (links or {}).items()
    }
    return st.dataframe(
        rows, hide_index=True, column_config=config or None, key=key, height=height, **kw
    )
