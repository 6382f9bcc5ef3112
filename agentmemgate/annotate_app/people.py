"""Who is labeling an audit and how well: ``amg audit people`` and the viewer's Audits page.

For the workspace's owner, never for annotators: each person's status (working, idle, done,
screened out, full), items labeled, gold accuracy with a 95% Wilson interval, attention failures,
median active seconds per item and the share of too-fast labels; and the adjudicator's
resolutions beside the labels they resolve. Reads only (the viewer passes a read-only reader).
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..stats import Proportion, wilson
from .audits import get_audit
from .labels import display_name

if TYPE_CHECKING:
    from ..workspace import Workspace

FAST_SECONDS = 2.0


class PersonRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    role: str  # annotator or adjudicator
    platform_id: str | None = None  # open audits
    study_id: str | None = None  # the platform's study and session, where its link passes them
    session_id: str | None = None
    status: str  # working, idle, done, screened_out, full (fixed rosters: working or done)
    status_at: str | None = None
    reason: str | None = None  # why a person was screened out
    code: str | None = None  # the code they were shown
    assigned: int  # regular items assigned (held or labeled)
    labeled: int  # regular items labeled
    gold: Proportion | None = None  # right of the gold items answered (open audits with gold)
    attention_failed: int | None = None
    attention_answered: int | None = None
    median_seconds: float | None = None  # active seconds per labeled item
    fast: Proportion  # labels given faster than ``fast_seconds``
    last_seen_at: str | None = None


class Resolution(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item_id: str
    labels: dict[str, int]  # the annotators' latest labels, counted
    resolution: str
    adjudicator: str


class PeopleReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    open: bool
    fast_seconds: float
    people: list[PersonRow]
    resolutions: list[Resolution]
    counts: dict[str, int]  # people by status

    def lines(self) -> list[str]:
        head = f"Audit {self.audit!r}: " + (
            ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in self.counts.items() if n)
            or "nobody yet"
        )
        cols = ["person", "status", "labeled", "gold right [95% CI]", "attention failed"]
        cols += ["median s/item", f"fast (< {self.fast_seconds:g} s)", "code"]
        rows = []
        for p in self.people:
            who = p.name + (f" ({p.platform_id})" if p.platform_id else "")
            if p.role == "adjudicator":
                who += " (adjudicator)"
            rows.append(
                [
                    who,
                    p.status.replace("_", " ") + (f": {p.reason}" if p.reason else ""),
                    f"{p.labeled}/{p.assigned}" if p.role == "annotator" else str(p.labeled),
                    p.gold.fmt() if p.gold is not None and p.gold.n else "-",
                    f"{p.attention_failed} of {p.attention_answered}"
                    if p.attention_answered
                    else "-",
                    f"{p.median_seconds:.1f}" if p.median_seconds is not None else "-",
                    p.fast.fmt() if p.fast.n else "-",
                    p.code or "-",
                ]
            )
        out = [head, "\t".join(cols)] + ["\t".join(r) for r in rows]
        if self.resolutions:
            out.append(f"Resolutions ({len(self.resolutions)}):")
            out += [
                f"  {r.item_id}: "
                + ", ".join(f"{display_name(k)} x{n}" for k, n in r.labels.items())
                + f" -> {display_name(r.resolution)} ({r.adjudicator})"
                for r in self.resolutions
            ]
        return out


def _idle(last_seen: str | None, minutes: float) -> bool:
    if not last_seen:
        return False
    seen = dt.datetime.fromisoformat(last_seen)
    return dt.datetime.now(dt.UTC) - seen > dt.timedelta(minutes=minutes)


def people_report(ws: Workspace, name: str, fast_seconds: float = FAST_SECONDS) -> PeopleReport:
    info = get_audit(ws, name)
    db = ws.db
    study = info.params.get("study")
    checks = {
        i: (k, lab)
        for i, k, lab in db.execute(
            "select item_id, kind, label from audit_checks where audit = ?", [name]
        ).fetchall()
    }
    parts = {
        r[0]: r[1:]
        for r in db.execute(
            "select name, platform_id, status, status_at, reason, code, last_seen_at, study_id, "
            "session_id "
            "from audit_participants where audit = ?",
            [name],
        ).fetchall()
    }
    labels: dict[str, list[tuple[str, str, float | None]]] = {}
    latest: dict[tuple[str, str], str] = {}
    resolved: dict[str, tuple[str, str]] = {}
    for item, who, role, label, secs in db.execute(
        "select item_id, annotator, role, label, active_seconds from audit_labels where "
        "audit = ? order by id",
        [name],
    ).fetchall():
        labels.setdefault(who, []).append((item, label, secs))
        if role == "adjudicator":
            resolved[item] = (label, who)
        else:
            latest[(who, item)] = label
    assigned: dict[str, set[str]] = {}
    for who, item in db.execute(
        "select annotator, item_id from audit_assignments where audit = ?", [name]
    ).fetchall():
        if item not in checks:
            assigned.setdefault(who, set()).add(item)
    rows = []
    for who, role in db.execute(
        "select name, role from audit_annotators where audit = ? order by role desc, name", [name]
    ).fetchall():
        mine = labels.get(who, [])
        first: dict[str, tuple[str, float | None]] = {}
        for item, label, secs in mine:
            first.setdefault(item, (label, secs))
        regular = {i for i in first if i not in checks}
        secs = [s for i, (_, s) in first.items() if s is not None]
        gold = [first[i][0] == checks[i][1] for i in first if checks.get(i, ("",))[0] == "gold"]
        att = [first[i][0] == checks[i][1] for i in first if checks.get(i, ("",))[0] == "attention"]
        part = parts.get(who)
        if part is not None:
            pid, status, status_at, reason, code, seen, study_id, session_id = part
            if status == "working" and _idle(seen, study.get("reclaim_after_minutes", 30)):
                status = "idle"
        else:
            pid = status_at = reason = code = seen = study_id = session_id = None
            done = role == "adjudicator" or (
                assigned.get(who) and assigned.get(who, set()) <= set(regular)
            )
            status = "done" if done else "working"
        rows.append(
            PersonRow(
                name=who,
                role=role,
                platform_id=pid,
                study_id=study_id,
                session_id=session_id,
                status=status,
                status_at=status_at,
                reason=reason,
                code=code,
                assigned=len(assigned.get(who, set())),
                labeled=len(regular),
                gold=wilson(sum(gold), len(gold)) if study and study.get("gold") else None,
                attention_failed=len(att) - sum(att) if study and study.get("attention") else None,
                attention_answered=len(att) if study and study.get("attention") else None,
                median_seconds=round(statistics.median(secs), 2) if secs else None,
                fast=wilson(sum(s < fast_seconds for s in secs), len(secs)),
                last_seen_at=seen,
            )
        )
    given: dict[str, dict[str, int]] = {}
    for (who, item), label in latest.items():
        if item in resolved:
            counts = given.setdefault(item, {})
            counts[label] = counts.get(label, 0) + 1
    resolutions = [
        Resolution(
            item_id=item,
            labels=dict(sorted(given.get(item, {}).items(), key=lambda kv: (-kv[1], kv[0]))),
            resolution=lab,
            adjudicator=who,
        )
        for item, (lab, who) in sorted(resolved.items())
    ]
    statuses = ["working", "idle", "done", "screened_out", "full"]
    return PeopleReport(
        audit=name,
        open=study is not None,
        fast_seconds=fast_seconds,
        people=rows,
        resolutions=resolutions,
        counts={s: sum(r.status == s for r in rows if r.role == "annotator") for s in statuses},
    )


def to_json(report: PeopleReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2)
