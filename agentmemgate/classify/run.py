"""``amg classify``: per-statement distributions for a set, K runs, stored as each one finishes."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..corpora.statements import Statement, load_set
from ..errors import BadInput
from ..llm.ref import ModelRef
from ..workspace import Workspace, now
from .classes import Distribution
from .registry import Classifier, classify_and_store, get_classifier


class ClassifyResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set_name: str
    classifier: str
    runs: int
    statements: int
    new: int
    already_done: int
    errors: int
    first_error: str | None = None
    error_kinds: dict[str, int] = {}
    out: str | None = None
    written: int = 0

    def lines(self) -> list[str]:
        out = [
            f"{self.classifier} on {self.set_name}: {self.new} new, {self.already_done} already "
            f"done, {self.errors} failed ({self.statements} statements x {self.runs} runs)"
        ]
        if self.errors:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.error_kinds.items()))
            out.append(f"Failures ({kinds}); a re-run asks again. First: {self.first_error}")
        if self.out:
            out.append(f"Wrote {self.written} lines to {self.out}")
        return out


class StoredDistribution(BaseModel):
    model_config = ConfigDict(extra="forbid")
    statement_id: str
    classifier: str
    run: int
    probs: dict[str, float]
    p_commit: float
    predicted: str
    method: str
    rubric: str
    valid_votes: int | None = None


def _done(ws: Workspace, set_name: str, classifier: str) -> set[tuple[str, int]]:
    rows = ws.db.execute(
        "select statement_id, run from classifications where set_name = ? and classifier = ?",
        [set_name, classifier],
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def stored(ws: Workspace, set_name: str, classifier: str | None = None) -> list[StoredDistribution]:
    where, args = "set_name = ?", [set_name]
    if classifier:
        where += " and classifier = ?"
        args.append(classifier)
    rows = ws.db.execute(
        f"select statement_id, classifier, run, probs, p_commit, predicted, method, "
        f"rubric, valid_votes from classifications where {where} order by rowid",
        args,
    ).fetchall()
    return [
        StoredDistribution(
            statement_id=r[0],
            classifier=r[1],
            run=r[2],
            probs=json.loads(r[3]),
            p_commit=r[4],
            predicted=r[5],
            method=r[6],
            rubric=r[7],
            valid_votes=r[8],
        )
        for r in rows
    ]


def classifiers_of(ws: Workspace, set_name: str) -> list[str]:
    """Classifier names with results on a set, in the order they were first run."""
    rows = ws.db.execute(
        "select classifier, min(rowid) from classifications where set_name = ? "
        "group by classifier order by 2",
        [set_name],
    ).fetchall()
    return [r[0] for r in rows]


def _to_classify(
    ws: Workspace,
    set_name: str,
    spec: str | ModelRef,
    runs: int,
    classifier: Classifier | None,
    **how,
) -> tuple[list[Statement], Classifier, list[tuple[Statement, int]]]:
    """The set's statements, the classifier, and the (statement, run) pairs not stored yet."""
    if runs < 1:
        raise BadInput("--runs must be at least 1")
    statements = load_set(ws, set_name)
    clf = classifier or get_classifier(spec, workspace=ws, **how)
    done = _done(ws, set_name, clf.name)
    return (
        statements,
        clf,
        [(s, r) for r in range(runs) for s in statements if (s.id, r) not in done],
    )


def plan_classify_set(
    ws: Workspace,
    set_name: str,
    spec: str | ModelRef = "offline",
    *,
    runs: int = 1,
    rubric: str = "evidence_type",
    method: str = "auto",
    samples: int = 5,
    progress: bool = False,
    classifier: Classifier | None = None,
) -> int:
    """What ``classify_set`` with the same arguments would classify: the (statement, run) pairs
    not stored yet, whose calls are counted on the classifier's model (``model.planned``);
    nothing is sent or stored."""
    _, clf, todo = _to_classify(
        ws,
        set_name,
        spec,
        runs,
        classifier,
        rubric=rubric,
        method=method,
        samples=samples,
        progress=progress,
    )
    if hasattr(clf, "plan"):
        for s, r in todo:
            clf.plan(s, r)
    return len(todo)


def classify_set(
    ws: Workspace,
    set_name: str,
    spec: str | ModelRef = "offline",
    *,
    runs: int = 1,
    rubric: str = "evidence_type",
    method: str = "auto",
    samples: int = 5,
    concurrency: int = 4,
    out: str | Path | None = None,
    progress: bool = False,
    classifier: Classifier | None = None,
) -> ClassifyResult:
    """Classify every (statement, run) not yet stored; failures are counted, never stored as
    distributions (a re-run asks again). ``spec``: a spec or a ``ModelRef`` (its base URL, for an
    ``openai:`` classifier, and its model options go to the model). What it would classify,
    counted without sending: ``plan_classify_set``."""
    statements, clf, todo = _to_classify(
        ws,
        set_name,
        spec,
        runs,
        classifier,
        rubric=rubric,
        method=method,
        samples=samples,
        progress=progress,
    )

    def store(st: Statement, run: int, dist: Distribution) -> None:
        with ws.db.conn:
            ws.db["classifications"].upsert(
                {
                    "set_name": set_name,
                    "statement_id": st.id,
                    "classifier": clf.name,
                    "run": run,
                    "probs": json.dumps(dist.probs),
                    "p_commit": dist.p_commit,
                    "predicted": dist.predicted,
                    "method": dist.method + (f"; {dist.detail}" if dist.detail else ""),
                    "rubric": clf.rubric_ref,
                    "rubric_sha256": clf.sha256,
                    "created_at": now(),
                    "valid_votes": dist.valid_votes,
                },
                pk=("set_name", "statement_id", "classifier", "run"),
            )

    errors: list[str] = []
    kinds: dict[str, int] = {}
    run_id = ws.start_run(
        "classify",
        {
            "set": set_name,
            "classifier": clf.name,
            "runs": runs,
            "method": method,
            "samples": samples,
        },
    )
    status = "failed"
    try:
        failures = classify_and_store(
            clf,
            todo,
            store,
            description=f"Classify ({clf.name})",
            concurrency=concurrency,
            progress=progress,
        )
        errors, kinds = list(failures), failures.kinds
        status = "ok" if not errors else "partial"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        ws.finish_run(run_id, status)
    result = ClassifyResult(
        set_name=set_name,
        classifier=clf.name,
        runs=runs,
        statements=len(statements),
        new=len(todo) - len(errors),
        already_done=len(statements) * runs - len(todo),
        errors=len(errors),
        first_error=errors[0] if errors else None,
        error_kinds=kinds,
    )
    if out is not None:
        result.out = str(out)
        result.written = export_distributions(ws, set_name, clf.name, Path(out))
    return result


def export_distributions(ws: Workspace, set_name: str, classifier: str, out: Path) -> int:
    """One line per (statement, run): id, reference, probs, predicted, run, and the source license."""
    by_id = {s.id: s for s in load_set(ws, set_name)}
    rows = stored(ws, set_name, classifier)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            for r in rows:
                s = by_id.get(r.statement_id)
                f.write(
                    json.dumps(
                        {
                            "id": r.statement_id,
                            "reference": s.reference if s else None,
                            "reference_status": s.reference_status if s else None,
                            "probs": r.probs,
                            "p_commit": r.p_commit,
                            "predicted": r.predicted,
                            "run": r.run,
                            "classifier": r.classifier,
                            "method": r.method,
                            "rubric": r.rubric,
                            "license": s.license if s else "",
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
    except OSError as e:
        raise BadInput(f"Cannot write {str(out)!r}: {e.strerror or e}") from None
    return len(rows)
