"""Audits: who labels and how well (``amg audit people``), adjudications with their resolutions,
agreement (kappa and alpha with bootstrap intervals, accuracy
against the reference) and the items where annotators disagree or differ from the reference.

Labels and who gave them are shown here, to the workspace's owner; ``amg annotate`` never shows an
annotator anyone's labels but their own. No token or token hash is read."""

from __future__ import annotations

import streamlit as st

from ..annotate_app.disagreements import audit_closed, audit_disagreements, audit_item
from . import _ui
from .data import Reader

SHOWN = 200  # disagreements listed at once


def agreement(r: Reader, audit: str) -> dict:
    """``amg report agreement``'s numbers (computed by the audit room, nothing written)."""
    from ..annotate_app import agreement_report

    return agreement_report(r, audit).model_dump(mode="json")


def people(r: Reader, audit: str) -> dict:
    """``amg audit people``'s rows (status, labeled, gold accuracy, attention, speed) and the
    adjudicator's resolutions."""
    from ..annotate_app.people import people_report

    return people_report(r, audit).model_dump(mode="json")


def _person_row(p: dict, fast_seconds: float) -> dict:
    out = {
        "person": p["name"] + (" (adjudicator)" if p["role"] == "adjudicator" else ""),
        "status": p["status"].replace("_", " ") + (f": {p['reason']}" if p["reason"] else ""),
        "labeled": p["labeled"]
        if p["role"] == "adjudicator"
        else f"{p['labeled']}/{p['assigned']}",
        "median s/item": p["median_seconds"],
        f"fast (< {fast_seconds:g} s)": _prop(p["fast"]),
    }
    if p["platform_id"]:
        out["platform id"] = p["platform_id"]
    if p["gold"] is not None:
        out["gold right"] = _prop(p["gold"])
    if p["attention_answered"] is not None:
        out["attention failed"] = f"{p['attention_failed']} of {p['attention_answered']}"
    if p["code"]:
        out["code"] = p["code"]
    return out


_agreement = _ui.cached(agreement)
_people = _ui.cached(people)
_disagreements = _ui.cached(audit_disagreements)


def _prop(p: dict | None) -> str:
    if not p or not p.get("n") or p.get("value") is None:
        return "undefined"
    return f"{p['k']}/{p['n']} = {100 * p['value']:.1f}% [{100 * p['ci_low']:.1f}, {100 * p['ci_high']:.1f}]"


def _interval(value: float | None, ci: dict | None) -> str:
    if value is None:
        return "undefined"
    if not ci or ci.get("ci_low") is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{ci['ci_low']:.2f}, {ci['ci_high']:.2f}]"


def _item(payload: dict) -> None:
    """An audit item as its annotators saw it (text only)."""
    if payload.get("question"):
        st.text(f"Question: {payload['question']}")
    for i, t in enumerate(payload.get("turns", [])):
        with st.chat_message("assistant" if t.get("role") == "assistant" else "user"):
            mark = "  [highlighted]" if payload.get("target") == i else ""
            st.text(f"{t.get('speaker') or t.get('role', '')}{mark}")
            st.text(t.get("text", ""))
    if payload.get("pair"):
        p = payload["pair"]
        st.text(
            f"{p.get('field')}: {p.get('a_name')} {p.get('a')!r} / {p.get('b_name')} {p.get('b')!r}"
        )
    if payload.get("answer"):
        st.text(
            f"Asked: {payload['answer'].get('question')}\nAnswer: {payload['answer'].get('text')}"
        )


