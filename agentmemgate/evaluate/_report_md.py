"""The Markdown of an evaluation report (``eval.md``): the summary and the "why" notes
(``_report_lead``), then the paper's Tables 2-7 titled by what they show (the paper's number in
parentheses), the corrections control, natural sets, paired differences, overhead and every
measure, from an ``EvalReport`` that ``report`` computed.

It also decides which tables a report has (``level_views``: one "by level of FACTOR" table per
factor and split; ``main_systems``: their columns), which the figures (``_plots.figures``)
follow. Values are fractions in the report; here they are shown as percent.
"""

from __future__ import annotations

from typing import NamedTuple

from ..design import Design, Factor
from .aggregate import CALLS, Difference, Stat
from .measures import GATE_MEASURES, MEASURES
from .report_models import EvalReport, split_order
from .systems import variant_base

MEASURE_NAMES = {
    "pending_contamination": "Contamination while pending",
    "end_contamination": "Contamination at end",
    "premature_write": "Came-true plans written while pending",
    "task_accuracy": "Task probes correct",
    "staged_at_plan_turn": "Plans staged at the plan turn",
    "promoted": "Came-true plans promoted (at the resolution turn)",
    "promoted_among_staged": "Came-true plans promoted, among staged",
    "discarded": "Abandoned plans discarded by end",
    "discarded_among_staged": "Abandoned plans discarded, among staged",
    "controls_committed": "Controls committed at once",
    "over_holding": "Controls over-held (staged)",
    "corrections_applied": "Corrections applied",
    "exposure": "Plans exposed before the outcome (answers)",
    "store_pending_contamination": "Contamination while pending (store read)",
    "store_end_contamination": "Contamination at end (store read)",
    "store_answer_agreement": "Store and answers agree while pending",
    CALLS: "Component calls per user message",
}
FIGURE2 = "figure2_contamination_by_hedge.png"
FIGURE3 = "figure3_promotion_by_wording.png"
# Factors whose levels get a "by level" table: every role but the outcome (Tables 2, 3 and 5
# report outcomes by their own measures) and the corrections (their own section).
_BY_LEVEL_SKIPPED = ("outcome", "correction")
# The paper's numbered table and figure for the first factor of these roles (Tables 6 and 7).
_PAPER_VIEWS = {
    "plan_wording": ("Table 6", "Figure 2", FIGURE2),
    "confirmation_wording": ("Table 7", "Figure 3", FIGURE3),
}
# What a by-level table of any other role (a structure factor, say) shows, in this order.
_LEVEL_MEASURES = ("pending_contamination", "end_contamination", "task_accuracy")


def split_title(design: Design, split: str) -> str:
    """How reports name a split: its title in the design, else its name."""
    sp = design.splits.get(split)
    return (sp.title or split) if sp is not None else split


def _title(r: EvalReport, split: str) -> str:
    return split_title(r.design, split)


def cell(s: Stat | None) -> str:
    if s is None:
        return "—"
    if s.n == 0 or s.value is None:
        return "undefined (n=0)"
    if s.ci_low is None:
        return f"{s.k}/{s.n} {100 * s.value:.1f}%"
    return f"{s.k}/{s.n} {100 * s.value:.1f}% [{100 * s.ci_low:.1f}, {100 * s.ci_high:.1f}]"


ANSWER_MEASURES = (
    "exposure",
    "end_contamination",
    "task_accuracy",
    "premature_write",
    "store_pending_contamination",
    "store_end_contamination",
    "store_answer_agreement",
)  # what answers can show
DASHES = {
    "gated": "— gated only",
    "answers": "— answers only",
    "components": "— not from answers",
    "window": "— no pending window",
    "none": "— no arcs",
    "store": "— store read only",
}
DASH_NOTE = (
    "Dashes say why a cell is empty: \"gated only\" marks a measure of the gate (staging, "
    "promotion, discard, over-holding) in an ungated system's column; \"answers only\" "
    "marks exposure, which is read from a black-box system's answers, in a component "
    "system's column (component systems report pending-window contamination instead); "
    "\"not from answers\" marks a measure that needs a system's writes, which answers "
    "do not show; \"no pending window\" marks pending contamination on a split whose "
    "outcome follows its plan with no read between; \"store read only\" marks a measure "
    "read from a product's store in the column of a system whose store is not read; \"no "
    "arcs\" marks a system not run on those arcs."
)


