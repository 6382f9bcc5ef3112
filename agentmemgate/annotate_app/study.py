"""Open audits: one study link, items assigned as people arrive, checks, completion codes.

A crowd platform (Prolific, MTurk) sends whoever comes to one link and adds the person's platform
id to it. Each arrival is one person (``audit_participants``, keyed by their platform id), who
gets a plan of slots when they first come: qualification items first (``--qualify``), then their
regular items (``--per-person``) with gold and attention checks mixed in at random positions.

Assignment is just in time and transactional (``BEGIN IMMEDIATE``): a person holds at most one
unlabeled item, chosen when they need it among the items that still lack labels, so each item
goes to K different people (``--overlap``) and no one labels an item twice. What counts towards K
is the labels of people not screened out plus the holds of people active within
``--reclaim-after`` minutes: a hold left idle longer goes back to the pool without any background
job, and a person who returns resumes their own queue (their hold again, if nobody took its slot
meanwhile, or the next item). Screened-out people's labels do not count, so their items reopen.

Blindness: the page gets display payloads only (``queues``); the expected labels of checks are
read here, on the server, and only "go on" or "stop" flows back, except for the qualification
round, whose point is to show the right answer after each item.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import random
import re
import secrets
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from .audits import get_audit, hash_token, now_ms
from .study_options import StudyOptions, options_of

if TYPE_CHECKING:
    from ..workspace import Workspace

_ID_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
Status = Literal["working", "done", "screened_out", "full"]


def get_options(ws: Workspace, audit: str) -> StudyOptions:
    opts = options_of(get_audit(ws, audit).params)
    if opts is None:
        raise BadInput(f"Audit {audit!r} has a fixed roster, not a study link")
    return opts


# -- transactions ------------------------------------------------------------------------------
@contextlib.contextmanager
def immediate(ws: Workspace) -> Iterator[None]:
    """One write transaction that takes the database's write lock first (``BEGIN IMMEDIATE``), so
    two arrivals never choose the same free slot; the busy timeout makes others wait their turn."""
    conn = ws.db.conn
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _iso(seconds_ago: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds_ago)).isoformat(
        timespec="milliseconds"
    )


# -- who is here -------------------------------------------------------------------------------
class Participant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    audit: str
    name: str
    platform_id: str
    plan: list[str]
    status: Status
    code: str | None = None
    reason: str | None = None
    last_seen_at: str


def participant(ws: Workspace, audit: str, name: str) -> Participant | None:
    row = ws.db.execute(
        "select platform_id, plan, status, code, reason, last_seen_at from audit_participants "
        "where audit = ? and name = ?",
        [audit, name],
    ).fetchone()
    if row is None:
        return None
    return Participant(
        audit=audit,
        name=name,
        platform_id=row[0],
        plan=json.loads(row[1]),
        status=row[2],
        code=row[3],
        reason=row[4],
        last_seen_at=row[5],
    )


class Arrival(BaseModel):
    """What the page does with someone who opened the study link: sign them in with ``token``, or
    show ``message`` (one line) and no items."""

    model_config = ConfigDict(extra="forbid")
    token: str | None = None
    name: str | None = None
    message: str | None = None
    returning: bool = False


def open_audit_of(ws: Workspace, study_token: str) -> tuple[str, StudyOptions]:
    row = ws.db.execute(
        "select name from audits where study_token_hash = ?", [hash_token(study_token.strip())]
    ).fetchone()
    if row is None:
        raise BadInput(
            "This study link is not valid; open it again from your platform's study page"
        )
    info = get_audit(ws, row[0])
    return info.name, options_of(info.params)


FULL = (
    "This study has all the labels it needs, so there is nothing left to label. Thank you for "
    "your interest; please return the study on your platform."
)


def arrive(ws: Workspace, study_token: str, query: dict[str, str]) -> Arrival:
    """Sign in whoever opened the study link, by the platform id in ``query``; a newcomer gets a
    plan of slots, a returning person their own queue, a newcomer to a full study a message."""
    audit, opts = open_audit_of(ws, study_token)
    pid = (query.get(opts.id_param) or "").strip()
    if not pid:
        return Arrival(
            message=f"This link has no participant id ({opts.id_param}): open the study from "
            "your platform's study page, which adds it."
        )
    if not _ID_RE.match(pid):
        return Arrival(message=f"The participant id in this link ({opts.id_param}) is not valid.")
    now = now_ms()
    token = secrets.token_urlsafe(24)
    with immediate(ws):
        row = ws.db.execute(
            "select name from audit_participants where audit = ? and platform_id = ?", [audit, pid]
        ).fetchone()
        returning = row is not None
        if returning:
            name = row[0]
            ws.db.execute(
                "update audit_participants set last_seen_at = ? where audit = ? and name = ?",
                [now, audit, name],
            )
        else:
            if not _free_items(ws, audit, opts, None):
                return Arrival(message=FULL)
            n = ws.db.execute(
                "select count(*) from audit_participants where audit = ?", [audit]
            ).fetchone()[0]
            name = f"p{n + 1:04d}"
            ws.db["audit_participants"].insert(
                {
                    "audit": audit,
                    "name": name,
                    "platform_id": pid,
                    "study_id": (query.get("STUDY_ID") or "").strip()[:128] or None,
                    "session_id": (query.get("SESSION_ID") or "").strip()[:128] or None,
                    "plan": json.dumps(_plan(ws, audit, opts, name)),
                    "arrived_at": now,
                    "last_seen_at": now,
                    "status": "working",
                    "status_at": now,
                }
            )
            ws.db["audit_annotators"].insert(
                {
                    "audit": audit,
                    "name": name,
                    "role": "annotator",
                    "token_hash": None,
                    "created_at": now,
                }
            )
        ws.db["audit_sessions"].insert(
            {"token_hash": hash_token(token), "audit": audit, "name": name, "created_at": now}
        )
    return Arrival(token=token, name=name, returning=returning)


def _plan(ws: Workspace, audit: str, opts: StudyOptions, name: str) -> list[str]:
    """Slot kinds in order: "qualify" first, then "item", "gold" and "attention" shuffled."""
    n_items = ws.db.execute(
        "select count(*) from audit_items where audit = ? and item_id not in "
        "(select item_id from audit_checks where audit = ?)",
        [audit, audit],
    ).fetchone()[0]
    n = n_items if opts.per_person is None else min(opts.per_person, n_items)
    rest = ["item"] * n + ["gold"] * opts.gold + ["attention"] * opts.attention
    random.Random(f"plan:{audit}:{name}").shuffle(rest)
    return ["qualify"] * opts.qualify + rest


# -- assignment --------------------------------------------------------------------------------
def _free_items(
    ws: Workspace, audit: str, opts: StudyOptions, name: str | None
) -> list[tuple[str, int]]:
    """Regular items that still lack labels, with how many count already (labels by people not
    screened out, plus the unlabeled holds of people seen within the reclaim window), fewest
    first; ``name``'s own items left out."""
    cutoff = _iso(opts.reclaim_seconds)
    rows = ws.db.execute(
        """
        with counted as (
          select l.item_id, count(distinct l.annotator) n from audit_labels l
            join audit_participants p on p.audit = l.audit and p.name = l.annotator
           where l.audit = :a and l.role = 'annotator' and p.status != 'screened_out'
           group by l.item_id
        ), held as (
          select s.item_id, count(*) n from audit_assignments s
            join audit_participants p on p.audit = s.audit and p.name = s.annotator
           where s.audit = :a and p.status = 'working' and p.last_seen_at >= :cutoff
             and not exists (select 1 from audit_labels l where l.audit = s.audit
                   and l.item_id = s.item_id and l.annotator = s.annotator and l.role = 'annotator')
           group by s.item_id
        )
        select i.item_id, coalesce(c.n, 0) + coalesce(h.n, 0) taken
          from audit_items i
          left join counted c on c.item_id = i.item_id
          left join held h on h.item_id = i.item_id
         where i.audit = :a
           and i.item_id not in (select item_id from audit_checks where audit = :a)
           and i.item_id not in (select item_id from audit_assignments
                                  where audit = :a and annotator = :me)
           and coalesce(c.n, 0) + coalesce(h.n, 0) < :k
        """,
        {"a": audit, "cutoff": cutoff, "me": name or "", "k": opts.overlap},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _taken_by_others(ws: Workspace, audit: str, opts: StudyOptions, item: str, name: str) -> int:
    cutoff = _iso(opts.reclaim_seconds)
    labeled = ws.db.execute(
        "select count(distinct l.annotator) from audit_labels l join audit_participants p "
        "on p.audit = l.audit and p.name = l.annotator where l.audit = ? and l.item_id = ? "
        "and l.role = 'annotator' and l.annotator != ? and p.status != 'screened_out'",
        [audit, item, name],
    ).fetchone()[0]
    held = ws.db.execute(
        "select count(*) from audit_assignments s join audit_participants p "
        "on p.audit = s.audit and p.name = s.annotator where s.audit = ? and s.item_id = ? "
        "and s.annotator != ? and p.status = 'working' and p.last_seen_at >= ? and not exists "
        "(select 1 from audit_labels l where l.audit = s.audit and l.item_id = s.item_id "
        "and l.annotator = s.annotator and l.role = 'annotator')",
        [audit, item, name, cutoff],
    ).fetchone()[0]
    return labeled + held


def _mine(ws: Workspace, audit: str, name: str) -> list[tuple[str, int, bool]]:
    """The person's assignments in slot order: (item id, position, labeled)."""
    return [
        (r[0], r[1], bool(r[2]))
        for r in ws.db.execute(
            "select s.item_id, s.position, exists (select 1 from audit_labels l where "
            "l.audit = s.audit and l.item_id = s.item_id and l.annotator = s.annotator and "
            "l.role = 'annotator') from audit_assignments s where s.audit = ? and "
            "s.annotator = ? order by s.position",
            [audit, name],
        ).fetchall()
    ]


def _checks_left(ws: Workspace, audit: str, name: str, kind: str) -> list[str]:
    ids = [
        r[0]
        for r in ws.db.execute(
            "select item_id from audit_checks where audit = ? and kind = ? and item_id not in "
            "(select item_id from audit_assignments where audit = ? and annotator = ?) "
            "order by item_id",
            [audit, kind, audit, name],
        ).fetchall()
    ]
    random.Random(f"{kind}:{audit}:{name}").shuffle(ids)
    return ids


def top_up(ws: Workspace, audit: str, name: str) -> Participant:
    """Make sure the person holds their next item (or ends): called before every page.

    Drops a hold whose slot someone else took while the person was away, then, if they hold no
    unlabeled item, assigns the next slot of their plan. A person with nothing left to do is done
    (their completion code recorded); one whose regular items ran out because the study filled up
    is done too, once they have labeled anything, and otherwise told the study is full."""
    opts = get_options(ws, audit)
    started = time.perf_counter()
    with immediate(ws):
        me = participant(ws, audit, name)
        if me is None or me.status != "working":
            return me
        now = now_ms()
        ws.db.execute(
            "update audit_participants set last_seen_at = ? where audit = ? and name = ?",
            [now, audit, name],
        )
        kinds = _kinds(ws, audit)
        mine = _mine(ws, audit, name)
        for item, _pos, labeled in mine:
            if (
                not labeled
                and item not in kinds
                and _taken_by_others(ws, audit, opts, item, name) >= opts.overlap
            ):
                ws.db.execute(
                    "delete from audit_assignments where audit = ? and annotator = ? and item_id = ?",
                    [audit, name, item],
                )
        mine = _mine(ws, audit, name)
        if any(not labeled for *_, labeled in mine):
            return participant(ws, audit, name)
        slot = sum(labeled for *_, labeled in mine)
        item = None
        while slot < len(me.plan) and item is None:
            kind = me.plan[slot]
            if kind == "item":
                free = _free_items(ws, audit, opts, name)
                if free:
                    rng = random.Random(f"pick:{audit}:{name}:{slot}")
                    least = min(n for _, n in free)
                    item = rng.choice(sorted(i for i, n in free if n == least))
                else:
                    break  # the study is full for this person: no regular item left
            else:
                left = _checks_left(ws, audit, name, kind)
                if left:
                    item = left[0]
                else:  # fewer checks of this kind than planned: the slot goes
                    me.plan.pop(slot)
                    ws.db.execute(
                        "update audit_participants set plan = ? where audit = ? and name = ?",
                        [json.dumps(me.plan), audit, name],
                    )
        if item is None:
            return _finish(ws, audit, name, me, slot)
        ws.db["audit_assignments"].insert(
            {
                "audit": audit,
                "annotator": name,
                "item_id": item,
                "position": slot,
                "assigned_at": now,
                "assign_ms": round(1000 * (time.perf_counter() - started), 3),
            }
        )
    return participant(ws, audit, name)


def _kinds(ws: Workspace, audit: str) -> dict[str, str]:
    return dict(
        ws.db.execute("select item_id, kind from audit_checks where audit = ?", [audit]).fetchall()
    )


def _finish(ws: Workspace, audit: str, name: str, me: Participant, slot: int) -> Participant:
    """No next slot: done (with the completion code), screened out by a final check, or (nothing
    labeled at all) turned away as the study is full."""
    opts = get_options(ws, audit)
    if slot == 0:
        set_status(ws, audit, name, "full", None, "the study filled up before their first item")
        return participant(ws, audit, name)
    verdict = screening(ws, audit, name, opts, final=True)
    if verdict is not None:
        set_status(ws, audit, name, "screened_out", opts.screenout_code, verdict)
    else:
        set_status(ws, audit, name, "done", opts.completion_code, None)
    return participant(ws, audit, name)


def set_status(
    ws: Workspace, audit: str, name: str, status: Status, code: str | None, reason: str | None
) -> None:
    ws.db.execute(
        "update audit_participants set status = ?, status_at = ?, code = ?, reason = ? "
        "where audit = ? and name = ?",
        [status, now_ms(), code, reason, audit, name],
    )


# -- checks ------------------------------------------------------------------------------------
def _first_labels(ws: Workspace, audit: str, name: str) -> dict[str, str]:
    """A person's first label on each item: what a check scores (going back to change an
    answer after the qualification's feedback does not change its score)."""
    out: dict[str, str] = {}
    for item, label in ws.db.execute(
        "select item_id, label from audit_labels where audit = ? and annotator = ? and "
        "role = 'annotator' order by id",
        [audit, name],
    ).fetchall():
        out.setdefault(item, label)
    return out


class CheckScore(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gold_right: int = 0
    gold_answered: int = 0
    gold_planned: int = 0
    attention_failed: int = 0
    attention_answered: int = 0
    qualify_right: int = 0
    qualify_answered: int = 0


def check_score(ws: Workspace, audit: str, name: str, plan: list[str] | None = None) -> CheckScore:
    expected = {
        item: (kind, label)
        for item, kind, label in ws.db.execute(
            "select item_id, kind, label from audit_checks where audit = ?", [audit]
        ).fetchall()
    }
    s = CheckScore()
    for item, label in _first_labels(ws, audit, name).items():
        if item not in expected:
            continue
        kind, want = expected[item]
        ok = label == want
        if kind == "gold":
            s.gold_answered += 1
            s.gold_right += ok
        elif kind == "attention":
            s.attention_answered += 1
            s.attention_failed += not ok
        else:
            s.qualify_answered += 1
            s.qualify_right += ok
    if plan is not None:
        s.gold_planned = plan.count("gold")
    return s


def screening(
    ws: Workspace, audit: str, name: str, opts: StudyOptions, *, final: bool = False
) -> str | None:
    """Why the person stops now, or None. Gold: as soon as even all their remaining gold items
    right could not lift them to ``min_gold_accuracy`` (at the end: their accuracy on the gold
    items they answered). Attention: more failures than ``max_attention_failures``.
    Qualification: once all its items are answered, a share right below ``qualify_pass``."""
    me = participant(ws, audit, name)
    s = check_score(ws, audit, name, me.plan if me else None)
    if (
        opts.qualify
        and s.qualify_answered >= opts.qualify
        and s.qualify_right < opts.qualify_pass * opts.qualify
    ):
        return f"qualification: {s.qualify_right} of {opts.qualify} right"
    if opts.max_attention_failures is not None and s.attention_failed > opts.max_attention_failures:
        return f"attention: {s.attention_failed} failed"
    if opts.min_gold_accuracy is not None and s.gold_answered:
        planned = s.gold_answered if final else max(s.gold_planned, s.gold_answered)
        best = (s.gold_right + planned - s.gold_answered) / planned
        if best < opts.min_gold_accuracy:
            return f"gold: {s.gold_right} of {s.gold_answered} right"
    return None


def after_label(ws: Workspace, audit: str, name: str, item: str) -> str | None:
    """Inside the label's transaction: screen the person out if a check says so, and return the
    qualification feedback for a qualification item (the only answer ever shown)."""
    from .labels import display_name

    opts = get_options(ws, audit)
    row = ws.db.execute(
        "select kind, label from audit_checks where audit = ? and item_id = ?", [audit, item]
    ).fetchone()
    verdict = screening(ws, audit, name, opts) if row is not None else None
    if verdict is not None:
        set_status(ws, audit, name, "screened_out", opts.screenout_code, verdict)
    if row is not None and row[0] == "qualify":
        given = _first_labels(ws, audit, name).get(item)
        right = display_name(row[1])
        return (
            f"Practice item: right, the answer is {right}."
            if given == row[1]
            else f"Practice item: the answer is {right}."
        )
    return None


def claim_for_label(ws: Workspace, audit: str, name: str, item: str) -> str | None:
    """Inside the label's transaction: a first label on a regular item whose hold went idle is
    kept only if its slot is still free; otherwise the hold goes and the reason is returned."""
    if item in _kinds(ws, audit):
        return None
    done = ws.db.execute(
        "select 1 from audit_labels where audit = ? and item_id = ? and annotator = ? and "
        "role = 'annotator'",
        [audit, item, name],
    ).fetchone()
    if done:
        return None
    opts = get_options(ws, audit)
    if _taken_by_others(ws, audit, opts, item, name) >= opts.overlap:
        ws.db.execute(
            "delete from audit_assignments where audit = ? and annotator = ? and item_id = ?",
            [audit, name, item],
        )
        return SLOT_TAKEN
    return None


SLOT_TAKEN = (
    "While you were away this item went to someone else, so this label was not needed; your "
    "next item is ready."
)


class SlotTaken(BadInput):
    """A hold left idle past the reclaim time was given to someone else."""
