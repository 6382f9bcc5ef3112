"""``amg report classifier SET``: how well stored classifier distributions match the references.

Reference commit/hold: speculation is hold, every other class commits (the gate's routing). Only
statements with a reference label count (ties have none); ``agreed_only`` further keeps the items
both model families agreed on. The reported run is run 0; other runs feed the stability figures.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..corpora.statements import load_set
from ..errors import BadInput
from ..llm.usage_log import calls_behind
from ..stats import Proportion, wilson
from ..workspace import Workspace
from .classes import EVIDENCE_TYPES, HOLD_CLASSES
from .metrics import (
    DEFAULT_RESAMPLES,
    ClassMetrics,
    Interval,
    Stability,
    accuracy,
    auroc_ci,
    confusion,
    macro_f1_ci,
    paired_auroc_difference,
    per_class,
    stability,
)
from .run import StoredDistribution, classifiers_of, stored


class ClassifierReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    classifier: str
    kind: str  # evidence_type or binary
    methods: list[str]
    runs: int
    n: int
    n_commit: int
    n_hold: int
    auroc: Interval
    routing_accuracy: Proportion  # commit/hold decision (argmax speculation = hold)
    accuracy: Proportion | None = None  # four-class argmax; None for binary rubrics
    per_class: list[ClassMetrics] = []
    macro_f1: Interval | None = None
    confusion_labels: list[str] = []
    confusion: list[list[int]] = []
    stability: Stability | None = None
    confusion_png: str | None = None
    reference_from_same_model: bool = False  # the references are this model's own votes
    missing: int = 0  # referenced statements with no distribution from this classifier (failed)
    valid_votes: dict[str, float] | None = None  # min / median / max valid votes (vote methods)


def _model_of(name: str) -> str:
    """'openai:gpt-4o|evidence_type.v1|auto:k=5' -> 'openai:gpt-4o' (the lexicon keeps its name)."""
    return name.split("|", 1)[0]


def _method(stored: str) -> str:
    """'logprobs(top=20); mapped mass 0.981 of 0.997' -> 'logprobs(top=20)': the per-statement
    detail stays in the stored rows and exports, the report names how probabilities were made."""
    return stored.split(";", 1)[0].strip()


class AurocDifference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: str
    b: str
    difference: Interval  # AUROC(a) - AUROC(b), paired bootstrap on shared statements


class SetReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set_name: str
    statements: int
    with_reference: int
    used: int
    agreed_only: bool
    reference_counts: dict[str, int]
    reference_status: dict[str, int]
    resamples: int
    seed: int
    classifiers: list[ClassifierReport]
    differences: list[AurocDifference]
    roc_png: str | None = None
    licenses: list[str]
    empty: list[str] = []  # classifiers run on this set that produced no distribution to report
    # the model classifiers' and voters' calls, tokens and cost from the call log
    model_calls: dict | None = None

    def lines(self) -> list[str]:
        out = [
            f"Statement set {self.set_name}: {self.statements} statements, {self.with_reference} "
            f"with a reference label, {self.used} used"
            + (" (agreed items only)" if self.agreed_only else ""),
            "Reference: " + ", ".join(f"{k} {v}" for k, v in self.reference_counts.items()),
            "Status: " + ", ".join(f"{k} {v}" for k, v in self.reference_status.items()),
            f"Bootstrap: percentile 95% CIs, {self.resamples} resamples, seed {self.seed}",
            f"Source licenses: {'; '.join(self.licenses) or 'unknown'}",
        ]
        if self.model_calls:
            from ..llm.usage_log import by_model_lines

            out += [
                "Model calls in this workspace (call log, `amg classify` and "
                "`amg statements label`):"
            ] + [f"  {x}" for x in by_model_lines(self.model_calls)]
        for c in self.classifiers:
            out += [
                "",
                f"== {c.classifier} ({c.kind}; method {', '.join(c.methods)}; "
                f"{c.runs} run{'s' if c.runs != 1 else ''})",
            ]
            if c.reference_from_same_model:
                out.append(
                    "WARNING: the reference labels are this model's own votes; agreement "
                    "with them is not a validation"
                )
            if c.missing:
                out.append(
                    f"No distribution for {c.missing} statement(s) with a reference label "
                    "(their calls failed; `amg classify` again asks again): they are left "
                    "out of every figure below"
                )
            if c.valid_votes:
                v = c.valid_votes
                out.append(
                    f"Valid votes behind each probability: min {v['min']:g}, median "
                    f"{v['median']:g}, max {v['max']:g} of {v['samples']:g}"
                )
            out += [
                f"n = {c.n} ({c.n_commit} commit, {c.n_hold} hold)",
                f"AUROC, P(commit) vs reference commit/hold: {c.auroc.fmt()}",
                f"Routing accuracy (commit/hold): {c.routing_accuracy.fmt()}",
            ]
            if c.accuracy is not None:
                out.append(f"Argmax accuracy (4 classes): {c.accuracy.fmt()}")
                out.append(f"Macro-F1: {c.macro_f1.fmt(3) if c.macro_f1 else 'undefined'}")
                out.append(f"  {'class':<20} {'support':>7}  {'precision':<30} recall")
                for m in c.per_class:
                    out.append(
                        f"  {m.label:<20} {m.support:>7}  {m.precision.fmt():<30} {m.recall.fmt()}"
                    )
                width = max(len(x) for x in c.confusion_labels)
                out.append("  Confusion (rows reference, columns predicted):")
                out.append(
                    "  " + " " * width + " " + " ".join(f"{x[:10]:>10}" for x in c.confusion_labels)
                )
                for lab, row in zip(c.confusion_labels, c.confusion):
                    out.append(f"  {lab:<{width}} " + " ".join(f"{v:>10}" for v in row))
                if c.confusion_png:
                    out.append(f"  Confusion matrix plot: {c.confusion_png}")
            if c.stability is not None:
                s = c.stability
                sd = (
                    "undefined"
                    if s.sd_mean is None
                    else f"mean {s.sd_mean:.3f}, median {s.sd_median:.3f}"
                )
                rng = (
                    "undefined"
                    if s.auroc_min is None
                    else f"{s.auroc_min:.3f} to {s.auroc_max:.3f} (mean {s.auroc_mean:.3f})"
                )
                out += [
                    f"Stability over {s.runs} runs (n = {s.n}):",
                    f"  same label in all runs: {s.same_label_all_runs.fmt()}",
                    f"  majority label matches run {s.reported_run}: {s.majority_matches_run.fmt()}",
                    f"  per-statement SD of P(commit): {sd}",
                    f"  AUROC range across runs: {rng}",
                ]
        for name in self.empty:
            out += [
                "",
                f"== {name}: produced no distribution for this set's referenced statements "
                "(every call failed, or it has not run on them); see the `amg classify` "
                "output and the call log",
            ]
        if self.differences:
            out.append("")
            for d in self.differences:
                out.append(f"AUROC difference {d.a} minus {d.b}: {d.difference.fmt(signed=True)}")
        if self.roc_png:
            out.append(f"ROC curves: {self.roc_png}")
        return out


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:80]


def _plot_confusion(labels: list[str], matrix: list[list[int]], title: str, path: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.8))
    ax.imshow(matrix, cmap="Blues")
    short = [x.replace("_", "\n") for x in labels]
    ax.set_xticks(range(len(labels)), short, fontsize=8)
    ax.set_yticks(range(len(labels)), short, fontsize=8)
    ax.set_xlabel("predicted (argmax)")
    ax.set_ylabel("reference")
    top = max((v for row in matrix for v in row), default=0)
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            ax.text(
                j,
                i,
                str(v),
                ha="center",
                va="center",
                color="white" if top and v > top / 2 else "black",
            )
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def _plot_roc(
    curves: list[tuple[str, list[int], list[float], float | None]], path: Path
) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_curve

    drawn = [(n, y, p, a) for n, y, p, a in curves if a is not None]
    if not drawn:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for k, (name, y, p, a) in enumerate(drawn):
        fpr, tpr, _ = roc_curve(y, p)
        # line styles cycle too, so classifiers with identical curves stay visible
        ax.plot(
            fpr,
            tpr,
            linestyle=("-", "--", "-.", ":")[k % 4],
            linewidth=1.6 - 0.2 * (k % 4),
            label=f"{name[:45]} (AUROC {a:.2f})",
        )
    ax.plot([0, 1], [0, 1], "--", color="grey", linewidth=0.8)
    ax.set_xlabel("false commit rate (hold statements scored as commit)")
    ax.set_ylabel("true commit rate")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def classifier_report(
    ws: Workspace,
    set_name: str,
    *,
    classifiers: list[str] | None = None,
    agreed_only: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    out_dir: str | Path | None = None,
    plots: bool = True,
) -> SetReport:
    statements = load_set(ws, set_name)
    status_counts: dict[str, int] = {}
    for s in statements:
        k = s.reference_status or "unlabeled"
        status_counts[k] = status_counts.get(k, 0) + 1
    refs = {
        s.id: s.reference
        for s in statements
        if s.reference in EVIDENCE_TYPES and s.reference_status != "tie"
    }
    with_reference = len(refs)
    if agreed_only:
        keep = {s.id for s in statements if s.reference_status in ("agreed", "imported", "human")}
        refs = {k: v for k, v in refs.items() if k in keep}
    available = classifiers_of(ws, set_name)
    attempted = [c for c in _classifiers_run(ws, set_name) if c not in available]
    names = classifiers or available
    unknown = [c for c in names if c not in available and c not in attempted]
    if unknown:
        raise BadInput(
            f"No results for classifier {unknown[0]!r} on set {set_name!r}; "
            f"run `amg classify` first; known: {', '.join(available) or 'none'}"
        )
    empty = [c for c in (classifiers or attempted) if c in attempted]
    names = [c for c in names if c not in empty]
    if not names and empty:
        raise BadInput(
            f"Classifier {empty[0]} produced no distribution on set {set_name!r}: every "
            "call failed (see the `amg classify` output and the call log)"
        )
    if not names:
        raise BadInput(
            f"No classifier results on set {set_name!r}; run `amg classify --statements "
            f"{set_name}` first"
        )
    if not refs:
        raise BadInput(
            f"Set {set_name!r} has no statements with a reference label"
            + (" that both families agreed on" if agreed_only else "")
            + "; run `amg statements label` or import references"
        )
    out_path = Path(out_dir) if out_dir else ws.path / "reports" / "classifier" / _slug(set_name)
    voters = {
        _model_of(r[0])
        for r in ws.db.execute(
            "select distinct voter from statement_votes where set_name = ? and role = 'reference'",
            [set_name],
        ).fetchall()
    }
    reports, run0, curves = [], {}, []
    for name in names:
        rows = [r for r in stored(ws, set_name, name) if r.statement_id in refs]
        by_run: dict[int, dict[str, StoredDistribution]] = {}
        for r in rows:
            by_run.setdefault(r.run, {})[r.statement_id] = r
        if not by_run:
            empty.append(name)
            continue
        first = min(by_run)
        main = by_run[first]
        ids = [i for i in refs if i in main]
        votes = [main[i].valid_votes for i in ids if main[i].valid_votes is not None]
        run0[name] = {i: main[i].p_commit for i in ids}
        reference = [refs[i] for i in ids]
        y = [int(r not in HOLD_CLASSES) for r in reference]
        p = [main[i].p_commit for i in ids]
        predicted = [main[i].predicted for i in ids]
        binary = all(x in ("commit", "hold") for x in predicted)
        routed = [x == "commit" if binary else x not in HOLD_CLASSES for x in predicted]
        rep = ClassifierReport(
            classifier=name,
            kind="binary" if binary else "evidence_type",
            methods=sorted({_method(main[i].method) for i in ids}),
            runs=len(by_run),
            n=len(ids),
            n_commit=sum(y),
            n_hold=len(y) - sum(y),
            auroc=auroc_ci(y, p, resamples, seed),
            routing_accuracy=wilson(sum(int(a) == b for a, b in zip(routed, y)), len(y)),
            reference_from_same_model=_model_of(name) in voters,
            missing=len(refs) - len(ids),
            valid_votes=_vote_counts(votes, name),
        )
        curves.append((name, y, p, rep.auroc.value))
        if not binary:
            rep.accuracy = accuracy(reference, predicted)
            rep.per_class = per_class(reference, predicted)
            rep.macro_f1 = macro_f1_ci(reference, predicted, resamples, seed)
            rep.confusion_labels = list(EVIDENCE_TYPES)
            rep.confusion = confusion(reference, predicted)
            if plots:
                rep.confusion_png = _plot_confusion(
                    rep.confusion_labels,
                    rep.confusion,
                    f"{name} on {set_name} (n={len(ids)})",
                    out_path / f"{_slug(name)}-confusion.png",
                )
        if len(by_run) > 1:
            runs = sorted(by_run)
            common = [i for i in ids if all(i in by_run[r] for r in runs)]
            rep.stability = stability(
                [[by_run[r][i].predicted for i in common] for r in runs],
                [[by_run[r][i].p_commit for i in common] for r in runs],
                [int(refs[i] not in HOLD_CLASSES) for i in common],
                reported_run=0,
            )
        reports.append(rep)
    diffs = []
    if len(reports) > 1:
        a = reports[0].classifier
        for other in reports[1:]:
            b = other.classifier
            shared = [i for i in run0[a] if i in run0[b]]
            diffs.append(
                AurocDifference(
                    a=a,
                    b=b,
                    difference=paired_auroc_difference(
                        [int(refs[i] not in HOLD_CLASSES) for i in shared],
                        [run0[a][i] for i in shared],
                        [run0[b][i] for i in shared],
                        resamples,
                        seed,
                    ),
                )
            )
    counts = {c: sum(v == c for v in refs.values()) for c in EVIDENCE_TYPES}
    return SetReport(
        set_name=set_name,
        statements=len(statements),
        with_reference=with_reference,
        used=len(refs),
        agreed_only=agreed_only,
        reference_counts=counts,
        reference_status=status_counts,
        resamples=resamples,
        seed=seed,
        classifiers=reports,
        differences=diffs,
        roc_png=_plot_roc(curves, out_path / "roc.png") if plots else None,
        licenses=sorted({s.license for s in statements if s.license}),
        empty=empty,
        model_calls=calls_behind(ws, ("amg classify", "amg statements label"), ("classify.",)),
    )


def _classifiers_run(ws: Workspace, set_name: str) -> list[str]:
    """Classifiers ``amg classify`` was run with on this set (whatever came of it)."""
    import json

    out: list[str] = []
    for (params,) in ws.db.execute(
        "select params from runs where command = 'classify' order by id"
    ).fetchall():
        p = json.loads(params or "{}")
        if p.get("set") == set_name and p.get("classifier") and p["classifier"] not in out:
            out.append(p["classifier"])
    return out


def _vote_counts(votes: list[int], name: str) -> dict[str, float] | None:
    if not votes:
        return None
    import statistics

    m = re.search(r":k=(\d+)$", name)
    return {
        "min": min(votes),
        "median": statistics.median(votes),
        "max": max(votes),
        "samples": int(m.group(1)) if m else max(votes),
    }