def _stat_cell(r: EvalReport, name: str, split: str, measure: str, level: str | None = None) -> str:
    """A cell, or a dash that says why the measure has no value for this system here."""
    s = r.stat(name, split, measure, level)
    if s is not None:
        return cell(s)
    m = r.meta.systems.get(name)
    if m is None or not r.systems.get(name, {}).get(split):
        return DASHES["none"]
    if measure.startswith("store_"):
        return DASHES["store"]
    if m.kind != "component":
        return DASHES["components"] if measure not in ANSWER_MEASURES else DASHES["none"]
    if measure == "exposure":
        return DASHES["answers"]
    if measure in GATE_MEASURES and not m.gated:
        return DASHES["gated"]
    if measure in ("pending_contamination", "premature_write"):
        return DASHES["window"]
    return DASHES["none"]


def _calls_cell(s: Stat | None) -> str:
    if s is None or s.value is None:
        return "—"
    return f"{s.value:.2f} [{s.ci_low:.2f}, {s.ci_high:.2f}] ({s.k} calls / {s.n} messages)"


def _n_label(
    r: EvalReport, systems: list[str], split: str, measure: str, level: str | None = None
) -> str:
    ns = {st.n for n in systems if (st := r.stat(n, split, measure, level)) is not None}
    return f"n={ns.pop()}" if len(ns) == 1 else "n varies"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return (
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        + ["| " + " | ".join(row) + " |" for row in rows]
        + [""]
    )


def main_systems(r: EvalReport) -> list[str]:
    """The columns of Tables 2, 3, 5 and 6: every system except plan-typed ones and variants."""
    return [
        n
        for n, m in r.meta.systems.items()
        if not n.startswith("plan-typed") and not variant_base(n)
    ]


def _strict(name: str) -> bool:
    return name.partition("@")[0].partition("[")[0].endswith("-strict")


def gated_systems(r: EvalReport, names: list[str]) -> list[str]:
    return [n for n in names if r.meta.systems[n].gated]


def report_markdown(r: EvalReport, images: bool = False) -> str:
    from ..llm.usage_log import by_model_lines

    out = ["# Evaluation report", ""]
    out += [f"- {n}" for n in r.meta.notes]
    if r.meta.model_calls:
        out += [
            f"- Model calls of `amg eval run` and `amg eval answers` in this workspace (call "
            f"log): {line}"
            for line in by_model_lines(r.meta.model_calls)
        ]
    out += [
        "- Arcs: " + ", ".join(f"{_title(r, s)} {n}" for s, n in r.meta.arcs.items()),
        f"- Proportions are k/n with 95% Wilson intervals (one observation per conversation); "
        f"differences are paired, in points, with a cluster-bootstrap 95% interval "
        f"({r.meta.bootstrap['resamples']} resamples, seed {r.meta.bootstrap['seed']}; one "
        "cluster per conversation). A dash marks a measure that does not apply; the words "
        "beside it say why (" + DASH_NOTE[len("Dashes say why a cell is empty: ") : -1] + ").",
        "",
    ]
    from ._report_lead import repeats_md, summary_md, why_md

    main = main_systems(r)
    out += summary_md(r, _role, _title) + repeats_md(r, _title, MEASURE_NAMES) + why_md(r)
    out += products_table(r)
    out += _table2(r, main) + _table3(r, main)
    out += _by_level_tables(r, main, gated_systems(r, list(r.meta.systems)), images)
    out += _table5(r, main) + _table4(r) + _ablation(r)
    out += _corrections_md(r) + _natural_md(r) + _differences_md(r) + _overhead(r) + _full(r)
    return "\n".join(out).rstrip() + "\n"


