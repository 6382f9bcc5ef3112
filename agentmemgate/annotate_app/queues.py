"""Everything the annotator and adjudicator pages may read and write, keyed by the secret token.

Blindness lives here, on the server: these functions select display payloads and the caller's
own labels only. They never read ``audit_references`` or ``audit_item_strata``, and the annotator
queue never reads another person's labels. The adjudication queue shows the labels given to an
item without the names of who gave them. For open audits ``study`` assigns items and scores the
checks on the server; what reaches the page is the same display payload for every kind of item,
plus the person's status and code. The app imports nothing else from this package that touches
the database.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from . import study
from .audits import get_audit, hash_token, now_ms
from .items import ItemDisplay
from .labels import LabelSet

if TYPE_CHECKING:
    from ..workspace import Workspace

ACTIVE_CAP_SECONDS = 300.0  # a longer gap on one item is counted as 300 s (the annotator paused)


class Person(BaseModel):
    """Who a token belongs to; the page needs nothing more about them."""

    model_config = ConfigDict(extra="forbid")
    audit: str
    name: str
    role: Literal["annotator", "adjudicator"]
    label_set: LabelSet
    open: bool = False  # came through an open audit's study link


class QueueItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    display: ItemDisplay
    own_label: str | None  # this person's latest label, None while unlabeled


class AdjudicationItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    display: ItemDisplay
    labels_given: list[str]  # the annotators' latest labels, names removed, in a shuffled order
    disagreement: bool
    own_label: str | None  # the adjudicator's latest resolution


def resolve_token(ws: Workspace, token: str | None) -> Person:
    if not token:
        raise BadInput("No access token: open the personal link you were given")
    hashed = hash_token(token.strip())
    row = ws.db.execute(
        "select audit, name, role from audit_annotators where token_hash = ?", [hashed]
    ).fetchone()
    if row is None:
        row = ws.db.execute(
            "select audit, name, 'annotator' from audit_sessions where token_hash = ?", [hashed]
        ).fetchone()
    if row is None:
        raise BadInput("This link is not valid (unknown or replaced token); ask for a new link")
    opened = (
        ws.db.execute(
            "select 1 from audit_participants where audit = ? and name = ?", [row[0], row[1]]
        ).fetchone()
        is not None
    )
    return Person(
        audit=row[0],
        name=row[1],
        role=row[2],
        label_set=get_audit(ws, row[0]).label_set,
        open=opened,
    )


class StudyState(BaseModel):
    """Where an open audit's participant stands: what the page shows besides the items."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["working", "done", "screened_out", "full"]
    planned: int  # slots in their plan (the progress bar's total)
    code: str | None = None  # the completion or screen-out code to show
    redirect: str | None = None  # where to send them, the code filled in


def arrive(ws: Workspace, study_token: str, query: dict[str, str]) -> study.Arrival:
    """Someone opened an open audit's study link (see ``study.arrive``)."""
    return study.arrive(ws, study_token, query)


def study_state(ws: Workspace, token: str, *, top_up: bool = False) -> StudyState | None:
    """None for a fixed roster; for an open audit, the person's state (after assigning their next
    item when ``top_up``; ``annotator_queue`` does that)."""
    me = resolve_token(ws, token)
    if not me.open:
        return None
    p = study.top_up(ws, me.audit, me.name) if top_up else study.participant(ws, me.audit, me.name)
    opts = study.get_options(ws, me.audit)
    redirect = None
    if p.status in ("done", "screened_out") and opts.redirect and p.code:
        redirect = opts.redirect.replace("{code}", p.code)
    return StudyState(status=p.status, planned=len(p.plan), code=p.code, redirect=redirect)


def annotator_queue(ws: Workspace, token: str) -> list[QueueItem]:
    """The caller's own items, in their own shuffled order, with their own latest labels (in an
    open audit: the items labeled so far and the one to label now, assigned as it is needed)."""
    me = resolve_token(ws, token)
    if me.open:
        study.top_up(ws, me.audit, me.name)
    rows = ws.db.execute(
        """
        select i.payload,
               (select l.label from audit_labels l
                 where l.audit = a.audit and l.item_id = a.item_id
                   and l.annotator = a.annotator and l.role = 'annotator'
                 order by l.id desc limit 1)
          from audit_assignments a
          join audit_items i on i.audit = a.audit and i.item_id = a.item_id
         where a.audit = ? and a.annotator = ? and i.payload is not null
         order by a.position, a.item_id
        """,
        [me.audit, me.name],
    ).fetchall()
    return [QueueItem(display=ItemDisplay.model_validate_json(p), own_label=lab) for p, lab in rows]


