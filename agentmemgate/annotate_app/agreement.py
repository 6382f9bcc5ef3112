"""The agreement report: human-human reliability and human-vs-reference accuracy, kept apart.

Only each annotator's latest label per item counts; adjudicated resolutions are reported on their
own and never enter human-human or per-annotator numbers. Every proportion carries n and a 95%
Wilson interval (``stats.wilson``); kappa and alpha come from ``stats`` (scikit-learn,
krippendorff); precision, recall, F1 and confusion matrices from scikit-learn. Kappa (unweighted,
and linearly and quadratically weighted for ordered tasks), alpha and macro-F1 carry a seeded 95%
percentile-bootstrap interval over items (``stats.bootstrap``, as the classifier report). A
statistic that is undefined (no data, one label only) is None and is listed under
``diagnostics.undefined``. Ordered tasks are difficulty audits of a factor the design declares
ordered; their scale (ordinal alpha, weighted kappa, off by one) is the level order frozen into
the audit's label set when it was made.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WorkspaceError
from ..schema import HOLD_CLASSES
from ..stats import (
    DEFAULT_RESAMPLES,
    Interval,
    Proportion,
    bootstrap,
    cohen_kappa,
    kappa_rows,
    krippendorff_alpha,
    macro_f1_rows,
    wilson,
)
from ._report_md import render_markdown, write_plots
from .audits import get_audit
from .labels import CANT_TELL, LabelSet
from .report_models import (
    Adjudication,
    AgreementReport,
    Alpha,
    AnnotatorDiag,
    Binary,
    Bootstrap,
    ClassStats,
    Confusion,
    Diagnostics,
    FastDecision,
    KappaPair,
    PlanAsserted,
    ReferenceBlock,
    VsReference,
)

if TYPE_CHECKING:
    from ..workspace import Workspace

FAST_SECONDS = 2.0  # a decision quicker than this is flagged: too fast to have read the item


# -- computing ---------------------------------------------------------------------------------
def agreement_report(
    ws: Workspace,
    name: str,
    fast_seconds: float = FAST_SECONDS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    include_screened: bool = False,
) -> AgreementReport:
    info = get_audit(ws, name)
    boot = Bootstrap(resamples=resamples, seed=seed)
    ls = info.label_set
    db = ws.db
    checks = {i for (i,) in db.execute("select item_id from audit_checks where audit = ?", [name])}
    items = {
        iid: (json.loads(p).get("group") if p else None)
        for iid, p in db.execute(
            "select item_id, payload from audit_items where audit = ? order by position", [name]
        ).fetchall()
        if iid not in checks  # gold, attention and qualification items never enter agreement
    }
    screened = dict(
        db.execute(
            "select name, coalesce(reason, '') from audit_participants where audit = ? and "
            "status = 'screened_out' order by name",
            [name],
        ).fetchall()
    )
    left_out = set() if include_screened else set(screened)
    latest: dict[tuple[str, str], tuple[str, float | None]] = {}
    logged: Counter = Counter()
    per_item_rows: Counter = Counter()
    adjudicated: dict[str, str] = {}
    for _id, item, ann, role, label, secs in db.execute(
        "select id, item_id, annotator, role, label, active_seconds from audit_labels "
        "where audit = ? order by id",
        [name],
    ).fetchall():
        if item in checks or ann in left_out:
            continue
        if role == "adjudicator":
            adjudicated[item] = label
            continue
        latest[(ann, item)] = (label, secs)
        logged[ann] += 1
        per_item_rows[(ann, item)] += 1
    refs = {
        i: (lab, src)
        for i, lab, src in db.execute(
            "select item_id, label, source from audit_references where audit = ?", [name]
        ).fetchall()
    }
    people = [
        n
        for (n,) in db.execute(
            "select name from audit_annotators where audit = ? and "
            "role = 'annotator' order by name",
            [name],
        ).fetchall()
        if n not in left_out
    ]
    assigned = Counter(
        a
        for (a, item) in db.execute(
            "select annotator, item_id from audit_assignments where audit = ?", [name]
        ).fetchall()
        if item not in checks
    )

    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    for (ann, item), (label, _) in latest.items():
        by_item[item][ann] = label
    undefined: list[str] = []
    notes: list[str] = []

    # human-human
    k = n = 0
    for labs in by_item.values():
        for x, y in itertools.combinations(sorted(labs), 2):
            n += 1
            k += labs[x] == labs[y]
    pct = wilson(k, n)
    if pct.value is None:
        undefined.append("percent_agreement (no item has two labels)")
    pairs = []
    for a, b in itertools.combinations(people, 2):
        common = [i for i in sorted(by_item) if a in by_item[i] and b in by_item[i]]
        if not common:
            continue
        la, lb = [by_item[i][a] for i in common], [by_item[i][b] for i in common]
        pairs.append(_pair(ls, a, b, la, lb, boot, undefined))
    alpha = _alpha(ls, people, by_item, notes, boot)
    if alpha.value is None:
        undefined.append("krippendorff_alpha (fewer than two labels per item, or one label only)")
    many = _many_raters(ls, by_item, undefined)
    final = {i: lab for i, labs in by_item.items() if (lab := _majority(labs)) is not None}
    final.update(adjudicated)
    if screened:
        how = "included (--include-screened)" if include_screened else "left out"
        notes.append(
            f"{len(screened)} screened-out {'person' if len(screened) == 1 else 'people'} {how}: "
            + "; ".join(f"{p} ({why or 'screened out'})" for p, why in screened.items())
        )

    # human vs reference
    ref_block = None
    if refs:
        obs = [
            (ann, refs[item][0], label)
            for (ann, item), (label, _) in sorted(latest.items())
            if item in refs
        ]
        if obs:
            unit = {
                item: u
                for u, item in enumerate(sorted({item for (_, item) in latest if item in refs}))
            }
            pooled = _vs(
                ls,
                [r for _, r, _ in obs],
                [h for *_, h in obs],
                "pooled",
                undefined,
                boot,
                groups=[unit[item] for (_, item), _ in sorted(latest.items()) if item in refs],
            )
            per_ann = {
                a: _vs(
                    ls,
                    [r for x, r, _ in obs if x == a],
                    [h for x, _, h in obs if x == a],
                    a,
                    undefined,
                    boot,
                )
                for a in people
                if any(x == a for x, *_ in obs)
            }
            ref_block = ReferenceBlock(
                **pooled.model_dump(),
                sources=dict(Counter(src for _, src in refs.values())),
                n_items=len({item for (_, item) in latest if item in refs}),
                per_annotator=per_ann,
            )

    plan_human = None
    if info.task == "answer_assertion":
        plan_human = _plan_asserted(db, name, latest, by_item, refs, ref_block, boot, undefined)

    adjudication = None
    if (
        adjudicated
        or db.execute(
            "select 1 from audit_annotators where audit = ? and role = 'adjudicator'", [name]
        ).fetchone()
    ):
        multi = {i: labs for i, labs in by_item.items() if len(labs) >= 2}
        res = [(adjudicated[i], refs[i][0]) for i in adjudicated if i in refs]
        adjudication = Adjudication(
            n_candidates=len(multi),
            n_disagreements=sum(len(set(v.values())) > 1 for v in multi.values()),
            n_resolved=len(adjudicated),
            vs_reference=wilson(sum(a == r for a, r in res), len(res)) if refs else None,
        )

    # diagnostics
    diag_people = []
    fast = []
    for a in people:
        mine = {item: v for (ann, item), v in latest.items() if ann == a}
        secs = [s for _, s in mine.values() if s is not None]
        my_fast = [
            FastDecision(annotator=a, item_id=i, seconds=s)
            for i, (_, s) in sorted(mine.items())
            if s is not None and s < fast_seconds
        ]
        fast += my_fast
        diag_people.append(
            AnnotatorDiag(
                annotator=a,
                assigned=assigned.get(a, 0),
                labeled=len(mine),
                labels_logged=logged.get(a, 0),
                changed=sum(1 for i in mine if per_item_rows[(a, i)] > 1),
                cant_tell=sum(1 for lab, _ in mine.values() if lab == CANT_TELL),
                fast=len(my_fast),
                median_active_seconds=round(statistics.median(secs), 2) if secs else None,
                vs_final=_vs_final(mine, final, by_item),
            )
        )
    all_labels = [lab for lab, _ in latest.values()]
    prevalence = {c: wilson(all_labels.count(c), len(all_labels)) for c in ls.choices}
    ref_labels = [lab for lab, _ in refs.values()]
    ref_prev = {c: wilson(ref_labels.count(c), len(ref_labels)) for c in ls.choices} if refs else {}
    by_group: dict[str, dict[str, Proportion]] = {}
    groups = sorted({g for g in items.values() if g})
    for g in groups:
        labs = [lab for (_, item), (lab, _) in latest.items() if items.get(item) == g]
        by_group[g] = {c: wilson(labs.count(c), len(labs)) for c in ls.choices}
    if not latest:
        notes.append("No labels yet.")
    return AgreementReport(
        audit=name,
        task=info.task,
        factor=ls.factor,
        labels=list(ls.choices),
        ordered=ls.ordered,
        rubric=ls.rubric,
        n_items=len(items),
        n_annotators=len(people),
        n_labels=len(latest),
        n_items_multi=sum(len(v) >= 2 for v in by_item.values()),
        percent_agreement=pct,
        krippendorff_alpha=alpha,
        fleiss_kappa=many["fleiss_kappa"],
        gwet_ac1=many["gwet_ac1"],
        gwet_ac2=many.get("gwet_ac2"),
        screened_out=len(screened),
        screened_included=include_screened,
        cohen_kappa_pairs=pairs,
        vs_reference=ref_block,
        adjudication=adjudication,
        bootstrap=boot,
        reference_name=_reference_name(info.params),
        plan_asserted_human=plan_human,
        diagnostics=Diagnostics(
            per_annotator=diag_people,
            prevalence=prevalence,
            reference_prevalence=ref_prev,
            prevalence_by_group=by_group,
            n_unlabeled_items=sum(1 for i in items if i not in by_item),
            fast_threshold_seconds=fast_seconds,
            fast_decisions=fast,
            undefined=undefined,
            notes=notes,
        ),
    )


def _many_raters(ls: LabelSet, by_item: dict, undefined: list[str]) -> dict:
    """Fleiss' kappa and Gwet's AC1 over every label ("can't tell" is a category), and for ordered
    tasks Gwet's AC2 with ordinal weights over the scale ("can't tell" is off it: missing)."""
    from .chance import coefficient, rating_counts

    rows = [list(labs.values()) for _, labs in sorted(by_item.items())]
    nominal = rating_counts(rows, ls.choices)
    out = {
        "fleiss_kappa": coefficient(nominal, "fleiss"),
        "gwet_ac1": coefficient(nominal, "gwet"),
    }
    if ls.ordered:
        out["gwet_ac2"] = coefficient(rating_counts(rows, ls.labels), "gwet", "ordinal")
    for key, c in out.items():
        if c.value is None:
            undefined.append(
                f"{key} (no item with two labels)"
                if not c.n_multi
                else f"{key} (chance agreement is 1: one label only)"
            )
    return out


