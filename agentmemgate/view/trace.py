"""Trace: one arc under one system, turn by turn; or two systems side by side, the first turn
where they differ marked. Component systems show each user turn's read and write decisions (the
extracted tuple, the field matched, the class, the gate's decision, the staged item with its
conditions) and the store after each session; answering systems show what they retrieved and
answered after each session, with the answer judge's verdict."""

from __future__ import annotations

import streamlit as st

from . import _ui
from .data import Dialog

NONE = "none"
FIRST_DIFF_KEY = "amg-first-diff"  # the container around the first differing turn (.st-key-...)
_CUT = 600  # characters of a long natural-item assistant turn shown


def _q(v) -> str:
    return "nothing (no value)" if v is None else repr(v)


def event_text(e: dict) -> str:
    """One write decision as ``amg eval show`` words it: extracted -> matched -> classified ->
    decided."""
    from ..evaluate.show import event_line
    from ..memory import MemoryEvent

    return event_line(MemoryEvent.model_validate(e))


def snapshot_lines(s: dict, labels: list[str]) -> list[str]:
    """The store after a session as ``amg eval show`` words it: each field's current value and
    history, each staged item (``labels``: ``Dialog.labels``)."""
    from ..evaluate.show import snapshot_lines as lines
    from ..memory import StoreSnapshot

    return lines(StoreSnapshot.model_validate(s), labels)


def _turn_signature(tt: dict | None) -> tuple:
    if tt is None:
        return ()
    return (
        tt.get("read_before"),
        tuple(
            (e.get("kind"), (e.get("key") or {}).get("attribute"), e.get("value"))
            for e in tt.get("events", [])
        ),
    )


def first_difference(a: dict | None, b: dict | None) -> int | None:
    """The first turn position where two component traces read or write differently (the end
    read counts as one past the last turn); None when they agree throughout."""
    if not a or not b or not a.get("trace") or not b.get("trace"):
        return None
    ta = {tt["t"]: tt for tt in a["trace"]["turns"]}
    tb = {tt["t"]: tt for tt in b["trace"]["turns"]}
    for t in sorted(set(ta) | set(tb)):
        if _turn_signature(ta.get(t)) != _turn_signature(tb.get(t)):
            return t
    if a["trace"].get("end_read") != b["trace"].get("end_read"):
        return max(set(ta) | set(tb), default=-1) + 1
    return None


def first_answer_difference(a: dict, b: dict) -> int | None:
    """The first session after which two answering systems answered differently."""
    sa = {s["after_session"]: s.get("answer") for s in a.get("sessions", [])}
    sb = {s["after_session"]: s.get("answer") for s in b.get("sessions", [])}
    return next((i for i in sorted(set(sa) | set(sb)) if sa.get(i) != sb.get(i)), None)


def _describe(x: dict) -> str:
    info = x["info"]
    if x["kind"] == "answers":
        return f"{x['system']}: black-box answers (uploaded)"
    if info is None:
        return x["system"]
    kind = (
        "answering system" if x["kind"] == "answering" else ("gated" if info.gated else "ungated")
    )
    parts = ", ".join(f"{k} {v}" for k, v in info.components.items())
    return (
        f"{x['system']}: {info.description} ({kind}; {parts}"
        + ("; offline rules" if info.offline else f"; model {x['model']}")
        + ("; ORACLE" if info.oracle else "")
        + ")"
    )


def _header(x: dict) -> None:
    st.text(_describe(x))
    if x["failure"]:
        st.error("This system failed on this arc (a re-run retries it).")
        st.text(x["failure"])
    if x["stale"]:
        st.warning("The arc was rebuilt after this run; re-run `amg eval run` to trace it again.")
    if x["kind"] == "component" and x["trace"] is None and not x["failure"]:
        st.info("No trace of this system on this arc: run `amg eval run`.", icon=":material/info:")
    if x["kind"] != "component" and not x["sessions"] and not x["failure"]:
        st.info(
            "No answers of this system on this arc: run `amg eval run`.", icon=":material/info:"
        )


def _measures(x: dict) -> None:
    sc = x["score"]
    if not sc:
        return
    _ui.table(
        [
            {"measure": m, "outcome": "yes" if v else "no", "why": sc.get("why", {}).get(m, "")}
            for m, v in sc.get("values", {}).items()
        ]
    )


def _turn_details(x: dict, t: int) -> None:
    if not x.get("trace"):
        return
    tt = next((u for u in x["trace"]["turns"] if u["t"] == t), None)
    if tt is None:
        return
    st.text(f"read as it arrived: {_q(tt.get('read_before'))}")
    for e in tt.get("events", []):
        st.text(event_text(e))
    if tt.get("calls"):
        st.caption(f"{tt['calls']} component call{'s' if tt['calls'] != 1 else ''}")