def _role(r: EvalReport, name: str) -> str:
    from ..products.registry import BASELINE_NAMES, PRODUCTS

    m = r.meta.systems[name]
    if m.kind == "answers":
        return "uploaded answers"
    if m.kind == "component":
        return "component"
    base = name.partition("@")[0]
    return "baseline" if base in BASELINE_NAMES else "product" if base in PRODUCTS else "plug-in"


def products_table(r: EvalReport, heading: str = "##") -> list[str]:
    """The paper's Section 1 / A.7 comparison: for each product and baseline (and uploaded answer
    set), final accuracy and exposure of at-risk plans; beside them the component systems'
    at-end contamination and task accuracy on the same split."""
    black = [n for n, m in r.meta.systems.items() if m.kind in ("product", "answers")]
    if not black:
        return []
    comps = [n for n in main_systems(r) if r.meta.systems[n].kind == "component"]
    store = (
        ("store_pending_contamination", "store_end_contamination", "store_answer_agreement")
        if any(r.stat(n, s, "store_pending_contamination") for n in black for s in r.meta.splits)
        else ()
    )
    rows = []
    for split in r.meta.splits:
        here = [n for n in black if r.systems.get(n, {}).get(split)]
        if not here:
            continue
        for n in here + [c for c in comps if r.systems.get(c, {}).get(split)]:
            rows.append(
                [n, _role(r, n), _title(r, split)]
                + [
                    _stat_cell(r, n, split, m)
                    for m in ("task_accuracy", "exposure", "end_contamination", *store)
                ]
            )
    if not rows:
        return []
    judged = ""
    if r.meta.judge.get("answer_rubric"):
        from ..answer_judge.accuracy import accuracy_line

        judged = (
            " Exposure and final accuracy of answering systems are read from their answers. "
            + accuracy_line(r.meta.judge["spec"], r.meta.judge["answer_rubric"])
        )
    if store:
        from .store_reading import accuracy_line as store_accuracy
        from .store_reading import load_cues

        judged += (
            " Products whose store is read (Mem0's memories, Graphiti's edges valid at the "
            "probe) are also scored from what the store held after each session: contamination "
            "while pending and at the end, and whether the store and the answers agree on the "
            "plan while it was pending (where they do not, the store or the answering step went "
            "wrong: `amg eval show` shows both). " + store_accuracy(load_cues().ref)
        )
    return [
        f"{heading} Products: final accuracy and exposure of at-risk plans (Section 1, A.7)",
        "",
        "Answering systems are asked the probe after every session; a plan is exposed if an "
        "answer before its outcome asserts it as the user's current value (answers worded "
        "as plans do not count). Component systems, read from their store, stand beside them "
        "with their at-end contamination. Whole-system measurements: a difference against "
        "a component system cannot be attributed to one stage." + judged,
        "",
    ] + _table(
        [
            "System",
            "Kind",
            "Split",
            "Final accuracy",
            "At-risk plans exposed",
            "Contamination at end",
            *(
                ["Store: while pending", "Store: at end", "Store and answers agree"]
                if store
                else []
            ),
        ],
        rows,
    )


def _table2(r: EvalReport, cols: list[str]) -> list[str]:
    rows = []
    for split in r.meta.splits:
        for measure, label in (
            ("pending_contamination", "While pending"),
            ("end_contamination", "At end"),
            ("exposure", "Exposed before the outcome (answers)"),
        ):
            if any(r.stat(n, split, measure) for n in cols):
                rows.append(
                    [f"{label} ({_title(r, split)}, {_n_label(r, cols, split, measure)})"]
                    + [_stat_cell(r, n, split, measure) for n in cols]
                )
    if not rows:
        return []
    return [
        "## Contamination: at-risk plans stored as a current fact (Table 2; lower is better)",
        "",
    ] + _table(["Measurement (source, n)"] + cols, rows)


