"""Read-only queries over one workspace: what every page of the viewer shows, as plain data.

The connection is SQLite's ``mode=ro``: the viewer cannot write, whatever a page asks, and reads a
consistent snapshot while another command writes (WAL). Nothing here selects an annotator's token
hash or the call log's prompts; errors from the call log pass through ``llm.scrub`` (API keys).
Lists are paged in SQL (``LIMIT``/``OFFSET``), so a filter never loads every arc.

``Reader`` also offers ``db`` (a ``sqlite_utils.Database`` over the same read-only connection) and
``path``, so the library's own readers that take a workspace (the stored design, the call-log
sums, the agreement report, the eval report and which scores count, who said what in an audit,
mined candidates) run on it unchanged: the rules of what they read stay with their rooms.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .._sqlite import sqlite_utils
from ..errors import BadInput, WorkspaceError
from ..evaluate.counted import (
    CountingJudge,
    SystemRun,
    arc_result,
    counted_sql,
    counting_judge,
    current_sha,
    score_key,
    system_runs,
)
from ..hashing import sha256_parts
from ..schema import turn_label
from ..workspace import DB_NAME

PAGE_SIZE = 50  # rows per page of the viewer's paged lists
_MEASURE = re.compile(r"^[a-z_]{1,64}$")
_NATURAL = "natural:"


def _sha_text(raw: str | None) -> str | None:
    """The sha256 a score names the arc text it was made on (SQL's ``amg_sha(arcs.json)``)."""
    return None if raw is None else sha256_parts(raw)


class ArcFilter(BaseModel):
    """What the Arcs page filters on; every field is a query parameter of its deep link."""

    model_config = ConfigDict(extra="forbid")
    split: str | None = None  # a split of the design, or natural:SET
    factor: str | None = None
    level: str | None = None
    outcome: str | None = None
    check_failed: bool = False  # a structural check failed
    verdict_failed: bool = False  # a realism judge did not pass it (or failed to answer)
    recovery_error: bool = False  # a blind recovery judge named another level
    system: str | None = None  # with measure: arcs whose score of that system has it
    measure: str | None = None
    value: bool | None = None  # the measure's outcome (None: the measure applies)
    vs: str | None = None  # with system and measure: arcs where this system's outcome differs
    query: str | None = None  # part of the arc id


@dataclass
class Turn:
    role: str
    text: str
    mark: str = ""  # "plan turn", "outcome turn", "evidence", ...
    speaker: str = ""


@dataclass
class Dialog:
    """An arc or a natural item as the viewer shows it: its sessions and its ground truth."""

    id: str
    kind: str  # "arc" | "natural"
    split: str
    facts: list[tuple[str, str]]  # (what, value) lines of its ground truth and labels
    sessions: list[tuple[str, list[Turn]]]  # (date, turns)
    truth_after_session: list[str] = field(default_factory=list)

    def turns(self) -> list[tuple[int, int, Turn]]:
        """Every turn as (session, turn within the session, turn), in order (trace ``t`` order)."""
        return [(si, ti, t) for si, (_, ts) in enumerate(self.sessions) for ti, t in enumerate(ts)]

    def labels(self) -> list[str]:
        """Each turn's ``s1 t2`` label (``schema.turn_label``), in ``turns`` order."""
        return [turn_label(si, ti) for si, ti, _ in self.turns()]


class Reader:
    """One workspace, opened read-only. Cheap to make: one per page run. The rules behind what
    it reads are the rooms' own: which scores count (``evaluate.counted``), who said what in an
    audit (``annotate_app.disagreements``), how mined candidates are stored
    (``corpora.browse``); pages pass the reader to those rooms' functions as a workspace."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        file = self.path / DB_NAME
        if not file.is_file():
            raise WorkspaceError(
                f"No workspace at {str(path)!r} (no {DB_NAME} there): pass the "
                "--workspace DIR that `amg build` made"
            )
        self.file = file
        conn = sqlite3.connect(
            file.resolve().as_uri() + "?mode=ro", uri=True, timeout=30, check_same_thread=False
        )
        conn.execute("PRAGMA query_only = 1")
        conn.create_function("amg_sha", 1, _sha_text, deterministic=True)
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self._systems: dict[str, SystemRun] | None = None
        self._judge: CountingJudge | None = None
        self._reads = None  # as a Workspace outside ``read_cache``: the library reads afresh
        self.refresh()

    def refresh(self) -> None:
        """Forget what was read of the workspace's shape (another command may have added tables
        or runs since)."""
        self.tables = {
            r[0] for r in self.conn.execute("select name from sqlite_master where type = 'table'")
        }
        self._systems = None
        self._judge = None

    def close(self) -> None:
        self.conn.close()

    @property
    def key(self) -> tuple:
        """Changes whenever another command commits (the database or its WAL file changes):
        the pages' caches key on it."""
        out: list = [str(self.file.resolve())]
        for f in (self.file, self.file.with_name(DB_NAME + "-wal")):
            try:
                st = f.stat()
                out += [st.st_mtime_ns, st.st_size]
            except OSError:
                out += [0, 0]
        return tuple(out)

    def rows(self, sql: str, args=()) -> list[tuple]:
        return self.conn.execute(sql, list(args)).fetchall()

    def dicts(self, sql: str, args=()) -> list[dict]:
        cur = self.conn.execute(sql, list(args))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def one(self, sql: str, args=()):
        row = self.conn.execute(sql, list(args)).fetchone()
        return row[0] if row else None

    def columns(self, table: str) -> set[str]:
        return {r[1] for r in self.conn.execute(f'pragma table_info("{table}")')}

    def count(self, table: str) -> int:
        return self.one(f'select count(*) from "{table}"') if table in self.tables else 0

    def has(self, *tables: str) -> bool:
        """Whether every table exists and the first holds a row."""
        return all(t in self.tables for t in tables) and bool(
            self.one(f'select exists (select 1 from "{tables[0]}")')
        )

    # -- design and build ----------------------------------------------------------------------
    def design(self):
        """The design stored with the workspace, or None (only imported arcs, or none yet)."""
        from ..design.stored import stored_design

        return stored_design(self) if "design" in self.tables else None

    def cells(self) -> list[dict]:
        """Arcs per (split, factor, level, outcome): planned (specs) and rendered (arcs)."""
        if "specs" not in self.tables:
            return []
        return self.dicts(
            "select s.split, s.factor, s.level, s.outcome, count(*) as planned, count(a.id) as "
            "rendered from specs s left join arcs a on a.id = s.id group by 1, 2, 3, 4 "
            "order by min(s.rowid)"
        )

    def splits(self) -> list[str]:
        """The splits that hold arcs, in build order (from the index on ``arcs.split``)."""
        if "arcs" not in self.tables:
            return []
        found = [r[0] for r in self.rows("select distinct split from arcs")]
        design = self.design()
        rank = {s: i for i, s in enumerate(design.split_names)} if design else {}
        return sorted(found, key=lambda s: (rank.get(s, len(rank)), s))

    def choices(self, column: str, split: str | None = None) -> list[str]:
        """The values a spec column takes (filters' options), optionally within one split."""
        if column not in ("factor", "level", "outcome") or "specs" not in self.tables:
            return []
        where, args = ("where split = ?", [split]) if split else ("", [])
        return [
            r[0]
            for r in self.rows(
                f"select distinct {column} from specs {where} order by {column}", args
            )
        ]

    def checks_by_split(self) -> list[dict]:
        """Per split: arcs checked, arcs passing every check, and failures per check."""
        if not self.has("checks", "specs"):
            return []
        rows = self.rows(
            'select s.split, c."check", count(*), sum(c.passed) from checks c '
            "join specs s on s.id = c.arc_id group by 1, 2 order by 1, 2"
        )
        arcs = {
            sp: (n, ok)
            for sp, n, ok in self.rows(
                "select s.split, count(*), sum(c.ok) from (select arc_id, min(passed) as ok from "
                "checks group by arc_id) c join specs s on s.id = c.arc_id group by 1"
            )
        }
        out: dict[str, dict] = {}
        for split, check, n, passed in rows:
            row = out.setdefault(
                split,
                {
                    "split": split,
                    "arcs": arcs.get(split, (0, 0))[0],
                    "passing every check": arcs.get(split, (0, 0))[1],
                    "checks": 0,
                    "failed checks": {},
                },
            )
            row["checks"] += 1
            if passed < n:
                row["failed checks"][check] = n - passed
        order = {s: i for i, s in enumerate(self.splits())}
        return sorted(out.values(), key=lambda r: (order.get(r["split"], len(order)), r["split"]))

    def realism(self) -> list[dict]:
        """Realism verdicts of the arcs now in the workspace (a replaced arc's stay stored)."""
        if "judge_verdicts" not in self.tables:
            return []
        return self.dicts(
            "select judge, criterion, sum(status = 'ok' and verdict = 'pass') as passed, "
            "sum(status = 'ok' and verdict <> 'pass') as failed, sum(status <> 'ok') as errors "
            "from judge_verdicts where task = 'realism' and item_id in (select id from arcs) "
            "group by 1, 2 order by 1, 2"
        )

    def recovery(self) -> list[dict]:
        """Blind level recovery of the arcs now in the workspace: (judge, split, factor, intended,
        verdict) -> arcs."""
        if "judge_verdicts" not in self.tables:
            return []
        return self.dicts(
            "select judge, split, factor, intended, verdict, count(*) as arcs from judge_verdicts "
            "where task = 'recovery' and status = 'ok' and item_id in (select id from arcs) "
            "group by 1, 2, 3, 4, 5 order by 1, 2, 3"
        )

    # -- the call log ----------------------------------------------------------------------------
    def usage(self) -> dict | None:
        """``amg usage``'s sums (by command, model and purpose), or None when nothing was called."""
        if not self.has("llm_calls"):
            return None
        from ..llm.usage_log import usage_rows

        return usage_rows(self)

    def call_failures(self, limit: int = 200) -> list[dict]:
        """Failed call attempts by model, purpose and reason (keys scrubbed from the reasons)."""
        if not self.has("llm_calls"):
            return []
        from ..llm import scrub

        rows = self.dicts(
            "select family || ':' || requested_model as model, coalesce(purpose, '') as purpose, "
            "status, coalesce(error, '') as reason, count(*) as attempts from llm_calls "
            "where status <> 'ok' group by 1, 2, 3, 4 order by 5 desc limit ?",
            [limit],
        )
        for r in rows:
            r["reason"] = scrub(r["reason"])
        return rows

    # -- evaluation: its results as ``evaluate.counted`` decides which count ---------------------
    def systems(self) -> dict[str, SystemRun]:
        """System name -> the run whose results count (``evaluate.counted.system_runs``): each
        name's latest run, and uploaded answer sets, as the eval report takes them."""
        if self._systems is None:
            self._systems = system_runs(self)
        return self._systems

    def judge(self) -> CountingJudge:
        """The judge whose scores count (``evaluate.counted.counting_judge``)."""
        if self._judge is None:
            self._judge = counting_judge(self)
        return self._judge

    def score_source(self, system: str, natural: bool = False) -> tuple[str, str] | None:
        """(run key, judge key) of the scores the report counts for ``system`` (``natural``: on
        natural items)."""
        run = self.systems().get(system)
        return score_key(run, self.judge(), natural) if run is not None else None

    def systems_on(self, arc_id: str) -> list[str]:
        """The systems with a trace or answers on this arc (primary-key lookups per system)."""
        out = []
        for name, run in self.systems().items():
            table = {
                "component": "eval_traces",
                "answering": "eval_product_answers",
                "answers": "eval_answers",
            }[run.kind]
            if table not in self.tables:
                continue
            col = "name" if table == "eval_answers" else "run_key"
            key = name if table == "eval_answers" else run.run_key
            if self.one(
                f"select exists (select 1 from {table} where {col} = ? and arc_id = ?)",
                [key, arc_id],
            ):
                out.append(name)
        return out

    # -- arcs: the paged list and one arc ---------------------------------------------------------
    def arc_page(
        self, f: ArcFilter, page: int = 0, size: int = PAGE_SIZE
    ) -> tuple[list[dict], int]:
        """One page of the arcs ``f`` selects, and how many it selects in all."""
        if f.split and f.split.startswith(_NATURAL):
            return self._natural_page(f, page, size)
        if not self.has("arcs", "specs"):
            return [], 0
        where, args = ["1"], []
        for col in ("split", "factor", "level", "outcome"):
            if getattr(f, col):
                where.append(f"s.{col} = ?")
                args.append(getattr(f, col))
        if f.query:
            where.append("instr(s.id, ?) > 0")
            args.append(f.query)
        if f.check_failed and "checks" in self.tables:
            where.append("exists (select 1 from checks c where c.arc_id = s.id and c.passed = 0)")
        if f.verdict_failed and "judge_verdicts" in self.tables:
            where.append(
                "exists (select 1 from judge_verdicts j where j.task = 'realism' and "
                "j.item_id = s.id and (j.status <> 'ok' or j.verdict <> 'pass'))"
            )
        if f.recovery_error and "judge_verdicts" in self.tables:
            where.append(
                "exists (select 1 from judge_verdicts j where j.task = 'recovery' and "
                "j.item_id = s.id and j.status = 'ok' and j.verdict <> j.intended)"
            )
        if f.measure:
            cond, cargs = self._measure_condition(f, "s.id", "amg_sha(a.json)")
            where.append(cond)
            args += cargs
        sql = f"from specs s join arcs a on a.id = s.id where {' and '.join(where)}"
        total = self.one(f"select count(*) {sql}", args)
        rows = self.dicts(
            f"select s.id, s.split, s.factor, s.level, s.outcome {sql} "
            "order by a.rowid limit ? offset ?",
            args + [size, page * size],
        )
        return rows, total

    def _measure_condition(self, f: ArcFilter, id_expr: str, sha_expr: str) -> tuple[str, list]:
        """Arcs whose current score (the report's: latest run, its judge, the arc unchanged
        since) of ``f.system`` has ``f.measure`` (with outcome ``f.value``); with ``f.vs``, of
        those the arcs where ``f.vs`` also has the measure with the other outcome (the arcs
        behind a paired difference)."""
        if not f.system or not _MEASURE.match(f.measure or ""):
            raise BadInput(
                "a measure filter names a system and a measure (e.g. "
                "system=literal-ungated&measure=end_contamination)"
            )
        natural = bool(f.split and f.split.startswith(_NATURAL))
        src = self.score_source(f.system, natural)
        base = self.score_source(f.vs, natural) if f.vs else None
        if src is None or "eval_scores" not in self.tables or (f.vs and base is None):
            return "0", []
        path = f"$.values.{f.measure}"
        sql = (
            f"exists (select 1 from eval_scores e where {counted_sql(id_expr, sha_expr)} and "
            "json_type(e.score, ?) is not null"
        )
        args: list = [src[0], src[1], path]
        if f.value is not None:
            sql += " and json_extract(e.score, ?) = ?"
            args += [path, int(f.value)]
        if base is not None:
            sql += (
                " and exists (select 1 from eval_scores b where b.run_key = ? and "
                "b.arc_id = e.arc_id and b.judge_key = ? and b.arc_sha256 = e.arc_sha256 and "
                "json_type(b.score, ?) is not null and "
                "json_extract(b.score, ?) <> json_extract(e.score, ?))"
            )
            args += [base[0], base[1], path, path, path]
        return sql + ")", args

    def scores(self, system: str, arc_ids: list[str]) -> dict[str, dict]:
        """arc id -> the score the report counts for ``system`` (one lookup per arc)."""
        run = self.systems().get(system)
        if run is None or "eval_scores" not in self.tables:
            return {}
        out = {}
        for a in arc_ids:
            if (score := self._counted(run, a)) is not None:
                out[a] = score
        return out

    def _counted(self, run: SystemRun, arc_id: str) -> dict | None:
        got = arc_result(self, run, arc_id, self.judge()).score
        return got.model_dump(mode="json") if got is not None else None

    def _natural_page(self, f: ArcFilter, page: int, size: int) -> tuple[list[dict], int]:
        if not self.has("natural_items"):
            return [], 0
        where, args = ["n.set_name = ?"], [f.split[len(_NATURAL) :]]
        if f.query:
            where.append("instr(n.item_id, ?) > 0")
            args.append(f.query)
        key = f"'{_NATURAL}' || n.set_name || ':' || n.item_id"
        if f.measure:
            cond, cargs = self._measure_condition(f, key, "n.sha256")
            where.append(cond)
            args += cargs
        sql = f"from natural_items n where {' and '.join(where)}"
        total = self.one(f"select count(*) {sql}", args)
        rows = self.dicts(
            f"select {key} as id, '{_NATURAL}' || n.set_name as split, n.question, "
            f"n.gold_answer, n.turns {sql} order by n.position limit ? offset ?",
            args + [size, page * size],
        )
        return rows, total

    def natural_sets(self) -> list[str]:
        return (
            [r[0] for r in self.rows("select name from natural_sets order by created_at, name")]
            if "natural_sets" in self.tables
            else []
        )

    def dialog(self, arc_id: str) -> Dialog | None:
        if arc_id.startswith(_NATURAL) and arc_id.count(":") >= 2:
            return self._natural_dialog(arc_id)
        raw = (
            self.one("select json from arcs where id = ?", [arc_id])
            if "arcs" in self.tables
            else None
        )
        if raw is None:
            return None
        from ..schema import Arc

        return _arc_dialog(Arc.model_validate_json(raw))

    def _natural_dialog(self, key: str) -> Dialog | None:
        from ..corpora.natural import NaturalItem

        _, set_name, item_id = key.split(":", 2)
        blob = (
            self.one(
                "select item_z from natural_items where set_name = ? and item_id = ?",
                [set_name, item_id],
            )
            if "natural_items" in self.tables
            else None
        )
        if blob is None:
            return None
        item = NaturalItem.model_validate_json(zlib.decompress(blob))
        evidence = set(item.evidence)
        sessions = [
            (
                s.date or "",
                [
                    Turn(
                        role=t.role,
                        text=t.text,
                        speaker=t.speaker,
                        mark="evidence" if t.ref in evidence else "",
                    )
                    for t in s.turns
                ],
            )
            for s in item.sessions
        ]
        facts = [
            ("Question", f"{item.question} ({item.question_date or 'undated'})"),
            ("Gold answer", item.gold_answer),
            (
                "Field",
                f"{item.field.attribute}: {item.field.description}"
                if item.field
                else f"refused: {item.field_refused}",
            ),
            ("Corpus", item.corpus),
            ("Conversation", item.conversation_id),
        ]
        return Dialog(
            id=key, kind="natural", split=f"{_NATURAL}{set_name}", facts=facts, sessions=sessions
        )

    def arc_checks(self, arc_id: str) -> list[dict]:
        if "checks" not in self.tables:
            return []
        return self.dicts(
            'select "check", passed, detail from checks where arc_id = ? order by 1', [arc_id]
        )

    def arc_verdicts(self, arc_id: str) -> list[dict]:
        """Every judge verdict on the arc (realism criteria, blind recovery), with rationales."""
        if "judge_verdicts" not in self.tables:
            return []
        tasks = [r[0] for r in self.rows("select distinct task from judge_verdicts")]
        out = []
        for task in tasks:  # the key starts with task: one index lookup each
            out += self.dicts(
                "select task, criterion, judge, verdict, intended, confidence, rationale, status, "
                "error from judge_verdicts where task = ? and item_id = ? order by criterion, judge",
                [task, arc_id],
            )
        return out

    # -- traces ------------------------------------------------------------------------------------
    def trace(self, arc_id: str, system: str) -> dict | None:
        """One system on one arc: {kind, trace (dict) or sessions (answering), score, failure,
        stale}; None when the system is unknown."""
        run = self.systems().get(system)
        if run is None:
            return None
        run_key, kind = run.run_key, run.kind
        out: dict = {
            "system": system,
            "kind": kind,
            "info": run.system["info"] if run.system else None,
            "model": run.system["model"] if run.system else "",
            "trace": None,
            "sessions": [],
            "score": None,
            "failure": None,
            "stale": False,
        }
        if kind == "component" and "eval_traces" in self.tables:
            got = self.conn.execute(
                "select trace, arc_sha256 from eval_traces where run_key = ? and arc_id = ?",
                [run_key, arc_id],
            ).fetchone()
            if got:
                out["trace"] = json.loads(got[0])
                out["stale"] = got[1] != current_sha(self, arc_id)
        if kind == "answering" and "eval_product_answers" in self.tables:
            store = ", store" if "store" in self.columns("eval_product_answers") else ""
            out["sessions"] = self.dicts(
                f"select after_session, date, answer, retrieved, calls, arc_sha256{store} from "
                "eval_product_answers where run_key = ? and arc_id = ? order by after_session",
                [run_key, arc_id],
            )
            for s in out["sessions"]:
                s["retrieved"] = json.loads(s["retrieved"] or "[]")
                s["store"] = json.loads(s["store"]) if s.get("store") else None
            if any(s["store"] is not None for s in out["sessions"]):
                from ..evaluate.show import arc_values
                from ..schema import Arc

                raw = self.one("select json from arcs where id = ?", [arc_id])
                out["values"] = arc_values(Arc.model_validate_json(raw)) if raw else []
            out["stale"] = bool(out["sessions"]) and out["sessions"][0][
                "arc_sha256"
            ] != current_sha(self, arc_id)
        if kind in ("answering", "answers") and "eval_answers" in self.tables:
            answers = self.dicts(
                "select after_session, answer, verdict from eval_answers "
                "where name = ? and arc_id = ? order by after_session",
                [system, arc_id],
            )
            by = {s["after_session"]: s for s in out["sessions"]}
            for a in answers:
                s = by.setdefault(
                    a["after_session"],
                    {"after_session": a["after_session"], "answer": a["answer"], "retrieved": None},
                )
                s["verdict"] = json.loads(a["verdict"]) if a["verdict"] else None
            out["sessions"] = [by[k] for k in sorted(by)]
        if "eval_scores" in self.tables:
            out["score"] = self._counted(run, arc_id)
        if "eval_failures" in self.tables:
            fail = self.conn.execute(
                "select stage, error from eval_failures where run_key = ? and arc_id = ?",
                [run_key, arc_id],
            ).fetchone()
            if fail:
                from ..llm import scrub

                out["failure"] = f"{fail[0]}: {scrub(fail[1] or '')}"
        return out


