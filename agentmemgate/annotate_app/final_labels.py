"""One final label per item from many people's labels: ``amg audit labels``.

Methods: ``majority`` (the most frequent label; a tie has no final label), and ``dawid-skene`` and
``mace``, which weigh each person by how reliable their labels look (crowd-kit's implementations,
in the optional ``crowd`` extra). Each final label carries its support (how many labels, which)
and a confidence: the winning share for majority, the posterior probability for Dawid-Skene and
MACE. An adjudicator's resolution overrides the method. Only each person's latest label counts;
check items (gold, attention, qualification) are never labeled here, and screened-out people are
left out unless asked for.

Final labels can become a statement set's reference labels (``--to-statements``), so the
classifier report validates the gate's classifier against the crowd.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput, WorkspaceError
from .audits import get_audit
from .labels import CANT_TELL

if TYPE_CHECKING:
    from ..workspace import Workspace

Method = Literal["majority", "dawid-skene", "mace"]
METHODS: tuple[str, ...] = ("majority", "dawid-skene", "mace")
CROWD_EXTRA = "crowd"


class FinalLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str
    label: str | None  # None: a tie under majority, with no resolution
    method: str  # the method, or "adjudicated"
    n_labels: int
    support: dict[str, int]  # label -> how many people gave it
    labels: dict[str, str]  # person -> their latest label
    confidence: float | None  # majority: winning share; Dawid-Skene, MACE: posterior


class FinalLabels(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    task: str
    method: str
    n_people: int
    screened_left_out: int  # screened-out people whose labels were left out
    n_items_unlabeled: int  # audited items nobody (counted) has labeled
    items: list[FinalLabel]

    def lines(self) -> list[str]:
        ties = sum(x.label is None for x in self.items)
        adj = sum(x.method == "adjudicated" for x in self.items)
        dist = Counter(x.label for x in self.items if x.label is not None)
        out = [
            f"Audit {self.audit!r}: {len(self.items)} final {self.task} labels by {self.method} "
            f"from {self.n_people} people"
            + (f" ({adj} from the adjudicator)" if adj else "")
            + (f"; {ties} ties without a final label" if ties else "")
            + (
                f"; {self.screened_left_out} screened-out "
                f"{'person' if self.screened_left_out == 1 else 'people'} left out"
                if self.screened_left_out
                else ""
            )
            + (
                f"; {self.n_items_unlabeled} items not labeled yet"
                if self.n_items_unlabeled
                else ""
            )
            + ".",
            "Labels: " + ", ".join(f"{k} {n}" for k, n in dist.most_common()),
            "item_id\tlabel\tconfidence\tsupport",
        ]
        for x in self.items:
            conf = "-" if x.confidence is None else f"{x.confidence:.3f}"
            sup = ", ".join(f"{k} {n}" for k, n in x.support.items())
            out.append(f"{x.item_id}\t{x.label or '(tie)'}\t{conf}\t{sup} (of {x.n_labels})")
        return out


def _latest(ws: Workspace, name: str, include_screened: bool) -> tuple[dict, dict, int]:
    """(item -> person -> latest label, item -> resolution, screened people left out)."""
    screened = {
        n
        for (n,) in ws.db.execute(
            "select name from audit_participants where audit = ? and status = 'screened_out'",
            [name],
        ).fetchall()
    }
    checks = {
        i for (i,) in ws.db.execute("select item_id from audit_checks where audit = ?", [name])
    }
    by_item: dict[str, dict[str, str]] = {}
    resolved: dict[str, str] = {}
    for item, who, role, label in ws.db.execute(
        "select item_id, annotator, role, label from audit_labels where audit = ? order by id",
        [name],
    ).fetchall():
        if item in checks:
            continue
        if role == "adjudicator":
            resolved[item] = label
        elif include_screened or who not in screened:
            by_item.setdefault(item, {})[who] = label
    return by_item, resolved, 0 if include_screened else len(screened)


def crowdkit_aggregation():
    try:
        from crowdkit import aggregation
    except ImportError:
        raise BadInput(
            f"Dawid-Skene and MACE need crowd-kit: pip install 'agentmemgate[{CROWD_EXTRA}]' "
            "(or use --method majority)"
        ) from None
    return aggregation


def final_labels(
    ws: Workspace, name: str, method: str = "majority", *, include_screened: bool = False
) -> FinalLabels:
    if method not in METHODS:
        raise BadInput(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    info = get_audit(ws, name)
    by_item, resolved, left_out = _latest(ws, name, include_screened)
    audited = [
        i
        for (i,) in ws.db.execute(
            "select item_id from audit_items where audit = ? and item_id not in (select item_id "
            "from audit_checks where audit = ?) order by position",
            [name, name],
        ).fetchall()
    ]
    if not by_item and not resolved:
        if left_out:
            raise BadInput(
                f"Audit {name!r} has labels only from screened-out people "
                "(--include-screened counts them)"
            )
        raise BadInput(
            f"Audit {name!r} has no labels yet: nothing to take final labels from "
            f"(amg audit people {name} shows who is working)"
        )
    posterior: dict[str, dict[str, float]] = {}
    if method != "majority" and by_item:
        posterior = _model(method, by_item)
    out = []
    for item in audited:
        labs = by_item.get(item, {})
        if not labs and item not in resolved:
            continue
        support = dict(sorted(Counter(labs.values()).items(), key=lambda kv: (-kv[1], kv[0])))
        if item in resolved:
            label, used, conf = resolved[item], "adjudicated", None
        elif method == "majority":
            top = list(support.items())
            tie = len(top) > 1 and top[0][1] == top[1][1]
            label = None if tie else top[0][0]
            used, conf = method, round(top[0][1] / len(labs), 6)
        else:
            probs = posterior[item]
            label = max(sorted(probs), key=lambda k: probs[k])
            used, conf = method, round(float(probs[label]), 6)
        out.append(
            FinalLabel(
                item_id=item,
                label=label,
                method=used,
                n_labels=len(labs),
                support=support,
                labels=dict(sorted(labs.items())),
                confidence=conf,
            )
        )
    people = {p for labs in by_item.values() for p in labs}
    return FinalLabels(
        audit=name,
        task=info.task,
        method=method,
        n_people=len(people),
        screened_left_out=left_out,
        n_items_unlabeled=len(audited) - len(out),
        items=out,
    )


def _model(method: str, by_item: dict[str, dict[str, str]]) -> dict[str, dict[str, float]]:
    """Posterior probabilities per item and label from crowd-kit (seeded where it draws)."""
    import pandas as pd

    agg = crowdkit_aggregation()
    df = pd.DataFrame(
        [(item, who, lab) for item, labs in by_item.items() for who, lab in labs.items()],
        columns=["task", "worker", "label"],
    )
    model = agg.DawidSkene(n_iter=100) if method == "dawid-skene" else agg.MACE(random_state=0)
    with warnings.catch_warnings():  # crowd-kit 1.4 uses pandas' deprecated inplace= keywords
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        proba = model.fit_predict_proba(df)
    return {
        str(task): {str(lab): float(p) for lab, p in row.items()} for task, row in proba.iterrows()
    }


def write_final_labels(labels: FinalLabels, out: str | Path) -> Path:
    """CSV (``.csv``) or one JSON object per line (``.jsonl``), written atomically."""
    from ..atomic import write_text_atomic

    path = Path(out)
    if path.suffix.lower() not in (".csv", ".jsonl"):
        raise BadInput(f"--out {str(path)!r} must end in .csv or .jsonl")
    rows = [
        {
            "item_id": x.item_id,
            "label": x.label,
            "method": x.method,
            "confidence": x.confidence,
            "n_labels": x.n_labels,
            "support": json.dumps(x.support),
            "labels": json.dumps(x.labels),
        }
        for x in labels.items
    ]
    if path.suffix.lower() == ".jsonl":
        text = "".join(
            json.dumps({**r, "support": x.support, "labels": x.labels}) + "\n"
            for r, x in zip(rows, labels.items)
        )
    else:
        import csv
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["item_id", "label"])
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    try:
        write_text_atomic(path, text)
    except OSError as e:
        raise WorkspaceError(f"Cannot write {str(path)!r}: {e.strerror or e}") from None
    return path


class ToStatements(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set: str
    updated: int
    skipped: dict[str, int]  # why some final labels were not written
    replaced: dict[str, int] = {}  # earlier reference labels changed, by where they came from

    def lines(self) -> list[str]:
        why = ", ".join(f"{n} {k}" for k, n in self.skipped.items() if n)
        out = [
            f"Statement set {self.set!r}: {self.updated} reference labels set from the crowd "
            f"(status human){'; skipped: ' + why if why else ''}."
        ]
        if self.replaced:
            was = ", ".join(f"{n} from {src}" for src, n in sorted(self.replaced.items()))
            out.append(
                f"They changed {sum(self.replaced.values())} earlier reference labels ({was})."
            )
        return [
            *out,
            f"Next: amg classify --statements {self.set} ... and amg report classifier {self.set}",
        ]


def to_statements(ws: Workspace, labels: FinalLabels, set_name: str) -> ToStatements:
    """Make the final labels the reference labels of statement set ``set_name`` (status
    ``human``, the audit and method recorded); ties and "can't tell" are skipped."""
    from ..corpora.statements import load_set
    from ..schema import EVIDENCE_TYPES

    if labels.task != "evidence_type":
        raise BadInput(
            f"Audit {labels.audit!r} is a {labels.task} audit; only evidence_type labels can be "
            "a statement set's reference labels"
        )
    ids = {s.id for s in load_set(ws, set_name)}
    outside = [x.item_id for x in labels.items if x.item_id not in ids]
    if outside:
        raise BadInput(
            f"{len(outside)} item(s) of audit {labels.audit!r} are not statements of set "
            f"{set_name!r}, e.g. {outside[0]!r}; audit the set with --from statements:{set_name}"
        )
    skipped = {"ties": 0, "can't tell": 0}
    rows = []
    for x in labels.items:
        if x.label is None:
            skipped["ties"] += 1
        elif x.label == CANT_TELL or x.label not in EVIDENCE_TYPES:
            skipped["can't tell"] += 1
        else:
            rows.append(x)
    relabel = f"audit:{labels.audit}:{labels.method}"
    before = {
        sid: (ref, status, src)
        for sid, ref, status, src in ws.db.execute(
            "select id, reference, reference_status, relabel from statements where set_name = ?",
            [set_name],
        ).fetchall()
    }
    replaced: dict[str, int] = {}
    for x in rows:
        ref, status, src = before.get(x.item_id, (None, None, None))
        if ref is not None and ref != x.label:
            where = src or status or "the set"
            replaced[where] = replaced.get(where, 0) + 1
    with ws.db.conn:
        for x in rows:
            ws.db["statements"].update(
                (set_name, x.item_id),
                {
                    "reference": x.label,
                    "reference_status": "human",
                    "relabel": relabel if x.method != "adjudicated" else relabel + ":adjudicated",
                },
            )
    return ToStatements(set=set_name, updated=len(rows), skipped=skipped, replaced=replaced)
