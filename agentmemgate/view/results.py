"""Results: the eval report's numbers as charts and tables with their intervals -- proportions
with 95% Wilson intervals, paired differences with cluster-bootstrap intervals, answering systems
(products), natural sets. Every count links to the arcs behind it (the Arcs page, filtered the way
the report counted them). The numbers are ``amg report eval``'s: the report is computed by the
evaluation room on the read-only workspace."""

from __future__ import annotations

import streamlit as st

from . import _ui
from .data import Reader

CALLS = "calls_per_user_message"  # a ratio with a bootstrap interval, not a count of arcs
DEFAULT_MEASURE = "end_contamination"


def compute(r: Reader) -> dict | None:
    """The eval report as its stable JSON, or None when nothing was evaluated yet."""
    if not r.has("eval_scores"):
        return None
    from ..errors import BadInput
    from ..evaluate import compute_report

    try:
        return compute_report(r).to_json()
    except BadInput:
        return None


_report = _ui.cached(compute)


def pct(s: dict) -> str:
    if not s.get("n") or s.get("value") is None:
        return "undefined (n=0)"
    if s.get("ci_low") is None:
        return f"{100 * s['value']:.1f}%"
    return f"{100 * s['value']:.1f}% [{100 * s['ci_low']:.1f}, {100 * s['ci_high']:.1f}]"


def stat_rows(report: dict, split: str, systems: list[str], level: str | None = None) -> list[dict]:
    """One row per (system, measure) of ``split`` (or one level of it), each count a link."""
    out = []
    for name in systems:
        block = report["systems"].get(name, {}).get(split)
        if block is None:
            continue
        if level is not None:
            block = block.get("by_level", {}).get(level, {})
        for m, s in block.items():
            if m == "by_level":
                continue
            row = {"system": name, "measure": m}
            if m == CALLS:
                row.update(
                    {
                        "k/n": f"{s['k']}/{s['n']}",
                        "value [95% CI]": f"{s['value']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
                        if s.get("value") is not None
                        else "undefined",
                        "arcs where it holds": None,
                        "arcs where it does not": None,
                    }
                )
            else:
                row.update(
                    {
                        "k/n": f"{s['k']}/{s['n']}",
                        "value [95% CI]": pct(s),
                        "arcs where it holds": _ui.url(
                            "arcs", split=split, level=level, system=name, measure=m, value="yes"
                        ),
                        "arcs where it does not": _ui.url(
                            "arcs", split=split, level=level, system=name, measure=m, value="no"
                        ),
                    }
                )
            out.append(row)
    return out


_LINK_TEXT = {"arcs where it holds": "arcs (yes)", "arcs where it does not": "arcs (no)"}


def level_chart_rows(report: dict, split: str, measure: str, order: list[str]) -> list[dict]:
    rows = []
    for name, splits in report["systems"].items():
        for level, block in splits.get(split, {}).get("by_level", {}).items():
            s = block.get(measure)
            if not s or not s.get("n") or s.get("value") is None:
                continue
            rows.append(
                {
                    "system": name,
                    "level": level,
                    "percent": round(100 * s["value"], 2),
                    "low": round(100 * s["ci_low"], 2),
                    "high": round(100 * s["ci_high"], 2),
                    "k/n": f"{s['k']}/{s['n']}",
                    "url": _ui.url(
                        "arcs", split=split, level=level, system=name, measure=measure, value="yes"
                    ),
                }
            )
    rank = {lv: i for i, lv in enumerate(order)}
    return sorted(rows, key=lambda x: (rank.get(x["level"], len(rank)), x["level"]))


def difference_rows(report: dict, split: str) -> list[dict]:
    out = []
    for d in report["differences"]:
        if d["split"] != split:
            continue
        unit = "" if d["measure"] == CALLS else " pts"
        scale = 1 if d["measure"] == CALLS else 100
        out.append(
            {
                "system": d["system"],
                "baseline": d["baseline"],
                "measure": d["measure"],
                "pair": f"{d['system']} − {d['baseline']}",
                "difference": round(scale * d["value"], 2),
                "low": round(scale * d["ci_low"], 2),
                "high": round(scale * d["ci_high"], 2),
                "difference [95% CI]": f"{scale * d['value']:+.1f} [{scale * d['ci_low']:+.1f}, "
                f"{scale * d['ci_high']:+.1f}]{unit}",
                "n": d["n"],
                "up": d["n_gained"],
                "down": d["n_lost"],
                "arcs where they differ": None
                if d["measure"] == CALLS or not (d["n_gained"] or d["n_lost"])
                else _ui.url(
                    "arcs", split=split, system=d["system"], vs=d["baseline"], measure=d["measure"]
                ),
            }
        )
    return out


def _errorbar_chart(
    rows: list[dict],
    x: str,
    order: list[str] | None,
    y_title: str,
    domain: list[float] | None = None,
) -> None:
    """Bars (or points) with their interval as a rule; clicking a bar opens its arcs."""
    y = {"field": "percent", "type": "quantitative", "title": y_title}
    if domain:
        y["scale"] = {"domain": domain}
    st.vega_lite_chart(
        spec={
            "data": {"values": rows},
            "encoding": {
                "x": {
                    "field": x,
                    "type": "nominal",
                    "sort": order,
                    "title": None,
                    "axis": {"labelAngle": 0},
                },
                "xOffset": {"field": "system"},
                "color": {"field": "system", "type": "nominal"},
                "tooltip": [
                    {"field": "system"},
                    {"field": x},
                    {"field": "k/n"},
                    {"field": "percent", "title": "%"},
                    {"field": "low"},
                    {"field": "high"},
                ],
            },
            "layer": [
                {
                    "mark": {"type": "bar", "cursor": "pointer"},
                    "encoding": {"y": y, "href": {"field": "url"}},
                },
                {
                    "mark": {"type": "rule", "color": "black"},
                    "encoding": {
                        "x": {"field": x, "type": "nominal", "sort": order, "bandPosition": 0.5},
                        "xOffset": {"field": "system", "bandPosition": 0.5},
                        "y": {"field": "low", "type": "quantitative"},
                        "y2": {"field": "high"},
                    },
                },
            ],
        },
        width="stretch",
    )


