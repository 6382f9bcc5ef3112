"""The Hugging Face style dataset card: YAML header plus how the data was built."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..schema import Arc, CheckResult

if TYPE_CHECKING:
    from .provenance import Origin

LICENSE = "mit"
CITATION = (
    "Sharma, Fowlersmith, Maamari. AgentMemGate: Addressing Speculation Contamination in "
    "Conversational Assistant Memory. arXiv:2610.07707."
)


def _yaml_header(configs: list[tuple[str, str]]) -> str:
    lines = [
        "---",
        f"license: {LICENSE}",
        "language:",
        "- en",
        "task_categories:",
        "- text-classification",
        "- question-answering",
        "tags:",
        "- memory",
        "- speculation-contamination",
        "- synthetic",
        "pretty_name: AgentMemGate plan-to-outcome arcs",
        "configs:",
    ]
    for name, path in configs:
        lines += [f"- config_name: {name}", "  data_files:", "  - split: test", f"    path: {path}"]
    lines.append("---")
    return "\n".join(lines)


def _of_design(origin: Origin | None) -> str:
    """Which design the offline arcs realize (nothing when only imported arcs say so)."""
    if origin is None or origin.design is None or not origin.plans:
        return ""
    d = origin.design
    return " of the paper's design" if d.builtin and d.name == "paper" else f" of design `{d.name}`"


def _origin_lines(origin: Origin, seeds: list[int]) -> list[str]:
    """The design, catalog, seed, --n-per-cell and imports, and what rebuilds the data files."""
    out: list[str] = []
    d = origin.design
    if d is not None and origin.plans:
        out.append(
            f"- Design: `{d.name}`{' (built in)' if d.builtin else ''}; sha256 of its files:"
        )
        out += [f"  - `{rel}` `{sha}`" for rel, sha in d.files.items()]
        out.append(
            f"- Catalog: the {d.domains} domain files the design draws from"
            f"{' (built in)' if d.catalog_builtin else ''}, sha256 `{d.catalog_sha256}`"
        )
    plans = origin.plans
    if plans:
        kinds = {(p.seed, p.n_per_cell) for p in plans.values()}
        if len(kinds) == 1:
            p = next(iter(plans.values()))
            out.append(f"- Seed: {p.seed}; `--n-per-cell`: {_n(p.n_per_cell)}")
        else:
            out.append(
                "- Seed and `--n-per-cell` per split: "
                + ", ".join(f"{s} {p.seed} ({_n(p.n_per_cell)})" for s, p in plans.items())
            )
    elif seeds:
        out.append(f"- Seed: {', '.join(map(str, seeds))} (from the arcs' provenance)")
    for i in origin.imports:
        out.append(
            f"- Imported with `amg import`: {i.arcs} arc{'s' if i.arcs != 1 else ''} from "
            f"`{i.source}` ("
            + (f"sha256 `{i.sha256}`" if i.sha256 else "sha256 not recorded")
            + ")"
        )
    if origin.commands:
        cmds = " then ".join(f"`{c}`" for c in origin.commands)
        where = []
        if d is not None and not d.builtin:
            where.append(f"DIR is a folder holding design `{d.name}` with the files above")
        if d is not None and not d.catalog_builtin:
            where.append("CATALOG a folder holding the domain files of the catalog above")
        out.append(
            f"- Reproduce: with toolkit {origin.toolkit_version}, {cmds} rebuilds these arcs "
            "(data.jsonl and turns.parquet) byte for byte"
            + (f" ({'; '.join(where)})" if where else "")
            + "."
        )
    else:
        out.append("- Not reproducible from a seed: " + "; ".join(origin.not_reproducible) + ".")
    return out


def _n(n: int | None) -> str:
    return "not set (the design's cell sizes)" if n is None else str(n)


def cell_counts(arcs: list[Arc]) -> dict[str, int]:
    """Arcs per cell, ``factor/level``, with ``(outcome)`` where one level has cells of several
    outcomes (a structure factor's level with came-true and open plans, say)."""
    c = Counter((a.spec.factor, a.spec.level, a.spec.outcome) for a in arcs)
    outcomes = Counter((f, lv) for f, lv, _ in c)
    return dict(
        sorted(
            (f"{f}/{lv}" + (f" ({o})" if outcomes[(f, lv)] > 1 else ""), n)
            for (f, lv, o), n in c.items()
        )
    )


def card(
    split_arcs: dict[str, list[Arc]],
    configs: list[tuple[str, str]],
    checks: list[CheckResult],
    failures: list[dict],
    extra_sections: list[str] | None = None,
    dropped: dict[str, list[str]] | None = None,
    origin: Origin | None = None,
) -> str:
    """Markdown card for the given splits; ``configs`` are (name, data file path) pairs;
    ``origin`` what the arcs were built from and what rebuilds them."""
    arcs = [a for v in split_arcs.values() for a in v]
    generators = sorted(
        {
            (a.provenance.generator, a.provenance.generator_kind, a.provenance.prompt_sha256)
            for a in arcs
        }
    )
    seeds = sorted({a.provenance.seed for a in arcs})
    out = [
        _yaml_header(configs),
        "",
        "# AgentMemGate plan-to-outcome arcs",
        "",
        "Multi-session conversations in which a user states a current value, states a plan to "
        "change it, and the plan comes true, is abandoned, or stays open; built to measure "
        "*speculation contamination* (a plan stored in assistant memory as current fact), "
        f"following {CITATION}",
        "",
    ]
    if any(a.spec.correction is not None for a in arcs):
        out += [
            "The `corrections` split is the paper's second control for non-speculative "
            "updates (Section 6.1): the user states a value (or reports a completed change) "
            "and later says, with corrective intent, that it was wrong when said; a gate must "
            "update the value exactly as the same system without the gate does. Its cells "
            "are what is corrected (the initial value / a reported change) x where (same "
            "session / a later one) x whether a corrective marker such as 'actually' is "
            "used.",
            "",
        ]
    out += ["## How it was built", ""]
    for gen, kind, sha in generators:
        out.append(
            f"- Generator: `{gen}` ({kind})"
            + (f"; prompt/phrase-bank sha256 `{sha}`" if sha else "")
        )
    if any(a.provenance.generator == "offline" for a in arcs):
        out.append(
            "- The offline renderer is a deterministic template grammar (CheckList-style), "
            "not a language model: its conversations are template realizations"
            + _of_design(origin)
            + ", not LLM-written chat."
        )
    if origin is None:
        out.append(f"- Seed: {', '.join(map(str, seeds)) or 'n/a'}")
    else:  # an imported arc without provenance has no seed to tell
        from ..generate.importer import IMPORTED_GENERATOR

        out += _origin_lines(
            origin,
            sorted(
                {a.provenance.seed for a in arcs if a.provenance.generator != IMPORTED_GENERATOR}
            ),
        )
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
        out += [
            "",
            f"{n} arc(s) were dropped from this export for failing validation (--drop-failing):",
            "",
        ]
        out += [
            f"- `{arc_id}`: {'; '.join(reasons)}" for arc_id, reasons in sorted(dropped.items())
        ]
    for section in extra_sections or []:
        out += ["", section.rstrip()]
    out += [
        "",
        "## Fields",
        "",
        "`data.jsonl`: one arc per line (id, split, factor, level, outcome, field, initial_value, "
        "plan_value, sessions, initial_turn, plan_turn, outcome_turn, expected_value_after_session, "
        "provenance). Session and turn indexes are 0-based. `turns.parquet`: one row per turn. "
        "Ids are opaque (they encode no split, factor, level or outcome) and rows come in a "
        "seeded shuffled order: read the labels from their fields.",
    ]
    if any(a.spec.correction is not None for a in arcs):
        out += [
            "",
            "Correction arcs (split `corrections`) also have `correction` (target: the "
            "corrected statement is the `initial` value or a reported `change`; timing: "
            "`same` or `later` session; marker: `marked` or `unmarked`; `wrong_value`, the "
            "value the corrected statement gave; `value`, the corrected one) and "
            "`correction_turn` (also their `outcome_turn`; for a corrected initial value "
            "also their `plan_turn`). `expected_value_after_session` gives the stated value "
            "until the correction's session and the corrected value from it on.",
        ]
    out += [
        "",
        "## License",
        "",
        f"Released under the {LICENSE.upper()} license, as the toolkit.",
        "",
    ]
    return "\n".join(out)