def _table3(r: EvalReport, cols: list[str]) -> list[str]:
    rows = [
        [f"{_title(r, s)} ({_n_label(r, cols, s, 'task_accuracy')})"]
        + [_stat_cell(r, n, s, "task_accuracy") for n in cols]
        for s in r.meta.splits
        if any(r.stat(n, s, "task_accuracy") for n in cols)
    ]
    if not rows:
        return []
    return [
        "## Task accuracy: one probe per conversation, answered from the final store (Table 3)",
        "",
    ] + _table(["Measurement (source, n)"] + cols, rows)


def _table5(r: EvalReport, cols: list[str]) -> list[str]:
    if not any(r.systems.get(n, {}).get("heldout") for n in cols):
        return []
    measures = (
        "end_contamination",
        "exposure",
        "staged_at_plan_turn",
        "promoted",
        "discarded",
        "task_accuracy",
        "controls_committed",
        "over_holding",
    )
    rows = [
        [f"{MEASURE_NAMES[m]} ({_n_label(r, cols, 'heldout', m)})"]
        + [_stat_cell(r, n, "heldout", m) for n in cols]
        for m in measures
        if any(r.stat(n, "heldout", m) for n in cols)
    ]
    return [
        "## Held-out detail: contamination, staging, promotion, discard, controls (Table 5)",
        "",
        "Pending-window contamination does not apply to the held-out split (no read lies "
        "between a plan and its outcome). " + DASH_NOTE,
        "",
    ] + _table(["Measurement (n)"] + cols, rows)


class LevelView(NamedTuple):
    """One factor's levels in one split: a "by level of FACTOR" table and its figure."""

    factor: Factor
    split: str
    levels: tuple[str, ...]  # the levels the split has cells of (controls aside), in design order
    paper: tuple[str, str, str] | None  # the paper's (table, figure, file) it stands for, if any

    @property
    def figure(self) -> tuple[str, str]:
        """(label, file name) of its figure."""
        if self.paper:
            return self.paper[1], self.paper[2]
        return f"By level of {self.factor.name}", f"figure_{self.factor.name}_{self.split}.png"


def level_views(design: Design, splits: list[str]) -> list[LevelView]:
    """Every factor of ``design`` with cells in ``splits`` (outcomes and corrections aside, which
    have their own tables), one view per split, in the design's factor and split order. The
    first factor of the plan-wording and confirmation-wording roles keeps the paper's Table 6 and
    Table 7 (and Figures 2 and 3)."""
    out: list[LevelView] = []
    numbered: set[str] = set()
    for f in design.factors.values():
        if f.role in _BY_LEVEL_SKIPPED:
            continue
        for split in split_order(design, [s for s in splits if s in design.splits]):
            cells = {c.level for c in design.splits[split].cells if c.factor == f.name}
            levels = tuple(lv.name for lv in f.levels if lv.name in cells and not lv.control)
            if not levels:
                continue
            paper = _PAPER_VIEWS.get(f.role) if f.role not in numbered else None
            numbered.add(f.role)
            out.append(LevelView(f, split, levels, paper))
    return out


def _views(r: EvalReport) -> list[LevelView]:
    return level_views(r.design, r.meta.splits)


def _by_level_tables(r: EvalReport, main: list[str], gated: list[str], images: bool) -> list[str]:
    out: list[str] = []
    for v in _views(r):
        if v.factor.role == "plan_wording":
            out += _by_plan_wording(r, v, main, images)
        elif v.factor.role == "confirmation_wording":
            out += _by_confirmation(r, v, gated, images)
        else:
            out += _by_level(r, v, main, images)
    return out


def _image(v: LevelView, images: bool) -> list[str]:
    label, name = v.figure
    return [f"![{label}]({name})", ""] if images else []


def _by_plan_wording(r: EvalReport, v: LevelView, cols: list[str], images: bool) -> list[str]:
    """At-end contamination by level of a plan-wording factor (the paper's Table 6)."""
    split = v.split
    levels = [lv for lv in v.levels if any(r.stat(n, split, "end_contamination", lv) for n in cols)]
    if not levels:
        return []
    rows = [
        [f"{lv.replace('_', ' ')} ({_n_label(r, cols, split, 'end_contamination', lv)})"]
        + [cell(r.stat(n, split, "end_contamination", lv)) for n in cols]
        for lv in levels
    ]
    title = _title(r, split)
    head = (
        f"## At-end contamination by {v.factor.name.replace('_', '-')} level "
        f"({title}; {v.paper[0]})"
        if v.paper
        else f"## By level of {v.factor.name}: at-end contamination ({title})"
    )
    return [head, ""] + _table(["Level"] + cols, rows) + _image(v, images)


