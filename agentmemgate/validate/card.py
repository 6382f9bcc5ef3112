"""The validation summary in the exported dataset card, and the ``--drop-failing`` rule.

``exports`` (a room above this one) lists both among its card sections and drop rules; this
module knows nothing of exports. Both read the judges of the latest validation run (``amg build``
/ ``amg validate``).
"""

from __future__ import annotations

from ..stats import Proportion
from ..workspace import Workspace
from ._report_md import criterion_description
from .diversity import card_lines, measure
from .report import NATURALNESS_HOW, validation_report
from .report_models import JudgeBlock, ValidationReport


def _prop(p) -> str:
    return p.fmt()


def _block(b: JudgeBlock) -> list[str]:
    j = b.judge
    out = [
        f"Judge `{j.spec}` (family {j.family}, {'heuristic' if j.heuristic else 'LLM'}"
        + (
            ", same family as the generator: allowed with --allow-same-family"
            if b.same_family
            else ""
        )
        + "):",
        "",
    ]
    if b.recovery.overall.n:
        out.append(f"- Blind level recovery, all factors: {_prop(b.recovery.overall)}")
        for name, f in b.recovery.by_factor.items():
            p = Proportion(value=f.value, ci_low=f.ci_low, ci_high=f.ci_high, n=f.n, k=f.k)
            line = f"- Blind level recovery, {name}: {_prop(p)}"
            if f.ordinal:
                line += f"; within one ordered level {_prop(f.ordinal.off_by_one)}"
            out.append(line)
    for c, p in b.realism.items():
        what = criterion_description(c, j.heuristic)
        out.append(f"- Realism, {c}: {_prop(p)} pass" + (f" ({what})" if what else ""))
    nf = b.judge_failures
    if any(nf.values()):
        out.append(
            f"- Judge failures (not counted as verdicts): recovery {nf['recovery']}, "
            f"realism {nf['realism']}"
        )
    return out + [""]


def card_markdown(r: ValidationReport) -> str:
    if not r.judges:
        return ""
    out = [
        "## Validation by judges",
        "",
        f"Generator families: {', '.join(r.generator_families)}. Judge families: "
        + ", ".join(sorted({j.family for j in r.judges}))
        + ".",
        "",
    ]
    out += [f"- {n}" for n in r.notes] + ([""] if r.notes else [])
    for b in r.by_judge.values():
        out += _block(b)
    for a in r.agreement:
        if a.scope in ("all", "natural", "motivated"):
            k = "undefined" if a.kappa is None else f"{a.kappa:.2f}"
            out.append(
                f"- Agreement {' vs '.join(a.judges)}, {a.task} ({a.scope}): "
                f"{_prop(a.agreement)}, Cohen's kappa {k}"
            )
    n_arcs = len({f.arc_id for f in r.failing_arcs})
    out += [
        "",
        f"{n_arcs} arc(s) have a failing realism or recovery verdict; they are flagged, "
        "not removed, unless the export used --drop-failing. Full report with confusion "
        "matrices and rationales: `amg report validation`.",
        "",
    ]
    return "\n".join(out)


def card_section(ws: Workspace, splits: list[str]) -> str:
    return card_markdown(validation_report(ws, splits))


def failing_arcs(ws: Workspace, splits: list[str]) -> dict[str, list[str]]:
    """arc id -> why it fails realism or recovery (any judge of the latest validation run)."""
    out: dict[str, list[str]] = {}
    for f in validation_report(ws, splits).failing_arcs:
        if f.check == "recovery":
            why = f"recovery ({f.judge}): judged {f.verdict}, intended {f.intended}"
        else:
            why = f"{f.check} ({f.judge}): {f.rationale}"
        out.setdefault(f.arc_id, []).append(why)
    return out


def diversity_section(ws: Workspace, splits: list[str]) -> str:
    """Measured repetition and reply relevance of the arcs, and what they do not measure."""
    arcs = [a for s in splits for a in ws.arcs(s)]
    if not arcs:
        return ""
    from ..design.stored import workspace_design
    from .judging import judged_together

    sets = judged_together(workspace_design(ws), [(a, "") for a in arcs])
    groups = [sorted({a.spec.split for a, _ in group}) for group in sets]
    d = measure(arcs, groups=groups)
    counted = (
        (
            "; sentence repeats counted within each set the repetition check judges together: "
            + " / ".join(", ".join(g) for g in groups)
        )
        if len(groups) > 1
        else ""
    )
    out = [
        "## Measured diversity",
        "",
        f"Over the {d.arcs} arcs of {', '.join(splits)} in the workspace (before any --drop-failing; "
        "`benchmarks/offline_diversity.py --exports OUT` prints the same figures for any export"
        f"{counted}):",
        "",
    ]
    out += card_lines(d)
    out += [
        "",
        "These figures count repeats and shared words; they do not measure whether the arcs "
        "read as natural chat. " + NATURALNESS_HOW,
        "",
    ]
    return "\n".join(out)