def _difference_chart(rows: list[dict]) -> None:
    st.vega_lite_chart(
        spec={
            "data": {"values": rows},
            "encoding": {
                "y": {"field": "pair", "type": "nominal", "title": None},
                "color": {"field": "pair", "type": "nominal", "legend": None},
                "tooltip": [{"field": "pair"}, {"field": "difference [95% CI]"}, {"field": "n"}],
            },
            "layer": [
                {
                    "mark": {"type": "rule"},
                    "encoding": {
                        "x": {
                            "field": "low",
                            "type": "quantitative",
                            "title": "difference (points)",
                        },
                        "x2": {"field": "high"},
                    },
                },
                {
                    "mark": {"type": "point", "filled": True, "size": 80},
                    "encoding": {"x": {"field": "difference", "type": "quantitative"}},
                },
                {
                    "mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"},
                    "encoding": {"x": {"datum": 0}},
                },
            ],
        },
        width="stretch",
    )


def _level_order(r: Reader) -> list[str]:
    design = r.design()
    if design is None:
        return []
    return [lv.name for f in design.factors.values() for lv in f.levels]


def render() -> None:
    r = _ui.reader()
    st.title("Results")
    with st.spinner("Computing the eval report (once per workspace state)…"):
        report = _report(r)
    if report is None:
        _ui.empty("No evaluation results yet.", f"amg eval run --workspace {r.path}")
        return
    meta = report["meta"]
    for note in meta["notes"]:
        st.caption(_ui.md(note))
    kinds = {n: m["kind"] for n, m in meta["systems"].items()}
    components = [n for n in report["systems"] if kinds.get(n) == "component"]
    products = [n for n in report["systems"] if kinds.get(n) in ("product", "answers")]
    splits = [s for s in meta["splits"] if any(s in b for b in report["systems"].values())]
    if not splits and not meta.get("natural"):
        _ui.empty("No split has results.", f"amg eval run --workspace {r.path}")
        return
    if splits:
        split = _ui.select("Split", splits, "split")
        measures = sorted(
            {
                m
                for b in report["systems"].values()
                for lv in b.get(split, {}).get("by_level", {}).values()
                for m in lv
            }
        )
        st.header("By level, with 95% Wilson intervals")
        if measures:
            measure = _ui.select(
                "Measure",
                measures,
                "measure",
                index=measures.index(DEFAULT_MEASURE) if DEFAULT_MEASURE in measures else 0,
            )
            rows = level_chart_rows(report, split, measure, _level_order(r))
            if rows:
                st.caption("Each bar is the share of arcs at that level; click one for its arcs.")
                _errorbar_chart(
                    rows,
                    "level",
                    list(dict.fromkeys(x["level"] for x in rows)),
                    f"{measure} (%)",
                    [0, 100],
                )
            else:
                st.text(f"No system has {measure} by level on this split.")
        st.header("Every measure")
        _ui.table(stat_rows(report, split, components + products), links=_LINK_TEXT)

        st.header("Paired differences (gated minus ungated, variant minus base)")
        diffs = difference_rows(report, split)
        if not diffs:
            st.text(
                "No pair of systems (a gated system and its ungated twin, a variant and its "
                "base) was run on this split."
            )
        else:
            st.caption(
                "Points are the mean paired difference; lines its cluster-bootstrap 95% "
                "interval (one cluster per conversation)."
            )
            for m in dict.fromkeys(d["measure"] for d in diffs if d["measure"] != CALLS):
                st.subheader(_ui.md(m))
                _difference_chart([d for d in diffs if d["measure"] == m])
            _ui.table(
                [
                    {k: v for k, v in d.items() if k not in ("pair", "difference", "low", "high")}
                    for d in diffs
                ],
                links={"arcs where they differ": "arcs"},
            )

    st.header("Products and other answering systems")
    if not products:
        _ui.empty(
            "No answering system has results (products, baselines, uploaded answers).",
            f"amg eval run --system mem0 --workspace {r.path}",
        )
    else:
        for name in products:
            m = meta["systems"][name]
            st.text(
                f"{name}: {m['description']}" + (f" (model {m['model']})" if m.get("model") else "")
            )
        for s in splits:
            rows = stat_rows(report, s, products)
            if rows:
                st.subheader(_ui.md(s))
                _ui.table(rows, links=_LINK_TEXT)

    st.header("Natural sets")
    natural = meta.get("natural") or {}
    if not natural:
        _ui.empty(
            "No natural set was evaluated.", f"amg eval run --natural SET --workspace {r.path}"
        )
    for name, info in natural.items():
        split = f"natural:{name}"
        st.subheader(_ui.md(name))
        st.text(
            f"{info.get('corpus')} ({info.get('license')}): {info.get('items')} items, "
            f"{info.get('fielded')} with a field, {info.get('conversations')} conversations"
        )
        _ui.table(stat_rows(report, split, list(report["systems"])), links=_LINK_TEXT)
        diffs = difference_rows(report, split)
        if diffs:
            _ui.table(
                [
                    {k: v for k, v in d.items() if k not in ("pair", "difference", "low", "high")}
                    for d in diffs
                ],
                links={"arcs where they differ": "arcs"},
            )