def _by_confirmation(r: EvalReport, v: LevelView, gated: list[str], images: bool) -> list[str]:
    """Promotion of came-true plans by level of a confirmation-wording factor (Table 7)."""
    split = v.split
    levels = [lv for lv in v.levels if any(r.stat(n, split, "promoted", lv) for n in gated)]
    if not levels:
        return []
    header = ["Wording level"] + [f"{n}: {w}" for n in gated for w in ("all plans", "among staged")]
    rows = []
    for lv in levels + [None]:
        label = lv.replace("_", " ") if lv else "all confirmation levels"
        row = [label]
        for n in gated:
            for m in ("promoted", "promoted_among_staged"):
                st = r.pooled(n, split, m, levels) if lv is None else r.stat(n, split, m, lv)
                row.append(
                    "undefined (0 staged)"
                    if st is None and m == "promoted_among_staged"
                    else cell(st)
                )
        rows.append(row)
    what = "came-true plans; a promotion counts only at the resolution turn"
    head = (
        f"## Promotion by {v.factor.name.replace('_', ' ')} ({what}; {v.paper[0]})"
        if v.paper
        else f"## By level of {v.factor.name}: promotion ({_title(r, split)}; {what})"
    )
    return [head, ""] + _table(header, rows) + _image(v, images)


def level_measures(r: EvalReport, v: LevelView, cols: list[str]) -> list[str]:
    return [
        m
        for m in _LEVEL_MEASURES
        if any(r.stat(n, v.split, m, lv) for n in cols for lv in v.levels)
    ]


def _by_level(r: EvalReport, v: LevelView, cols: list[str], images: bool) -> list[str]:
    """Contamination and task accuracy by level of any other factor (a structure factor, say)."""
    split = v.split
    rows = [
        [f"{lv.replace('_', ' ')}: {MEASURE_NAMES[m]} ({_n_label(r, cols, split, m, lv)})"]
        + [_stat_cell(r, n, split, m, lv) for n in cols]
        for m in level_measures(r, v, cols)
        for lv in v.levels
        if any(r.stat(n, split, m, lv) for n in cols)
    ]
    if not rows:
        return []
    f = v.factor
    about = (f"{f.description} " if f.description else "") + (
        "Levels in the design's order." if f.ordered else ""
    )
    return (
        [f"## By level of {f.name} ({_title(r, split)})", ""]
        + ([about.strip(), ""] if about.strip() else [])
        + _table(["Level: measure (n)"] + cols, rows)
        + _image(v, images)
    )