def _session_details(x: dict, si: int, labels: list[str]) -> None:
    if x["kind"] == "component":
        snaps = (x.get("trace") or {}).get("snapshots", [])
        if si < len(snaps):
            st.text(
                f"Store after session {si} ({x['system']}):\n"
                + "\n".join("  " + line for line in snapshot_lines(snaps[si], labels))
            )
        return
    got = next((s for s in x["sessions"] if s["after_session"] == si), None)
    if got is None:
        st.text(f"{x['system']}: no answer stored after session {si}")
        return
    lines = [f"{x['system']} after session {si}"]
    if got.get("retrieved") is not None:
        mems = got["retrieved"]
        lines.append(
            f"retrieved: {len(mems)} memor{'y' if len(mems) == 1 else 'ies'}"
            if mems
            else "retrieved: nothing"
        )
        for i, m in enumerate(mems, 1):
            extra = []
            if m.get("score") is not None:
                extra.append(f"score {m['score']:.3g}")
            if m.get("valid_at") or m.get("invalid_at"):
                extra.append(f"valid {m.get('valid_at') or '?'} to {m.get('invalid_at') or 'now'}")
            lines.append(
                f"  {i}. {m.get('text', '')!r}" + (f" ({'; '.join(extra)})" if extra else "")
            )
    lines.append(f"answer: {got.get('answer')!r}")
    v = got.get("verdict")
    if v:
        lines.append(
            f"judge: asserts {', '.join(map(repr, v.get('asserted', []))) or 'nothing'} "
            f"({v.get('rationale', '')})"
        )
    if got.get("store") is not None and x.get("values"):
        from ..evaluate.show import store_lines

        lines += [
            line.removeprefix("  ")
            for line in store_lines(x.get("info"), x["values"], got, (v or {}).get("asserted"))
        ]
    st.text("\n".join(lines))


def _shorten(d: Dialog) -> Dialog:
    """Natural items run to hundreds of turns: long assistant turns are cut."""
    if d.kind != "natural":
        return d
    for _, turns in d.sessions:
        for t in turns:
            if t.role == "assistant" and len(t.text) > _CUT:
                t.text = t.text[:_CUT] + " …"
    return d


def render() -> None:
    r = _ui.reader()
    st.title("Trace")
    systems = list(r.systems())
    c1, c2, c3 = st.columns([3, 2, 2])
    with c1:
        arc = st.text_input(
            "Arc id", key="arc", bind="query-params", placeholder="an arc id, or natural:SET:ITEM"
        ).strip()
    if not systems:
        _ui.empty("No evaluation results yet.", f"amg eval run --workspace {r.path}")
        return
    with c2:
        system = _ui.select("System", systems, "system")
    with c3:
        compare = _ui.select("Side by side with", [NONE, *systems], "compare")
    if not arc:
        st.info(
            "Open an arc from the Arcs page (its Systems table links here), or type its id.",
            icon=":material/info:",
        )
        return
    d = r.dialog(arc)
    if d is None:
        st.error("No such arc in this workspace; arc ids are those of `amg export` data.jsonl.")
        st.text(f"Not found: {arc}")
        return
    d = _shorten(d)
    shown = [r.trace(arc, system)]
    if compare != NONE and compare != system:
        shown.append(r.trace(arc, compare))
    _ui.link("arcs", "The arc, its checks and verdicts", arc=arc)
    st.subheader(f"Arc {_ui.md(arc)} · " + " vs ".join(_ui.md(x["system"]) for x in shown))
    cols = st.columns(len(shown))
    for col, x in zip(cols, shown):
        with col:
            _header(x)
            _measures(x)
    labels = d.labels()
    diff_t = diff_s = None
    if len(shown) == 2:
        a, b = shown
        if a["kind"] == b["kind"] == "component":
            diff_t = first_difference(a, b)
        elif a["kind"] != "component" and b["kind"] != "component":
            diff_s = first_answer_difference(a, b)
        if diff_t is None and diff_s is None:
            st.success("The two systems read and wrote the same at every turn.")
        else:
            where = (
                f"the answer after session {diff_s}"
                if diff_t is None
                else f"turn {labels[diff_t]}"
                if diff_t < len(labels)
                else "the end read"
            )
            st.warning(
                f"First difference: {where} (marked below).", icon=":material/compare_arrows:"
            )

    traced = {tt["t"] for x in shown if x.get("trace") for tt in x["trace"]["turns"]}

    def under(t: int, si: int, ti: int) -> None:
        if t not in traced:
            return
        if t == diff_t:
            box = st.container(key=FIRST_DIFF_KEY, border=True)
            box.markdown(":orange-badge[First turn where the systems differ]")
        else:
            box = st.container()
        with box:
            parts = st.columns(len(shown)) if len(shown) > 1 else [st.container()]
            for part, x in zip(parts, shown):
                with part:
                    if len(shown) > 1:
                        st.caption(_ui.md(x["system"]))
                    _turn_details(x, t)

    def after(si: int) -> None:
        if diff_s is not None and si == diff_s:
            box = st.container(key=FIRST_DIFF_KEY, border=True)
            box.markdown(":orange-badge[First answer where the systems differ]")
        else:
            box = st.container()
        with box:
            parts = st.columns(len(shown)) if len(shown) > 1 else [st.container()]
            for part, x in zip(parts, shown):
                with part:
                    _session_details(x, si, labels)

    _ui.dialog(d, under=under, after_session=after)
    for x in shown:
        if x.get("trace"):
            tr = x["trace"]
            st.text(
                f"{x['system']}: end read {_q(tr.get('end_read'))}; {tr.get('calls', 0)} "
                f"component calls over {tr.get('user_messages', 0)} user messages"
            )
