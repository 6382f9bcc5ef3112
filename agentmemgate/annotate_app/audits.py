"""Audits for the researcher: create (freeze items, assign, issue links), import, export, list.

Tables (migration ``m002_audits``): ``audit_items`` holds only display payloads;
``audit_references`` (design/model/judge labels) and ``audit_item_strata`` are kept apart and are
read only by reports and exports; ``audit_labels`` is an append-only log (SQLite triggers refuse
UPDATE and DELETE) whose latest row per (annotator, item) counts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..design.stored import workspace_design
from ..errors import BadInput, WorkspaceError, unreadable
from ._sampling import assign, order_for, sample
from .items import REFERENCE_SOURCES, SourceItem
from .labels import TASKS, LabelSet, custom_label_set, label_set, normalize_label, parse_task
from .sources import load_source

if TYPE_CHECKING:
    from ..design import Design
    from ..workspace import Workspace

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

    def lines(self) -> list[str]:
        out = [
            f"Audit {self.name!r}: {self.n_items} {self.task} items, {self.n_references} with "
            "a reference label (hidden from annotators).",
            *self.notes,
            "Personal links (secret; shown once; `amg audit relink` issues a new one):",
        ]
        out += [
            f"  {person} ({self.assignments[person]} items): {url}"
            for person, url in self.links.items()
        ]
        if self.adjudicator:
            out.append(f"  {self.adjudicator} (adjudicator): {self.adjudicator_link}")
        return out


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

    def line(self) -> str:
        """One row of ``amg audit list``."""
        people = ", ".join(f"{k} {v}" for k, v in self.annotators.items()) or "no annotators"
        return (
            f"{self.name}\t{self.task}\t{self.n_items} items\t{self.n_references} references\t"
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
        n_items = _count(ws, "select count(*) from audit_items where audit = ?", name)
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
) -> CreatedAudit:
    """Freeze a sample of ``source`` as audit ``name``, assign it and issue one link per person.

    Defaults: one annotator named ``annotator``; overlap = every annotator labels every item.
    """
    _check_name(name)
    check_base_url(base_url)
    if _exists(ws, name):
        raise BadInput(f"Audit {name!r} already exists; audits are frozen, choose a new name")
    design = workspace_design(ws)
    task_name, factor = parse_task(task, design)
    people = _people(annotators or ["annotator"])
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
    chosen = sample(items, sample_n, stratify_by, seed)
    plan = assign([it.id for it in chosen], people, k, seed)
    _check_references(chosen, labels)

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
            }
        )
        _insert_items(ws, name, chosen)
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


# -- importing ---------------------------------------------------------------------------------
class ImportResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    created: bool
    task: str
    n_rows: int
    n_items: int
    annotators: list[str]
    adjudicators: list[str] = []  # names whose rows carried role=adjudicator (resolutions)
    reference: bool

    def lines(self) -> list[str]:
        what = (
            "reference labels"
            if self.reference
            else " and ".join(
                x
                for x in (
                    f"labels by {', '.join(self.annotators)}" if self.annotators else "",
                    f"resolutions by {', '.join(self.adjudicators)}" if self.adjudicators else "",
                )
                if x
            )
        )
        return [
            f"{'Created' if self.created else 'Updated'} {self.task} audit {self.audit!r}: "
            f"{self.n_rows} {what} for {self.n_items} items."
        ]


def import_labels(
    ws: Workspace, name: str, path: str | Path, *, reference: bool = False, task: str | None = None
) -> ImportResult:
    """Append labels made elsewhere (long CSV: item_id, annotator, label[, role, active_seconds,
    created_at], as ``export_audit`` writes it) or, with ``reference``, set reference labels
    (item_id, label[, source]). Creates the audit if it does not exist.

    A person keeps one role per audit: rows with role ``adjudicator`` are resolutions and never
    count as annotator labels, and an annotator's name cannot be reused for resolutions."""
    _check_name(name)
    rows = _read_csv(Path(path), reference)
    created = not _exists(ws, name)
    if created:
        labels = _infer_label_set([r["label"] for r in rows], task, workspace_design(ws))
    else:
        labels = get_audit(ws, name).label_set
        if task is not None and parse_task(task)[0] != labels.task:
            raise BadInput(f"Audit {name!r} has task {labels.task}, not {parse_task(task)[0]}")
    for r in rows:
        try:
            r["label"] = labels.check(r["label"])
        except BadInput as e:
            raise BadInput(f"{path}: row {r['_row']}: {e}") from None
    ids = list(dict.fromkeys(r["item_id"] for r in rows))
    if not created:
        known = {
            x for (x,) in ws.db.execute("select item_id from audit_items where audit = ?", [name])
        }
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise BadInput(
                f"{path}: {len(unknown)} item id(s) not in audit {name!r}, e.g. "
                f"{', '.join(map(repr, unknown[:3]))}"
            )
    roles = {} if reference else _import_roles(ws, name, rows, path)
    stamp = now_ms()
    with ws.db.conn:
        if created:
            ws.db["audits"].insert(
                {
                    "name": name,
                    "task": labels.task,
                    "source": f"import:{Path(path).name}",
                    "label_set": labels.model_dump_json(),
                    "params": "{}",
                    "created_at": stamp,
                }
            )
            ws.db["audit_items"].insert_all(
                {"audit": name, "item_id": iid, "position": i, "payload": None}
                for i, iid in enumerate(ids)
            )
        if reference:
            ws.db["audit_references"].upsert_all(
                (
                    {
                        "audit": name,
                        "item_id": r["item_id"],
                        "label": r["label"],
                        "source": r.get("source") or "import",
                        "created_at": stamp,
                    }
                    for r in rows
                ),
                pk=("audit", "item_id"),
            )
        else:
            for p, role in roles.items():
                ws.db["audit_annotators"].insert(
                    {
                        "audit": name,
                        "name": p,
                        "role": role,
                        "token_hash": None,
                        "created_at": stamp,
                    },
                    ignore=True,
                )
            ws.db["audit_assignments"].insert_all(
                (
                    {
                        "audit": name,
                        "annotator": r["annotator"],
                        "item_id": r["item_id"],
                        "position": -1,
                    }
                    for r in rows
                    if r["role"] == "annotator"
                ),
                ignore=True,
            )
            ws.db["audit_labels"].insert_all(
                {
                    "audit": name,
                    "item_id": r["item_id"],
                    "annotator": r["annotator"],
                    "role": r["role"],
                    "label": r["label"],
                    "rubric": labels.rubric,
                    "source": "import",
                    "shown_at": None,
                    "created_at": r.get("created_at") or stamp,
                    "active_seconds": r.get("active_seconds"),
                }
                for r in rows
            )
    return ImportResult(
        audit=name,
        created=created,
        task=labels.task,
        n_rows=len(rows),
        n_items=len(ids),
        reference=reference,
        annotators=sorted(p for p, r in roles.items() if r == "annotator"),
        adjudicators=sorted(p for p, r in roles.items() if r == "adjudicator"),
    )


