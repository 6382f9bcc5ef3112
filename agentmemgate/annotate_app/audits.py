"""Audits for the researcher: create (freeze items, assign, issue links), list, add people, relink
(importing and exporting labels: ``interop``; open audits' study links: ``study``).

Tables (migration ``m002_audits``): ``audit_items`` holds only display payloads;
``audit_references`` (design/model/judge labels) and ``audit_item_strata`` are kept apart and are
read only by reports and exports; ``audit_labels`` is an append-only log (SQLite triggers refuse
UPDATE and DELETE) whose latest row per (annotator, item) counts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
import secrets
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..design.stored import workspace_design
from ..errors import BadInput
from ..text import counted
from ._sampling import assign, order_for, sample
from .checks import attention_checks, plan_checks
from .items import SourceItem
from .labels import LabelSet, label_set, normalize_label, parse_task
from .sources import load_source

if TYPE_CHECKING:
    from ..workspace import Workspace
    from .study_options import StudyOptions

DEFAULT_BASE_URL = "http://127.0.0.1:8501"
# A task whose sample is spread over a stratum unless --stratify-by names another: answer audits
# over the judge's verdict class (initial, plan, both, neither), so rare classes get items.
DEFAULT_STRATUM = {"answer_assertion": "verdict"}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def now_ms() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/?token={token}"


def check_base_url(base_url: str) -> str:
    """Refuse a --base-url that would print links nobody can open (checked before anything is saved)."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(base_url)
        u.port  # noqa: B018  (raises on a non-numeric or out-of-range port)
    except ValueError as e:
        raise BadInput(f"--base-url {base_url!r} is not a usable URL ({e})") from None
    if u.scheme not in ("http", "https") or not u.hostname or u.query or u.fragment:
        raise BadInput(
            f"--base-url {base_url!r} must look like http://HOST[:PORT][/PATH], "
            "e.g. http://127.0.0.1:8501"
        )
    return base_url


class AuditInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    task: str
    label_set: LabelSet
    source: str
    params: dict
    created_at: str
    base_url: str | None = None  # where its links point (None: not recorded, e.g. imported)


class CreatedAudit(BaseModel):
    """The result of ``create_audit``: the links hold secret tokens, shown to the creator once."""

    model_config = ConfigDict(extra="forbid")
    name: str
    task: str
    n_items: int
    n_references: int
    assignments: dict[str, int]
    links: dict[str, str]
    adjudicator: str | None = None
    adjudicator_link: str | None = None
    notes: list[str] = []  # what the source reported (e.g. answers skipped because not judged)
    study_link: str | None = None  # an open audit's one link (people come with their platform id)
    study: dict | None = None  # an open audit's options (StudyOptions)
    n_checks: dict[str, int] = {}  # gold, attention and qualification items

    def lines(self) -> list[str]:
        out = [
            f"Audit {self.name!r}: {counted(self.n_items, self.task + ' item')}, "
            f"{self.n_references} with "
            "a reference label (hidden from annotators).",
            *self.notes,
        ]
        if self.study_link is not None:
            return out + self._study_lines()
        out.append("Personal links (secret; shown once; `amg audit relink` issues a new one):")
        out += [
            f"  {person} ({counted(self.assignments[person], 'item')}): {url}"
            for person, url in self.links.items()
        ]
        if self.adjudicator:
            out.append(f"  {self.adjudicator} (adjudicator): {self.adjudicator_link}")
        return out

    def _study_lines(self) -> list[str]:
        o = self.study or {}
        per = o.get("per_person")
        hidden = ", ".join(f"{n} {k}" for k, n in self.n_checks.items() if n and k != "qualify")
        checks = ", ".join(
            x
            for x in (
                hidden and f"{hidden} (indistinguishable on the page)",
                self.n_checks.get("qualify")
                and f"{self.n_checks['qualify']} qualify (first, each answer shown after it)",
            )
            if x
        )
        pid = o.get("id_param", "PROLIFIC_PID")
        return [
            f"Open study: each item to {o.get('overlap')} different "
            f"{'person' if o.get('overlap') == 1 else 'people'}, "
            f"{per if per else 'as many items as there are'} per person"
            + (f"; checks: {checks}" if checks else "")
            + f"; holds idle over {o.get('reclaim_after_minutes', 30):g} min go back to the pool.",
            "Study link (give it to your platform, which adds each person's id as "
            f"{pid}=...; `amg audit people {self.name}` shows who came):",
            f"  {self.study_link}",
            f"  e.g. {self.study_link}&{pid}=TEST1 to try it yourself",
        ]


class AuditSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    task: str
    source: str
    n_items: int
    n_references: int
    annotators: dict[str, str]  # name -> "labeled/assigned"
    n_labels: int
    created_at: str
    study: dict[str, int] | None = None  # an open audit: people by status

    def line(self) -> str:
        """One row of ``amg audit list``."""
        people = ", ".join(f"{k} {v}" for k, v in self.annotators.items()) or "no annotators"
        if self.study is not None:
            people = "open study: " + (
                ", ".join(
                    f"{n} {k.replace('_', ' ')}"
                    if k != "imported"
                    else f"{counted(n, 'person', 'people')} imported from a file"
                    for k, n in self.study.items()
                    if n
                )
                or "nobody yet"
            )
        return (
            f"{self.name}\t{self.task}\t{counted(self.n_items, 'item')}\t"
            f"{counted(self.n_references, 'reference')}\t"
            f"{self.n_labels} labels logged\t{people}\tfrom {self.source}"
        )


# -- reading -----------------------------------------------------------------------------------
def get_audit(ws: Workspace, name: str) -> AuditInfo:
    row = ws.db.execute(
        "select name, task, label_set, source, params, created_at, base_url "
        "from audits where name = ?",
        [name],
    ).fetchone()
    if row is None:
        known = [r[0] for r in ws.db.execute("select name from audits order by name")]
        raise BadInput(
            f"No audit named {name!r}; known: {', '.join(known) or 'none'} "
            "(create one with `amg audit create`)"
        )
    return AuditInfo(
        name=row[0],
        task=row[1],
        label_set=LabelSet.model_validate_json(row[2]),
        source=row[3],
        params=json.loads(row[4] or "{}"),
        created_at=row[5],
        base_url=row[6],
    )


def list_audits(ws: Workspace) -> list[AuditSummary]:
    out = []
    for (name,) in ws.db.execute("select name from audits order by created_at, name").fetchall():
        info = get_audit(ws, name)
        n_items = _count(
            ws,
            "select count(*) from audit_items where audit = ? and item_id not in "
            "(select item_id from audit_checks where audit = ?)",
            name,
            name,
        )
        if info.params.get("study") is not None:
            by = dict(
                ws.db.execute(
                    "select status, count(*) from audit_participants where audit = ? "
                    "group by status",
                    [name],
                ).fetchall()
            )
            out.append(
                AuditSummary(
                    name=name,
                    task=info.task,
                    source=info.source,
                    n_items=n_items,
                    n_references=_count(
                        ws, "select count(*) from audit_references where audit = ?", name
                    ),
                    annotators={},
                    n_labels=_count(ws, "select count(*) from audit_labels where audit = ?", name),
                    created_at=info.created_at,
                    study={k: by.get(k, 0) for k in ("working", "done", "screened_out", "full")}
                    | {
                        "imported": _count(  # people whose labels came from a file, not the link
                            ws,
                            "select count(*) from audit_annotators where audit = ? and role != "
                            "'adjudicator' and name not in (select name from audit_participants "
                            "where audit = ?)",
                            name,
                            name,
                        )
                    },
                )
            )
            continue
        n_refs = _count(ws, "select count(*) from audit_references where audit = ?", name)
        n_labels = _count(ws, "select count(*) from audit_labels where audit = ?", name)
        ann = {}
        for a, role in ws.db.execute(
            "select name, role from audit_annotators where audit = ? order by name", [name]
        ).fetchall():
            if role == "adjudicator":
                done = _count(
                    ws,
                    "select count(distinct item_id) from audit_labels where audit = ? "
                    "and annotator = ? and role = 'adjudicator'",
                    name,
                    a,
                )
                ann[a] = f"adjudicator, {done} resolved"
                continue
            assigned = _count(
                ws,
                "select count(*) from audit_assignments where audit = ? and annotator = ?",
                name,
                a,
            )
            done = _count(
                ws,
                "select count(distinct item_id) from audit_labels where audit = ? and "
                "annotator = ? and role = 'annotator'",
                name,
                a,
            )
            ann[a] = f"{done}/{assigned}"
        out.append(
            AuditSummary(
                name=name,
                task=info.task,
                source=info.source,
                n_items=n_items,
                n_references=n_refs,
                annotators=ann,
                n_labels=n_labels,
                created_at=info.created_at,
            )
        )
    return out


