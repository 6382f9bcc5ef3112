"""``amg import``: bring your own arcs, in the ``data.jsonl`` export format, into a workspace.

The file is read and every line turned into an ``Arc`` before anything is written: a malformed
line is refused with its line number and nothing is imported. An id already in the workspace with
the same content is left as it is; with other content it is an error unless ``replace``. Imported
arcs keep their ids and provenance, get the structural checks every arc gets, and from then on are
arcs like any other (``validate``, ``audit create --from arcs:...``, ``export``, the evaluation).
``amg generate`` refuses to re-plan a split that holds imported arcs, so they are never silently
replaced by a new build.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import __version__
from ..errors import BadInput
from ..schema import (
    CONFIRMATION_LEVELS,
    CONTROL_LEVEL,
    CORRECTION_FACTOR,
    CORRECTION_OUTCOME,
    FACTORS,
    HEDGE_LEVELS,
    OUTCOMES,
    SPLITS,
    Arc,
    ArcSpec,
    CorrectionSpec,
    FieldSpec,
    Provenance,
    Session,
    TurnRef,
    check_level,
)
from ..validate.structure import check_arc
from ..workspace import Workspace, now, open_workspace

IMPORTED_GENERATOR = "imported"


class _Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str
    text: str


class _Session(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: dt.date
    turns: list[_Turn]


class ArcRecord(BaseModel):
    """One ``data.jsonl`` line as ``Arc.export_record`` writes it; what may be missing is optional.

    Keys the toolkit does not know are ignored (and reported), so files with extra metadata load.
    """

    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    split: str | None = None
    factor: str
    level: str
    outcome: str
    field: FieldSpec
    initial_value: str = Field(min_length=1)
    plan_value: str = Field(min_length=1)
    plan_wording: str | None = None
    confirmation_wording: str | None = None
    sessions: list[_Session] = Field(min_length=1)
    initial_turn: TurnRef
    plan_turn: TurnRef
    outcome_turn: TurnRef | None = None
    pending_turn: TurnRef | None = None
    expected_value_after_session: list[str] | None = None
    provenance: Provenance | None = None
    pending_window: bool | None = None  # not exported; derived from the split when absent
    correction: CorrectionSpec | None = None  # correction arcs (the corrections split)
    correction_turn: TurnRef | None = None


class ImportSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    arcs: int
    new: int
    replaced: int
    unchanged: int
    by_split: dict[str, int]
    split_changes: dict[str, int]  # "core->heldout" -> arcs relabelled by --split
    ignored_keys: list[str]
    arcs_passing: int
    failing_arcs: dict[str, list[str]]  # arc id -> failed structural checks


def arc_from_record(raw: dict[str, Any], split: str | None = None) -> Arc:
    """One export record as an ``Arc`` (``split`` overrides the record's own); ``ValueError`` or
    ``ValidationError`` say why it cannot be one."""
    rec = ArcRecord.model_validate(raw)
    target = split or rec.split
    if target is None:
        raise ValueError("the line has no 'split'; pass --split core|heldout|controlled|corrections")
    check_level(target, SPLITS, "split")
    check_level(rec.factor, FACTORS + (CORRECTION_FACTOR,), "factor")
    check_level(rec.outcome, OUTCOMES + (CORRECTION_OUTCOME,), "outcome")
    wording = rec.plan_wording or _default_wording(rec)
    check_level(wording, HEDGE_LEVELS + (CONTROL_LEVEL, CORRECTION_OUTCOME), "plan_wording")
    if rec.confirmation_wording is not None:
        check_level(rec.confirmation_wording, CONFIRMATION_LEVELS, "confirmation_wording")
    sessions = [Session(date=s.date, turns=[t.model_dump() for t in s.turns]) for s in rec.sessions]
    for name in ("initial_turn", "plan_turn", "outcome_turn", "pending_turn", "correction_turn"):
        ref: TurnRef | None = getattr(rec, name)
        if ref is not None and not (ref.session < len(sessions)
                                    and ref.turn < len(sessions[ref.session].turns)):
            raise ValueError(f"{name} points to session {ref.session} turn {ref.turn}, which does not exist")
    prov = rec.provenance or Provenance(
        generator=IMPORTED_GENERATOR, generator_kind="imported arcs (the file gave no provenance)",
        prompt_sha256="", seed=0, toolkit_version=__version__)
    spec = ArcSpec(
        id=rec.id, split=target, factor=rec.factor, level=rec.level, outcome=rec.outcome,  # type: ignore[arg-type]
        field=rec.field, domain=rec.field.attribute, initial_value=rec.initial_value,
        plan_value=rec.plan_value, plan_wording=wording, confirmation_wording=rec.confirmation_wording,
        session_dates=[s.date for s in sessions],
        pending_window=rec.pending_window if rec.pending_window is not None
        else target not in ("heldout", "corrections"),
        seed=int(hashlib.sha256(rec.id.encode()).hexdigest()[:8], 16) % 2**31, plan_seed=prov.seed,
        correction=rec.correction)
    expected = rec.expected_value_after_session
    if expected is None:
        resolved = rec.outcome_turn.session if rec.outcome_turn else None
        expected = spec.expected_timeline(resolved, rec.plan_turn.session)
    return Arc(spec=spec, sessions=sessions, initial_turn=rec.initial_turn, plan_turn=rec.plan_turn,
               outcome_turn=rec.outcome_turn, pending_turn=rec.pending_turn,
               correction_turn=rec.correction_turn,
               expected_value_after_session=expected, provenance=prov)


def _default_wording(rec: ArcRecord) -> str:
    if rec.outcome == "control":
        return CONTROL_LEVEL
    if rec.correction is not None:
        return CORRECTION_OUTCOME if rec.correction.target == "initial" else CONTROL_LEVEL
    if rec.factor == "hedge_strength":
        return rec.level
    raise ValueError("plan_wording is missing (the hedge level of the plan turn, e.g. weakly_hedged)")


def read_arcs(path: str | Path, split: str | None = None) -> tuple[list[tuple[int, Arc, str]], list[str]]:
    """Every arc of a JSONL file as (line number, arc, split in the file), and the ignored keys.

    The first bad line raises a one-line ``BadInput`` naming the file and line.
    """
    path = Path(path)
    if split is not None:
        check_level(split, SPLITS, "split")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"Cannot read {str(path)!r}: {getattr(e, 'strerror', None) or e}") from None
    out: list[tuple[int, Arc, str]] = []
    ignored: set[str] = set()
    first_line: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path.name} line {n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as e:
            raise BadInput(f"{where}: not valid JSON ({e.msg}); nothing was imported") from None
        if not isinstance(raw, dict):
            raise BadInput(f"{where}: expected a JSON object (one arc), got {type(raw).__name__}; "
                           "nothing was imported")
        rid = raw.get("id")
        where_arc = f"{where} (arc {rid!r})" if isinstance(rid, str) and rid else where
        try:
            arc = arc_from_record(raw, split)
        except ValidationError as e:
            err = e.errors()[0]
            msg = err["msg"].removeprefix("Value error, ")
            loc = ".".join(str(x) for x in err["loc"])
            raise BadInput(f"{where_arc}: {loc + ': ' if loc else ''}{msg}; nothing was imported") from None
        except (ValueError, BadInput) as e:
            raise BadInput(f"{where_arc}: {e}; nothing was imported") from None
        if arc.id in first_line:
            raise BadInput(f"{where}: id {arc.id!r} already appears on line {first_line[arc.id]}; "
                           "nothing was imported")
        first_line[arc.id] = n
        ignored |= set(raw) - set(ArcRecord.model_fields)
        out.append((n, arc, raw.get("split") or ""))
    if not out:
        raise BadInput(f"{path.name} has no arcs (no non-blank lines); nothing was imported")
    return out, sorted(ignored)


def _stored(ws: Workspace, ids: list[str]) -> dict[str, Arc]:
    out: dict[str, Arc] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows = ws.db.execute(f"select json from arcs where id in ({','.join('?' * len(chunk))})", chunk)
        for (raw,) in rows.fetchall():
            arc = Arc.model_validate_json(raw)
            out[arc.id] = arc
    return out


def import_arcs(workspace: Workspace | str | Path, path: str | Path, split: str | None = None,
                replace: bool = False) -> ImportSummary:
    """Import every arc of ``path`` in one transaction, or nothing. The file is read and checked
    before the workspace is opened, so a bad file leaves no new workspace behind."""
    path = Path(path)
    arcs, ignored = read_arcs(path, split)
    with open_workspace(workspace, create=True) as ws:  # a refused import leaves no new workspace
        stored = _stored(ws, [a.id for _, a, _ in arcs])
        new, changed, same = [], [], []
        for n, arc, _ in arcs:
            old = stored.get(arc.id)
            if old is None:
                new.append((n, arc))
            elif old.export_record() == arc.export_record():
                same.append((n, arc))
            elif not replace:
                others = sum(1 for _, a, _ in arcs if a.id in stored
                             and stored[a.id].export_record() != a.export_record()) - 1
                more = f" (and {others} more)" if others else ""
                raise BadInput(f"{path.name} line {n}: id {arc.id!r} is already in the workspace with other "
                               f"content{more}; pass --replace to overwrite, or give the arcs other ids; "
                               "nothing was imported")
            else:
                changed.append((n, arc))
        writes = new + changed
        checks = [r for _, a, _ in arcs for r in check_arc(a)]
        lines = path.read_text(encoding="utf-8").splitlines()
        stamp = now()
        conn = ws.db.conn
        with conn:  # one transaction: all of it or none of it
            conn.executemany(
                "insert into specs (id, split, factor, level, outcome, json) values (?, ?, ?, ?, ?, ?) "
                "on conflict(id) do update set split = excluded.split, factor = excluded.factor, "
                "level = excluded.level, outcome = excluded.outcome, json = excluded.json",
                [(a.id, a.spec.split, a.spec.factor, a.spec.level, a.spec.outcome, a.spec.model_dump_json())
                 for _, a in writes])
            conn.executemany(
                "insert into arcs (id, split, generator, json, created_at) values (?, ?, ?, ?, ?) "
                "on conflict(id) do update set split = excluded.split, generator = excluded.generator, "
                "json = excluded.json, created_at = excluded.created_at",
                [(a.id, a.spec.split, a.provenance.generator, a.model_dump_json(), stamp) for _, a in writes])
            conn.executemany("delete from render_failures where id = ?", [(a.id,) for _, a in writes])
            conn.executemany("delete from checks where arc_id = ?", [(a.id,) for _, a, _ in arcs])
            conn.executemany(
                'insert into checks (arc_id, "check", passed, detail, created_at) values (?, ?, ?, ?, ?)',
                [(r.arc_id, r.check, int(r.passed), r.detail, stamp) for r in checks])
            conn.executemany(
                "insert into arc_imports (arc_id, source, line, sha256, imported_at) values (?, ?, ?, ?, ?) "
                "on conflict(arc_id) do update set source = excluded.source, line = excluded.line, "
                "sha256 = excluded.sha256, imported_at = excluded.imported_at",
                [(a.id, str(path), n, hashlib.sha256(lines[n - 1].encode("utf-8")).hexdigest(), stamp)
                 for n, a in writes])
    failing: dict[str, list[str]] = {}
    for r in checks:
        if not r.passed:
            failing.setdefault(r.arc_id, []).append(f"{r.check}: {r.detail}")
    moves = Counter(f"{orig}->{a.spec.split}" for _, a, orig in arcs if orig and orig != a.spec.split)
    return ImportSummary(
        source=str(path), arcs=len(arcs), new=len(new), replaced=len(changed), unchanged=len(same),
        by_split=dict(Counter(a.spec.split for _, a, _ in arcs)), split_changes=dict(moves),
        ignored_keys=ignored, arcs_passing=len(arcs) - len(failing), failing_arcs=failing)


def imported_count(ws: Workspace, split: str) -> int:
    """How many arcs of ``split`` came from ``amg import`` (and are still there)."""
    row = ws.db.execute("select count(*) from arc_imports join arcs on arcs.id = arc_imports.arc_id "
                        "where arcs.split = ?", [split]).fetchone()
    return row[0] if row else 0