def _import_roles(ws: Workspace, name: str, rows: list[dict], path: str | Path) -> dict[str, str]:
    """Each person's one role in this audit; a clash with the file or the audit is refused, since an
    adjudicator's resolution counted as an annotator label would inflate human-human agreement."""
    known = dict(
        ws.db.execute("select name, role from audit_annotators where audit = ?", [name]).fetchall()
    )
    roles: dict[str, str] = {}
    for r in rows:
        who, role = r["annotator"], r["role"]
        _people([who])
        had = roles.setdefault(who, known.get(who, role))
        if had != role:
            raise BadInput(
                f"{path}: row {r['_row']}: {who!r} is {'an' if had == 'annotator' else 'the'} "
                f"{had} of audit {name!r}; their labels cannot be imported as {role} labels"
            )
    return roles


def _read_csv(path: Path, reference: bool) -> list[dict]:
    if not path.is_file():  # refused before pandas is imported
        raise unreadable(path)
    import pandas as pd

    need = ["item_id", "label"] if reference else ["item_id", "annotator", "label"]
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except FileNotFoundError as e:
        raise unreadable(path, e) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BadInput(f"{path}: not a readable CSV ({msg})") from None
    df.columns = [str(c).strip().lower() for c in df.columns]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise BadInput(
            f"{path}: missing column(s) {', '.join(missing)}; expected a header row "
            f"{','.join(need)}{',source' if reference else ''}"
        )
    if df.empty:
        raise BadInput(f"{path}: no rows")
    rows = []
    for i, rec in enumerate(df.to_dict("records")):
        row = {k: str(v).strip() for k, v in rec.items()}
        row["_row"] = i + 2  # header is row 1
        for c in need:
            if not row[c]:
                raise BadInput(f"{path}: row {row['_row']}: empty {c}")
        if reference and row.get("source") and row["source"] not in REFERENCE_SOURCES:
            raise BadInput(
                f"{path}: row {row['_row']}: source {row['source']!r} is not one of "
                f"{', '.join(REFERENCE_SOURCES)}"
            )
        if not reference:
            row["role"] = (row.get("role") or "annotator").lower()
            if row["role"] not in ("annotator", "adjudicator"):
                raise BadInput(
                    f"{path}: row {row['_row']}: role {row['role']!r} is not annotator or "
                    "adjudicator"
                )
        if not reference and row.get("active_seconds"):
            try:
                row["active_seconds"] = float(row["active_seconds"])
            except ValueError:
                raise BadInput(
                    f"{path}: row {row['_row']}: active_seconds "
                    f"{row['active_seconds']!r} is not a number"
                ) from None
        else:
            row["active_seconds"] = None
        rows.append(row)
    if reference:
        dup = [r["item_id"] for r in rows]
        if len(set(dup)) != len(dup):
            raise BadInput(f"{path}: an item id appears twice; give one reference label per item")
    return rows