def _count(ws: Workspace, sql: str, *args) -> int:
    return int(ws.db.execute(sql, list(args)).fetchone()[0])


# -- creating ----------------------------------------------------------------------------------
def create_audit(
    ws: Workspace,
    name: str,
    task: str,
    source: str,
    *,
    sample_n: int | None = None,
    stratify_by: str | None = None,
    annotators: list[str] | None = None,
    overlap: int | None = None,
    seed: int = 0,
    adjudicator: str | None = None,
    base_url: str = DEFAULT_BASE_URL,
    study: StudyOptions | None = None,
    gold_from: str | None = None,
) -> CreatedAudit:
    """Freeze a sample of ``source`` as audit ``name``, assign it and issue one link per person;
    or, with ``study``, an open audit: one study link, items assigned as people arrive (see
    ``study``), with gold, attention and qualification checks.

    Defaults: one annotator named ``annotator``; overlap = every annotator labels every item.
    """
    from .study_options import CHECK_KINDS, new_study_token, study_link

    _check_name(name)
    check_base_url(base_url)
    if _exists(ws, name):
        raise BadInput(f"Audit {name!r} already exists; audits are frozen, choose a new name")
    if study is not None:
        study.check()
        if annotators or adjudicator:
            raise BadInput(
                "An open audit takes people from its study link: drop --annotators and "
                "--adjudicator (add an adjudicator to a fixed audit instead)"
            )
    elif gold_from is not None:
        raise BadInput("--gold-from needs an open audit (--open with --gold N)")
    design = workspace_design(ws)
    task_name, factor = parse_task(task, design)
    people = [] if study is not None else _people(annotators or ["annotator"])
    if adjudicator is not None:
        adjudicator = _people([adjudicator])[0]
        if adjudicator in people:
            raise BadInput(
                f"Adjudicator {adjudicator!r} is also an annotator; the adjudication page "
                "shows others' labels, so name someone who does not annotate this audit"
            )
    k = len(people) if overlap is None else overlap
    source_info: dict = {}
    items = load_source(ws, source, task_name, factor, seed=seed, info=source_info)
    if stratify_by is None and any(DEFAULT_STRATUM.get(task_name) in it.strata for it in items):
        stratify_by = DEFAULT_STRATUM[task_name]
    if task_name == "difficulty" and factor is None:
        factor = _single_factor(items, source, design.factors)
    labels = label_set(task_name, factor, design=design)
    checks = []
    if study is not None:
        items, checks = plan_checks(
            items,
            labels,
            gold=study.gold,
            qualify=study.qualify,
            gold_from=gold_from,
            seed=seed,
        )
        k = study.overlap
    chosen = sample(items, sample_n, stratify_by, seed)
    if sample_n is not None and sample_n > len(items):
        source_info.setdefault("notes", []).append(
            f"--sample {sample_n} asks for more items than the source has: all {len(items)} "
            "are frozen"
        )
    plan = assign([it.id for it in chosen], people, k, seed) if study is None else {}
    _check_references(chosen, labels)
    if study is not None:
        regular = min(study.per_person or len(chosen), len(chosen))
        if study.attention > regular:
            raise BadInput(
                f"--attention {study.attention} is more attention items than the {regular} "
                "audited items each person gets: checks are meant to be a few among many"
            )
        checks += attention_checks(chosen, study.attention, labels, seed)
        study_token = new_study_token()

    tokens = {p: secrets.token_urlsafe(24) for p in people}
    if adjudicator:
        tokens[adjudicator] = secrets.token_urlsafe(24)
    created = now_ms()
    params = {
        "sample": sample_n,
        "stratify_by": stratify_by,
        "annotators": people,
        "overlap": k,
        "seed": seed,
        "adjudicator": adjudicator,
        "factor": factor,
    }
    params.update({k_: v for k_, v in source_info.items() if k_ != "notes"})
    if study is not None:
        params.update(annotators=[], study=study.model_dump(), gold_from=gold_from)
    with ws.db.conn:
        ws.db["audits"].insert(
            {
                "name": name,
                "task": labels.task,
                "source": source,
                "label_set": labels.model_dump_json(),
                "params": json.dumps(params, sort_keys=True),
                "created_at": created,
                "base_url": base_url,
                "study_token_hash": hash_token(study_token) if study is not None else None,
            }
        )
        _insert_items(ws, name, chosen)
        _insert_checks(ws, name, checks, start=len(chosen))
        for person, token in tokens.items():
            ws.db["audit_annotators"].insert(
                {
                    "audit": name,
                    "name": person,
                    "token_hash": hash_token(token),
                    "created_at": created,
                    "role": "adjudicator" if person == adjudicator else "annotator",
                }
            )
        ws.db["audit_assignments"].insert_all(
            {"audit": name, "annotator": p, "item_id": iid, "position": pos}
            for p, ids in plan.items()
            for pos, iid in enumerate(order_for(p, ids, seed))
        )
    return CreatedAudit(
        name=name,
        task=labels.task,
        n_items=len(chosen),
        n_references=sum(it.reference is not None for it in chosen),
        assignments={p: len(ids) for p, ids in plan.items()},
        links={p: link(base_url, tokens[p]) for p in people},
        adjudicator=adjudicator,
        adjudicator_link=link(base_url, tokens[adjudicator]) if adjudicator else None,
        notes=list(source_info.get("notes", [])),
        study_link=study_link(base_url, study_token) if study is not None else None,
        study=study.model_dump() if study is not None else None,
        n_checks={kind: sum(c.kind == kind for c in checks) for kind in CHECK_KINDS}
        if study is not None
        else {},
    )


