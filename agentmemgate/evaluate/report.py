"""``amg report eval``: the paper's tables (2-7), figures (2, 3) and paired differences, for
whatever systems and splits were run, from the stored per-arc scores.

JSON layout (stable for scripts)::

    {"systems": {NAME: {SPLIT: {MEASURE: {"k", "n", "value", "ci_low", "ci_high"},
                                "by_level": {LEVEL: {MEASURE: {...}}}}}},
     "differences": [{"kind", "system", "baseline", "split", "measure", "n", "value",
                      "ci_low", "ci_high", "n_gained", "n_lost", "resamples", "seed"}],
     "corrections_control": {"pairs": [{"system", "ungated_twin", "same_end": {k, n, ...},
                                        "runs", "differing_arcs"}], "pooled": {...} | null,
                             "never_valid": {NAME: {k, n, ...}}},  (absent: no correction arcs)
     "meta": {...}}

``corrections_control`` is the paper's second control for non-speculative updates (Section
6.1): over the arcs with an explicit correction that a gated system and its ungated twin were
both scored on, in how many both end with the same value (up to case and punctuation). One arc
is one comparison of two runs, so ``runs`` = 2 x n; ``pooled`` adds the pairs' counts.

Natural sets (``amg eval run --natural SET``) sit beside the splits as ``SYSTEM -> "natural:SET"
-> {"task_accuracy": {...}}``, their gate-on minus gate-off differences in ``differences`` (split
``natural:SET``, ``clusters``: conversations resampled) and their provenance in
``meta.natural[SET]``.

A measure that does not apply to a system x split is absent. Values are fractions; the Markdown
shows percent. Reports are written atomically.

This module computes the report (``compute_report``) and writes its files (``write_report``);
``report_models`` holds what it computes, ``_report_md`` renders the Markdown and ``_plots`` the
figures; ``--html`` also writes that Markdown as one self-contained page (``report_html``).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ..design import Design, paper_design
from ..design.stored import workspace_design
from ..errors import BadInput
from ..outputs import writable
from ..report_html import write_report_html
from ..suggest import did_you_mean
from ..validate.store import current_arc_shas
from ..workspace import Workspace
from . import counted, store
from ._files import write_text_atomic
from ._plots import figures
from ._report_md import report_markdown, split_title
from .aggregate import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    DIFFERENCE_MEASURES,
    Difference,
    paired_difference,
    proportion,
    split_block,
)
from .explain import explanations
from .measures import ArcScore
from .repeats import drop_repeats, repeat_runs, repeats_block
from .report_models import (
    CorrectionPair,
    CorrectionsControl,
    EvalReport,
    ReportMeta,
    SystemMeta,
    split_order,
)
from .summary import summary_rows
from .systems import DEFAULT_SYSTEMS, PAPER_SYSTEMS, twin_name, variant_base


def _order(names: list[str]) -> list[str]:
    rank = {
        n: i
        for i, n in enumerate(
            PAPER_SYSTEMS + tuple(n for n in DEFAULT_SYSTEMS if n not in PAPER_SYSTEMS)
        )
    }
    return sorted(
        names, key=lambda n: (n.partition("@")[2], rank.get(n.partition("@")[0], len(rank)), n)
    )


def compute_report(
    ws: Workspace,
    splits: list[str] | None = None,
    judge: str | None = None,
    systems_wanted: list[str] | None = None,
    with_differences: bool = True,
) -> EvalReport:
    """Aggregate the stored scores of every system's latest run (and every answer set)."""
    design = workspace_design(ws)
    splits = list(splits or design.split_names)
    systems = store.latest_systems(ws)
    answer_sets = store.answer_sets(ws)
    if systems_wanted:
        unknown = [n for n in systems_wanted if n not in systems and n not in answer_sets]
        if unknown:
            have = sorted(systems) + sorted(answer_sets)
            raise BadInput(
                f"No evaluation results for system {unknown[0]!r}; systems with results: "
                f"{', '.join(have) or 'none'}{did_you_mean(unknown[0], have)}"
            )
        systems = {n: r for n, r in systems.items() if n in systems_wanted}
        answer_sets = {n: r for n, r in answer_sets.items() if n in systems_wanted}
    if not systems and not answer_sets:
        raise BadInput(
            f"No evaluation results in workspace {str(ws.path)!r}: run `amg eval run` "
            "(or score answers with `amg eval answers FILE --name NAME`)"
        )
    counting = counted.counting_judge(ws, judge)
    judge = counting.spec
    eq_key, ans_key = counting.key("equivalence"), counting.key("answers")
    eq_row, ans_row = counting.rows.get("equivalence"), counting.rows.get("answers")
    if eq_row is None and ans_row is None:
        used = sorted({j["spec"] for j in store.judges(ws)})
        raise BadInput(
            f"No results scored by judge {judge!r}; judges used: {', '.join(used)} "
            "(re-score with `amg eval run --judge ...`)"
        )
    current = current_arc_shas(ws, splits)
    results: dict[str, dict[str, dict]] = {}
    per_arc: dict[str, dict[str, dict[str, ArcScore]]] = {}
    metas: dict[str, SystemMeta] = {}
    fails: dict[str, int] = {}
    for f in store.failures(
        ws, [r["run_key"] for r in systems.values()] + [r["run_key"] for r in answer_sets.values()]
    ):
        fails[f[0]] = fails.get(f[0], 0) + 1
    for name, row in systems.items():
        if row.get("kind") == "answering":
            continue  # an answering system: reported from its answer set below
        info = row["info"]
        got = counted.scores(ws, row["run_key"], eq_key, current) if eq_key else []
        metas[name] = SystemMeta(
            name=name,
            kind="component",
            description=info.description,
            gated=info.gated,
            ungated_twin=twin_name(name, info.ungated_twin),
            components=info.components,
            offline=info.offline,
            oracle=info.oracle,
            model=row["model"],
            arcs_scored=len(got),
            failures=fails.get(name, 0),
        )
        _collect(name, got, results, per_arc, design)
    for name, row in answer_sets.items():
        got = counted.scores(ws, row["run_key"], ans_key, current) if ans_key else []
        if row.get("kind") == "system" and (srow := systems.get(name)) is not None:
            info = srow["info"]
            metas[name] = SystemMeta(
                name=name,
                kind="product",
                description=info.description,
                components=info.components,
                offline=info.offline,
                model=srow["model"],
                arcs_scored=len(got),
                failures=fails.get(name, 0),
                provenance=srow["options"],
            )
            _collect(name, got, results, per_arc, design)
            continue
        metas[name] = SystemMeta(
            name=name,
            kind="answers",
            description=f"black-box answers from {Path(row['path']).name} "
            f"(sha256 {row['sha256'][:12]})",
            arcs_scored=len(got),
        )
        _collect(name, got, results, per_arc, design)
    runs = repeat_runs(metas)  # runs 2..N of `--repeat`: their spread, then out of the tables
    repeats = repeats_block(results, runs)
    drop_repeats(runs, metas, results, per_arc)
    diffs = differences(per_arc, metas, design) if with_differences else []
    natural = _natural_results(ws, systems, eq_key, metas, results, diffs, with_differences)
    if not natural and not any(m.arcs_scored for m in metas.values()):
        # an empty report would read as if every system had scored nothing
        every = set(splits) == set(design.split_names)
        command = "amg eval run" + "".join(f" --split {s}" for s in ([] if every else splits))
        raise BadInput(
            f"No system has scores on the current arcs of {', '.join(splits)} with judge "
            f"{judge!r}: run `{command}` (stored results are re-used)"
        )
    arcs = {
        s: sum(1 for _ in ws.db.execute("select 1 from arcs where split = ?", [s])) for s in splits
    }
    judge_info = {
        "spec": judge,
        "family": (eq_row or ans_row)["family"],
        "heuristic": bool((eq_row or ans_row)["heuristic"]),
        "equivalence_rubric": eq_row["rubric"] if eq_row else None,
        "answer_rubric": ans_row["answer_rubric"] if ans_row else None,
    }
    meta = ReportMeta(
        generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        judge=judge_info,
        splits=splits,
        arcs=arcs,
        systems={n: metas[n] for n in _order(list(metas))},
        bootstrap={"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED},
        notes=notes(metas, judge_info) + unscored_notes(per_arc, arcs),
        model_calls=_model_calls(ws),
        natural=natural,
    )
    order = _order(list(metas))
    ordered = {n: results.get(n, {}) for n in order}
    report = EvalReport(
        systems=ordered,
        differences=diffs,
        meta=meta,
        corrections_control=corrections_control(per_arc, metas),
        repeats=repeats,
        summary=summary_rows(per_arc, {n: m.kind for n, m in metas.items()}, order),
        explanations=explanations(
            ordered,
            per_arc,
            diffs,
            order,
            {n for n, m in metas.items() if m.kind == "component"},
            *_trace_readers(ws, systems),
            {s: split_title(design, s) for s in splits},
        )
        if with_differences
        else [],
    )
    report._design = design
    return report


def _trace_readers(ws: Workspace, systems: dict[str, dict]):
    """(system, arc id) -> stored trace, and arc id -> truth, read once each (for the "why"
    notes, which read only the arcs they explain)."""
    from ..schema import Arc
    from .truth import truth_of

    traces: dict[tuple[str, str], object] = {}
    truths: dict[str, object] = {}

    def trace(name: str, arc_id: str):
        k = (name, arc_id)
        if k not in traces:
            row = systems.get(name)
            traces[k] = store.load_trace(ws, row["run_key"], arc_id) if row else None
        return traces[k]

    def truth(arc_id: str):
        if arc_id not in truths:
            got = ws.db.execute("select json from arcs where id = ?", [arc_id]).fetchone()
            truths[arc_id] = truth_of(Arc.model_validate_json(got[0])) if got else None
        return truths[arc_id]

    return trace, truth


def corrections_control(
    per_arc: dict[str, dict[str, dict[str, ArcScore]]], metas: dict[str, SystemMeta]
) -> CorrectionsControl:
    """For each gated system with its ungated twin: of the correction arcs both were scored on,
    those where both end with the same value (``same_value``: up to case, punctuation and
    spacing; two empty reads are the same)."""
    from ..memory.profile_store import same_value

    def ends(name: str) -> dict[str, str | None]:
        return {
            a: sc.correction.end
            for split in per_arc.get(name, {}).values()
            for a, sc in split.items()
            if sc.correction is not None
        }

    pairs: list[CorrectionPair] = []
    k_all = n_all = 0
    for name in _order(list(metas)):
        m = metas[name]
        if (
            m.kind != "component"
            or not m.gated
            or not m.ungated_twin
            or m.ungated_twin not in per_arc
        ):
            continue
        mine, theirs = ends(name), ends(m.ungated_twin)
        both = [a for a in mine if a in theirs]
        if not both:
            continue
        same = [same_value(mine[a], theirs[a]) for a in both]
        pairs.append(
            CorrectionPair(
                system=name,
                ungated_twin=m.ungated_twin,
                same_end=proportion(same),
                runs=2 * len(both),
                differing_arcs=[a for a, ok in zip(both, same) if not ok][:10],
            )
        )
        k_all, n_all = k_all + sum(same), n_all + len(same)
    pooled = proportion([True] * k_all + [False] * (n_all - k_all)) if n_all else None
    never_valid = {}
    for name in _order(list(metas)):
        reads = [
            sc.correction.never_valid
            for split in per_arc.get(name, {}).values()
            for sc in split.values()
            if sc.correction is not None
        ]
        if reads and metas[name].kind == "component":
            never_valid[name] = proportion(reads)
    return CorrectionsControl(pairs=pairs, pooled=pooled, never_valid=never_valid)


def unscored_notes(per_arc: dict[str, dict[str, dict]], arcs: dict[str, int]) -> list[str]:
    """A note per system that has results in a split but not for all of its arcs (arcs added or
    re-rendered since its run): its tables then count fewer arcs than the split has."""
    by_gap: dict[str, list[str]] = {}
    for name, by_split in per_arc.items():
        missing = {
            sp: arcs[sp] - len(scores)
            for sp, scores in by_split.items()
            if sp in arcs and len(scores) < arcs[sp]
        }
        if missing:
            where = ", ".join(f"{n} of {arcs[sp]} arcs in {sp}" for sp, n in missing.items())
            by_gap.setdefault(where, []).append(name)
    return [
        f"{', '.join(names)} {'has' if len(names) == 1 else 'have'} no result yet for {where} "
        "(arcs new or changed since the run): run `amg eval run` again to score them"
        for where, names in by_gap.items()
    ]


def _collect(name, got, results, per_arc, design: Design):
    by_split: dict[str, list[ArcScore]] = {}
    for s in got:
        by_split.setdefault(s.split, []).append(s)
    results[name] = {sp: split_block(by_split[sp]) for sp in split_order(design, by_split)}
    per_arc[name] = {sp: {s.arc_id: s for s in ss} for sp, ss in by_split.items()}


def _natural_results(
    ws: Workspace,
    systems: dict[str, dict],
    eq_key: str | None,
    metas: dict[str, SystemMeta],
    results: dict[str, dict[str, dict]],
    diffs: list[Difference],
    with_differences: bool,
) -> dict[str, dict]:
    """Blocks ``natural:SET`` (task accuracy) per component system, and the paired gate-on minus
    gate-off difference per extraction style with one bootstrap cluster per conversation."""
    from ..corpora.natural import item_shas, list_natural_sets
    from .natural import split_of

    out: dict[str, dict] = {}
    if eq_key is None:
        return out
    for info in list_natural_sets(ws):
        split = split_of(info.name)
        shas = item_shas(ws, info.name)
        keys = {f"{split}:{i}": v for i, v in shas.items()}
        current = {k: sha for k, (sha, _) in keys.items()}
        clusters = {k: conv for k, (_, conv) in keys.items()}
        per_system: dict[str, dict[str, ArcScore]] = {}
        for name, row in systems.items():
            got = [
                g for g in counted.scores(ws, row["run_key"], eq_key, current) if g.split == split
            ]
            if got and name not in metas:  # an answering system run on natural sets only
                info = row["info"]
                metas[name] = SystemMeta(
                    name=name,
                    kind="product",
                    description=info.description,
                    offline=info.offline,
                    model=row["model"],
                )
            if got:
                per_system[name] = {g.arc_id: g for g in got}
                results.setdefault(name, {})[split] = {
                    "task_accuracy": proportion(g.values["task_accuracy"] for g in got)
                }
        if not per_system:
            continue
        out[info.name] = {
            **info.model_dump(
                include={
                    "corpus",
                    "variant",
                    "license",
                    "rule",
                    "field_rule",
                    "source_path",
                    "source_sha256",
                    "items",
                    "fielded",
                    "refused",
                }
            ),
            "conversations": len(set(clusters.values())),
            "systems": sorted(per_system),
        }
        if not with_differences:
            continue
        for name in _order(list(per_system)):
            m = metas[name]
            if m.kind == "component" and m.ungated_twin in per_system:
                d = paired_difference(
                    "gated_minus_ungated" if m.gated else "minus_ungated_twin",
                    name,
                    m.ungated_twin,
                    split,
                    "task_accuracy",
                    per_system[name],
                    per_system[m.ungated_twin],
                    clusters=clusters,
                )
                if d is not None:
                    diffs.append(d)
    return out


def differences(
    per_arc: dict[str, dict[str, dict[str, ArcScore]]],
    metas: dict[str, SystemMeta],
    design: Design | None = None,
) -> list[Difference]:
    """Gated minus its ungated twin, and each bracketed variant minus its base, per split (in the
    design's split order)."""
    design = design or paper_design()
    splits = split_order(design, {s for by_split in per_arc.values() for s in by_split})
    pairs: list[tuple[str, str, str]] = []
    for name, m in metas.items():
        if m.kind == "component" and m.ungated_twin and m.ungated_twin in per_arc:
            pairs.append(
                ("gated_minus_ungated" if m.gated else "minus_ungated_twin", name, m.ungated_twin)
            )
        base = variant_base(name)
        if base and base in per_arc and base != m.ungated_twin:
            pairs.append(("variant_minus_base", name, base))
    out: list[Difference] = []
    for kind, a, b in sorted(pairs, key=lambda p: (_order(list(metas)).index(p[1]), p[0])):
        for split in splits:
            sa, sb = per_arc[a].get(split), per_arc[b].get(split)
            if not sa or not sb:
                continue
            for measure in DIFFERENCE_MEASURES:
                if (d := paired_difference(kind, a, b, split, measure, sa, sb)) is not None:
                    out.append(d)
    return out


def notes(metas: dict[str, SystemMeta], judge: dict) -> list[str]:
    out = []
    offline = [n for n, m in metas.items() if m.kind == "component" and m.offline]
    if offline:
        parts: dict[str, list[str]] = {}
        for n in offline:
            for stage, impl in metas[n].components.items():
                if impl not in parts.setdefault(stage, []) and impl != "off":
                    parts[stage].append(impl)
        out.append(
            f"Offline components (documented rules, not language models) in {len(offline)} "
            f"system(s) ({', '.join(offline)}): "
            + "; ".join(f"{stage} {', '.join(impls)}" for stage, impls in parts.items() if impls)
            + ". These numbers are what the rules reach on these arcs, not what the "
            "paper's LLM pipelines reach."
        )
    oracles = [n for n, m in metas.items() if m.oracle]
    if oracles:
        out.append(
            "Oracle ablations (a component reads the ground-truth values): "
            + ", ".join(oracles)
            + "."
        )
    llm = [n for n, m in metas.items() if m.kind == "component" and not m.offline]
    if llm:
        out.append("LLM components: " + "; ".join(f"{n} ({metas[n].model})" for n in llm) + ".")
    kind = "heuristic rules, not a model" if judge["heuristic"] else "LLM"
    out.append(
        f"Equivalence judge: {judge['spec']} ({kind}, family {judge['family']}"
        + (f", {judge['equivalence_rubric']}" if judge.get("equivalence_rubric") else "")
        + ")."
    )
    if any(m.kind in ("answers", "product") for m in metas.values()):
        out.append(
            f"Answer judge: {judge['spec']} ({kind}"
            + (f", {judge['answer_rubric']}" if judge.get("answer_rubric") else "")
            + ")."
        )
        if judge.get("answer_rubric"):
            from ..answer_judge.accuracy import accuracy_line

            out.append(accuracy_line(judge["spec"], judge["answer_rubric"]))
    products = [n for n, m in metas.items() if m.kind == "product"]
    if products:
        out.append(
            "Answering systems run by `amg eval run` (their own storage and retrieval, then "
            "one answer call; whole-system measurements, not attributable to one stage): "
            + "; ".join(f"{n} ({provenance_line(metas[n].provenance)})" for n in products)
            + "."
        )
    failed = {n: m.failures for n, m in metas.items() if m.failures}
    if failed:
        out.append(
            "Arcs with a failed run or scoring (not counted; a re-run retries them): "
            + ", ".join(f"{n} {k}" for n, k in failed.items())
            + "."
        )
    return out


def provenance_line(p: dict) -> str:
    """A product's provenance in one phrase: library and version, configuration, prompt hash."""
    parts = [f"{p.get('library')} {p.get('library_version')}"] if p.get("library") else []
    for k in ("model", "embedder", "dimensions", "store"):
        if p.get(k) not in (None, "", "none"):
            parts.append(f"{k} {p[k]}")
    if p.get("answer_prompt"):
        parts.append(
            f"answer prompt {p['answer_prompt']} sha256 "
            f"{str(p.get('answer_prompt_sha256', ''))[:12]}"
        )
    return ", ".join(parts) or "no provenance recorded"


EVAL_COMMANDS = ("amg eval run", "amg eval answers")


def _model_calls(ws: Workspace) -> dict | None:
    from ..llm.usage_log import usage_rows

    report = usage_rows(ws, commands=EVAL_COMMANDS)
    return report if report["rows"] else None


def write_report(r: EvalReport, out: Path, html: bool = False) -> list[Path]:
    """``eval.md``, ``eval.json`` (and with ``html`` the self-contained ``eval.html``), then the
    figures."""
    writable(out)
    pngs = figures(r, out)
    text = report_markdown(r, images=True)
    md = write_text_atomic(out / "eval.md", text)
    js = write_text_atomic(out / "eval.json", json.dumps(r.to_json(), indent=2) + "\n")
    page = [write_report_html(text, out / "eval.html")] if html else []
    return [md, js] + page + pngs


def save_eval_report(
    workspace: str | Path,
    splits: list[str] | None = None,
    judge: str | None = None,
    out_dir: str | Path | None = None,
    systems: list[str] | None = None,
    html: bool = False,
) -> tuple[EvalReport, list[Path]]:
    """``amg report eval``: the paper's Tables 2-7 for the scores that count (each system's
    latest run, scored by ``judge`` or the latest judge, on arcs whose text is unchanged), written
    as ``eval.md``, ``eval.json``, the figures and with ``html`` ``eval.html`` into ``out_dir``
    (default: the workspace's ``reports/eval``). ``splits`` and ``systems`` narrow the report;
    returns the report and the files written."""
    ws = Workspace(workspace, create=False)
    r = compute_report(ws, splits, judge, systems)
    return r, write_report(r, Path(out_dir) if out_dir else ws.path / "reports" / "eval", html)
