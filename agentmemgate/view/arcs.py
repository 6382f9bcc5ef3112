"""Arcs: a paged, filtered list, and one arc as a chat beside everything known about it."""

from __future__ import annotations

import streamlit as st

from ..annotate_app.disagreements import arc_labels
from . import _ui
from .data import PAGE_SIZE, ArcFilter, Dialog, Reader

VALUES = ["any", "yes", "no"]  # a measure's outcome in a filter


def measures() -> list[str]:
    from ..evaluate import MEASURES

    return list(MEASURES)


def _filter_options(r: Reader) -> dict[str, list[str]]:
    return {
        "split": r.splits() + [f"natural:{s}" for s in r.natural_sets()],
        "factor": r.choices("factor"),
        "level": r.choices("level"),
        "outcome": r.choices("outcome"),
        "system": list(r.systems()),
    }


_options = _ui.cached(_filter_options)
_page = _ui.cached(Reader.arc_page)


def read_filter() -> ArcFilter:
    """The sidebar's filters (each bound to its query parameter)."""
    r = _ui.reader()
    o = _options(r)
    sb = st.sidebar
    with sb:
        st.header("Filter arcs")
        f = ArcFilter(
            split=_ui.none_if_all(_ui.choose("Split", o["split"], "split")),
            factor=_ui.none_if_all(_ui.choose("Factor", o["factor"], "factor")),
            level=_ui.none_if_all(_ui.choose("Level", o["level"], "level")),
            outcome=_ui.none_if_all(_ui.choose("Outcome", o["outcome"], "outcome")),
            check_failed=st.checkbox(
                "A structural check failed", key="check_failed", bind="query-params"
            ),
            verdict_failed=st.checkbox(
                "A realism judge did not pass it", key="verdict_failed", bind="query-params"
            ),
            recovery_error=st.checkbox(
                "Blind recovery named another level", key="recovery_error", bind="query-params"
            ),
            system=_ui.none_if_all(_ui.choose("System", o["system"], "system")),
            measure=_ui.none_if_all(_ui.choose("Measure", measures(), "measure")),
            query=st.text_input("Arc id contains", key="q", bind="query-params") or None,
        )
        value = _ui.select("Measure outcome", VALUES, "value")
        f.value = None if value == "any" else value == "yes"
        f.vs = _ui.none_if_all(_ui.choose("Outcome differs from system", o["system"], "vs"))
    return f


def _open(rows: list[dict]) -> None:
    """The table's row selection opens that arc."""
    state = st.session_state.get("arc_table")
    sel = state["selection"]["rows"] if state else []
    if sel and sel[0] < len(rows):
        st.session_state["arc"] = rows[sel[0]]["id"]


def render() -> None:
    r = _ui.reader()
    f = read_filter()
    arc = st.text_input(
        "Open an arc by id",
        key="arc",
        bind="query-params",
        placeholder="an arc id (as in data.jsonl) or natural:SET:ITEM",
    )
    if arc:
        show_arc(r, arc.strip())
        return
    st.title("Arcs")
    if not r.has("arcs") and not r.has("natural_items"):
        _ui.empty("No arcs yet.", f"amg build --workspace {r.path}")
        return
    if f.measure and not f.system:
        st.warning("Choose the system whose measure to filter on.")
        return
    page = st.number_input("Page", min_value=1, value=1, step=1, key="page", bind="query-params")
    rows, total = _page(r, f, int(page) - 1, PAGE_SIZE)
    first = (int(page) - 1) * PAGE_SIZE
    st.markdown(
        f"**{total}** arc{'s' if total != 1 else ''} match"
        + (f" · showing {first + 1}–{first + len(rows)}" if rows else "")
    )
    if not rows:
        return
    if f.system and f.measure:
        why = r.scores(f.system, [x["id"] for x in rows])
        for x in rows:
            sc = why.get(x["id"], {})
            x[f.measure] = {True: "yes", False: "no"}.get(sc.get("values", {}).get(f.measure), "")
            x["why"] = sc.get("why", {}).get(f.measure, "")
    for x in rows:
        x["open"] = _ui.url("arcs", arc=x["id"])
    _ui.table(
        rows,
        links={"open": "open"},
        key="arc_table",
        on_select=lambda: _open(rows),
        selection_mode="single-row",
    )


# -- one arc -----------------------------------------------------------------------------------
def show_arc(r: Reader, arc_id: str) -> None:
    d = r.dialog(arc_id)
    if d is None:
        st.title("Arcs")
        st.error("No such arc in this workspace; arc ids are those of `amg export` data.jsonl.")
        st.text(f"Not found: {arc_id}")
        return
    st.title(f"Arc {_ui.md(d.id)}")
    if st.button("Back to the list", icon=":material/arrow_back:"):
        st.session_state["arc"] = ""
        st.rerun()
    chat, side = st.columns([3, 2], gap="large")
    with side:
        _side(r, d)
    with chat:
        _ui.dialog(d)


def _side(r: Reader, d: Dialog) -> None:
    st.subheader("Ground truth")
    _ui.facts(d.facts)
    if d.truth_after_session:
        _ui.table(
            [{"after session": i, "current value": v} for i, v in enumerate(d.truth_after_session)]
        )

    systems = r.systems_on(d.id)
    st.subheader("Systems")
    if not systems:
        _ui.empty("No system has run on this arc yet.", f"amg eval run --workspace {r.path}")
    else:
        rows = []
        for name in systems:
            sc = r.scores(name, [d.id]).get(d.id, {})
            yes = [m for m, v in sc.get("values", {}).items() if v]
            no = [m for m, v in sc.get("values", {}).items() if not v]
            rows.append(
                {
                    "system": name,
                    "yes": ", ".join(yes),
                    "no": ", ".join(no),
                    "trace": _ui.url("trace", arc=d.id, system=name),
                }
            )
        _ui.table(rows, links={"trace": "turn by turn"})

    if d.kind == "arc":
        checks = r.arc_checks(d.id)
        st.subheader("Structural checks")
        if checks:
            failed = [c for c in checks if not c["passed"]]
            st.text(f"{len(checks) - len(failed)} of {len(checks)} passed")
            if failed:
                _ui.table([{"check": c["check"], "detail": c["detail"]} for c in failed])
        else:
            st.text("No checks stored for this arc.")
        verdicts = r.arc_verdicts(d.id)
        st.subheader("Judges")
        if not verdicts:
            st.text("No judge verdicts on this arc.")
        for v in verdicts:
            what = v["criterion"] or v["task"]
            line = f"{v['task']} · {what} · judge {v['judge']}: "
            if v["status"] != "ok":
                line += f"failed ({v['error'] or v['status']})"
            else:
                line += v["verdict"] or ""
                if v["task"] == "recovery":
                    line += (
                        " (recovered)"
                        if v["verdict"] == v["intended"]
                        else f" (intended {v['intended']})"
                    )
            with st.expander(line):
                st.text(v["rationale"] or "(no rationale)")
        labels, still_open = arc_labels(r, d.id)
        st.subheader("Audit labels")
        if not labels and not still_open:
            st.text("No audit labels on this arc.")
        if labels:
            _ui.table(
                [
                    {
                        "audit": x["audit"],
                        "item": x["item_id"],
                        "who": x["annotator"],
                        "role": x["role"],
                        "label": x["label"],
                        "reference": x["reference"],
                    }
                    for x in labels
                ]
            )
        for a in still_open:
            st.text(
                f"Audit {a} is still open: its labels show here once every annotator has "
                "labeled every item assigned to them."
            )