def render() -> None:
    r = _ui.reader()
    st.title("Audits")
    from ..annotate_app import list_audits

    audits = list_audits(r) if "audits" in r.tables else []
    if not audits:
        _ui.empty(
            "No audits yet.",
            f"amg audit create NAME --task realism --from arcs --workspace {r.path}",
        )
        return
    names = [a.name for a in audits]
    name = _ui.select("Audit", names, "audit")
    a = next(x for x in audits if x.name == name)
    st.text(f"{a.task} audit of {a.n_items} items from {a.source} (created {a.created_at})")
    st.caption(
        "Who labeled what is shown here, to the workspace's owner, once the audit is closed "
        "(every assigned item labeled); the annotation app never shows it."
    )

    st.header("People")
    ppl = _people(r, name)
    st.text(
        ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in ppl["counts"].items() if n)
        or "Nobody has labeled yet."
    )
    _ui.table([_person_row(p, ppl["fast_seconds"]) for p in ppl["people"]])
    if ppl["resolutions"]:
        st.subheader("Adjudications")
        _ui.table(
            [
                {
                    "item": x["item_id"],
                    "labels given": ", ".join(f"{k} x{n}" for k, n in x["labels"].items()),
                    "resolution": x["resolution"],
                    "adjudicator": x["adjudicator"],
                }
                for x in ppl["resolutions"]
            ]
        )

    st.header("Agreement")
    rep = _agreement(r, name)
    if not rep["n_labels"]:
        _ui.empty("No labels yet.", f"amg annotate --workspace {r.path}")
    else:
        alpha = rep["krippendorff_alpha"]
        st.text(
            f"{rep['n_labels']} labels on {rep['n_items']} items by {rep['n_annotators']} "
            f"annotator(s); {rep['n_items_multi']} items labeled by two or more.\n"
            f"Percent agreement: {_prop(rep['percent_agreement'])}\n"
            f"Krippendorff's alpha ({alpha['level']}): {_interval(alpha['value'], alpha.get('ci'))}"
            f" over {alpha['n_units']} items"
            + "".join(
                f"\n{title}: {_interval(c['value'], c)} over {c['n']} items"
                for title, c in (
                    ("Fleiss' kappa", rep.get("fleiss_kappa")),
                    ("Gwet's AC1", rep.get("gwet_ac1")),
                    ("Gwet's AC2 (ordinal weights)", rep.get("gwet_ac2")),
                )
                if c
            )
        )
        pairs = rep["cohen_kappa_pairs"]
        if pairs:
            st.subheader("Cohen's kappa per pair (95% bootstrap interval)")
            _ui.table(
                [
                    {
                        "annotators": f"{p['a']} / {p['b']}",
                        "items": p["n"],
                        "kappa": _interval(p["kappa"], p.get("kappa_ci")),
                        "agreement": _prop(p["agreement"]),
                    }
                    for p in pairs
                ]
            )
        ref = rep.get("vs_reference")
        if ref:
            st.subheader("Against the reference")
            st.text(
                f"{ref['n_items']} items: agreement {_prop(ref['agreement'])}, kappa "
                f"{_interval(ref['kappa'], ref.get('kappa_ci'))}"
            )
            _ui.table(
                [
                    {
                        "annotator": who,
                        "agreement": _prop(v["agreement"]),
                        "kappa": _interval(v["kappa"], v.get("kappa_ci")),
                    }
                    for who, v in ref["per_annotator"].items()
                ]
            )
        undefined = rep["diagnostics"]["undefined"]
        if undefined:
            st.caption("Undefined: " + _ui.md("; ".join(undefined)))

    st.header("Disagreements")
    if not audit_closed(r, name):
        st.text(
            "The audit is still open: the items where annotators disagree, and who said "
            "what, show here once every annotator has labeled every item assigned to them."
        )
        return
    rows = _disagreements(r, name)
    if not rows:
        st.text("No item where annotators disagree or differ from the reference.")
        return
    st.text(
        f"{len(rows)} item(s)" + (f"; the first {SHOWN} are listed" if len(rows) > SHOWN else "")
    )
    shown = rows[:SHOWN]
    picked = _ui.table(
        shown, key="disagreement_table", on_select="rerun", selection_mode="single-row"
    )
    sel = picked.selection.rows if picked is not None and hasattr(picked, "selection") else []
    if sel:
        item = shown[sel[0]]
        st.subheader("The item as annotators saw it")
        st.text(item["item_id"])
        payload = audit_item(r, name, item["item_id"])
        if payload:
            _item(payload)
