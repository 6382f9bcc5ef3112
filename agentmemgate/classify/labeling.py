"""``amg statements label``: reference labels by majority of model votes under the fixed rubric,
and a relabel by another model family with the agreement (paper, sec. 4: three votes; 92.0%).

Each vote is the argmax of one classifier answer (an LLM sampled with a distinct seed key, or the
offline lexicon, whose votes are identical by construction). A tie for the top label is flagged
(status ``tie``, no reference). With a relabel, items where the families agree are ``agreed`` and
the rest ``disputed``; the two are kept apart downstream (audits take agreed items by default).
Votes are stored as they arrive, so a re-run repeats no finished vote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..corpora.statements import Statement, load_set, update_reference
from ..errors import BadInput, SameFamilyJudge
from ..llm.ref import ModelRef
from ..llm.servers import normalize_family
from ..stats import Proportion, wilson
from ..workspace import Workspace, now
from .classes import EVIDENCE_TYPES, HOLD_CLASSES, Distribution
from .registry import Classifier, classify_and_store, get_classifier


class LabelSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set_name: str
    voters: list[str]
    votes_per_voter: int
    relabeler: str | None
    statements: int
    labeled: int
    ties: int
    agreed: int
    disputed: int
    agreement: Proportion | None  # relabel == reference, over labeled items with a relabel
    commit_hold_agreement: Proportion | None
    errors: int
    first_error: str | None = None
    kept_imported: int = 0  # statements whose imported reference label was left alone
    unlabeled: int = 0  # statements with no valid vote at all (every vote failed)

    def lines(self) -> list[str]:
        out = [
            f"Set {self.set_name}: {self.statements} statements; voters {', '.join(self.voters)} "
            f"x {self.votes_per_voter} votes"
        ]
        if self.kept_imported:
            out.append(
                f"Imported reference labels kept: {self.kept_imported} (not voted on; pass "
                "--replace to vote on them and overwrite them)"
            )
        out.append(f"Reference labels: {self.labeled} (ties flagged, no reference: {self.ties})")
        if self.unlabeled:
            out.append(f"Statements with no valid vote: {self.unlabeled} (left as they were)")
        if self.relabeler:
            out.append(
                f"Relabel by {self.relabeler}: agreement {self.agreement.fmt()}; "
                f"commit/hold agreement {self.commit_hold_agreement.fmt()}"
            )
            out.append(f"Agreed: {self.agreed}; disputed: {self.disputed} (kept apart)")
        if self.errors:
            out.append(
                f"Votes that failed: {self.errors} (a re-run asks again): {self.first_error}"
            )
        return out


def majority(labels: list[str]) -> str | None:
    """The most frequent label, or None when the top count is shared (a tie)."""
    if not labels:
        return None
    counts = {c: labels.count(c) for c in set(labels)}
    top = max(counts.values())
    leaders = [c for c, k in counts.items() if k == top]
    return leaders[0] if len(leaders) == 1 else None


def _todo(
    ws: Workspace,
    set_name: str,
    statements: list[Statement],
    clf: Classifier,
    role: str,
    votes: int,
) -> list[tuple[Statement, int]]:
    done = {
        (r[0], r[1])
        for r in ws.db.execute(
            "select statement_id, vote from statement_votes where set_name = ? and role = ? and voter = ?",
            [set_name, role, clf.name],
        ).fetchall()
    }
    return [(s, v) for v in range(votes) for s in statements if (s.id, v) not in done]


def _collect(
    ws: Workspace,
    set_name: str,
    statements: list[Statement],
    clf: Classifier,
    role: str,
    votes: int,
    concurrency: int,
    progress: bool,
    errors: list[str],
) -> None:
    """Cast ``votes`` votes per statement for one voter, skipping votes already stored."""
    todo = _todo(ws, set_name, statements, clf, role, votes)
    if not todo:
        return

    def store(st: Statement, vote: int, dist: Distribution) -> None:
        with ws.db.conn:
            ws.db["statement_votes"].upsert(
                {
                    "set_name": set_name,
                    "statement_id": st.id,
                    "role": role,
                    "voter": clf.name,
                    "family": clf.family,
                    "vote": vote,
                    "label": dist.predicted,
                    "rubric": clf.rubric_ref,
                    "created_at": now(),
                },
                pk=("set_name", "statement_id", "role", "voter", "vote"),
            )

    errors += classify_and_store(
        clf,
        todo,
        store,
        description=f"{role.title()} votes ({clf.name})",
        concurrency=concurrency,
        progress=progress,
    )


@dataclasses.dataclass
class _Labeling:
    """What a labeling run votes with, checked: the statements to vote on, the voters and the
    relabeler as classifiers."""

    statements: list[Statement]
    kept_imported: int
    voters: list[Classifier]
    relabeler: Classifier | None


def _labeling(
    ws: Workspace,
    set_name: str,
    voters: Sequence[str | ModelRef],
    *,
    votes: int,
    relabel: str | ModelRef | None,
    relabel_votes: int,
    allow_same_family: bool,
    progress: bool,
    replace: bool,
    classifiers: dict[str, Classifier] | None,
) -> _Labeling:
    """Everything a run can refuse, refused before any vote; then the classifiers."""
    voter_refs = ModelRef.each(voters)
    relabel_ref = ModelRef.parse(relabel) if relabel is not None else None
    if not voter_refs:
        raise BadInput("--voters needs at least one classifier or model spec")
    if votes < 1 or relabel_votes < 1:
        raise BadInput("--votes and --relabel-votes must be at least 1")
    urls = [r.base_url for r in voter_refs if r.base_url]
    if urls and not any(r.provider == "openai" for r in voter_refs if r.base_url):
        raise BadInput(
            f"--voters-base-url {urls[0]} is for openai: voters (an OpenAI-compatible server); "
            "name one with --voters openai:MODEL"
        )
    if relabel_ref is not None and relabel_ref.base_url and relabel_ref.provider != "openai":
        raise BadInput(
            f"--relabel-base-url {relabel_ref.base_url} is for an openai: relabeler (an "
            f"OpenAI-compatible server); the relabeler is {relabel_ref.spec or 'not set'}"
        )
    everything = load_set(ws, set_name)
    statements = [s for s in everything if replace or s.reference_status != "imported"]
    if not statements:
        raise BadInput(
            f"Every statement of set {set_name!r} has an imported reference label; "
            "pass --replace to vote on them and overwrite those labels"
        )
    given = classifiers or {}

    def make(ref: ModelRef) -> Classifier:
        if ref.spec in given:
            return given[ref.spec]
        return get_classifier(
            ref if ref.provider == "openai" else ref.replace(base_url=None),
            workspace=ws,
            rubric="evidence_type",
            method="votes",
            samples=1,
            progress=progress,
        )

    voter_clfs = [make(r) for r in voter_refs]
    relabeler = make(relabel_ref) if relabel_ref is not None and relabel_ref.spec else None
    if relabeler is not None and not allow_same_family:
        same = [
            v.name
            for v in voter_clfs
            if normalize_family(v.family) == normalize_family(relabeler.family)
        ]
        if same:
            raise SameFamilyJudge(
                f"Relabeler {relabeler.name} is from the same family "
                f"({relabeler.family}) as voter {same[0]}; pick another family "
                "or pass --allow-same-family"
            )
    return _Labeling(statements, len(everything) - len(statements), voter_clfs, relabeler)


def plan_labels(
    ws: Workspace,
    set_name: str,
    voters: Sequence[str | ModelRef],
    *,
    votes: int = 3,
    relabel: str | ModelRef | None = None,
    relabel_votes: int = 1,
    allow_same_family: bool = False,
    replace: bool = False,
    classifiers: dict[str, Classifier] | None = None,
) -> int:
    """The votes ``label_statements`` would cast (those not stored yet), counted on each model
    (``model.planned``) without sending or storing anything; refuses what it refuses. In a dry
    run (``with run_context(dry_run=True)``) a provider needs no API key."""
    lab = _labeling(
        ws,
        set_name,
        voters,
        votes=votes,
        relabel=relabel,
        relabel_votes=relabel_votes,
        allow_same_family=allow_same_family,
        progress=False,
        replace=replace,
        classifiers=classifiers,
    )
    n = 0
    for clf, role, k in [
        *((c, "reference", votes) for c in lab.voters),
        *([(lab.relabeler, "relabel", relabel_votes)] if lab.relabeler else []),
    ]:
        for st, v in _todo(ws, set_name, lab.statements, clf, role, k):
            n += 1
            if hasattr(clf, "plan"):
                clf.plan(st, v)
    return n


def label_statements(
    ws: Workspace,
    set_name: str,
    voters: Sequence[str | ModelRef],
    *,
    votes: int = 3,
    relabel: str | ModelRef | None = None,
    relabel_votes: int = 1,
    allow_same_family: bool = False,
    concurrency: int = 4,
    progress: bool = False,
    replace: bool = False,
    classifiers: dict[str, Classifier] | None = None,
) -> LabelSummary:
    """Vote, take majorities, relabel, and store reference labels with their status
    (``plan_labels`` counts the votes instead).

    Statements whose reference label came with the import keep it and are not voted on, unless
    ``replace``. ``voters`` and ``relabel``: specs or ``ModelRef``s; their options (``timeout``,
    ``max_tokens``, ...) go to their models, and a base URL (an OpenAI-compatible server) to
    ``openai:`` ones only (``ModelRef.each(specs, base_url, options)`` gives several voters one
    server), so ``--relabel anthropic:X`` still goes to Anthropic, or to ANTHROPIC_BASE_URL."""
    lab = _labeling(
        ws,
        set_name,
        voters,
        votes=votes,
        relabel=relabel,
        relabel_votes=relabel_votes,
        allow_same_family=allow_same_family,
        progress=progress,
        replace=replace,
        classifiers=classifiers,
    )
    statements, voter_clfs, relabeler = lab.statements, lab.voters, lab.relabeler
    kept_imported = lab.kept_imported
    run_id = ws.start_run(
        "statements label",
        {
            "set": set_name,
            "voters": [ModelRef.parse(v).spec for v in voters],
            "votes": votes,
            "relabel": ModelRef.parse(relabel).spec if relabel is not None else None,
            "relabel_votes": relabel_votes,
            "replace": replace,
        },
    )
    errors: list[str] = []
    status = "failed"
    try:
        for clf in voter_clfs:
            _collect(
                ws, set_name, statements, clf, "reference", votes, concurrency, progress, errors
            )
        if relabeler is not None:
            _collect(
                ws,
                set_name,
                statements,
                relabeler,
                "relabel",
                relabel_votes,
                concurrency,
                progress,
                errors,
            )
        status = "ok" if not errors else "partial"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        ws.finish_run(run_id, status)

    voter_names = {c.name for c in voter_clfs}
    ref_votes = _filtered(ws, set_name, "reference", voter_names)
    rel_votes = _filtered(ws, set_name, "relabel", {relabeler.name}) if relabeler else {}
    labeled = ties = agreed = disputed = agree_ch = unlabeled = 0
    for st in statements:
        labels = ref_votes.get(st.id, [])
        if not labels:
            unlabeled += 1
            continue  # every vote failed: leave the statement as it was
        ref = majority(labels)
        if ref is None:
            ties += 1
            update_reference(ws, set_name, st.id, None, "tie")
            continue
        labeled += 1
        if relabeler is None:
            update_reference(ws, set_name, st.id, ref, "voted")
            continue
        rel = majority(rel_votes.get(st.id, []))
        if rel == ref:
            agreed += 1
            update_reference(ws, set_name, st.id, ref, "agreed", rel)
        else:
            disputed += 1
            update_reference(ws, set_name, st.id, ref, "disputed", rel)
        agree_ch += rel is not None and ((rel in HOLD_CLASSES) == (ref in HOLD_CLASSES))
    with_relabel = agreed + disputed
    return LabelSummary(
        set_name=set_name,
        voters=[c.name for c in voter_clfs],
        votes_per_voter=votes,
        relabeler=relabeler.name if relabeler else None,
        statements=len(statements),
        labeled=labeled,
        ties=ties,
        agreed=agreed,
        disputed=disputed,
        agreement=wilson(agreed, with_relabel) if relabeler else None,
        commit_hold_agreement=wilson(agree_ch, with_relabel) if relabeler else None,
        errors=len(errors),
        first_error=errors[0] if errors else None,
        kept_imported=kept_imported,
        unlabeled=unlabeled,
    )


def _filtered(ws: Workspace, set_name: str, role: str, voters: set[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sid, voter, label in ws.db.execute(
        "select statement_id, voter, label from statement_votes where set_name = ? and role = ? "
        "order by voter, vote",
        [set_name, role],
    ).fetchall():
        if voter in voters and label in EVIDENCE_TYPES:
            out.setdefault(sid, []).append(label)
    return out
