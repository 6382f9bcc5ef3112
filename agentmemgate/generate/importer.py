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
from ..design import OUTCOME_KINDS, Design, paper_design
from ..errors import BadInput, UnknownLevel, unreadable
from ..schema import (
    Arc,
    ArcSpec,
    CorrectionSpec,
    FieldSpec,
    Provenance,
    Session,
    TurnRef,
)
from ..suggest import did_you_mean
from ..validate.structure import check_arc
from ..workspace import Workspace, now, open_workspace

IMPORTED_GENERATOR = "imported"
CORRECTION = "correction"  # the outcome kind (and plan wording) of a corrected initial value


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
    workspace: str = ""  # where they went (as the user named it)

    def lines(self) -> list[str]:
        out = [
            f"imported {self.arcs} arc(s) from {self.source} into {self.workspace}: new "
            f"{self.new}, replaced {self.replaced}, unchanged {self.unchanged} ("
            + ", ".join(f"{k} {v}" for k, v in self.by_split.items())
            + ")"
        ]
        out += [
            f"  --split relabelled {n} arc(s): {move}" for move, n in self.split_changes.items()
        ]
        if self.ignored_keys:
            out.append(f"  ignored keys the format does not define: {', '.join(self.ignored_keys)}")
        out.append(f"structural checks: {self.arcs_passing}/{self.arcs} arcs pass")
        failing = list(self.failing_arcs.items())
        out += [f"  {arc_id}: {'; '.join(problems)}" for arc_id, problems in failing[:20]]
        if len(failing) > 20:
            out.append(f"  ... and {len(failing) - 20} more (the dataset card lists every check)")
        return out


def _check(value: str, choices, what: str, of: str = "") -> str:
    """``value`` if it is one of ``choices``, else a one-line error naming the field, the value
    and the choices."""
    choices = list(choices)
    if value not in choices:
        raise UnknownLevel(
            f"Unknown {what} {value!r}{of}; choose one of: "
            f"{', '.join(choices) or 'none in this design'}"
            f"{did_you_mean(value, choices)}"
        )
    return value


def _outcomes(design: Design) -> list[str]:
    """The outcomes an arc of ``design`` can have: its outcome levels' kinds, a control's, a
    correction's."""
    kinds: set[str] = set()
    for f in design.factors.values():
        if f.role == "outcome":
            kinds |= {lv.kind or lv.name for lv in f.levels if not lv.control}
        if f.control_level is not None:
            kinds.add("control")
        if f.role == "correction":
            kinds.add(CORRECTION)
    return [k for k in OUTCOME_KINDS if k in kinds]


def _plan_wordings(design: Design) -> list[str]:
    f = design.by_role("plan_wording")
    return [*(f.level_names if f else ()), *([CORRECTION] if design.by_role("correction") else [])]


def arc_from_record(
    raw: dict[str, Any], split: str | None = None, design: Design | None = None
) -> Arc:
    """One export record as an ``Arc`` (``split`` overrides the record's own); ``ValueError`` or
    ``ValidationError`` say why it cannot be one. Splits, factors, levels, outcomes and wordings
    are those of ``design`` (default: the paper's)."""
    design = design or paper_design()
    rec = ArcRecord.model_validate(raw)
    target = split or rec.split
    if target is None:
        raise ValueError(f"the line has no 'split'; pass --split {'|'.join(design.split_names)}")
    _check(target, design.split_names, "split")
    factor = design.factors[_check(rec.factor, design.factors, "factor")]
    _check(rec.level, factor.level_names, "level", f" of factor {factor.name!r}")
    _check(rec.outcome, _outcomes(design), "outcome")
    wording = rec.plan_wording or _default_wording(rec, design)
    _check(wording, _plan_wordings(design), "plan_wording")
    if rec.confirmation_wording is not None:
        confirmation = design.by_role("confirmation_wording")
        _check(
            rec.confirmation_wording,
            confirmation.level_names if confirmation else (),
            "confirmation_wording",
        )
    sessions = [Session(date=s.date, turns=[t.model_dump() for t in s.turns]) for s in rec.sessions]
    for name in ("initial_turn", "plan_turn", "outcome_turn", "pending_turn", "correction_turn"):
        ref: TurnRef | None = getattr(rec, name)
        if ref is not None and not (
            ref.session < len(sessions) and ref.turn < len(sessions[ref.session].turns)
        ):
            raise ValueError(
                f"{name} points to session {ref.session} turn {ref.turn}, which does not exist"
            )
    prov = rec.provenance or Provenance(
        generator=IMPORTED_GENERATOR,
        generator_kind="imported arcs (the file gave no provenance)",
        prompt_sha256="",
        seed=0,
        toolkit_version=__version__,
    )
    structure = design.splits[target].structure.with_override(factor.level(rec.level).structure)
    spec = ArcSpec(
        id=rec.id,
        split=target,
        factor=rec.factor,
        level=rec.level,
        outcome=rec.outcome,  # type: ignore[arg-type]
        field=rec.field,
        domain=rec.field.attribute,
        initial_value=rec.initial_value,
        plan_value=rec.plan_value,
        plan_wording=wording,
        confirmation_wording=rec.confirmation_wording,
        session_dates=[s.date for s in sessions],
        pending_window=rec.pending_window
        if rec.pending_window is not None
        else structure.pending_window,
        seed=int(hashlib.sha256(rec.id.encode()).hexdigest()[:8], 16) % 2**31,
        plan_seed=prov.seed,
        correction=rec.correction,
    )
    expected = rec.expected_value_after_session
    if expected is None:
        resolved = rec.outcome_turn.session if rec.outcome_turn else None
        expected = spec.expected_timeline(resolved, rec.plan_turn.session)
    return Arc(
        spec=spec,
        sessions=sessions,
        initial_turn=rec.initial_turn,
        plan_turn=rec.plan_turn,
        outcome_turn=rec.outcome_turn,
        pending_turn=rec.pending_turn,
        correction_turn=rec.correction_turn,
        expected_value_after_session=expected,
        provenance=prov,
    )


