"""The Hugging Face style dataset card: YAML header plus how the data was built."""

from __future__ import annotations

from collections import Counter

from ..schema import Arc, CheckResult

LICENSE = "mit"
CITATION = ("Sharma, Fowlersmith, Maamari. AgentMemGate: Addressing Speculation Contamination in "
            "Conversational Assistant Memory. arXiv:2610.07707.")


def _yaml_header(configs: list[tuple[str, str]]) -> str:
    lines = ["---", f"license: {LICENSE}", "language:", "- en", "task_categories:",
             "- text-classification", "- question-answering", "tags:", "- memory",
             "- speculation-contamination", "- synthetic", "pretty_name: AgentMemGate plan-to-outcome arcs",
             "configs:"]
    for name, path in configs:
        lines += [f"- config_name: {name}", "  data_files:", "  - split: test", f"    path: {path}"]
    lines.append("---")
    return "\n".join(lines)


def cell_counts(arcs: list[Arc]) -> dict[str, int]:
    c = Counter(f"{a.spec.factor}/{a.spec.level}" for a in arcs)
    return dict(sorted(c.items()))


def card(split_arcs: dict[str, list[Arc]], configs: list[tuple[str, str]],
         checks: list[CheckResult], failures: list[dict], extra_sections: list[str] | None = None,
         dropped: dict[str, list[str]] | None = None) -> str:
    """Markdown card for the given splits; ``configs`` are (name, data file path) pairs."""
    arcs = [a for v in split_arcs.values() for a in v]
    generators = sorted({(a.provenance.generator, a.provenance.generator_kind, a.provenance.prompt_sha256)
                         for a in arcs})
    seeds = sorted({a.provenance.seed for a in arcs})
    out = [_yaml_header(configs), "",
           "# AgentMemGate plan-to-outcome arcs", "",
           "Multi-session conversations in which a user states a current value, states a plan to "
           "change it, and the plan comes true, is abandoned, or stays open; built to measure "
           "*speculation contamination* (a plan stored in assistant memory as current fact), "
           f"following {CITATION}", ""]
    if any(a.spec.correction is not None for a in arcs):
        out += ["The `corrections` split is the paper's second control for non-speculative "
                "updates (Section 6.1): the user states a value (or reports a completed change) "
                "and later says, with corrective intent, that it was wrong when said; a gate must "
                "update the value exactly as the same system without the gate does. Its cells "
                "are what is corrected (the initial value / a reported change) x where (same "
                "session / a later one) x whether a corrective marker such as 'actually' is "
                "used.", ""]
    out += ["## How it was built", ""]
    for gen, kind, sha in generators:
        out.append(f"- Generator: `{gen}` ({kind}); prompt/phrase-bank sha256 `{sha}`")
    if any(a.provenance.generator == "offline" for a in arcs):
        out.append("- The offline renderer is a deterministic template grammar (CheckList-style), "
                   "not a language model: its conversations are template realizations of the "
                   "paper's design, not LLM-written chat.")
    out.append(f"- Seed: {', '.join(map(str, seeds)) or 'n/a'} (the same seed reproduces these files byte for byte)")
    out.append(f"- Toolkit version: {arcs[0].provenance.toolkit_version if arcs else 'n/a'}")
    out += ["", "## Counts per cell", "", "| split | factor/level | arcs |", "|---|---|---|"]
    for split, items in split_arcs.items():
        for cell, n in cell_counts(items).items():
            out.append(f"| {split} | {cell} | {n} |")
        out.append(f"| {split} | **total** | **{len(items)}** |")
    out += ["", "## Structural checks", ""]
    by_check: dict[str, list[bool]] = {}
    for r in checks:
        if r.check.startswith("structure."):
            by_check.setdefault(r.check, []).append(r.passed)
    if by_check:
        out += ["| check | passed | n |", "|---|---|---|"]
        for name, results in sorted(by_check.items()):
            out.append(f"| {name} | {sum(results)} | {len(results)} |")
    else:
        out.append("No checks were run.")
    if failures:
        out += ["", f"{len(failures)} arc(s) failed to render and are not included:", ""]
        out += [f"- `{f['id']}`: {f['reason']}" for f in failures]
    if dropped:
        n = len(dropped)
        out += ["", f"{n} arc(s) were dropped from this export for failing validation (--drop-failing):", ""]
        out += [f"- `{arc_id}`: {'; '.join(reasons)}" for arc_id, reasons in sorted(dropped.items())]
    for section in extra_sections or []:
        out += ["", section.rstrip()]
    out += ["", "## Fields", "",
            "`data.jsonl`: one arc per line (id, split, factor, level, outcome, field, initial_value, "
            "plan_value, sessions, initial_turn, plan_turn, outcome_turn, expected_value_after_session, "
            "provenance). Session and turn indexes are 0-based. `turns.parquet`: one row per turn. "
            "Ids are opaque (they encode no split, factor, level or outcome) and rows come in a "
            "seeded shuffled order: read the labels from their fields."]
    if any(a.spec.correction is not None for a in arcs):
        out += ["", "Correction arcs (split `corrections`) also have `correction` (target: the "
                "corrected statement is the `initial` value or a reported `change`; timing: "
                "`same` or `later` session; marker: `marked` or `unmarked`; `wrong_value`, the "
                "value the corrected statement gave; `value`, the corrected one) and "
                "`correction_turn` (also their `outcome_turn`; for a corrected initial value "
                "also their `plan_turn`). `expected_value_after_session` gives the stated value "
                "until the correction's session and the corrected value from it on."]
    out += ["", "## License", "", f"Released under the {LICENSE.upper()} license, as the toolkit.", ""]
    return "\n".join(out)