def _table4(r: EvalReport) -> list[str]:
    typed = [n for n in r.meta.systems if n.startswith("plan-typed")]
    if not typed:
        return []
    refresh = [n for n in typed if not _strict(n)]
    models = {n.partition("@")[2] for n in typed}
    cols = refresh + [
        n
        for n in r.meta.systems
        if n.partition("@")[0] in ("cautious-gated", "literal-gated")
        and n.partition("@")[2] in models
    ]
    view = next((v for v in _views(r) if v.factor.role == "confirmation_wording"), None)
    split = view.split if view else ""
    levels = [
        lv
        for lv in (view.levels if view else ())
        if any(r.stat(n, split, "task_accuracy", lv) for n in cols)
    ]
    out = [
        "## Plan-typed baseline: speculation written as a masked plan-typed value (Table 4)",
        "",
    ]
    if view and levels:
        wording = view.factor.name.replace("_", " ")
        out += [
            "End-state correctness for came-true plans, refresh-confirm reading, by "
            f"{wording} ({_title(r, split)}); gated systems for comparison.",
            "",
        ]
        out += _table(
            ["Wording level"] + cols,
            [
                [f"{lv} ({_n_label(r, cols, split, 'task_accuracy', lv)})"]
                + [cell(r.stat(n, split, "task_accuracy", lv)) for n in cols]
                for lv in levels
            ],
        )
        out += [
            f"Both readings, all came-true plans of the {wording.replace(' ', '-')} split "
            "(strict: plans never resolve):",
            "",
        ]
        out += _table(
            ["System", "came-true correct"],
            [[n, cell(r.pooled(n, split, "task_accuracy", levels))] for n in typed],
        )
    rows = []
    for split in r.meta.splits:
        if any(r.stat(n, split, "end_contamination") for n in typed):
            rows.append(
                [f"At end ({_title(r, split)})"]
                + [cell(r.stat(n, split, "end_contamination")) for n in typed]
            )
        if any(r.stat(n, split, "pending_contamination") for n in typed):
            rows.append(
                [f"While pending ({_title(r, split)})"]
                + [cell(r.stat(n, split, "pending_contamination")) for n in typed]
            )
    if rows:
        out += ["Contamination of the plan-typed baseline (at-risk plans):", ""]
        out += _table(["Measurement"] + typed, rows)
    return out


def _ablation(r: EvalReport) -> list[str]:
    variants = [(n, variant_base(n)) for n in r.meta.systems if variant_base(n) in r.meta.systems]
    if not variants:
        return []
    out = ["## Retry ablation and other variants (a bracketed variant against its base system)", ""]
    measures = (
        "staged_at_plan_turn",
        "promoted",
        "pending_contamination",
        "end_contamination",
        "task_accuracy",
        "controls_committed",
    )
    for name, base in variants:
        rows = []
        for split in r.meta.splits:
            for m in measures:
                a, b = r.stat(name, split, m), r.stat(base, split, m)
                if a is None and b is None:
                    continue
                d = next(
                    (
                        x
                        for x in r.differences
                        if x.system == name
                        and x.baseline == base
                        and x.split == split
                        and x.measure == m
                    ),
                    None,
                )
                rows.append(
                    [f"{MEASURE_NAMES[m]} ({_title(r, split)})", cell(b), cell(a), _diff_cell(d)]
                )
        out += [f"**{name}** vs **{base}**", ""]
        out += _table(["Measure (split)", base, name, "difference [95% CI]"], rows)
    return out


def _diff_cell(d: Difference | None) -> str:
    if d is None:
        return "—"
    if d.measure == CALLS:
        return f"{d.value:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}] (n={d.n})"
    return (
        f"{100 * d.value:+.1f} [{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}] pts "
        f"(n={d.n}; {d.n_gained} up, {d.n_lost} down)"
    )


_CORRECTION_GROUPS = (
    ("all corrections", ""),
    ("of the initial value", "initial_"),
    ("of a reported change", "change_"),
    ("same session", "_same_"),
    ("later session", "_later_"),
    ("with a marker", "_marked"),
    ("without a marker", "_unmarked"),
)