def _majority(labels: dict[str, str]) -> str | None:
    """The most frequent label of an item with two or more labels; None on a tie."""
    if len(labels) < 2:
        return None
    top = Counter(labels.values()).most_common()
    return None if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]


def _vs_final(mine: dict, final: dict[str, str], by_item: dict) -> Proportion:
    """How often a person's label is the item's final label (the majority, or the
    adjudicator's resolution), over their items that have one."""
    pairs = [(lab, final[i]) for i, (lab, _) in mine.items() if i in final and len(by_item[i]) > 1]
    return wilson(sum(a == b for a, b in pairs), len(pairs))


def _reference_name(params: dict) -> str | None:
    """ "the answer judge offline (answer_cues.v1)", from what the source recorded."""
    j = params.get("reference_judge")
    if not j:
        return None
    kind = "heuristic rules" if j.get("heuristic") else "a model"
    return (
        f"the answer judge {j['spec']} ({j.get('answer_rubric') or 'no rubric recorded'}; "
        f"{kind}), its asserted values matched to the options by the equivalence judge "
        f"{j['spec']} ({j.get('equivalence_rubric') or 'no rubric recorded'})"
    )


PLAN_LABELS = ["yes", "no", CANT_TELL]


def _plan(label: str, plan_option: str) -> str:
    """Does this answer_assertion label say the plan value is asserted (its option, or both)?"""
    if label == CANT_TELL:
        return CANT_TELL
    return "yes" if label in (plan_option, "both") else "no"


