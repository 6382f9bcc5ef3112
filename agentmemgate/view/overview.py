"""Overview: the design's cells and counts, structural checks per split, realism verdicts,
blind-recovery confusion matrices, and what the model calls cost.

Realism and recovery count the stored verdicts of the arcs now in the workspace (as ``amg report
validation`` does; a replaced arc's verdicts stay stored), one SQL query each: the report's
statistics with intervals take seconds on a big workspace, and this is the page a browser opens
first."""

from __future__ import annotations

import streamlit as st

from . import _ui
from .data import Reader

# Said above both verdict sections.
CURRENT = (
    "The verdicts of the arcs now in the workspace (a rebuilt split's old arcs are left out); "
    "`amg report validation` gives them with their intervals."
)


def design_rows(r: Reader) -> tuple[dict | None, list[dict], list[dict]]:
    """(design summary, one row per split, one row per cell) with planned and stored counts."""
    design = r.design()
    plans = (
        {row["split"]: row for row in r.dicts("select split, seed, n_per_cell from split_plans")}
        if "split_plans" in r.tables
        else {}
    )
    cells = r.cells()
    stored: dict[str, list[int]] = {}
    for c in cells:
        s = stored.setdefault(c["split"], [0, 0])
        s[0] += c["planned"]
        s[1] += c["rendered"]
    names = list(design.split_names) if design else []
    names += [s for s in stored if s not in names]
    splits = []
    for name in names:
        sp = design.splits.get(name) if design else None
        plan = plans.get(name, {})
        splits.append(
            {
                "split": name,
                "title": sp.title if sp else "",
                "design arcs": design.arcs_in(name, plan.get("n_per_cell")) if sp else None,
                "planned": stored.get(name, [0, 0])[0],
                "rendered": stored.get(name, [0, 0])[1],
                "seed": plan.get("seed"),
                "arcs": _ui.url("arcs", split=name),
            }
        )
    rows = [
        {
            **c,
            "arcs": _ui.url(
                "arcs", split=c["split"], factor=c["factor"], level=c["level"], outcome=c["outcome"]
            ),
        }
        for c in cells
    ]
    summary = None
    if design is not None:
        summary = {
            "name": design.name,
            "sha256": design.source.sha256[:12],
            "description": design.description,
        }
    return summary, splits, rows


def checks_rows(r: Reader) -> list[dict]:
    out = []
    for c in r.checks_by_split():
        failed = c["arcs"] - c["passing every check"]
        out.append(
            {
                "split": c["split"],
                "checks": c["checks"],
                "arcs passing every check": f"{c['passing every check']}/{c['arcs']}",
                "failures": "; ".join(f"{k}: {n}" for k, n in c["failed checks"].items()),
                "failing arcs": _ui.url("arcs", split=c["split"], check_failed=True)
                if failed
                else None,
            }
        )
    return out


def recovery_matrices(r: Reader) -> list[dict]:
    """One confusion matrix per (judge, factor): {judge, factor, cells, recovered, judged}."""
    out: dict[tuple[str, str], dict] = {}
    for row in r.recovery():
        m = out.setdefault(
            (row["judge"], row["factor"]),
            {
                "judge": row["judge"],
                "factor": row["factor"],
                "cells": {},
                "recovered": 0,
                "judged": 0,
            },
        )
        cell = (row["intended"], row["verdict"])
        m["cells"][cell] = m["cells"].get(cell, 0) + row["arcs"]
        m["judged"] += row["arcs"]
        m["recovered"] += row["arcs"] if row["intended"] == row["verdict"] else 0
    for m in out.values():
        m["cells"] = [{"intended": i, "verdict": v, "arcs": n} for (i, v), n in m["cells"].items()]
    return list(out.values())


def usage_rows(r: Reader) -> tuple[list[dict], dict | None]:
    """Calls, tokens and cost per model and purpose (summed over commands), and the totals."""
    usage = r.usage()
    if usage is None:
        return [], None
    by: dict[tuple[str, str], dict] = {}
    for row in usage["rows"]:
        m = by.setdefault(
            (row["model"], row["purpose"]),
            {
                "model": row["model"],
                "purpose": row["purpose"],
                "calls": 0,
                "attempts": 0,
                "input tokens": 0,
                "output tokens": 0,
                "cost (USD)": None,
                "calls without a price": 0,
            },
        )
        m["calls"] += row["calls"]
        m["attempts"] += row["attempts"]
        m["input tokens"] += row["input_tokens"]
        m["output tokens"] += row["output_tokens"]
        m["calls without a price"] += row["unpriced_calls"]
        if row["cost_usd"] is not None:
            m["cost (USD)"] = round((m["cost (USD)"] or 0.0) + row["cost_usd"], 6)
    return list(by.values()), usage["total"]


