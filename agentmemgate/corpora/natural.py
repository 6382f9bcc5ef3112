"""Natural evaluation sets: corpus questions whose answer depends on a fact that changes during
the conversation (paper, Section 6.1), stored in the workspace (tables of ``m016_natural_sets``).

``build_natural_set`` streams a LongMemEval or LoCoMo file one instance/sample at a time (the
loaders' ``iter_items``, as the miner does) and keeps, per selected question, its sessions in
date order (turns with roles and dates), the question and its date, the gold answer, the
evidence turns and one value-free field derived from the question (``natural_fields``). The
corpus license travels with the set and with every exported item.

Selection rules (versioned; the set records which one chose its items):

* ``longmemeval-knowledge-update.v1``: LongMemEval's own ``question_type == "knowledge-update"``
  (abstention variants ``*_abs`` included). Evidence: the turns marked ``has_answer``.
* ``locomo-change.v1`` (a documented offline rule; its precision, read by hand on what it
  selects, is in docs/how-to/natural-sets.md): a QA item is kept when (1) its category is not 5 (adversarial,
  unanswerable), (2) its evidence turns lie in at least two sessions with different dates,
  (3) the gold answer is one value, not a list (no ",", ";" or " and "), (4) the question names
  a change or a time-relative state (``LOCOMO_CHANGE_CUES``: now, current, still, new, recently,
  before, after, first, change, move, ...) and (5) it does not ask when, how long or how many
  times (date and count arithmetic, not an attribute's value). Evidence: the item's dia_ids.
  The person the question names plays the user (their turns get role ``user``, the other
  speaker's ``assistant``); with no or both names in the question, the speaker of most evidence
  turns does. LoCoMo sessions without turns are left out; the question is dated at the last
  session.

An item whose field the value-free check refuses keeps ``field = None`` and the reason: only
answering systems (which are asked the question itself) can run on it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput, CorpusError, MissingApiKey
from ..hashing import sha256_file
from ..llm.ref import ModelRef
from ..progress import bytes_bar
from ..schema import FieldSpec
from ..workspace import Workspace, now
from ._dates import iso_date
from ._jsonstream import iter_items
from .loaders import check_corpus
from .locomo import WHAT as LOCOMO_WHAT
from .locomo import parse_sample
from .longmemeval import WHAT as LME_WHAT
from .longmemeval import parse_instance, variant_of
from .model import LICENSES, Conversation
from .natural_fields import FIELD_RULE, LLMFielder, derive_field, refusal

RULES = {"longmemeval": "longmemeval-knowledge-update.v1", "locomo": "locomo-change.v1"}
LOCOMO_CHANGE_CUES = (
    "now",
    "current",
    "currently",
    "still",
    "anymore",
    "no longer",
    "new",
    "latest",
    "recent",
    "recently",
    "more recently",
    "before",
    "after",
    "first",
    "initially",
    "originally",
    "previous",
    "previously",
    "used to",
    "change",
    "changed",
    "switch",
    "switched",
    "move",
    "moved",
    "replace",
    "replaced",
    "stop",
    "stopped",
    "quit",
    "resume",
    "resumed",
    "decided",
    "start",
    "started",
    "become",
    "became",
)
_CUES = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in LOCOMO_CHANGE_CUES) + r")\b", re.I)
_ARITHMETIC = re.compile(r"^\s*(?:when\b|how long\b|how many times\b|after how many\b)", re.I)
_LIST = re.compile(r",|;|\band\b", re.I)
_DIA = re.compile(r"D(\d+):(\d+)")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class NaturalTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str  # "user" | "assistant"
    speaker: str  # LoCoMo: the person's name; LongMemEval: the role
    text: str
    ref: str  # dia_id (LoCoMo) or question_id/session_id/turn (LongMemEval)


class NaturalSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    index: int  # position in the item, date order
    session_id: str
    date: str | None  # ISO 8601 where the source date parses
    turns: list[NaturalTurn]


class NaturalItem(BaseModel):
    """One selected question with its conversation, gold answer, evidence and derived field."""

    model_config = ConfigDict(extra="forbid")
    item_id: str  # the question id (LongMemEval) or SAMPLE/qa-N (LoCoMo)
    conversation_id: str  # the bootstrap's cluster: items of one conversation resample together
    corpus: str
    question: str
    question_date: str | None
    gold_answer: str
    evidence: list[str]  # refs of the evidence turns
    subject: str  # who the question is about (plays the user)
    sessions: list[NaturalSession]
    field: FieldSpec | None
    field_refused: str | None = None
    license: str

    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def dates(self) -> list[dt.date]:
        """One date per session: its own, else the previous session's, else the next known one
        (else the question's): the protocol needs a date for every turn."""
        raw = [as_date(s.date) for s in self.sessions]
        known = [d for d in raw if d] or [as_date(self.question_date) or dt.date(1970, 1, 1)]
        out, last = [], known[0]
        for d in raw:
            last = d or last
            out.append(last)
        return out


def as_date(s: str | None) -> dt.date | None:
    if s and re.match(r"^\d{4}-\d{2}-\d{2}", s):
        try:
            return dt.date.fromisoformat(s[:10])
        except ValueError:
            return None
    return None


class NaturalSetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    corpus: str
    variant: str
    license: str
    source_path: str
    source_sha256: str
    rule: str
    field_rule: str
    conversations_read: int
    items: int
    fielded: int  # items with a value-free field (component systems run on these)
    refused: int
    refusals: dict[str, int] = {}  # reason kind -> count
    created_at: str

    def lines(self) -> list[str]:
        what = "LongMemEval instances" if self.corpus == "longmemeval" else "LoCoMo samples"
        return [
            f"Natural set {self.name!r}: {self.items} question{'s' if self.items != 1 else ''} "
            f"from {Path(self.source_path).name} "
            f"({self.corpus}{', ' + self.variant if self.variant else ''}; {self.conversations_read} "
            f"{what} read; rule {self.rule})",
            f"Fields ({self.field_rule}): {self.fielded} value-free, {self.refused} refused"
            + (
                " (" + ", ".join(f"{k} {v}" for k, v in sorted(self.refusals.items())) + ")"
                if self.refusals
                else ""
            ),
            f"License: {self.license}",
        ]


def _with_field(item: dict, fielder=None) -> dict:
    subject = item["subject"] if item["corpus"] == "locomo" else None
    if fielder is None:
        field, failed = derive_field(item["question"], subject), None
    else:
        from ..llm import CallFailed

        try:
            field = fielder.derive(item["question"], subject)
            failed = None if field else "the fielder named no usable attribute"
        except CallFailed as e:
            field, failed = None, f"the fielder call failed ({str(e).splitlines()[0][:160]})"
    why = failed or refusal(field, item["gold_answer"])
    item["field"], item["field_refused"] = (None, why) if why else (field, None)
    return item


def _sessions(conv: Conversation, role_of: Callable[[str], str]) -> list[NaturalSession]:
    return [
        NaturalSession(
            index=i,
            session_id=s.session_id,
            date=s.date,
            turns=[
                NaturalTurn(role=role_of(t.speaker), speaker=t.speaker, text=t.text, ref=t.ref)
                for t in s.turns
            ],
        )
        for i, s in enumerate(x for x in conv.chronological() if x.turns)
    ]


def select_longmemeval(
    raw: dict, i: int, path: Path, variant: str, fielder=None
) -> list[NaturalItem]:
    if not isinstance(raw, dict) or raw.get("question_type") != "knowledge-update":
        return []
    conv = parse_instance(raw, i, path, variant)
    for key in ("question", "answer"):
        if key not in raw:
            raise CorpusError(f"{path.name}: item {i} ({conv.conversation_id}) has no {key!r}")
    evidence = []
    for j, session in enumerate(raw["haystack_sessions"]):
        for k, t in enumerate(session):
            if isinstance(t, dict) and t.get("has_answer"):
                evidence.append(conv.sessions[j].turns[k].ref)
    answer_sessions = sorted(str(s) for s in raw.get("answer_session_ids") or [])
    item = {
        "item_id": conv.conversation_id,
        "corpus": "longmemeval",
        # one cluster per conversation: the evidence sessions (an "initially"/"currently"
        # pair of questions shares them, in the oracle and the _s form alike)
        "conversation_id": "+".join(answer_sessions) or conv.conversation_id,
        "question": str(raw["question"]),
        "question_date": iso_date(raw.get("question_date")),
        "gold_answer": str(raw["answer"]),
        "evidence": evidence,
        "subject": "user",
        "sessions": _sessions(conv, lambda sp: "user" if sp == "user" else "assistant"),
        "license": LICENSES["longmemeval"],
    }
    return [NaturalItem(**_with_field(item, fielder))]


def locomo_reason(qa: dict, dates: dict[int, str | None]) -> str | None:
    """Why ``locomo-change.v1`` passes over a QA item (None: selected). ``dates``: session -> date."""
    if qa.get("category") == 5:
        return "adversarial (category 5)"
    refs = [(int(a), int(b)) for e in qa.get("evidence") or [] for a, b in _DIA.findall(str(e))]
    sessions = {s for s, _ in refs}
    if len({dates.get(s) for s in sessions if dates.get(s)}) < 2:
        return "evidence not in two sessions with different dates"
    answer = str(qa.get("answer", ""))
    if not answer.strip() or _LIST.search(answer):
        return "answer is a list or empty"
    question = str(qa.get("question", ""))
    if _ARITHMETIC.search(question):
        return "asks when / how long / how many times"
    if not _CUES.search(question):
        return "question names no change"
    return None


def select_locomo(raw: dict, i: int, path: Path, fielder=None) -> list[NaturalItem]:
    conv = parse_sample(raw, i, path)
    dates = {int(s.session_id.split("_")[1]): s.date for s in conv.sessions}
    turn_speaker = {t.ref: t.speaker for s in conv.sessions for t in s.turns}
    out = []
    for n, qa in enumerate(raw.get("qa") or []):
        if not isinstance(qa, dict) or "question" not in qa or locomo_reason(qa, dates):
            continue
        refs = [f"D{a}:{b}" for e in qa.get("evidence") or [] for a, b in _DIA.findall(str(e))]
        question = str(qa["question"])
        named = [sp for sp in conv.speakers if re.search(rf"\b{re.escape(sp)}\b", question, re.I)]
        if len(named) == 1:
            subject = named[0]
        else:
            counts = {sp: sum(turn_speaker.get(r) == sp for r in refs) for sp in conv.speakers}
            subject = max(conv.speakers, key=lambda sp: (counts[sp], -conv.speakers.index(sp)))
        sessions = _sessions(
            conv, lambda sp, subject=subject: "user" if sp == subject else "assistant"
        )
        item = {
            "item_id": f"{conv.conversation_id}/qa-{n}",
            "corpus": "locomo",
            "conversation_id": conv.conversation_id,
            "question": question,
            "question_date": sessions[-1].date if sessions else None,
            "gold_answer": str(qa.get("answer", "")),
            "evidence": refs,
            "subject": subject,
            "sessions": sessions,
            "license": LICENSES["locomo"],
        }
        out.append(NaturalItem(**_with_field(item, fielder)))
    return out


def _refusal_kind(reason: str) -> str:
    return (
        "no attribute words"
        if reason.startswith("the rule leaves")
        else "fielder call failed"
        if reason.startswith("the fielder call failed")
        else "fielder named nothing"
        if reason.startswith("the fielder named")
        else "contains the answer"
        if reason.startswith("the field contains the answer")
        else "shares a word with the gold answer"
    )


def iter_selected(
    path: str | Path,
    corpus: str = "auto",
    on_bytes: Callable[[int], None] | None = None,
    counter: list[int] | None = None,
    fielder=None,
) -> Iterator[NaturalItem]:
    """Stream the selected items of a corpus file (``counter[0]``: instances/samples read);
    ``fielder``: an ``LLMFielder`` instead of the offline rule."""
    path = Path(path)
    found = check_corpus(path, corpus)
    variant = variant_of(path) if found == "longmemeval" else ""
    what = LME_WHAT if found == "longmemeval" else LOCOMO_WHAT
    for i, raw in enumerate(iter_items(path, what, on_bytes)):
        if counter is not None:
            counter[0] = i + 1
        yield from (
            select_longmemeval(raw, i, path, variant, fielder)
            if found == "longmemeval"
            else select_locomo(raw, i, path, fielder)
        )


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not _NAME.match(name):
        raise BadInput(
            f"--name {name!r}: a set name is letters, digits, '.', '_' or '-' "
            "(at most 64), e.g. --name lme-oracle-ku"
        )
    return name


def default_name(path: Path, corpus: str) -> str:
    if corpus == "longmemeval":
        v = variant_of(path)
        return f"longmemeval-{v}-ku" if v else "longmemeval-ku"
    return "locomo-change"


class NaturalPlan(BaseModel):
    """What ``amg natural build --dry-run`` counted (nothing stored)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    corpus: str
    conversations_read: int
    items: int
    field_calls: int  # model calls the fielder would make (cached and repeated ones not counted)
    fielder: str

    def lines(self) -> list[str]:
        what = "LongMemEval instances" if self.corpus == "longmemeval" else "LoCoMo samples"
        calls = (
            f"{self.field_calls} fielder calls ({self.fielder})"
            if not ModelRef.parse(self.fielder).offline
            else "no model calls (offline rule)"
        )
        return [
            f"dry run: natural set {self.name!r}: {self.items} questions selected from "
            f"{self.conversations_read} {what}; {calls}"
        ]


class _PlanningFielder:
    """A dry run's fielder: counts each field call on the model's planned tally, names nothing."""

    def __init__(self, fielder):
        self.fielder, self.calls = fielder, 0

    def derive(self, question: str, subject: str | None = None):
        self.calls += bool(self.fielder.plan(question, subject))
        return None


def _prepare(
    ws: Workspace, path: str | Path, corpus: str, name: str | None, fielder: str | ModelRef
) -> tuple[Path, str, str, LLMFielder | None]:
    """A set's build or plan checked before any work: the corpus file, its corpus, the set's
    name and the model fielder (None: the offline rule)."""
    path = Path(path)
    found = check_corpus(path, corpus)
    name = check_name(name) if name is not None else default_name(path, found)
    ref = ModelRef.parse(fielder)
    if ref.offline:
        return path, found, name, None
    try:
        return path, found, name, LLMFielder(ref, workspace=ws)
    except MissingApiKey as e:
        raise e.for_flag("--fielder", ref.spec) from None


def _select(
    path: Path, found: str, name: str, limit: int | None, progress: bool, fielder
) -> tuple[list[dict], dict[str, int], int]:
    """The selected items (at most ``limit``) as the rows to store, the fields refused by kind,
    and the instances/samples read; ``fielder``: who names the fields (None: the offline rule)."""
    count = [0]
    rows: list[dict] = []
    refusals: dict[str, int] = {}
    with bytes_bar(f"natural build {name}", path.stat().st_size, progress) as update:
        for item in iter_selected(
            path,
            found,
            on_bytes=lambda b: update(b, f"{len(rows)} selected"),
            counter=count,
            fielder=fielder,
        ):
            if limit and len(rows) >= limit:
                break
            blob = item.model_dump_json()
            if item.field_refused:
                k = _refusal_kind(item.field_refused)
                refusals[k] = refusals.get(k, 0) + 1
            rows.append(
                {
                    "set_name": name,
                    "item_id": item.item_id,
                    "position": len(rows),
                    "conversation_id": item.conversation_id,
                    "question": item.question,
                    "gold_answer": item.gold_answer,
                    "field": item.field.model_dump_json() if item.field else None,
                    "field_refused": item.field_refused,
                    "turns": item.turns(),
                    "sha256": hashlib.sha256(blob.encode()).hexdigest(),
                    "item_z": zlib.compress(blob.encode(), 6),
                }
            )
    if not rows:
        what = "LongMemEval instances" if found == "longmemeval" else "LoCoMo samples"
        rule = (
            "no knowledge-update question"
            if found == "longmemeval"
            else f"no QA item that {RULES['locomo']} selects"
        )
        raise CorpusError(f"{path.name}: {count[0]} {what} but {rule}; nothing to build")
    return rows, refusals, count[0]


def plan_natural_set(
    ws: Workspace,
    path: str | Path,
    corpus: str = "auto",
    name: str | None = None,
    limit: int | None = None,
    progress: bool = True,
    fielder: str | ModelRef = "offline",
) -> NaturalPlan:
    """What ``build_natural_set`` with the same arguments would build (``amg natural build
    --dry-run``): the questions selected, and the fielder's calls counted on its model
    (``model.planned``; cached ones not counted). Nothing is sent or stored. With a model
    fielder, run it inside ``run_context(dry_run=True)`` so that no API key is needed."""
    path, found, name, llm = _prepare(ws, path, corpus, name, fielder)
    planner = _PlanningFielder(llm) if llm is not None else None
    rows, _, read = _select(path, found, name, limit, progress, planner)
    return NaturalPlan(
        name=name,
        corpus=found,
        conversations_read=read,
        items=len(rows),
        field_calls=planner.calls if planner else 0,
        fielder=llm.model.spec if llm else "offline",
    )


def build_natural_set(
    ws: Workspace,
    path: str | Path,
    corpus: str = "auto",
    name: str | None = None,
    limit: int | None = None,
    progress: bool = True,
    fielder: str | ModelRef = "offline",
) -> NaturalSetInfo:
    """Select, derive fields, and store the set (replacing a set of the same name atomically).

    ``fielder``: ``offline`` (rule ``natural-field.v1``) or ``provider:model`` (rubric
    ``natural_field``; a failed call refuses that item's field and a rebuild asks again), a spec
    or a ``ModelRef`` (its base URL and model options go to the model). What it would select
    and the fielder's calls, counted without sending or storing: ``plan_natural_set``."""
    path, found, name, llm = _prepare(ws, path, corpus, name, fielder)
    rows, refusals, read = _select(path, found, name, limit, progress, llm)
    info = NaturalSetInfo(
        name=name,
        corpus=found,
        variant=variant_of(path) if found == "longmemeval" else "",
        license=LICENSES[found],
        source_path=str(path.resolve()),
        source_sha256=sha256_file(path),
        rule=RULES[found],
        field_rule=llm.name if llm else FIELD_RULE,
        conversations_read=read,
        items=len(rows),
        fielded=sum(1 for r in rows if r["field"]),
        refused=sum(1 for r in rows if not r["field"]),
        refusals=refusals,
        created_at=now(),
    )
    conn = ws.db.conn
    if conn.in_transaction:
        conn.commit()
    with conn:  # the set and its items replace an old set of this name together
        conn.execute("delete from natural_items where set_name = ?", [name])
        conn.execute(
            "insert or replace into natural_sets (name, corpus, info, created_at) "
            "values (?, ?, ?, ?)",
            [name, found, info.model_dump_json(), info.created_at],
        )
        cols = list(rows[0])
        conn.executemany(
            f"insert into natural_items ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
            [[r[c] for c in cols] for r in rows],
        )
    return info


def list_natural_sets(ws: Workspace) -> list[NaturalSetInfo]:
    return [
        NaturalSetInfo.model_validate_json(raw)
        for (raw,) in ws.db.execute(
            "select info from natural_sets order by created_at, name"
        ).fetchall()
    ]


def natural_set(ws: Workspace, name: str) -> NaturalSetInfo:
    row = ws.db.execute("select info from natural_sets where name = ?", [name]).fetchone()
    if row is None:
        have = [s.name for s in list_natural_sets(ws)]
        raise BadInput(
            f"No natural set {name!r} in workspace {str(ws.path)!r}; sets: "
            f"{', '.join(have) or 'none'} (build one with `amg natural build --corpus "
            "longmemeval|locomo FILE --name SET`)"
        )
    return NaturalSetInfo.model_validate_json(row[0])


def item_shas(ws: Workspace, name: str) -> dict[str, tuple[str, str]]:
    """item id -> (sha256 of its stored JSON, conversation id), without decompressing items."""
    return {
        i: (s, c)
        for i, s, c in ws.db.execute(
            "select item_id, sha256, conversation_id from natural_items where set_name = ? "
            "order by position",
            [name],
        ).fetchall()
    }


def load_items(ws: Workspace, name: str) -> Iterator[tuple[NaturalItem, str]]:
    """The set's items in order, each with the sha256 of its stored JSON (one at a time)."""
    natural_set(ws, name)
    for blob, sha in ws.db.execute(
        "select item_z, sha256 from natural_items where set_name = ? order by position", [name]
    ):
        yield NaturalItem.model_validate_json(zlib.decompress(blob)), sha


def export_items(ws: Workspace, name: str) -> Iterator[dict]:
    """JSON-native records of a set (``amg natural show --json``): the license on every one."""
    for item, sha in load_items(ws, name):
        d = json.loads(item.model_dump_json())
        d["sha256"] = sha
        yield d