def _corrections_md(r: EvalReport) -> list[str]:
    factor = r.design.by_role("correction")
    splits = [
        s
        for s in split_order(r.design, r.meta.splits)
        if factor is not None
        and s in r.design.splits
        and any(c.factor == factor.name for c in r.design.splits[s].cells)
    ]
    names = factor.level_names if factor else ()

    def applied(n: str, levels=None) -> Stat | None:
        if levels is None and len(splits) == 1:
            return r.stat(n, splits[0], "corrections_applied")
        return r.pooled_over(n, splits, "corrections_applied", names if levels is None else levels)

    cols = [n for n in r.meta.systems if any(r.stat(n, s, "corrections_applied") for s in splits)]
    if not cols and not r.corrections_control.pairs:
        return []
    out = [
        "## Explicit corrections (the second control for non-speculative updates)",
        "",
        f"Arcs of the {', '.join(splits) or 'corrections'} split: the user states a value, and later says with "
        "corrective intent that it was wrong when said. A correction is applied when the "
        "first read after the correction turn gives the corrected value; the control counts, "
        "for each gated system and its ungated twin, the correction arcs on which both end "
        "with the same value (up to case and punctuation), out of the arcs both were scored "
        "on; each arc is two runs (gated and ungated), so runs = 2 x n. The paper reports "
        "the same result across 240 runs.",
    ]
    if any(r.meta.systems[n].offline for n in cols):
        out[-1] += (
            " Offline components are documented rules, not language models: these are "
            "what the rules reach (the classifier's corrective markers, the extractor's "
            "value rules), not what the paper's LLM pipelines reach."
        )
    out.append("")
    if cols:
        rows = []
        for label, part in _CORRECTION_GROUPS:
            levels = [lv for lv in names if part in f"_{lv}_" or part in lv]
            rows.append([label] + [cell(applied(n, levels) if part else applied(n)) for n in cols])
        out += ["Corrections applied:", ""] + _table(["Correction arcs"] + cols, rows)
        nv = r.corrections_control.never_valid
        if nv:
            out += [
                "Wrong value marked never valid in the store at the end (Figure 4; only a "
                "write the gate routes as an explicit correction marks it, so ungated "
                "systems never do):",
                "",
            ]
            out += _table(
                ["Correction arcs"] + [n for n in cols if n in nv],
                [["all corrections"] + [cell(nv[n]) for n in cols if n in nv]],
            )
    pairs = r.corrections_control.pairs
    if pairs:
        rows = [
            [
                p.system,
                p.ungated_twin,
                cell(p.same_end),
                str(p.runs),
                ", ".join(p.differing_arcs) or "none",
            ]
            for p in pairs
        ]
        if r.corrections_control.pooled is not None and len(pairs) > 1:
            pooled = r.corrections_control.pooled
            rows.append(["all pairs", "", cell(pooled), str(2 * pooled.n), ""])
        out += ["Gate on vs gate off: both end with the same value:", ""]
        out += _table(
            [
                "Gated system",
                "Ungated twin",
                "Same end value (k/n arcs)",
                "Runs",
                "Arcs that differ (up to 10)",
            ],
            rows,
        )
    return out


def _style(name: str) -> str:
    core = name.partition("@")[0]
    return (
        "cautious"
        if core.startswith("cautious")
        else "literal"
        if core.startswith("literal")
        else core
    )


def _natural_md(r: EvalReport) -> list[str]:
    """The paper's Section 6.1 paragraph for each natural set, then its accuracy table."""
    out: list[str] = []
    for name, meta in r.meta.natural.items():
        split = f"natural:{name}"
        systems = [n for n in r.meta.systems if r.stat(n, split, "task_accuracy")]
        if not systems:
            continue
        corpus = {"longmemeval": "LongMemEval", "locomo": "LoCoMo"}.get(
            meta["corpus"], meta["corpus"]
        )
        form = f", {meta['variant']} form" if meta.get("variant") else ""
        ds = [d for d in r.differences if d.split == split and d.kind == "gated_minus_ungated"]
        answering = [n for n in systems if r.meta.systems[n].kind != "component"]
        n_run = {r.stat(n, split, "task_accuracy").n for n in systems if n not in answering}

        def n_(k: int, word: str, plural: str | None = None) -> str:
            return f"{k} {word if k == 1 else (plural or word + 's')}"

        text = (
            f"We also test {n_(meta['items'], 'question')} from {corpus}"
            f"{' (' + form[2:] + ')' if form else ''} whose answers depend on a fact that "
            f"changes during the conversation (set {name}, rule {meta['rule']}; "
            f"{n_(meta['conversations'], 'conversation')}). {meta['fielded']} "
            f"{'has' if meta['fielded'] == 1 else 'have'} a value-free field "
            f"({meta['field_rule']}; {meta['refused']} refused because the field would name a "
            "word of the answer), and component systems run on those "
            f"({', '.join(str(x) for x in sorted(n_run))} scored). We run each question with "
            "the gate on and off."
        )
        if ds:
            parts = [
                f"{100 * d.value:+.1f} points [{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}] "
                f"for the {_style(d.system)} style (n={d.n}; {d.n_gained} up, {d.n_lost} down"
                + (f"; {n_(d.clusters, 'cluster')}" if d.clusters is not None else "")
                + ")"
                for d in ds
            ]
            text += (
                " The paired gate-on minus gate-off difference in task accuracy is "
                + " and ".join(parts)
                + " (95% cluster-bootstrap intervals, one cluster per "
                "conversation)."
            )
        else:
            text += " No gated system was run beside its ungated twin, so no paired difference."
        if answering:
            text += (
                " Answering systems (" + ", ".join(answering) + ") ingest the sessions and "
                "are asked the question itself, on every item, and their answer is judged "
                "against the gold answer."
            )
        offline = [n for n in systems if r.meta.systems[n].offline and n not in answering]
        if offline:
            text += (
                " The components are offline rules, not language models: these figures are "
                "what the rules reach on natural conversations."
            )
        models = sorted(
            {
                r.meta.systems[n].model
                for n in systems
                if not r.meta.systems[n].offline and r.meta.systems[n].model
            }
        )
        if models:
            text += f" Model components: {', '.join(models)}."
        if r.meta.judge.get("heuristic"):
            text += (
                " The offline equivalence judge compares normalized strings, so a stored "
                "value rarely equals a sentence-like gold answer."
            )
        out += [f"## Natural conversations: {name} (Section 6.1)", "", text, ""]
        out += _table(
            ["System", f"Task accuracy ({corpus}{form}, n)"],
            [[n, cell(r.stat(n, split, "task_accuracy"))] for n in systems],
        )
        out += [f"License: {meta['license']}.", ""]
    return out


