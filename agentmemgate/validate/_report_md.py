"""The Markdown of a validation report (``validation.md``): the judges, blind recovery with
its confusion matrices, realism, inter-judge agreement, failing arcs and judge failures."""

from __future__ import annotations

import re

from ..stats import Proportion
from .judges import REALISM_CRITERIA
from .judges._realism import OFFLINE_REALISM_CHECKS
from .report_models import FactorRecovery, JudgeBlock, ValidationReport


def criterion_description(criterion: str, heuristic: bool) -> str:
    """What a realism criterion checks, as the judge that gave it defines it."""
    if heuristic and criterion in OFFLINE_REALISM_CHECKS:
        return OFFLINE_REALISM_CHECKS[criterion]
    return REALISM_CRITERIA.get(criterion, "")


def pct(p: Proportion) -> str:
    return p.fmt()


def _kappa(k: float | None) -> str:
    return "undefined" if k is None else f"{k:.2f}"


def confusion_table(f: FactorRecovery) -> list[str]:
    cols = [c for c in f.levels if any(f.confusion[i][c] for i in f.levels)] or f.levels
    rows = [i for i in f.levels if any(f.confusion[i].values())]
    out = ["| intended \\ recovered | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for i in rows:
        out.append(f"| {i} | " + " | ".join(str(f.confusion[i][c]) for c in cols) + " |")
    return out


def _scale(factor: str) -> str:
    """How the ordinal line names a factor ('hedge strength')."""
    return factor.replace("_", " ")


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()


def image_name(judge: str, factor: str) -> str:
    return f"confusion-{_slug(judge)}-{factor}.png"


def judge_block_markdown(b: JudgeBlock, images: bool = False, heading: str = "###") -> list[str]:
    j = b.judge
    kind = "heuristic" if j.heuristic else "LLM"
    out = [f"{heading} Judge `{j.spec}` (family {j.family}, {kind})", ""]
    if b.same_family:
        out += ["**Same family as the generator** (allowed with --allow-same-family).", ""]
    rec = b.recovery
    out += [f"Blind level recovery, all factors: {pct(rec.overall)}", ""]
    if rec.by_factor:
        out += ["| factor | recovered | n | 95% CI |", "|---|---|---|---|"]
        for name, f in rec.by_factor.items():
            p = Proportion(value=f.value, ci_low=f.ci_low, ci_high=f.ci_high, n=f.n, k=f.k)
            ci = (
                "undefined" if p.value is None else f"[{100 * p.ci_low:.1f}, {100 * p.ci_high:.1f}]"
            )
            val = "undefined" if p.value is None else f"{p.k}/{p.n} = {100 * p.value:.1f}%"
            out.append(f"| {name} | {val} | {p.n} | {ci} |")
        out.append("")
        for name, f in rec.by_factor.items():
            out += [
                f"Confusion matrix, {name} (rows: intended level; columns: recovered level):",
                "",
            ]
            out += confusion_table(f) + [""]
            if f.ordinal:
                out += [
                    f"Ordered {_scale(name)} levels ({' < '.join(f.ordinal.order)}): exact "
                    f"{pct(f.ordinal.exact)}; within one level {pct(f.ordinal.off_by_one)}",
                    "",
                ]
            if images:
                out += [f"![{name} confusion, {j.spec}]({image_name(j.spec, name)})", ""]
    if b.realism:
        out += [
            "| realism criterion | what it checks | pass rate | n | 95% CI |",
            "|---|---|---|---|---|",
        ]
        for c, p in b.realism.items():
            ci = (
                "undefined" if p.value is None else f"[{100 * p.ci_low:.1f}, {100 * p.ci_high:.1f}]"
            )
            val = "undefined" if p.value is None else f"{p.k}/{p.n} = {100 * p.value:.1f}%"
            out.append(f"| {c} | {criterion_description(c, j.heuristic)} | {val} | {p.n} | {ci} |")
        out.append("")
    nf = b.judge_failures
    if any(nf.values()):
        out += [
            f"Judge failures (no valid answer after retries; not counted as verdicts): "
            f"recovery {nf.get('recovery', 0)}, realism {nf.get('realism', 0)} arcs.",
            "",
        ]
    return out


def report_markdown(r: ValidationReport, images: bool = False, max_failing: int = 100) -> str:
    out = ["# Validation report", "", f"Splits: {', '.join(r.splits)}", ""]
    if not r.judges:
        return "\n".join(out + ["No judge verdicts stored for these arcs: run `amg validate`.", ""])
    out += ["| judge | family | kind |", "|---|---|---|"]
    out += [
        f"| `{j.spec}` | {j.family} | {'heuristic' if j.heuristic else 'LLM'} |" for j in r.judges
    ]
    if r.model_calls:
        from ..llm.usage_log import by_model_lines

        out += [
            "",
            "Judge model calls in this workspace (call log, `amg build` and `amg validate`):",
        ]
        out += [f"- {line}" for line in by_model_lines(r.model_calls)]
    out += ["", f"Generator families: {', '.join(r.generator_families) or 'none'}", ""]
    out += [f"- {n}" for n in r.notes] + ([""] if r.notes else [])
    for b in r.by_judge.values():
        out += judge_block_markdown(b, images=images, heading="##")
    if r.agreement:
        out += [
            "## Inter-judge agreement",
            "",
            "| judges | task | scope | agreement | Cohen's kappa |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {' vs '.join(a.judges)} | {a.task} | {a.scope} | {pct(a.agreement)} | {_kappa(a.kappa)} |"
            for a in r.agreement
        ]
        out.append("")
    out += ["## Failing arcs", ""]
    if not r.failing_arcs:
        out += ["None.", ""]
    for f in r.failing_arcs[:max_failing]:
        what = f"recovered {f.verdict}, intended {f.intended}" if f.check == "recovery" else "fail"
        out.append(f"- `{f.arc_id}` ({f.judge}, {f.check}: {what}): {f.rationale}")
    if len(r.failing_arcs) > max_failing:
        out.append(f"- ... and {len(r.failing_arcs) - max_failing} more (see validation.json)")
    if r.judge_failures:
        out += ["", "## Judge failures", ""]
        out += [
            f"- `{f.arc_id}` ({f.judge}, {f.task}): {f.error}"
            for f in r.judge_failures[:max_failing]
        ]
    return "\n".join(out).rstrip() + "\n"