def _arc_dialog(arc) -> Dialog:
    s = arc.spec
    marks: dict[tuple[int, int], str] = {
        (arc.initial_turn.session, arc.initial_turn.turn): "initial turn"
    }
    if s.outcome == "control":
        marks[(arc.plan_turn.session, arc.plan_turn.turn)] = "completed change (control)"
    elif s.correction is not None and s.correction.target == "initial":
        pass  # the plan turn is the correction turn, marked below
    elif s.correction is not None:
        marks[(arc.plan_turn.session, arc.plan_turn.turn)] = "reported change (later corrected)"
    else:
        marks[(arc.plan_turn.session, arc.plan_turn.turn)] = "plan turn"
    if arc.outcome_turn is not None and s.correction is None:
        marks[(arc.outcome_turn.session, arc.outcome_turn.turn)] = "outcome turn"
    if arc.pending_turn is not None:
        marks[(arc.pending_turn.session, arc.pending_turn.turn)] = "still-pending mention"
    if arc.correction_turn is not None:
        marks[(arc.correction_turn.session, arc.correction_turn.turn)] = "correction turn"
    sessions = [
        (
            x.date.isoformat(),
            [
                Turn(role=t.role, text=t.text, mark=marks.get((si, ti), ""))
                for ti, t in enumerate(x.turns)
            ],
        )
        for si, x in enumerate(arc.sessions)
    ]
    facts = [
        ("Split", s.split),
        ("Factor", s.factor),
        ("Level", s.level),
        ("Outcome", s.outcome),
        ("Field", f"{s.field.attribute}: {s.field.description}"),
        ("Probe", s.field.probe_question),
        ("Initial value", s.initial_value),
        ("Plan value", s.plan_value),
        ("Plan wording", s.plan_wording),
    ]
    if s.confirmation_wording:
        facts.append(("Confirmation wording", s.confirmation_wording))
    if s.correction is not None:
        facts.append(
            (
                "Correction",
                (f"{s.correction.wrong_value} -> {s.correction.value} ({s.correction.level})"),
            )
        )
    facts.append(("Generator", f"{arc.provenance.generator} ({arc.provenance.generator_kind})"))
    return Dialog(
        id=s.id,
        kind="arc",
        split=s.split,
        facts=facts,
        sessions=sessions,
        truth_after_session=list(arc.expected_value_after_session),
    )
