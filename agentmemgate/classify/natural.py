"""How an evidence-type classifier routes natural turns: the hedge dev set as a commit/hold test.

The miner's dev set (``devsets/hedges``, read by ``corpora.devset``) labels every turn of some
LoCoMo and LongMemEval conversations ``spec`` / ``borderline`` / ``none`` by hand, independently of
the offline renderer. That gives the gate's decision on real text: a ``spec`` turn should be held
(argmax speculation), a ``none`` turn committed. Borderline turns are kept apart and reported both
ways, as the dev set's own script does.

Two units: ``turn`` classifies the whole turn as one statement (what ``amg classify`` does with a
statement set of turns); ``sentence`` classifies each sentence, as the gate sees a tuple's span,
and holds the turn when any sentence is held (P(hold) of the turn = the largest sentence's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..corpora.devset import DevSet
from ..corpora.model import ContextTurn
from ..corpora.statements import Statement
from ..stats import Proportion, wilson
from ..text import sentence_spans
from .classes import Distribution
from .metrics import DEFAULT_RESAMPLES, Interval, auroc_ci, paired_auroc_difference

UNITS = ("turn", "sentence")


@dataclass(frozen=True)
class LabelledTurn:
    part: str  # "locomo" / "longmemeval"
    name: str  # conversation:ref (LoCoMo) or ref (LongMemEval)
    label: str  # spec / borderline / none
    statement: Statement


def devset_turns(dev: DevSet) -> list[LabelledTurn]:
    """Every labelled turn with its two preceding turns and its session's date."""
    labels = {(t.conversation_id, t.ref): t for t in dev.turns}
    out = []
    for part, convs in dev.conversations.items():
        for conv in convs:
            for session in conv.sessions:
                for i, turn in enumerate(session.turns):
                    t = labels.get((conv.conversation_id, turn.ref))
                    if t is None:
                        continue
                    ctx = [
                        ContextTurn(speaker=p.speaker, text=p.text)
                        for p in session.turns[max(0, i - 2) : i]
                    ]
                    name = f"{conv.conversation_id}:{turn.ref}" if part == "locomo" else turn.ref
                    out.append(
                        LabelledTurn(
                            part,
                            name,
                            t.label,
                            Statement(
                                id=name,
                                text=turn.text,
                                context=ctx,
                                speaker=turn.speaker,
                                date=session.date,
                            ),
                        )
                    )
    return out


class Routing(BaseModel):
    """Commit/hold figures of one classifier on one group of labelled turns."""

    model_config = ConfigDict(extra="forbid")
    group: str
    n_spec: int
    n_none: int
    n_borderline: int
    recall: Proportion  # spec turns held
    precision: Proportion  # held turns that are spec, among spec + none
    none_held: Proportion  # none turns held: over-holding on ordinary talk
    borderline_held: Proportion
    recall_with_borderline: Proportion  # borderline counted as spec
    precision_with_borderline: Proportion
    auroc: Interval  # P(commit) vs reference commit (none) / hold (spec)
    log_loss: float | None  # binary, of P(hold) on spec + none (lower is better)
    balanced_log_loss: float | None  # the mean of the spec turns' and the none turns' log loss


class ClassifierRouting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    classifier: str
    unit: str
    groups: list[Routing]
    p_commit: dict[str, float]  # turn name -> P(commit), for paired comparisons
    held: dict[str, bool]  # turn name -> routed to hold


def p_commit_of(classifier, item: LabelledTurn, unit: str) -> tuple[float, bool]:
    """(P(commit), routed commit) of one turn under ``unit``."""
    if unit == "turn":
        d = classifier.classify(item.statement)
        return d.p_commit, d.routed_commit
    st = item.statement
    dists: list[Distribution] = [
        classifier.classify(st.model_copy(update={"id": f"{st.id}#{k}", "text": st.text[a:b]}))
        for k, (a, b) in enumerate(sentence_spans(st.text))
    ]
    if not dists:
        d = classifier.classify(st)
        return d.p_commit, d.routed_commit
    return min(d.p_commit for d in dists), all(d.routed_commit for d in dists)


def route(
    classifier,
    items: list[LabelledTurn],
    unit: str = "turn",
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> ClassifierRouting:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}")
    answers = {it.name: p_commit_of(classifier, it, unit) for it in items}
    groups = []
    for group in sorted({it.part for it in items}) + ["all"]:
        sel = [it for it in items if group in ("all", it.part)]
        groups.append(_routing(group, sel, answers, resamples, seed))
    return ClassifierRouting(
        classifier=classifier.name,
        unit=unit,
        groups=groups,
        p_commit={k: v[0] for k, v in answers.items()},
        held={k: not v[1] for k, v in answers.items()},
    )


def _routing(group: str, sel: list[LabelledTurn], answers, resamples: int, seed: int) -> Routing:
    held = {it.name: not answers[it.name][1] for it in sel}
    by = {lab: [it for it in sel if it.label == lab] for lab in ("spec", "borderline", "none")}
    tp = sum(held[it.name] for it in by["spec"])
    fp = sum(held[it.name] for it in by["none"])
    bh = sum(held[it.name] for it in by["borderline"])
    scored = by["spec"] + by["none"]
    y = [int(it.label == "none") for it in scored]
    p = [answers[it.name][0] for it in scored]
    return Routing(
        group=group,
        n_spec=len(by["spec"]),
        n_none=len(by["none"]),
        n_borderline=len(by["borderline"]),
        recall=wilson(tp, len(by["spec"])),
        precision=wilson(tp, tp + fp),
        none_held=wilson(fp, len(by["none"])),
        borderline_held=wilson(bh, len(by["borderline"])),
        recall_with_borderline=wilson(tp + bh, len(by["spec"]) + len(by["borderline"])),
        precision_with_borderline=wilson(tp + bh, tp + bh + fp),
        auroc=auroc_ci(y, p, resamples=resamples, seed=seed),
        log_loss=_log_loss(y, p),
        balanced_log_loss=_balanced(y, p),
    )


def _log_loss(y_commit: list[int], p_commit: list[float]) -> float | None:
    if not y_commit:
        return None
    eps = 1e-6
    total = 0.0
    for y, p in zip(y_commit, p_commit):
        p = min(1 - eps, max(eps, p))
        total -= math.log(p if y else 1 - p)
    return total / len(y_commit)


def _balanced(y_commit: list[int], p_commit: list[float]) -> float | None:
    """Log loss with each class weighted equally: the natural turns are 95% none, the gate's
    statements are not, so the plain figure would only reward calling everything commit."""
    parts = [
        _log_loss(
            [y for y in y_commit if y == c], [p for y, p in zip(y_commit, p_commit) if y == c]
        )
        for c in (0, 1)
    ]
    return None if None in parts else (parts[0] + parts[1]) / 2


def auroc_difference(
    a: ClassifierRouting,
    b: ClassifierRouting,
    items: list[LabelledTurn],
    group: str = "all",
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """AUROC(a) - AUROC(b) on the same spec + none turns, paired bootstrap."""
    sel = [it for it in items if group in ("all", it.part) and it.label in ("spec", "none")]
    y = [int(it.label == "none") for it in sel]
    return paired_auroc_difference(
        y,
        [a.p_commit[it.name] for it in sel],
        [b.p_commit[it.name] for it in sel],
        resamples=resamples,
        seed=seed,
    )
