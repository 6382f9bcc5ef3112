"""The "Evaluation" section of the exported dataset card, when eval results exist.

Registered on ``exports.CARD_SECTIONS`` when ``agentmemgate.evaluate`` is imported (the CLI imports
it, so ``amg export`` and ``amg build`` see it); exports never imports this room.
"""

from __future__ import annotations

from ..errors import AmgError
from ..workspace import Workspace


def card_section(ws: Workspace, splits: list[str]) -> str:
    from ._report_md import cell, main_systems, products_table, split_title
    from .report import compute_report

    try:
        if not ws.db["eval_systems"].exists() or (
            not ws.db["eval_systems"].count and not ws.db["eval_answer_sets"].count
        ):
            return ""
        r = compute_report(ws, splits, with_differences=False)
    except AmgError:
        return ""
    cols = [n for n in main_systems(r) if any(r.systems.get(n, {}).get(s) for s in splits)]
    if not cols:
        return ""
    out = [
        "## Evaluation",
        "",
        "Memory systems scored on these arcs by the paper's protocol (`amg eval run`; "
        "black-box systems from their answers: products and baselines run by `amg eval run`, "
        "uploaded answers by `amg eval answers`). Proportions are k/n with "
        "95% Wilson intervals. Full tables, figures and paired differences: `amg report eval`.",
        "",
    ]
    out += [f"- {n}" for n in r.meta.notes] + [""]
    out += ["| measure (split) | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for split in splits:
        for m, label in (
            ("pending_contamination", "contamination while pending"),
            ("end_contamination", "contamination at end"),
            ("exposure", "exposed before the outcome (answers)"),
            ("task_accuracy", "task accuracy"),
            ("corrections_applied", "corrections applied"),
        ):
            if any(r.stat(n, split, m) for n in cols):
                out.append(
                    f"| {label} ({split_title(r.design, split)}) | "
                    + " | ".join(cell(r.stat(n, split, m)) for n in cols)
                    + " |"
                )
    if products := products_table(r, heading="###"):
        out += [""] + products
    pairs = [p for p in r.corrections_control.pairs if p.system in cols]
    if pairs:
        out += [
            "",
            "Explicit corrections, gate on vs gate off (the paper's control): arcs on "
            "which both end with the same value, of the correction arcs both were scored on "
            "(each arc is two runs):",
            "",
        ]
        out += [
            f"- {p.system} vs {p.ungated_twin}: {cell(p.same_end)} ({p.runs} runs)" for p in pairs
        ]
    return "\n".join(out).rstrip() + "\n"


def register() -> None:
    from ..exports import register_card_section

    register_card_section(card_section)


register()
