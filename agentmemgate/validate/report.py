"""The validation report: blind recovery, realism, inter-judge agreement, failing arcs.

``compute_report`` is pure (verdict rows in, report out) so every number is testable by hand;
``validation_report`` reads the workspace; ``write_report`` writes markdown, JSON and PNG heatmaps
(and with ``html`` the Markdown as one self-contained page, ``report_html``).
Proportions are fractions in [0, 1] with n, k and a 95% Wilson interval; statistics that are
undefined (no items, one label only) stay ``None``.

``report_models`` holds what this module computes; ``_report_md`` renders the Markdown and
``_plots`` the heatmaps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path

from ..design import Design, paper_design
from ..design.stored import workspace_design
from ..llm.servers import normalize_family
from ..stats import Proportion, cohen_kappa, wilson
from ..workspace import Workspace
from ._report_md import image_name, report_markdown
from .judges import OFFLINE_GENERATOR_FAMILY, OFFLINE_JUDGE_FAMILY, REALISM_CRITERIA, JudgeInfo
from .judges._realism import OFFLINE_REALISM_CHECKS
from .report_models import (
    Agreement,
    FactorRecovery,
    FailingArc,
    JudgeBlock,
    JudgeFailure,
    Ordinal,
    Recovery,
    ValidationReport,
)
from .store import VerdictRow, current_arc_shas, generator_families_of, latest_run, load_verdicts

NATURALNESS_HOW = (
    "Judge naturalness with an LLM judge of another family (`amg validate --judge "
    "anthropic:claude-sonnet-4-5`, or `--judge openai:MODEL --judge-base-url URL` for a local server) or a "
    "blind human audit (`amg audit create NAME --task realism --from arcs:SPLIT`, then `amg annotate`)."
)
NATURALNESS_NOTE = (
    "Naturalness (does this read as real chat?) was not judged: the offline heuristic judge is a "
    "lexicon and cannot read for it, so it reports only the named checks it can make. "
    + NATURALNESS_HOW
)
HEURISTIC_NOTE = (
    "`offline` is the offline heuristic judge (family offline-heuristic): a cue-lexicon "
    "classifier and string rules, not a language model. Its numbers measure agreement "
    "between two different offline mechanisms and are reported as heuristic."
)


# -- computing -------------------------------------------------------------------------------
def ordinal_factors(design: Design) -> dict[str, tuple[str, ...]]:
    """The factors whose recovery gets an ordinal view (exact, and within one level), each with
    its levels in order: every ordered factor of ``design``."""
    return design.ordered_factors


def _levels(factor: str, rows: list[VerdictRow], design: Design) -> list[str]:
    levels = list(design.factors[factor].level_names) if factor in design.factors else []
    for r in rows:
        for lv in (r.intended, r.verdict):
            if lv and lv not in levels:
                levels.append(lv)
    return levels


def _factor(
    factor: str,
    rows: list[VerdictRow],
    design: Design,
    ordinal_order: tuple[str, ...] | None = None,
) -> FactorRecovery:
    levels = _levels(factor, rows, design)
    confusion = {i: {r: 0 for r in levels} for i in levels}
    for r in rows:
        confusion[r.intended][r.verdict] += 1
    p = wilson(sum(r.verdict == r.intended for r in rows), len(rows))
    ordinal = None
    if ordinal_order:
        pos = {lv: i for i, lv in enumerate(ordinal_order)}
        near = sum(
            abs(pos[r.intended] - pos[r.verdict]) <= 1
            for r in rows
            if r.intended in pos and r.verdict in pos
        )
        ordinal = Ordinal(order=list(ordinal_order), exact=p, off_by_one=wilson(near, len(rows)))
    return FactorRecovery(**p.model_dump(), levels=levels, confusion=confusion, ordinal=ordinal)


def recovery_stats(rows: list[VerdictRow], design: Design | None = None) -> Recovery:
    """Recovery over answered rows of one judge (failures excluded: they are not verdicts), by
    factor of ``design`` (default: the paper's), in its order."""
    design = design or paper_design()
    ordinal = ordinal_factors(design)
    ok = [r for r in rows if r.ok]
    factors = [f for f in design.factors if any(r.factor == f for r in ok)]
    factors += sorted({r.factor for r in ok} - set(factors))
    return Recovery(
        overall=wilson(sum(r.verdict == r.intended for r in ok), len(ok)),
        by_factor={
            f: _factor(f, [r for r in ok if r.factor == f], design, ordinal.get(f)) for f in factors
        },
    )


def realism_stats(rows: list[VerdictRow]) -> dict[str, Proportion]:
    ok = [r for r in rows if r.ok]
    criteria = [
        c
        for c in {**REALISM_CRITERIA, **OFFLINE_REALISM_CHECKS}
        if any(r.criterion == c for r in ok)
    ]
    criteria += sorted({r.criterion for r in ok} - set(criteria))
    return {
        c: wilson(
            sum(r.verdict == "pass" for r in ok if r.criterion == c),
            sum(r.criterion == c for r in ok),
        )
        for c in criteria
    }


def _agreement(a: str, b: str, task: str, scope: str, la: dict, lb: dict) -> Agreement | None:
    common = sorted(set(la) & set(lb))
    if not common:
        return None
    xs, ys = [la[k] for k in common], [lb[k] for k in common]
    return Agreement(
        judges=[a, b],
        task=task,
        scope=scope,
        agreement=wilson(sum(x == y for x, y in zip(xs, ys)), len(common)),
        kappa=cohen_kappa(xs, ys),
    )


def agreement_stats(
    rows: list[VerdictRow], judges: list[str], design: Design | None = None
) -> list[Agreement]:
    """Percent agreement (Wilson CI) and Cohen's kappa for every pair of judges, per scope (all,
    and each factor of ``design``, default the paper's)."""
    design = design or paper_design()
    ok = [r for r in rows if r.ok]
    out: list[Agreement] = []
    for a, b in combinations(judges, 2):
        rec = {
            j: {
                (r.item_id): (r.factor, r.verdict)
                for r in ok
                if r.task == "recovery" and r.judge == j
            }
            for j in (a, b)
        }
        scopes = ["all"] + [f for f in design.factors if any(f == v[0] for v in rec[a].values())]
        for scope in scopes:
            la = {k: v[1] for k, v in rec[a].items() if scope == "all" or v[0] == scope}
            lb = {k: v[1] for k, v in rec[b].items() if scope == "all" or v[0] == scope}
            if ag := _agreement(a, b, "recovery", scope, la, lb):
                out.append(ag)
        for crit in REALISM_CRITERIA:
            la = {
                r.item_id: r.verdict
                for r in ok
                if r.task == "realism" and r.judge == a and r.criterion == crit
            }
            lb = {
                r.item_id: r.verdict
                for r in ok
                if r.task == "realism" and r.judge == b and r.criterion == crit
            }
            if ag := _agreement(a, b, "realism", crit, la, lb):
                out.append(ag)
    return out


def compute_report(
    rows: list[VerdictRow],
    judges: list[JudgeInfo],
    splits: list[str],
    generator_families: Iterable[str] = (),
    design: Design | None = None,
) -> ValidationReport:
    """The whole report from verdict rows (recovery and realism tasks) of the given judges, by
    the factors and levels of ``design`` (default: the paper's)."""
    design = design or paper_design()
    blocks: dict[str, JudgeBlock] = {}
    failing: list[FailingArc] = []
    failures: list[JudgeFailure] = []
    for j in judges:
        mine = [r for r in rows if r.judge == j.spec]
        rec = [r for r in mine if r.task == "recovery"]
        real = [r for r in mine if r.task == "realism"]
        fails = {
            "recovery": sum(not r.ok for r in rec),
            "realism": len({r.item_id for r in real if not r.ok}),
        }
        blocks[j.spec] = JudgeBlock(
            judge=j,
            same_family=any(r.same_family for r in mine),
            recovery=recovery_stats(rec, design),
            realism=realism_stats(real),
            judge_failures=fails,
        )
        failing += [
            FailingArc(
                arc_id=r.item_id,
                split=r.split,
                judge=j.spec,
                check="recovery",
                intended=r.intended,
                verdict=r.verdict,
                rationale=r.rationale,
            )
            for r in rec
            if r.ok and r.verdict != r.intended
        ]
        failing += [
            FailingArc(
                arc_id=r.item_id,
                split=r.split,
                judge=j.spec,
                check=f"realism.{r.criterion}",
                verdict=r.verdict,
                rationale=r.rationale,
            )
            for r in real
            if r.ok and r.verdict == "fail"
        ]
        seen: set[tuple[str, str]] = set()
        for r in mine:
            if not r.ok and (r.item_id, r.task) not in seen:
                seen.add((r.item_id, r.task))
                failures.append(
                    JudgeFailure(arc_id=r.item_id, judge=j.spec, task=r.task, error=r.error)
                )
    primary = judges[0].spec if judges else None
    empty = Recovery(overall=wilson(0, 0), by_factor={})
    families = sorted(set(generator_families))
    notes = []
    if any(j.heuristic for j in judges):
        notes.append(HEURISTIC_NOTE)
    judged_natural = any(r.ok and r.task == "realism" and r.criterion == "natural" for r in rows)
    if any(r.task == "realism" for r in rows) and not judged_natural:
        notes.append(NATURALNESS_NOTE)
    if OFFLINE_GENERATOR_FAMILY in families and any(
        j.family == OFFLINE_JUDGE_FAMILY for j in judges
    ):
        notes.append(
            "The offline template renderer (family offline-template) and the offline heuristic "
            "judges (family offline-heuristic) are two families: different mechanisms with no "
            "shared phrase bank."
        )
    same = [s for s, b in blocks.items() if b.same_family]
    if same:
        notes.append(
            f"Same-family judging was allowed with --allow-same-family: {', '.join(same)} "
            "judged arcs generated by its own model family."
        )
    return ValidationReport(
        splits=splits,
        judges=judges,
        primary_judge=primary,
        generator_families=families,
        same_family_judges=same,
        notes=notes,
        recovery=blocks[primary].recovery if primary else empty,
        realism=blocks[primary].realism if primary else {},
        by_judge=blocks,
        agreement=agreement_stats(rows, [j.spec for j in judges], design),
        failing_arcs=failing,
        judge_failures=failures,
    )


# -- reading the workspace -------------------------------------------------------------------
def current_verdicts(
    ws: Workspace,
    splits: list[str],
    judges: list[str] | None = None,
    tasks: Iterable[str] = ("recovery", "realism"),
) -> tuple[list[VerdictRow], list[JudgeInfo]]:
    """Verdicts on the arcs as they are now, and the judges a report covers.

    Default judges: those of the latest validation run (``amg validate`` / ``amg build``) that
    have verdicts here; ``judges`` names others explicitly.
    """
    shas = current_arc_shas(ws, splits)
    rows = [
        r for r in load_verdicts(ws, tasks, splits=splits) if shas.get(r.item_id) == r.item_sha256
    ]
    infos: dict[str, JudgeInfo] = {}
    for r in rows:
        if r.judge not in infos:
            infos[r.judge] = JudgeInfo(spec=r.judge, family=r.family, heuristic=r.heuristic)
    if judges:
        missing = [j for j in judges if j not in infos]
        if missing:
            from ..errors import BadInput

            raise BadInput(
                f"No stored verdicts from judge {missing[0]!r} on these arcs; "
                f"judges with verdicts: {', '.join(infos) or 'none (run amg validate)'}"
            )
        order = list(judges)
    else:
        run = latest_run(ws, "arcs")
        order = [j["spec"] for j in (run["judges"] if run else []) if j["spec"] in infos]
        order = order or list(infos)
    chosen = [infos[j] for j in order]
    return [r for r in rows if r.judge in order], chosen


def generator_families(ws: Workspace, splits: list[str]) -> set[str]:
    """The model families that generated the arcs of ``splits`` (base URLs told apart)."""
    marks = ",".join("?" * len(splits))
    rows = ws.db.execute(f"select distinct generator from arcs where split in ({marks})", splits)
    return set().union(*generator_families_of(ws, [g for (g,) in rows.fetchall()]).values())


def validation_report(
    ws: Workspace, splits: list[str], judges: list[str] | None = None
) -> ValidationReport:
    # name only the splits this workspace has arcs for (`--split all` on a core-only workspace)
    present = {s for (s,) in ws.db.execute("select distinct split from arcs").fetchall()}
    splits = [s for s in splits if s in present] or splits
    rows, chosen = current_verdicts(ws, splits, judges)
    marks = ",".join("?" * len(splits))
    generator = dict(
        ws.db.execute(f"select id, generator from arcs where split in ({marks})", splits).fetchall()
    )
    families = generator_families_of(ws, set(generator.values()))
    # From the arcs as they are now, not the flag stored when the verdict was made (a copy where
    # it differs: the rows may be shared, ``Workspace.read_cache``).
    rows = [
        r
        if r.same_family
        == (same := normalize_family(r.family) in families.get(generator.get(r.item_id, ""), set()))
        else r.model_copy(update={"same_family": same})
        for r in rows
    ]
    report = compute_report(
        rows, chosen, splits, set().union(*families.values()), design=workspace_design(ws)
    )
    report.model_calls = _judge_calls(ws)
    return report


def _judge_calls(ws: Workspace) -> dict | None:
    """The realism and recovery judges' calls, tokens and cost, from the call log."""
    from ..llm.usage_log import calls_behind

    return calls_behind(ws, ("amg build", "amg validate"), ("judge.realism", "judge.recovery"))


def save_validation_report(
    workspace: str | Path | Workspace,
    splits: list[str],
    judges: list[str] | None = None,
    out_dir: str | Path | None = None,
    html: bool = False,
) -> tuple[ValidationReport, list[Path]]:
    """``amg report validation``: compute and write the report (default WORKSPACE/reports/validation)."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace, create=False)
    r = validation_report(ws, splits, judges)
    return r, write_report(
        r, Path(out_dir) if out_dir else ws.path / "reports" / "validation", html
    )


# -- files -----------------------------------------------------------------------------------
def write_report(r: ValidationReport, out_dir: str | Path, html: bool = False) -> list[Path]:
    """``validation.md``, ``validation.json`` (and with ``html`` the self-contained
    ``validation.html``), then one confusion heatmap PNG per judge and factor."""
    from ..outputs import writable
    from ..report_html import write_report_html
    from ._plots import confusion_png

    out = writable(Path(out_dir))
    paths = []
    for spec, b in r.by_judge.items():
        for name, f in b.recovery.by_factor.items():
            paths.append(
                confusion_png(
                    f.levels,
                    f.confusion,
                    f"{name}: intended vs recovered ({spec})",
                    out / image_name(spec, name),
                )
            )
    md = out / "validation.md"
    text = report_markdown(r, images=True)
    md.write_text(text, encoding="utf-8")
    js = out / "validation.json"
    js.write_text(json.dumps(r.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    page = [write_report_html(text, out / "validation.html")] if html else []
    return [md, js] + page + paths