def _default_wording(rec: ArcRecord, design: Design) -> str:
    """The plan wording a record without one implies: a control's control level, a corrected
    initial value's ``correction``, a plan-wording cell's own level."""
    plan = design.by_role("plan_wording")
    control = (plan and plan.control_level) or next(
        (f.control_level for f in design.factors.values() if f.control_level), None
    )
    if rec.outcome == "control" and control:
        return control
    if rec.correction is not None:
        if rec.correction.target == "initial":
            return CORRECTION
        if control:
            return control
    if plan is not None and rec.factor == plan.name:
        return rec.level
    example = plan.drawn[0] if plan and plan.drawn else "a level"
    raise ValueError(
        f"plan_wording is missing (the {plan.name if plan else 'plan-wording'} level "
        f"of the plan turn, e.g. {example})"
    )


def read_arcs(
    path: str | Path, split: str | None = None, design: Design | None = None
) -> tuple[list[tuple[int, Arc, str]], list[str]]:
    """Every arc of a JSONL file as (line number, arc, split in the file), and the ignored keys;
    splits, factors and levels are ``design``'s (default: the paper's).

    The first bad line raises a one-line ``BadInput`` naming the file and line.
    """
    path = Path(path)
    design = design or paper_design()
    if split is not None:
        _check(split, design.split_names, "split")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise unreadable(path, e) from None
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
            raise BadInput(
                f"{where}: expected a JSON object (one arc), got {type(raw).__name__}; "
                "nothing was imported"
            )
        rid = raw.get("id")
        where_arc = f"{where} (arc {rid!r})" if isinstance(rid, str) and rid else where
        try:
            arc = arc_from_record(raw, split, design)
        except ValidationError as e:
            err = e.errors()[0]
            msg = err["msg"].removeprefix("Value error, ")
            loc = ".".join(str(x) for x in err["loc"])
            raise BadInput(
                f"{where_arc}: {loc + ': ' if loc else ''}{msg}; nothing was imported"
            ) from None
        except (ValueError, BadInput) as e:
            raise BadInput(f"{where_arc}: {e}; nothing was imported") from None
        if arc.id in first_line:
            raise BadInput(
                f"{where}: id {arc.id!r} already appears on line {first_line[arc.id]}; "
                "nothing was imported"
            )
        first_line[arc.id] = n
        ignored |= set(raw) - set(ArcRecord.model_fields)
        out.append((n, arc, raw.get("split") or ""))
    if not out:
        raise BadInput(f"{path.name} has no arcs (no non-blank lines); nothing was imported")
    return out, sorted(ignored)


def _stored(ws: Workspace, ids: list[str]) -> dict[str, Arc]:
    out: dict[str, Arc] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows = ws.db.execute(
            f"select json from arcs where id in ({','.join('?' * len(chunk))})", chunk
        )
        for (raw,) in rows.fetchall():
            arc = Arc.model_validate_json(raw)
            out[arc.id] = arc
    return out


