"""Labels in and out of the workspace: importing labels made elsewhere (CSV), exporting the label
log for analysis elsewhere."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..design.stored import workspace_design
from ..errors import BadInput, unreadable
from ..outputs import writable
from ..text import counted
from .audits import _check_name, _exists, _people, get_audit, now_ms
from .items import REFERENCE_SOURCES
from .labels import (
    CUSTOM,
    TASKS,
    LabelSet,
    custom_label_set,
    label_set,
    normalize_label,
    parse_task,
)

if TYPE_CHECKING:
    from ..design import Design
    from ..workspace import Workspace


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
    checks_skipped: dict[str, int] = {}  # rows answering check items, by kind: not imported
    screened: list[str] = []  # people the file marks as screened out
    screened_left_out: int = 0  # their rows, left out unless include_screened
    screening_unmarked: bool = False  # an open audit's export from before screened_out was written
    already: int = 0  # rows the audit holds already (the same file imported again): not added
    items_file: str | None = None  # the export's items.csv the new audit took its items from
    unlabeled: int = 0  # items listed there that no imported row labels

    def lines(self) -> list[str]:
        labels = "label" if self.n_rows == 1 else "labels"
        what = (
            f"reference {labels}"
            if self.reference
            else " and ".join(
                x
                for x in (
                    f"{labels} by {', '.join(self.annotators)}" if self.annotators else "",
                    f"resolutions by {', '.join(self.adjudicators)}" if self.adjudicators else "",
                )
                if x
            )
        )
        out = [
            f"{'Created' if self.created else 'Updated'} {self.task} audit {self.audit!r}: "
            f"{self.n_rows} {what} for {counted(self.n_items, 'item')}."
        ]
        if self.items_file:
            out.append(
                f"Items from {self.items_file}"
                + (f", {self.unlabeled} of them with no label yet." if self.unlabeled else ".")
            )
        if self.already:
            out.append(
                f"Skipped {self.already} rows the audit holds already (same person, item and "
                "label, and the same time where the file has one): importing a file twice adds "
                "nothing."
            )
        if self.checks_skipped:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.checks_skipped.items()))
            out.append(
                f"Skipped {sum(self.checks_skipped.values())} rows answering check items "
                f"({kinds}): checks are not items to agree on."
            )
        who = f"{'person' if len(self.screened) == 1 else 'people'} ({', '.join(self.screened)})"
        if self.screened and self.screened_left_out:
            out.append(
                f"Left out {self.screened_left_out} "
                f"{'label' if self.screened_left_out == 1 else 'labels'} by {len(self.screened)} "
                "screened-out "
                f"{who}; --include-screened imports them."
            )
        elif self.screened:
            out.append(
                f"Imported the labels of {len(self.screened)} screened-out {who} as any "
                "annotator's (--include-screened)."
            )
        if self.screening_unmarked:
            out.append(
                "The file does not say who was screened out (no screened_out column: an older "
                "export): every person's labels were imported; export the audit again to leave "
                "screened-out people out."
            )
        return out


ITEMS_FILE = "items.csv"


def _items_beside(path: Path) -> Path | None:
    """The ``items.csv`` an export wrote next to its ``labels.csv``, if the labels come from one."""
    beside = path.parent / ITEMS_FILE
    return beside if path.name != ITEMS_FILE and beside.is_file() else None


def _read_items(path: Path) -> list[str]:
    """The audited items an export listed, in audit order (check items left out)."""
    import csv

    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise unreadable(path, e) from None
    if rows and "item_id" not in rows[0]:
        raise BadInput(f"{path}: no item_id column")
    return list(dict.fromkeys(r["item_id"] for r in rows if r["item_id"] and not r.get("check")))


def _where(row: dict) -> str:
    return row["_row"] if isinstance(row["_row"], str) else f"row {row['_row']}"


FORMATS = ("csv", "label-studio")


def import_labels(
    ws: Workspace,
    name: str,
    path: str | Path,
    *,
    reference: bool = False,
    task: str | None = None,
    format: str = "csv",
    include_screened: bool = False,
) -> ImportResult:
    """Append labels made elsewhere (long CSV: item_id, annotator, label[, role, active_seconds,
    created_at], as ``export_audit`` writes it; or a Label Studio JSON export of the tasks
    ``export_label_studio`` wrote, one annotator per Label Studio user) or, with ``reference``,
    set reference labels (item_id, label[, source]). Creates the audit if it does not exist.

    A person keeps one role per audit: rows with role ``adjudicator`` are resolutions and never
    count as annotator labels, and an annotator's name cannot be reused for resolutions.

    An open audit's export keeps its meaning: rows with a ``check`` (gold, attention or
    qualification items) are skipped, since checks are not items to agree on; rows whose
    ``screened_out`` is true are left out (their items stay) unless ``include_screened``, as the
    agreement report and the final labels leave screened-out people out."""
    _check_name(name)
    if format not in FORMATS:
        raise BadInput(f"Unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    if reference and include_screened:
        raise BadInput("--include-screened applies to labels; drop it with --reference")
    if format == "label-studio":
        if reference:
            raise BadInput("--reference takes a CSV file (item_id,label[,source])")
        from .label_studio import read_label_studio

        rows = read_label_studio(Path(path))
    else:
        rows = _read_csv(Path(path), reference)
    checks_skipped = dict(Counter(r["check"] for r in rows if r.get("check")))
    unmarked = bool(rows) and "check" in rows[0] and "screened_out" not in rows[0]
    rows = [r for r in rows if not r.get("check")]
    if not rows:
        raise BadInput(f"{path}: every row answers a check item; there are no items to import")
    created = not _exists(ws, name)
    if created:
        labels = _infer_label_set([r["label"] for r in rows], task, workspace_design(ws))
    else:
        labels = get_audit(ws, name).label_set
        asked = None if task is None else task if task == CUSTOM else parse_task(task)[0]
        if asked is not None and asked != labels.task:
            raise BadInput(f"Audit {name!r} has task {labels.task}, not {asked}")
    for r in rows:
        try:
            r["label"] = labels.check(r["label"])
        except BadInput as e:
            raise BadInput(f"{path}: {_where(r)}: {e}") from None
    ids = list(dict.fromkeys(r["item_id"] for r in rows))  # a screened-out person's items stay
    items_file = _items_beside(Path(path)) if created and format == "csv" else None
    unlabeled = 0
    if items_file is not None:  # the export's item list: items nobody labeled are items too
        listed = _read_items(items_file)
        known = set(listed)
        missing = [i for i in ids if i not in known]
        if missing:
            raise BadInput(
                f"{path}: {len(missing)} item id(s) not in {items_file.name} beside it, e.g. "
                f"{', '.join(map(repr, missing[:3]))}; move {items_file.name} away to import "
                "the labels alone"
            )
        unlabeled = len(known - set(ids))
        ids = listed
    screened = sorted({r["annotator"] for r in rows if r.get("screened_out")})
    kept = rows if include_screened else [r for r in rows if not r.get("screened_out")]
    left_out, rows = len(rows) - len(kept), kept
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
    already = 0
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
            held = {
                tuple(r)
                for r in ws.db.execute(
                    "select item_id, annotator, role, label, created_at from audit_labels "
                    "where audit = ?",
                    [name],
                ).fetchall()
            }
            latest = {
                (i, a, r): lab
                for i, a, r, lab in ws.db.execute(
                    "select item_id, annotator, role, label from audit_labels where audit = ? "
                    "order by id",
                    [name],
                )
            }
            fresh = [  # a timed row is new unless held; an untimed one unless it is the
                r  # person's latest label for the item already (it would change nothing)
                for r in rows
                if (
                    (r["item_id"], r["annotator"], r["role"], r["label"], r["created_at"])
                    not in held
                    if r.get("created_at")
                    else latest.get((r["item_id"], r["annotator"], r["role"])) != r["label"]
                )
            ]
            already = len(rows) - len(fresh)
            rows = fresh
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
        checks_skipped=checks_skipped,
        items_file=items_file.name if items_file is not None else None,
        unlabeled=unlabeled,
        screened=screened,
        screened_left_out=left_out,
        screening_unmarked=unmarked,
        already=already,
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
                f"{path}: {_where(r)}: {who!r} is {'an' if had == 'annotator' else 'the'} "
                f"{had} of audit {name!r}; their labels cannot be imported as {role} labels"
            )
    return roles


def _check_fields(path: Path) -> None:
    """Refuse a row with more fields than the header (pandas would take its first field as an
    index and shift the rest into the wrong columns)."""
    import csv

    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            for n, row in enumerate(reader, 2):
                if header is not None and len(row) > len(header):
                    raise BadInput(
                        f"{path}: row {n} has {len(row)} fields, the header {len(header)} "
                        f"({','.join(header)})"
                    )
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: not a readable CSV ({e})") from None
    except OSError as e:
        raise unreadable(path, e) from None


def _read_csv(path: Path, reference: bool) -> list[dict]:
    if not path.is_file():  # refused before pandas is imported
        raise unreadable(path)
    import pandas as pd

    need = ["item_id", "label"] if reference else ["item_id", "annotator", "label"]
    if path.stat().st_size == 0:
        raise BadInput(f"{path}: the file is empty")
    if path.suffix.lower() == ".json" and not reference:
        raise BadInput(
            f"{path}: a JSON file; a Label Studio export imports with --format label-studio, "
            "labels in CSV need a .csv file"
        )
    _check_fields(path)
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
        what = "references" if reference else "labels"
        raise BadInput(
            f"{path}: a header and no rows: no {what} to import (an audit exported before anyone "
            "labelled gives such a file)"
        )
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
        if not reference and "screened_out" in row:
            row["screened_out"] = row["screened_out"].lower() in ("true", "1", "yes")
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
    if task == CUSTOM:  # labels of the user's own, whatever they overlap
        return custom_label_set(sorted({normalize_label(x) for x in found}))
    if task is not None:
        name, factor = parse_task(task, design)
        return label_set(name, factor, design=design)
    norm = {normalize_label(x) for x in found}
    candidates = [label_set(t, design=design) for t in TASKS if t != "difficulty"]
    candidates += [label_set("difficulty", f, design=design) for f in design.factors]
    for ls in candidates:
        if norm <= set(ls.choices) and norm - {"cant_tell"}:
            return ls
    overlap = max(candidates, key=lambda ls: len((norm - {"cant_tell"}) & set(ls.choices)))
    if (norm - {"cant_tell"}) & set(overlap.choices):  # a known task's labels, some mistyped
        odd = sorted(norm - set(overlap.choices))
        name = overlap.task + (f":{overlap.factor}" if overlap.factor else "")
        raise BadInput(
            f"Label(s) {', '.join(map(repr, odd))} are not in the {name} label set "
            f"({', '.join(overlap.choices)}), which holds the file's other labels: fix them, or "
            "pass --task custom for labels of your own"
        )
    return custom_label_set(sorted(norm))  # labels of no known task: a label set of their own


# -- exporting ---------------------------------------------------------------------------------
def export_audit(ws: Workspace, name: str, out: str | Path | None = None) -> list[Path]:
    """Write the whole label log (``labels.csv``, ``labels.jsonl``, with ``is_latest``, and for an
    open audit ``check``: the kind of check an item is, empty for an audited item, and
    ``screened_out``: whether the person was screened out), every item of the audit in order
    (``items.csv``, with ``check`` for an open audit: items nobody labeled are in no label row)
    and the reference labels (``references.csv``) for analysis elsewhere; returns the paths
    written. ``import_labels`` reads these files back into an audit with the same items and
    agreement."""
    import pandas as pd

    info = get_audit(ws, name)
    folder = writable(Path(out) if out is not None else ws.path / "audit-exports" / name)
    df = pd.read_sql_query(
        "select id, audit, item_id, annotator, role, label, rubric, source, shown_at, created_at, "
        "active_seconds from audit_labels where audit = ? order by id",
        ws.db.conn,
        params=[name],
    )
    latest = df.groupby(["annotator", "item_id", "role"])["id"].transform("max")
    df["is_latest"] = df["id"] == latest
    checks = dict(
        ws.db.execute("select item_id, kind from audit_checks where audit = ?", [name]).fetchall()
    )
    if checks:  # an open audit: which rows answer a gold, attention or qualification item
        df["check"] = df["item_id"].map(checks).fillna("")
    if info.params.get("study"):  # an open audit: whose labels its reports leave out
        screened = {
            p
            for (p,) in ws.db.execute(
                "select name from audit_participants where audit = ? and status = 'screened_out'",
                [name],
            )
        }
        df["screened_out"] = df["annotator"].isin(screened)
    paths = [folder / "labels.csv", folder / "labels.jsonl"]
    df.to_csv(paths[0], index=False)
    df.to_json(paths[1], orient="records", lines=True)
    items = pd.read_sql_query(
        "select item_id from audit_items where audit = ? order by position, item_id",
        ws.db.conn,
        params=[name],
    )
    if checks:
        items["check"] = items["item_id"].map(checks).fillna("")
    paths.append(folder / ITEMS_FILE)
    items.to_csv(paths[-1], index=False)
    refs = pd.read_sql_query(
        "select item_id, label, source from audit_references where audit = ? order by item_id",
        ws.db.conn,
        params=[name],
    )
    if len(refs):
        paths.append(folder / "references.csv")
        refs.to_csv(paths[-1], index=False)
    return paths


# -- listing -----------------------------------------------------------------------------------
class AuditItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str
    task: str
    kind: str  # item, or the check it is (gold, attention, qualify)
    shown: str  # what the annotator labels: the highlighted text, the values, the answer
    context: list[str]  # the turns shown around it ("speaker: text")
    question: str | None = None


class AuditItems(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    task: str
    items: list[AuditItem]

    def lines(self) -> list[str]:
        out = [f"Audit {self.audit!r}: {len(self.items)} items", "item_id\tkind\tshown\tcontext"]
        for it in self.items:
            shown = " ".join(it.shown.split())
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            out.append(f"{it.item_id}\t{it.kind}\t{shown}\t{len(it.context)} turn(s)")
        return out


def audit_items(ws: Workspace, name: str) -> AuditItems:
    """Every item of an audit as its annotators see it (for the workspace's owner: ids, and
    which items are checks)."""
    from .items import ItemDisplay
    from .label_studio import task_data

    info = get_audit(ws, name)
    kinds = dict(
        ws.db.execute("select item_id, kind from audit_checks where audit = ?", [name]).fetchall()
    )
    out = []
    for item, payload in ws.db.execute(
        "select item_id, payload from audit_items where audit = ? order by position", [name]
    ).fetchall():
        if payload is None:  # imported from a file: no display kept
            out.append(AuditItem(item_id=item, task=info.task, kind="item", shown="", context=[]))
            continue
        d = ItemDisplay.model_validate_json(payload)
        data = task_data(d)
        context = [line for line in (data.get("context") or "").split("\n") if line]
        context += [line for line in (data.get("after") or "").split("\n") if line]
        out.append(
            AuditItem(
                item_id=item,
                task=info.task,
                kind=kinds.get(item, "item"),
                shown=data.get("shown") or "",
                context=context,
                question=d.question,
            )
        )
    return AuditItems(audit=name, task=info.task, items=out)