def _plan_asserted(
    db,
    name: str,
    latest: dict,
    by_item: dict,
    refs: dict,
    ref_block: ReferenceBlock | None,
    boot: Bootstrap,
    undefined: list[str],
) -> Proportion | None:
    """The plan-asserted collapse: human-human agreement (returned) and, on the reference blocks,
    human vs judge. Which option holds the plan value is read from the strata table only; an
    audit without it (labels imported from elsewhere) has no collapse (None)."""
    plan_of = {}
    for item, raw in db.execute(
        "select item_id, strata from audit_item_strata where audit = ?", [name]
    ).fetchall():
        opt = json.loads(raw or "{}").get("plan_option")
        if opt:
            plan_of[item] = opt
    if not plan_of:
        return None
    k = n = 0
    for item, labs in by_item.items():
        if item not in plan_of:
            continue
        coll = {a: _plan(lab, plan_of[item]) for a, lab in labs.items()}
        for x, y in itertools.combinations(sorted(coll), 2):
            n += 1
            k += coll[x] == coll[y]
    if ref_block is not None:
        obs = [
            (ann, item, _plan(refs[item][0], plan_of[item]), _plan(label, plan_of[item]))
            for (ann, item), (label, _) in sorted(latest.items())
            if item in refs and item in plan_of
        ]
        unit = {item: u for u, item in enumerate(sorted({o[1] for o in obs}))}
        ref_block.plan_asserted = _plan_block(
            [o[2] for o in obs],
            [o[3] for o in obs],
            "pooled",
            boot,
            undefined,
            [unit[o[1]] for o in obs],
        )
        for a, va in ref_block.per_annotator.items():
            mine = [o for o in obs if o[0] == a]
            va.plan_asserted = _plan_block(
                [o[2] for o in mine], [o[3] for o in mine], a, boot, undefined
            )
    return wilson(k, n)