def import_arcs(
    workspace: Workspace | str | Path,
    path: str | Path,
    split: str | None = None,
    replace: bool = False,
) -> ImportSummary:
    """Import every arc of ``path`` in one transaction, or nothing, checked against the design
    of the workspace (the paper's for a new one). The file is read and checked before the
    workspace is opened, so a bad file leaves no new workspace behind."""
    from ..design.stored import design_for

    path = Path(path)
    design = design_for(workspace)
    arcs, ignored = read_arcs(path, split, design)
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
                others = (
                    sum(
                        1
                        for _, a, _ in arcs
                        if a.id in stored and stored[a.id].export_record() != a.export_record()
                    )
                    - 1
                )
                more = f" (and {others} more)" if others else ""
                raise BadInput(
                    f"{path.name} line {n}: id {arc.id!r} is already in the workspace with other "
                    f"content{more}; pass --replace to overwrite, or give the arcs other ids; "
                    "nothing was imported"
                )
            else:
                changed.append((n, arc))
        writes = new + changed
        checks = [r for _, a, _ in arcs for r in check_arc(a, design)]
        raw = path.read_bytes()
        lines = raw.decode("utf-8").splitlines()
        file_sha = hashlib.sha256(raw).hexdigest()
        stamp = now()
        conn = ws.db.conn
        with conn:  # one transaction: all of it or none of it
            conn.executemany(
                "insert into specs (id, split, factor, level, outcome, json) values (?, ?, ?, ?, ?, ?) "
                "on conflict(id) do update set split = excluded.split, factor = excluded.factor, "
                "level = excluded.level, outcome = excluded.outcome, json = excluded.json",
                [
                    (
                        a.id,
                        a.spec.split,
                        a.spec.factor,
                        a.spec.level,
                        a.spec.outcome,
                        a.spec.model_dump_json(),
                    )
                    for _, a in writes
                ],
            )
            conn.executemany(
                "insert into arcs (id, split, generator, json, created_at) values (?, ?, ?, ?, ?) "
                "on conflict(id) do update set split = excluded.split, generator = excluded.generator, "
                "json = excluded.json, created_at = excluded.created_at",
                [
                    (a.id, a.spec.split, a.provenance.generator, a.model_dump_json(), stamp)
                    for _, a in writes
                ],
            )
            conn.executemany(
                "delete from render_failures where id = ?", [(a.id,) for _, a in writes]
            )
            conn.executemany("delete from checks where arc_id = ?", [(a.id,) for _, a, _ in arcs])
            conn.executemany(
                'insert into checks (arc_id, "check", passed, detail, created_at) values (?, ?, ?, ?, ?)',
                [(r.arc_id, r.check, int(r.passed), r.detail, stamp) for r in checks],
            )
            conn.executemany(
                "insert into arc_imports (arc_id, source, line, sha256, source_sha256, imported_at) "
                "values (?, ?, ?, ?, ?, ?) on conflict(arc_id) do update set "
                "source = excluded.source, line = excluded.line, sha256 = excluded.sha256, "
                "source_sha256 = excluded.source_sha256, imported_at = excluded.imported_at",
                [
                    (
                        a.id,
                        str(path),
                        n,
                        hashlib.sha256(lines[n - 1].encode("utf-8")).hexdigest(),
                        file_sha,
                        stamp,
                    )
                    for n, a in writes
                ],
            )
    failing: dict[str, list[str]] = {}
    for r in checks:
        if not r.passed:
            failing.setdefault(r.arc_id, []).append(f"{r.check}: {r.detail}")
    moves = Counter(
        f"{orig}->{a.spec.split}" for _, a, orig in arcs if orig and orig != a.spec.split
    )
    return ImportSummary(
        source=str(path),
        arcs=len(arcs),
        new=len(new),
        replaced=len(changed),
        unchanged=len(same),
        by_split=dict(Counter(a.spec.split for _, a, _ in arcs)),
        split_changes=dict(moves),
        ignored_keys=ignored,
        arcs_passing=len(arcs) - len(failing),
        failing_arcs=failing,
        workspace=str(workspace.path if isinstance(workspace, Workspace) else workspace),
    )


def imported_count(ws: Workspace, split: str) -> int:
    """How many arcs of ``split`` came from ``amg import`` (and are still there)."""
    row = ws.db.execute(
        "select count(*) from arc_imports join arcs on arcs.id = arc_imports.arc_id "
        "where arcs.split = ?",
        [split],
    ).fetchone()
    return row[0] if row else 0


class ImportSource(BaseModel):
    """A file arcs were imported from (``amg import``): its name, its sha256, how many arcs."""

    model_config = ConfigDict(extra="forbid")
    source: str  # the file's name (no folder: cards are published)
    sha256: str | None  # of the whole file; None for an import made before it was kept
    arcs: int


def import_sources(ws: Workspace, arc_ids) -> list[ImportSource]:
    """The files the given arcs were imported from, by name and sha256, with their arc counts
    (arcs built from a plan are in none)."""
    wanted = set(arc_ids)
    counts: Counter = Counter()
    for arc_id, source, sha in ws.db.execute(
        "select arc_id, source, source_sha256 from arc_imports"
    ).fetchall():
        if arc_id in wanted:
            counts[(Path(source).name, sha)] += 1
    return [
        ImportSource(source=name, sha256=sha, arcs=n)
        for (name, sha), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
    ]
