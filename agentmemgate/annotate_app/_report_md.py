"""Markdown and PNG rendering of an ``AgreementReport`` (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

from ..stats import Interval, Proportion
from .labels import display_name
from .report_models import AgreementReport, Confusion, VsReference

_MAX_FAST_LISTED = 30


def _p(x: Proportion | None) -> str:
    return "undefined" if x is None else x.fmt()


def _f(x: float | None, digits: int = 3) -> str:
    return "undefined" if x is None else f"{x:.{digits}f}"


def _ci(x: float | None, ci: Interval | None, digits: int = 3) -> str:
    """A statistic with its bootstrap interval: ``0.412 [0.215, 0.600]``."""
    if x is None:
        return "undefined"
    if ci is None or ci.ci_low is None:
        return _f(x, digits)
    return f"{x:.{digits}f} [{ci.ci_low:.{digits}f}, {ci.ci_high:.{digits}f}]"


def _chance(c) -> str:
    """``0.775 [0.461, 1.000] (n=12 items, 11 with two or more labels)``."""
    if c.value is None:
        return f"undefined (n={c.n} items)"
    ci = "" if c.ci_low is None else f" [{c.ci_low:.3f}, {c.ci_high:.3f}]"
    return f"{c.value:.3f}{ci} (n={c.n} items, {c.n_multi} with two or more labels)"


def _pct(v: float | None, lo: float | None, hi: float | None) -> str:
    if v is None:
        return "undefined"
    return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + [""]


def _confusion(c: Confusion) -> list[str]:
    names = [display_name(x) for x in c.labels]
    rows = [
        [f"**{names[i]}**"] + [str(v) for v in row]
        for i, row in enumerate(c.matrix)
        if sum(row) or c.labels[i] != "cant_tell"
    ]
    return _table(["reference \\ human"] + names, rows)


def _vs(v: VsReference, title: str) -> list[str]:
    out = [
        f"### {title}",
        "",
        f"- Agreement with the reference: {_p(v.agreement)}",
        f"- Cohen's kappa: {_ci(v.kappa, v.kappa_ci)} (n={v.agreement.n})",
        f"- Macro-F1 over the reference's classes: {_ci(v.macro_f1, v.macro_f1_ci)}",
    ]
    if v.within_one is not None:
        out.append(f"- Within one level of the reference: {_p(v.within_one)}")
    out.append("")
    rows = [
        [
            display_name(c),
            str(s.support),
            _pct(s.precision, s.precision_ci_low, s.precision_ci_high) + f" (n={s.precision_n})",
            _pct(s.recall, s.recall_ci_low, s.recall_ci_high) + f" (n={s.support})",
        ]
        for c, s in v.per_class.items()
    ]
    out += _table(["class", "support", "precision [95% CI]", "recall [95% CI]"], rows)
    out += ["Confusion matrix (rows: reference, columns: human):", ""] + _confusion(v.confusion)
    if v.binary is not None:
        out += [
            "Commit-versus-hold collapse (speculation holds; the other classes commit; "
            "can't tell stays its own answer and counts as a disagreement):",
            "",
            f"- Agreement: {_p(v.binary.agreement)}",
            f"- Cohen's kappa: {_ci(v.binary.kappa, v.binary.kappa_ci)}",
            "",
        ] + _confusion(v.binary.confusion)
    if (pa := v.plan_asserted) is not None:
        jy, jn = pa.judge_yes_human_no, pa.judge_no_human_yes
        out += [
            "Plan asserted or not (the decision that counts an exposure: the answer asserts the "
            "plan value, alone or with the other value; can't tell counts as a disagreement):",
            "",
            f"- Agreement with the judge: {_p(pa.agreement)}",
            f"- Cohen's kappa: {_ci(pa.kappa, pa.kappa_ci)}",
            f"- Judge says plan asserted, human says not (the judge's false plan assertions, "
            f"which inflate exposure): {jy.k} of the {jy.n} judge-yes observations a human "
            f"decided: {_p(jy)}",
            f"- Judge says not asserted, human says asserted (missed plan assertions): {jn.k} of "
            f"the {jn.n} judge-no observations a human decided: {_p(jn)}",
            f"- Human can't tell: {pa.human_cant_tell}",
            "",
        ] + _confusion(pa.confusion)
    return out


def render_markdown(r: AgreementReport) -> str:
    task = r.task + (f" ({r.factor})" if r.factor else "")
    out = [
        f"# Agreement report: {r.audit}",
        "",
        f"Task: {task}; labels: {', '.join(display_name(x) for x in r.labels)}"
        f"{' (ordered)' if r.ordered else ''}; rubric: {r.rubric or 'none'}.",
        "",
        f"Items: {r.n_items}; annotators: {r.n_annotators}; labels counted (latest per annotator "
        f"and item): {r.n_labels}; items with two or more labels: {r.n_items_multi}.",
        "",
    ]
    if r.bootstrap is not None:
        b = r.bootstrap
        out += [
            f"Intervals: 95% Wilson for proportions; for kappa, alpha and macro-F1 a 95% "
            f"percentile bootstrap over {b.unit}s ({b.resamples} resamples, seed {b.seed}; an "
            f"{b.unit}'s labels are drawn together).",
            "",
        ]
    a = r.krippendorff_alpha
    out += [
        "## Human-human agreement",
        "",
        f"- Percent agreement over all pairs of labels given to the same item: "
        f"{_p(r.percent_agreement)}",
        f"- Krippendorff's alpha ({a.level}): {_ci(a.value, a.ci)} "
        f"(units with two or more labels: {a.n_units}{'; ' + a.note if a.note else ''})",
    ]
    if r.plan_asserted_human is not None:
        out.append(
            f"- Percent agreement on plan asserted or not (all pairs): {_p(r.plan_asserted_human)}"
        )
    for label, c in (
        ("Fleiss' kappa", r.fleiss_kappa),
        ("Gwet's AC1", r.gwet_ac1),
        ("Gwet's AC2 (ordinal weights over the scale; can't tell as missing)", r.gwet_ac2),
    ):
        if c is not None:
            out.append(f"- {label}: {_chance(c)}")
    if r.fleiss_kappa is not None:
        out.append(
            "  (any number of people per item; 95% intervals by Gwet's variance, t with n-1 "
            "degrees of freedom. AC1 stays meaningful when one label dominates, where kappa can "
            "sit near zero though people agree on almost every item.)"
        )
    if r.screened_out:
        out.append(
            f"- Screened-out people: {r.screened_out}, "
            + ("included (--include-screened)" if r.screened_included else "left out")
            + "; who and why is under Diagnostics."
        )
    out.append("")
    if r.cohen_kappa_pairs:
        header = ["annotator pair", "n", "agreement [95% CI]", "Cohen's kappa [95% CI]"]
        rows = [
            [f"{k.a} / {k.b}", str(k.n), _p(k.agreement), _ci(k.kappa, k.kappa_ci)]
            for k in r.cohen_kappa_pairs
        ]
        if r.ordered:
            header += ["n on the scale", "linear-weighted kappa", "quadratic-weighted kappa"]
            for row, k in zip(rows, r.cohen_kappa_pairs):
                row += [
                    str(k.n_weighted),
                    _ci(k.kappa_linear, k.kappa_linear_ci),
                    _ci(k.kappa_quadratic, k.kappa_quadratic_ci),
                ]
        out += _table(header, rows)
        if r.ordered:
            out += [
                "Weighted kappas count how far apart two levels are (linear: by the distance, "
                "quadratic: by its square) over the items both labeled on the scale; "
                "\"can't tell\" is not on it.",
                "",
            ]
    else:
        out += ["No two annotators have labeled the same item yet: no pairwise kappa.", ""]
    out += ["## Human vs reference", ""]
    if r.vs_reference is None and r.diagnostics.reference_prevalence:
        out += ["Reference labels exist, but no referenced item has a human label yet.", ""]
    elif r.vs_reference is None:
        out += [
            "No reference labels for this audit (add them with `amg audit import NAME FILE.csv "
            "--reference`).",
            "",
        ]
    else:
        v = r.vs_reference
        srcs = ", ".join(f"{k}: {n}" for k, n in v.sources.items())
        if r.reference_name:
            out += [f"Reference: {r.reference_name}.", ""]
        out += [
            f"Reference sources (items): {srcs}. Items with a reference and a human label: "
            f"{v.n_items}. Pooled: each annotator's label is one observation.",
            "",
        ]
        if "confusion" in r.plots:
            out += [f"![confusion matrix]({Path(r.plots['confusion']).name})", ""]
        if "confusion_plan" in r.plots:
            out += [f"![plan asserted]({Path(r.plots['confusion_plan']).name})", ""]
        out += _vs(v, "Pooled over annotators")
        for a, va in v.per_annotator.items():
            out += _vs(va, f"Annotator {a}")
    if r.adjudication is not None:
        a = r.adjudication
        out += [
            "## Adjudication",
            "",
            f"- Items with two or more labels: {a.n_candidates}; with disagreement: "
            f"{a.n_disagreements}; resolved: {a.n_resolved}",
        ]
        if a.vs_reference is not None:
            out.append(f"- Resolutions agreeing with the reference: {_p(a.vs_reference)}")
        out.append("")
    d = r.diagnostics
    out += ["## Diagnostics", ""]
    out += _table(
        [
            "annotator",
            "assigned",
            "labeled",
            "labels logged",
            "changed",
            "can't tell",
            f"fast (< {d.fast_threshold_seconds:g} s)",
            "median active s",
            "agrees with the final label [95% CI]",
        ],
        [
            [
                x.annotator,
                str(x.assigned),
                str(x.labeled),
                str(x.labels_logged),
                str(x.changed),
                str(x.cant_tell),
                str(x.fast),
                _f(x.median_active_seconds, 1),
                _p(x.vs_final) if x.vs_final is not None and x.vs_final.n else "-",
            ]
            for x in d.per_annotator
        ],
    )
    out += ["Label prevalence (latest human labels; reference labels where present):", ""]
    rows = [
        [
            display_name(c),
            _p(p),
            _p(d.reference_prevalence.get(c)) if d.reference_prevalence else "-",
        ]
        for c, p in d.prevalence.items()
    ]
    out += _table(["label", "human", "reference"], rows)
    for g, prev in d.prevalence_by_group.items():
        out += [f"Prevalence for {g}:", ""]
        out += _table(["label", "human"], [[display_name(c), _p(p)] for c, p in prev.items()])
    out.append(f"- Items nobody has labeled yet: {d.n_unlabeled_items}")
    if d.fast_decisions:
        listed = ", ".join(
            f"{f.annotator}:{f.item_id} ({f.seconds:.1f} s)"
            for f in d.fast_decisions[:_MAX_FAST_LISTED]
        )
        more = len(d.fast_decisions) - _MAX_FAST_LISTED
        out.append(
            f"- Fast decisions flagged: {listed}" + (f" and {more} more" if more > 0 else "")
        )
    if d.undefined:
        out.append("- Undefined statistics: " + "; ".join(d.undefined))
    for n in d.notes:
        out.append(f"- {n}")
    return "\n".join(out) + "\n"


def confusion_figure(c: Confusion, title: str):
    """One confusion matrix as a matplotlib figure (rows: reference, columns: human)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from sklearn.metrics import ConfusionMatrixDisplay

    n = len(c.labels)
    fig, ax = plt.subplots(figsize=(1.2 * n + 2.5, 1.0 * n + 2))
    disp = ConfusionMatrixDisplay(
        np.array(c.matrix), display_labels=[display_name(x) for x in c.labels]
    ).plot(ax=ax, colorbar=False, cmap="Blues", xticks_rotation=30)
    if c.labels[-1] == "cant_tell" and not sum(c.matrix[-1]):
        # References are never "can't tell": crop that empty row, as the markdown table does.
        for t in disp.text_[-1]:
            t.set_visible(False)
        ax.set_ylim(n - 1.5, -0.5)
    ax.set_xlabel("human label")
    ax.set_ylabel("reference label")
    ax.set_title(f"{title}, n={int(np.array(c.matrix).sum())}")
    fig.tight_layout()
    return fig


def write_plots(r: AgreementReport, folder: Path) -> dict[str, str]:
    if r.vs_reference is None:
        return {}
    import matplotlib.pyplot as plt

    out = {}
    mats = {"confusion": r.vs_reference.confusion}
    if r.vs_reference.binary is not None:
        mats["confusion_binary"] = r.vs_reference.binary.confusion
    if r.vs_reference.plan_asserted is not None:
        mats["confusion_plan"] = r.vs_reference.plan_asserted.confusion
    suffix = {"confusion_binary": " (commit vs hold)", "confusion_plan": " (plan asserted)"}
    for key, c in mats.items():
        fig = confusion_figure(c, f"{r.audit}: human vs reference" + suffix.get(key, ""))
        path = folder / f"{key}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        out[key] = str(path)
    return out