def _plan_block(
    ref: list[str],
    human: list[str],
    who: str,
    boot: Bootstrap,
    undefined: list[str],
    groups: list[int] | None = None,
) -> PlanAsserted:
    from sklearn.metrics import confusion_matrix

    kap = cohen_kappa(ref, human)
    if kap is None:
        undefined.append(f"plan-asserted kappa vs reference, {who} (one label only)")

    def flipped(judge: str, human_says: str) -> Proportion:
        decided = [h for r, h in zip(ref, human) if r == judge and h != CANT_TELL]
        return wilson(decided.count(human_says), len(decided))

    return PlanAsserted(
        agreement=wilson(sum(r == h for r, h in zip(ref, human)), len(ref)),
        kappa=kap,
        kappa_ci=_kappa_ci(kap, ref, human, PLAN_LABELS, None, boot, groups),
        confusion=Confusion(
            labels=PLAN_LABELS, matrix=confusion_matrix(ref, human, labels=PLAN_LABELS).tolist()
        )
        if ref
        else Confusion(labels=PLAN_LABELS, matrix=[[0] * 3 for _ in range(3)]),
        judge_yes_human_no=flipped("yes", "no"),
        judge_no_human_yes=flipped("no", "yes"),
        human_cant_tell=human.count(CANT_TELL),
    )