def adjudication_queue(ws: Workspace, token: str) -> list[AdjudicationItem]:
    """Items labeled by two or more annotators, disagreements first; no names, no references."""
    me = resolve_token(ws, token)
    if me.role != "adjudicator":
        raise BadInput("This link is not an adjudicator's link")
    latest = ws.db.execute(
        """
        select l.item_id, l.label from audit_labels l
         where l.audit = ? and l.role = 'annotator'
           and l.id = (select max(id) from audit_labels m where m.audit = l.audit
                        and m.item_id = l.item_id and m.annotator = l.annotator
                        and m.role = 'annotator')
        """,
        [me.audit],
    ).fetchall()
    given: dict[str, list[str]] = {}
    for item_id, label in latest:
        given.setdefault(item_id, []).append(label)
    own = dict(
        ws.db.execute(
            """
        select item_id, label from audit_labels l
         where audit = ? and annotator = ? and role = 'adjudicator'
           and id = (select max(id) from audit_labels m where m.audit = l.audit
                      and m.item_id = l.item_id and m.annotator = l.annotator
                      and m.role = 'adjudicator')
        """,
            [me.audit, me.name],
        ).fetchall()
    )
    rows = ws.db.execute(
        "select item_id, position, payload from audit_items where audit = ? and "
        "payload is not null",
        [me.audit],
    ).fetchall()
    out = []
    for item_id, pos, payload in rows:
        labels = given.get(item_id, [])
        if len(labels) < 2:
            continue
        rng = random.Random(f"adjudicate:{me.audit}:{item_id}")
        shown = sorted(labels)
        rng.shuffle(shown)
        out.append(
            (
                0 if len(set(labels)) > 1 else 1,
                pos,
                AdjudicationItem(
                    display=ItemDisplay.model_validate_json(payload),
                    labels_given=shown,
                    disagreement=len(set(labels)) > 1,
                    own_label=own.get(item_id),
                ),
            )
        )
    return [x for *_, x in sorted(out, key=lambda t: (t[0], t[1]))]


def summarize_given(labels: list[str]) -> list[tuple[str, int]]:
    """Label counts for the adjudicator, most frequent first (ties in label order)."""
    return sorted(Counter(labels).items(), key=lambda kv: (-kv[1], kv[0]))


def record_label(
    ws: Workspace,
    token: str,
    item_id: str,
    label: str,
    *,
    shown_at: str | None = None,
    active_seconds: float | None = None,
) -> str | None:
    """Append one label by the token's owner; the item must be theirs to label. Returns the
    feedback to show for a qualification item of an open audit (None otherwise)."""
    me = resolve_token(ws, token)
    label = me.label_set.check(label)
    if active_seconds is not None:
        active_seconds = round(min(max(0.0, float(active_seconds)), ACTIVE_CAP_SECONDS), 3)
    if me.open:
        return _record_open(ws, me, item_id, label, shown_at, active_seconds)
    if me.role == "annotator":
        ok = ws.db.execute(
            "select 1 from audit_assignments where audit = ? and annotator = ? and item_id = ?",
            [me.audit, me.name, item_id],
        ).fetchone()
    else:
        ok = ws.db.execute(
            "select 1 from audit_items where audit = ? and item_id = ?", [me.audit, item_id]
        ).fetchone()
    if ok is None:
        raise BadInput(f"Item {item_id!r} is not in this person's queue")
    with ws.db.conn:
        _insert_label(ws, me, item_id, label, shown_at, active_seconds)
    return None


def _insert_label(
    ws: Workspace,
    me: Person,
    item_id: str,
    label: str,
    shown_at: str | None,
    active_seconds: float | None,
) -> None:
    ws.db["audit_labels"].insert(
        {
            "audit": me.audit,
            "item_id": item_id,
            "annotator": me.name,
            "role": me.role,
            "label": label,
            "rubric": me.label_set.rubric,
            "source": "app",
            "shown_at": shown_at,
            "created_at": now_ms(),
            "active_seconds": active_seconds,
        }
    )


def _record_open(
    ws: Workspace,
    me: Person,
    item_id: str,
    label: str,
    shown_at: str | None,
    active_seconds: float | None,
) -> str | None:
    """A label in an open audit, in one write transaction with the slot check and screening."""
    with study.immediate(ws):
        p = study.participant(ws, me.audit, me.name)
        if p is None or p.status != "working":
            raise BadInput("This study has ended for you; your labels are kept")
        ok = ws.db.execute(
            "select 1 from audit_assignments where audit = ? and annotator = ? and item_id = ?",
            [me.audit, me.name, item_id],
        ).fetchone()
        if ok is None:
            raise BadInput(f"Item {item_id!r} is not in this person's queue")
        taken = study.claim_for_label(ws, me.audit, me.name, item_id)
        feedback = None
        if taken is None:
            _insert_label(ws, me, item_id, label, shown_at, active_seconds)
            ws.db.execute(
                "update audit_participants set last_seen_at = ? where audit = ? and name = ?",
                [now_ms(), me.audit, me.name],
            )
            feedback = study.after_label(ws, me.audit, me.name, item_id)
    if taken is not None:
        raise study.SlotTaken(taken)
    return feedback