def _insert_checks(ws: Workspace, name: str, checks: list, start: int) -> None:
    """Check items are display payloads like any other; what they expect goes apart."""
    ws.db["audit_items"].insert_all(
        {
            "audit": name,
            "item_id": c.display.id,
            "position": start + i,
            "payload": c.display.model_dump_json(),
        }
        for i, c in enumerate(checks)
    )
    ws.db["audit_checks"].insert_all(
        {"audit": name, "item_id": c.display.id, "kind": c.kind, "label": c.label} for c in checks
    )


def relink(ws: Workspace, name: str, person: str, base_url: str | None = None) -> str:
    """Issue a new link for one person of an audit; the old link stops working. The link points
    where the audit's links point (``base_url`` given: there from now on, for later relinks too)."""
    if base_url is not None:
        check_base_url(base_url)
    info = get_audit(ws, name)
    row = ws.db.execute(
        "select name from audit_annotators where audit = ? and name = ?", [name, person]
    ).fetchone()
    if row is None:
        raise BadInput(f"Audit {name!r} has no annotator or adjudicator {person!r}")
    token = secrets.token_urlsafe(24)
    with ws.db.conn:
        ws.db.execute(
            "update audit_annotators set token_hash = ? where audit = ? and name = ?",
            [hash_token(token), name, person],
        )
        if base_url is not None:
            ws.db.execute("update audits set base_url = ? where name = ?", [base_url, name])
    return link(base_url or info.base_url or DEFAULT_BASE_URL, token)


class AddedPeople(BaseModel):
    """The result of ``add_people``: new secret links, shown once."""

    model_config = ConfigDict(extra="forbid")
    audit: str
    assignments: dict[str, int]
    links: dict[str, str]

    def lines(self) -> list[str]:
        return [
            f"Added to audit {self.audit!r} (links secret; shown once; `amg audit relink` "
            "issues a new one):"
        ] + [
            f"  {p} ({counted(self.assignments[p], 'item')}): {url}"
            for p, url in self.links.items()
        ]