_design = _ui.cached(design_rows)
_checks = _ui.cached(checks_rows)
_realism = _ui.cached(Reader.realism)
_recovery = _ui.cached(recovery_matrices)
_usage = _ui.cached(usage_rows)
_failures = _ui.cached(Reader.call_failures)


def _heatmap(m: dict) -> None:
    """Intended level (rows) by the judge's answer (columns), counts written in the cells."""
    st.vega_lite_chart(
        spec={
            "data": {"values": m["cells"]},
            "encoding": {
                "x": {"field": "verdict", "type": "nominal", "title": "judge's answer"},
                "y": {"field": "intended", "type": "nominal", "title": "intended level"},
            },
            "layer": [
                {
                    "mark": "rect",
                    "encoding": {
                        "color": {
                            "field": "arcs",
                            "type": "quantitative",
                            "scale": {"scheme": "blues"},
                            "legend": None,
                        }
                    },
                },
                {"mark": "text", "encoding": {"text": {"field": "arcs", "type": "quantitative"}}},
            ],
        },
        width="stretch",
    )


def render() -> None:
    r = _ui.reader()
    ws = str(r.path)
    st.title("Overview")
    st.caption(f"Workspace {_ui.md(ws)} · read-only")

    st.header("Design and arcs")
    summary, splits, cells = _design(r)
    if summary:
        st.text(f"Design {summary['name']} (sha256 {summary['sha256']}): {summary['description']}")
    if not cells:
        _ui.empty("No arcs yet.", f"amg build --workspace {ws}")
    else:
        _ui.table(splits, links={"arcs": "open"})
        with st.expander("Cells (planned and rendered arcs)"):
            _ui.table(cells, links={"arcs": "open"})

    st.header("Structural checks")
    checks = _checks(r)
    if not checks:
        _ui.empty("No structural checks yet.", f"amg validate --workspace {ws}")
    else:
        _ui.table(checks, links={"failing arcs": "open"})

    st.header("Realism verdicts")
    realism = _realism(r)
    if not realism:
        _ui.empty("No realism verdicts yet.", f"amg validate --checks realism --workspace {ws}")
    else:
        st.caption(CURRENT)
        _ui.table(realism)
        if any(x["failed"] or x["errors"] for x in realism):
            _ui.link("arcs", "Arcs a realism judge did not pass", verdict_failed=True)

    st.header("Blind level recovery")
    matrices = _recovery(r)
    if not matrices:
        _ui.empty(
            "No blind-recovery verdicts yet.", f"amg validate --checks recovery --workspace {ws}"
        )
    else:
        st.caption(CURRENT)
    for m in matrices:
        st.subheader(f"{_ui.md(m['factor'])} · judge {_ui.md(m['judge'])}")
        st.text(f"{m['recovered']} of {m['judged']} arcs recovered")
        _heatmap(m)
        if m["recovered"] < m["judged"]:
            _ui.link("arcs", "Arcs recovered wrongly", factor=m["factor"], recovery_error=True)

    st.header("Model calls")
    usage, total = _usage(r)
    if not usage:
        st.info(
            "No model calls in the call log: every command so far ran offline.",
            icon=":material/info:",
        )
    else:
        cost = total["cost_usd"]
        st.text(
            f"{total['calls']} calls ({total['attempts']} HTTP attempts), "
            f"{total['input_tokens']} input and {total['output_tokens']} output tokens, "
            + ("cost unknown (no price)" if cost is None else f"${cost:.4f}")
            + (
                f" + {total['unpriced_calls']} calls without a price"
                if total["unpriced_calls"]
                else ""
            )
        )
        _ui.table(usage)
        failures = _failures(r)
        if failures:
            st.subheader("Failed attempts")
            _ui.table(failures)