def _pair(
    ls: LabelSet,
    a: str,
    b: str,
    la: list[str],
    lb: list[str],
    boot: Bootstrap,
    undefined: list[str],
) -> KappaPair:
    """Kappa of one pair with its interval; ordered tasks add the weighted kappas."""
    kap = cohen_kappa(la, lb)
    if kap is None:
        undefined.append(f"cohen_kappa {a}/{b} (one label only)")
    out = KappaPair(
        a=a,
        b=b,
        kappa=kap,
        n=len(la),
        agreement=wilson(sum(x == y for x, y in zip(la, lb)), len(la)),
        kappa_ci=_kappa_ci(kap, la, lb, ls.choices, None, boot),
    )
    if ls.ordered:
        # Weights follow the scale; "can't tell" is not on it, so those items are left out.
        on_scale = [(x, y) for x, y in zip(la, lb) if x in ls.labels and y in ls.labels]
        wa, wb = [x for x, _ in on_scale], [y for _, y in on_scale]
        out.n_weighted = len(on_scale)
        for weights in ("linear", "quadratic"):
            k = cohen_kappa(wa, wb, labels=list(ls.labels), weights=weights)
            if k is None:
                undefined.append(f"cohen_kappa_{weights} {a}/{b} (one label only)")
            setattr(out, f"kappa_{weights}", k)
            setattr(out, f"kappa_{weights}_ci", _kappa_ci(k, wa, wb, ls.labels, weights, boot))
    return out


def _kappa_ci(
    value: float | None,
    x: list[str],
    y: list[str],
    labels,
    weights: str | None,
    boot: Bootstrap,
    groups: list[int] | None = None,
) -> Interval:
    n = len(x) if groups is None else len(set(groups))
    return bootstrap(
        value,
        lambda draws: kappa_rows(x, y, list(labels), draws, weights, groups),
        n,
        boot.resamples,
        boot.seed,
    )


def _alpha(
    ls: LabelSet,
    people: list[str],
    by_item: dict[str, dict[str, str]],
    notes: list[str],
    boot: Bootstrap,
) -> Alpha:
    """Annotators x items; a missing label is NaN (missing), never a category."""
    import numpy as np

    ids = sorted(by_item)
    if ls.ordered:
        codes = {lab: float(i) for i, lab in enumerate(ls.labels)}  # can't tell -> missing
        domain = list(codes.values())
        level = "ordinal"
        n_ct = sum(lab == CANT_TELL for labs in by_item.values() for lab in labs.values())
        notes.append(
            f"Ordinal alpha treats \"can't tell\" as missing ({n_ct} label(s)); it is a "
            "label everywhere else (agreement, kappa, confusion)."
        )
    else:
        codes = {lab: float(i) for i, lab in enumerate(ls.choices)}
        domain = list(codes.values())
        level = "nominal"
    matrix = [[codes.get(by_item[i].get(a, ""), math.nan) for i in ids] for a in people]
    n_units = (
        sum(1 for j in range(len(ids)) if sum(not math.isnan(row[j]) for row in matrix) >= 2)
        if matrix
        else 0
    )
    value = krippendorff_alpha(matrix, level=level, value_domain=domain) if ids and people else None
    data = np.asarray(matrix, dtype=float)

    def rows(draws):
        return np.array(
            [_nan(krippendorff_alpha(data[:, d], level=level, value_domain=domain)) for d in draws]
        )

    return Alpha(
        value=value,
        level=level,
        n_units=n_units,
        note="can't tell treated as missing" if ls.ordered else "",
        ci=bootstrap(value, rows, len(ids), boot.resamples, boot.seed),
    )


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def _vs(
    ls: LabelSet,
    ref: list[str],
    human: list[str],
    who: str,
    undefined: list[str],
    boot: Bootstrap,
    groups: list[int] | None = None,
) -> VsReference:
    """Human labels against the reference; ``groups`` maps pooled observations to their item so
    the bootstrap resamples items, not single labels."""
    import numpy as np
    from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support

    choices = list(ls.choices)
    cm = confusion_matrix(ref, human, labels=choices)
    subs = list(ls.labels)
    prec, rec, _, _ = precision_recall_fscore_support(ref, human, labels=subs, zero_division=np.nan)
    per_class = {}
    for j, c in enumerate(subs):
        i = choices.index(c)
        tp, predicted, support = int(cm[i, i]), int(cm[:, i].sum()), int(cm[i, :].sum())
        p, r = wilson(tp, predicted), wilson(tp, support)
        per_class[c] = ClassStats(
            precision=_num(prec[j]),
            precision_ci_low=p.ci_low,
            precision_ci_high=p.ci_high,
            precision_n=predicted,
            recall=_num(rec[j]),
            recall_ci_low=r.ci_low,
            recall_ci_high=r.ci_high,
            support=support,
        )
    present = [c for c in subs if per_class[c].support > 0]
    macro = (
        _num(f1_score(ref, human, labels=present, average="macro", zero_division=np.nan))
        if present
        else None
    )
    kap = cohen_kappa(ref, human)
    if kap is None:
        undefined.append(f"kappa vs reference, {who} (one label only)")
    if macro is None:
        undefined.append(f"macro_f1 vs reference, {who}")
    n_units = len(ref) if groups is None else len(set(groups))
    macro_ci = bootstrap(
        macro,
        lambda draws: macro_f1_rows(ref, human, draws, subs, groups),
        n_units,
        boot.resamples,
        boot.seed,
    )
    within = None
    if ls.ordered:
        pos = {lab: i for i, lab in enumerate(ls.labels)}
        close = [r in pos and h in pos and abs(pos[r] - pos[h]) <= 1 for r, h in zip(ref, human)]
        within = wilson(sum(close), len(close))
    binary = None
    if ls.task == "evidence_type":

        def collapse(x: str) -> str:
            return x if x == CANT_TELL else ("hold" if x in HOLD_CLASSES else "commit")

        br, bh = [collapse(x) for x in ref], [collapse(x) for x in human]
        blabels = ["hold", "commit", CANT_TELL]
        bk = cohen_kappa(br, bh)
        if bk is None:
            undefined.append(f"binary kappa vs reference, {who} (one label only)")
        binary = Binary(
            agreement=wilson(sum(x == y for x, y in zip(br, bh)), len(br)),
            kappa=bk,
            confusion=Confusion(
                labels=blabels, matrix=confusion_matrix(br, bh, labels=blabels).tolist()
            ),
            kappa_ci=_kappa_ci(bk, br, bh, blabels, None, boot, groups),
        )
    return VsReference(
        agreement=wilson(sum(r == h for r, h in zip(ref, human)), len(ref)),
        kappa=kap,
        per_class=per_class,
        macro_f1=macro,
        confusion=Confusion(labels=choices, matrix=cm.tolist()),
        within_one=within,
        binary=binary,
        kappa_ci=_kappa_ci(kap, ref, human, choices, None, boot, groups),
        macro_f1_ci=macro_ci,
    )