def _differences_md(r: EvalReport) -> list[str]:
    ds = [d for d in r.differences if d.kind != "variant_minus_base" and d.measure != CALLS]
    if not ds:
        return []
    rows = [
        [d.system, d.baseline, _title(r, d.split), MEASURE_NAMES[d.measure], _diff_cell(d)]
        for d in ds
    ]
    return [
        "## Paired differences: each system minus its ungated twin",
        "",
        "Gated (and plan-typed) systems against the same pipeline with the gate off. Points; "
        "\"up\"/\"down\" count conversations where the measure holds only for the system / "
        "only for its ungated twin.",
        "",
    ] + _table(["System", "Ungated twin", "Split", "Measure", "Difference [95% CI]"], rows)


def _overhead(r: EvalReport) -> list[str]:
    rows = []
    for n, m in r.meta.systems.items():
        if m.kind != "component":
            continue
        for split in r.meta.splits:
            s = r.stat(n, split, CALLS)
            if s is None:
                continue
            d = next(
                (
                    x
                    for x in r.differences
                    if x.system == n
                    and x.split == split
                    and x.measure == CALLS
                    and x.kind != "variant_minus_base"
                ),
                None,
            )
            rows.append(
                [
                    n,
                    _title(r, split),
                    _calls_cell(s),
                    f"{_diff_cell(d)} vs {d.baseline}" if d else "—",
                ]
            )
    if not rows:
        return []
    return [
        "## Overhead: component calls per user message",
        "",
        "One call per would-be model call (an offline component counts as its LLM twin "
        "would); the interval is a cluster bootstrap over conversations.",
        "",
    ] + _table(["System", "Split", "Calls per user message", "Over the ungated twin"], rows)


def _full(r: EvalReport) -> list[str]:
    out = ["## All measures", ""]
    for n, splits in r.systems.items():
        m = r.meta.systems[n]
        if not splits:
            out += [f"**{n}**: no scores for the current arcs with this judge.", ""]
            continue
        out += [f"**{n}** ({m.kind}; {m.description})", ""]
        names = [x for x in MEASURES if any(x in b for b in splits.values())]
        rows = [
            [MEASURE_NAMES[x]]
            + [(_calls_cell if x == CALLS else cell)(r.stat(n, sp, x)) for sp in splits]
            for x in names
        ]
        out += _table(["Measure"] + [_title(r, sp) for sp in splits], rows)
    return out
