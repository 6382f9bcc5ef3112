"""Mining: candidates and hedges per mined corpus file, each with its source turn in context
(the turns around it, read again from the mined file when it is still where it was)."""

from __future__ import annotations

import streamlit as st

from ..corpora.browse import candidate, hedge_page, mine_sources
from . import _ui
from .data import PAGE_SIZE

_sources = _ui.cached(mine_sources)
_hedges = _ui.cached(hedge_page)
_candidate = _ui.cached(candidate)


def render() -> None:
    r = _ui.reader()
    st.title("Mining")
    sources = _sources(r)
    if not sources:
        _ui.empty(
            "No corpus has been mined here.",
            f"amg mine hedges --corpus locomo FILE --workspace {r.path}",
        )
        return
    st.header("Mined files")
    _ui.table(
        [
            {
                "source": s["source_key"],
                "corpus": s["corpus"] + (f" ({s['variant']})" if s["variant"] else ""),
                "conversations": s["conversations"],
                "turns scanned": s["turns_scanned"],
                "candidates": s["candidates"],
                "hedges": s["hedges"],
                "license": s["license"],
            }
            for s in sources
        ]
    )
    keys = [s["source_key"] for s in sources]
    c1, c2, c3 = st.columns([3, 2, 1])
    with c1:
        source = _ui.none_if_all(_ui.choose("Mined file", keys, "source"))
    with c2:
        hedges_only = st.toggle(
            "Hedges only (candidates kept by the miner)",
            value=True,
            key="hedges",
            bind="query-params",
        )
    with c3:
        page = st.number_input("Page", min_value=1, value=1, key="page", bind="query-params")
    rows, total = _hedges(r, source, hedges_only, int(page) - 1, PAGE_SIZE)
    st.markdown(f"**{total}** {'hedges' if hedges_only else 'candidates'}")
    if not rows:
        return
    picked = _ui.table(
        [{k: v for k, v in x.items() if k != "source_key"} for x in rows],
        key="hedge_table",
        on_select="rerun",
        selection_mode="single-row",
    )
    sel = picked.selection.rows if picked is not None and hasattr(picked, "selection") else []
    if not sel:
        st.caption("Select a row to read the turn in its conversation.")
        return
    x = rows[sel[0]]
    c = _candidate(r, x["source_key"], x["candidate_id"])
    if c is None:
        return
    st.header("In context")
    st.text(
        f"{c['id']} · {c['corpus']} conversation {c['conversation']} · {c['date'] or 'undated'}"
        f"\ncues: {', '.join(c['cues'])}"
    )
    if c["context_note"]:
        st.caption(_ui.md(c["context_note"]))
    for speaker, text, own in c["context"]:
        with st.container(border=own):
            st.text(speaker + ("  [the mined turn]" if own else ""))
            st.text(text)
    for e in c["extractions"]:
        verdict = (
            "hedge: "
            + ", ".join(f"{k} {e[k]}" for k in ("attribute", "plan_value", "hedge_level") if e[k])
            if e["kept"]
            else f"not a hedge: {e['reject_reason']}"
        )
        st.text(
            f"{e['miner']}: {verdict}"
            + (
                f"\noutcome: {e['outcome']} at {e['outcome_ref']} ({e['outcome_evidence']})"
                if e.get("outcome")
                else ""
            )
        )