def add_people(
    ws: Workspace, name: str, people: list[str], *, items: int | None = None
) -> AddedPeople:
    """Add annotators to a fixed-roster audit: each gets every item, or with ``items`` the N
    items with the fewest people assigned so far (ties broken by the audit's seed), in an order
    of their own; returns their new links."""
    info = get_audit(ws, name)
    if info.params.get("study") is not None:
        raise BadInput(
            f"Audit {name!r} is open: people join it through its study link, not by name"
        )
    if info.base_url is None:
        raise BadInput(f"Audit {name!r} was imported from a file; it has no app to add people to")
    new = _people(people)
    known = {
        r[0] for r in ws.db.execute("select name from audit_annotators where audit = ?", [name])
    }
    clash = [p for p in new if p in known]
    if clash:
        raise BadInput(
            f"Audit {name!r} already has {clash[0]!r}; `amg audit relink` gives a new link"
        )
    if items is not None and items < 1:
        raise BadInput(f"--items must be at least 1, got {items}")
    seed = int(info.params.get("seed") or 0)
    load = dict(
        ws.db.execute(
            "select i.item_id, count(a.annotator) from audit_items i left join audit_assignments a "
            "on a.audit = i.audit and a.item_id = i.item_id where i.audit = ? and i.payload is "
            "not null group by i.item_id",
            [name],
        ).fetchall()
    )
    ids = sorted(load)
    tokens = {p: secrets.token_urlsafe(24) for p in new}
    plan = {}
    for p in new:
        rng = random.Random(f"add:{seed}:{name}:{p}")
        ranked = sorted(ids, key=lambda i: (load[i], rng.random()))
        plan[p] = ranked[: items or len(ranked)]
        for i in plan[p]:
            load[i] += 1
    created = now_ms()
    with ws.db.conn:
        for p in new:
            ws.db["audit_annotators"].insert(
                {
                    "audit": name,
                    "name": p,
                    "token_hash": hash_token(tokens[p]),
                    "created_at": created,
                    "role": "annotator",
                }
            )
            ws.db["audit_assignments"].insert_all(
                {
                    "audit": name,
                    "annotator": p,
                    "item_id": iid,
                    "position": pos,
                    "assigned_at": created,
                }
                for pos, iid in enumerate(order_for(p, plan[p], seed))
            )
        params = dict(info.params, annotators=list(info.params.get("annotators") or []) + new)
        ws.db.execute(
            "update audits set params = ? where name = ?",
            [json.dumps(params, sort_keys=True), name],
        )
    return AddedPeople(
        audit=name,
        assignments={p: len(plan[p]) for p in new},
        links={p: link(info.base_url, tokens[p]) for p in new},
    )


def _check_name(name: str) -> None:
    if not _NAME_RE.match(name):
        raise BadInput(f"Audit name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")


def _exists(ws: Workspace, name: str) -> bool:
    return ws.db.execute("select 1 from audits where name = ?", [name]).fetchone() is not None


def _people(names: list[str]) -> list[str]:
    out = []
    for raw in names:
        n = raw.strip()
        if not n:
            continue
        if not _NAME_RE.match(n):
            raise BadInput(f"Annotator name {n!r} must be letters, digits, '.', '_' or '-'")
        if n in out:
            raise BadInput(f"Annotator {n!r} is named twice")
        out.append(n)
    if not out:
        raise BadInput("No annotator names given; e.g. --annotators ana,ben,cy")
    return out


def _single_factor(items: list[SourceItem], source: str, factors: dict) -> str:
    """The one factor of the design that ``items`` vary (a difficulty audit without a factor)."""
    found = sorted({it.strata.get("factor", "") for it in items} - {""})
    usable = [f for f in found if f in factors]
    if len(usable) == 1:
        return usable[0]
    if not usable:
        raise BadInput(
            f"Source {source!r} does not say which factor its items vary; use "
            f"--task difficulty:FACTOR, FACTOR one of: {', '.join(factors)}"
        )
    raise BadInput(
        f"Source {source!r} mixes factors {', '.join(usable)}; audit one at a time with "
        f"--task difficulty:{usable[0]}"
    )


def _check_references(items: list[SourceItem], labels: LabelSet) -> None:
    for it in items:
        if it.reference is not None:
            norm = normalize_label(it.reference.label)
            if norm not in labels.choices:
                raise BadInput(
                    f"Item {it.id!r} has reference label {it.reference.label!r}, not in the "
                    f"{labels.task} label set: {', '.join(labels.choices)}"
                )
            it.reference.label = norm


def _insert_items(ws: Workspace, name: str, items: list[SourceItem]) -> None:
    created = now_ms()
    ws.db["audit_items"].insert_all(
        {"audit": name, "item_id": it.id, "position": i, "payload": it.display.model_dump_json()}
        for i, it in enumerate(items)
    )
    ws.db["audit_item_strata"].insert_all(
        {"audit": name, "item_id": it.id, "strata": json.dumps(it.strata, sort_keys=True)}
        for it in items
    )
    ws.db["audit_references"].insert_all(
        {
            "audit": name,
            "item_id": it.id,
            "label": it.reference.label,
            "source": it.reference.source,
            "created_at": created,
        }
        for it in items
        if it.reference is not None
    )
