"""Who said what in an audit, for the workspace's owner (the viewer), never for annotators: the
items where annotators disagree or differ from the reference, the labels given on one arc, an
item as annotators saw it.

Who said what shows only once an audit is closed (``audit_closed``), so that nobody still
labeling is shown another's labels. Reads only; a workspace made before an audit table existed
reads as having none (the viewer opens workspaces read-only and cannot migrate them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..workspace import Workspace


def _has(ws: Workspace, table: str) -> bool:
    return ws.db[table].exists()


def _one(ws: Workspace, sql: str, args: list):
    row = ws.db.execute(sql, args).fetchone()
    return row[0] if row else None


def audit_closed(ws: Workspace, audit: str) -> bool:
    """Whether every annotator has labeled every item assigned to them (an imported audit,
    with no assignments, was labeled elsewhere: closed); an open audit, once nobody is
    working on it (an item held by someone who left is not waiting for them)."""
    if not _has(ws, "audit_assignments"):
        return True
    if _has(ws, "audit_participants") and _one(
        ws, "select exists (select 1 from audit_participants where audit = ?)", [audit]
    ):
        return not _one(
            ws,
            "select exists (select 1 from audit_participants where audit = ? and "
            "status = 'working')",
            [audit],
        )
    return not _one(
        ws,
        "select exists (select 1 from audit_assignments s where s.audit = ? and not exists "
        "(select 1 from audit_labels l where l.audit = s.audit and l.annotator = s.annotator "
        "and l.item_id = s.item_id))",
        [audit],
    )


def _column(ws: Workspace, table: str, column: str, where: str, audit: str) -> set[str]:
    """One column of an audit's rows in ``table`` (none when the table does not exist yet)."""
    if not _has(ws, table):
        return set()
    sql = f"select {column} from {table} where audit = ? {where}"  # our constants only
    return {v for (v,) in ws.db.execute(sql, [audit])}


def audit_disagreements(ws: Workspace, audit: str) -> list[dict]:
    """Items where annotators' latest labels differ, or a human's differs from the reference.
    As in the agreement report, gold, attention and qualification items and screened-out
    people's labels are left out."""
    checks = _column(ws, "audit_checks", "item_id", "", audit)
    screened = _column(ws, "audit_participants", "name", "and status = 'screened_out'", audit)
    latest: dict[str, dict[str, str]] = {}
    for item, person, label in ws.db.execute(
        "select item_id, annotator, label from audit_labels where audit = ? and "
        "role = 'annotator' order by id",
        [audit],
    ).fetchall():
        if item not in checks and person not in screened:
            latest.setdefault(item, {})[person] = label
    refs = dict(
        ws.db.execute(
            "select item_id, label from audit_references where audit = ?", [audit]
        ).fetchall()
    )
    out = []
    for item, labels in latest.items():
        humans = len(set(labels.values())) > 1
        vs_ref = item in refs and any(v != refs[item] for v in labels.values())
        if humans or vs_ref:
            out.append(
                {
                    "item_id": item,
                    "labels": "; ".join(f"{p}: {v}" for p, v in sorted(labels.items())),
                    "reference": refs.get(item),
                    "annotators_differ": humans,
                    "differs_from_reference": vs_ref,
                }
            )
    return out


def audit_item(ws: Workspace, audit: str, item_id: str) -> dict | None:
    """The item as annotators saw it (its frozen payload), or None."""
    raw = _one(
        ws, "select payload from audit_items where audit = ? and item_id = ?", [audit, item_id]
    )
    return json.loads(raw) if raw else None


def arc_labels(ws: Workspace, arc_id: str) -> tuple[list[dict], list[str]]:
    """Audit labels given on the arc or one of its turns or criteria (who said what, with the
    audit's reference label), from closed audits only; and the open audits that labeled it."""
    if not _has(ws, "audit_labels"):
        return [], []
    like = arc_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ":%"
    rows = list(
        ws.db.query(
            "select l.audit, l.item_id, l.annotator, l.role, l.label, r.label as reference, "
            "l.created_at from audit_labels l left join audit_references r on r.audit = l.audit "
            "and r.item_id = l.item_id where l.item_id = ? or l.item_id like ? escape '\\' "
            "order by l.audit, l.item_id, l.id",
            [arc_id, like],
        )
    )
    closed = {a: audit_closed(ws, a) for a in dict.fromkeys(x["audit"] for x in rows)}
    return [x for x in rows if closed[x["audit"]]], [a for a, c in closed.items() if not c]