def _num(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


# -- saving ------------------------------------------------------------------------------------
def save_agreement_report(
    ws: Workspace,
    name: str,
    fast_seconds: float = FAST_SECONDS,
    out: str | Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    html: bool = False,
    include_screened: bool = False,
) -> tuple[AgreementReport, Path]:
    """Compute the report and write ``report.md``, ``report.json`` and confusion PNGs (and with
    ``html`` the self-contained ``report.html``, ``report_html``).

    The folder is replaced at once (``atomic.replaced_folder``), so its markdown, JSON, page and
    plots always belong to the same report (a page left from an earlier ``html`` run goes).
    """
    from ..atomic import replaced_folder
    from ..report_html import write_report_html

    report = agreement_report(
        ws, name, fast_seconds, resamples=resamples, seed=seed, include_screened=include_screened
    )
    folder = Path(out) if out is not None else ws.path / "reports" / f"agreement-{name}"
    try:
        with replaced_folder(
            folder, replace=REPORT_FILES, protect=[ws.path / "workspace.db"]
        ) as tmp:
            plots = write_plots(report, tmp)
            report.plots = {k: str(folder / Path(v).name) for k, v in plots.items()}
            (tmp / "report.json").write_text(
                report.model_dump_json(indent=2) + "\n", encoding="utf-8"
            )
            text = render_markdown(report)
            (tmp / "report.md").write_text(text, encoding="utf-8")
            if html:
                write_report_html(text, tmp / "report.html")
    except OSError as e:
        raise WorkspaceError(
            f"Cannot write the report to {str(folder)!r}: {e.strerror or e}"
        ) from None
    return report, folder / "report.md"


REPORT_FILES = (
    "report.md",
    "report.json",
    "report.html",
    "confusion.png",
    "confusion_binary.png",
    "confusion_plan.png",
)