def _infer_label_set(found: list[str], task: str | None, design: Design) -> LabelSet:
    """The label set of ``task``, else the first task (or factor of ``design``) whose labels
    hold every label found, else the labels found."""
    if task is not None:
        name, factor = parse_task(task, design)
        return label_set(name, factor, design=design)
    norm = {normalize_label(x) for x in found}
    candidates = [label_set(t, design=design) for t in TASKS if t != "difficulty"]
    candidates += [label_set("difficulty", f, design=design) for f in design.factors]
    for ls in candidates:
        if norm <= set(ls.choices) and norm - {"cant_tell"}:
            return ls
    return custom_label_set(sorted(norm))


# -- exporting ---------------------------------------------------------------------------------
def export_audit(ws: Workspace, name: str, out: str | Path | None = None) -> list[Path]:
    """Write the whole label log (``labels.csv``, ``labels.jsonl``, with ``is_latest``) and the
    reference labels (``references.csv``) for analysis elsewhere; returns the paths written."""
    import pandas as pd

    get_audit(ws, name)
    folder = Path(out) if out is not None else ws.path / "audit-exports" / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WorkspaceError(f"Cannot write to {str(folder)!r}: {e}") from None
    df = pd.read_sql_query(
        "select id, audit, item_id, annotator, role, label, rubric, source, shown_at, created_at, "
        "active_seconds from audit_labels where audit = ? order by id",
        ws.db.conn,
        params=[name],
    )
    latest = df.groupby(["annotator", "item_id", "role"])["id"].transform("max")
    df["is_latest"] = df["id"] == latest
    paths = [folder / "labels.csv", folder / "labels.jsonl"]
    df.to_csv(paths[0], index=False)
    df.to_json(paths[1], orient="records", lines=True)
    refs = pd.read_sql_query(
        "select item_id, label, source from audit_references where audit = ? order by item_id",
        ws.db.conn,
        params=[name],
    )
    if len(refs):
        paths.append(folder / "references.csv")
        refs.to_csv(paths[-1], index=False)
    return paths
