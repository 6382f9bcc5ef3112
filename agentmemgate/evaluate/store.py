"""Evaluation records in the workspace database (tables of migration ``m012_eval``).

A trace is keyed by the system's run key (name + options + model + component/rubric hashes: a
changed system gets a new key and is re-run) and the arc; it carries the sha256 of the arc text
it ran on, so a rebuilt arc's old trace is ignored rather than scored against new text. Scores are
keyed by trace and judge, so another judge re-scores stored traces without re-running systems.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from ..memory.system import SystemInfo
from ..workspace import Workspace, now
from .measures import ArcScore
from .trace import Trace


@dataclass
class Finished:
    """One (system, arc) done: its trace (None when only re-scored) and its score."""

    run_key: str
    system: str
    arc_id: str
    split: str
    level: str
    arc_sha: str
    trace: Trace | None
    score: ArcScore | None
    judge_key: str


@contextlib.contextmanager
def atomic(ws: Workspace) -> Iterator[sqlite3.Connection]:
    """One transaction for several writes (sqlite-utils' bulk helpers commit on their own)."""
    conn = ws.db.conn
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def put(conn: sqlite3.Connection, table: str, rows: list[dict]) -> None:
    """Insert or replace ``rows`` (all with the same keys) into ``table`` on ``conn``."""
    if not rows:
        return
    cols = list(rows[0])
    conn.executemany(
        f"insert or replace into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
        [[r[c] for c in cols] for r in rows],
    )


def save_system(
    ws: Workspace,
    run_key: str,
    name: str,
    info: SystemInfo,
    options: dict,
    model: str,
    source_sha: str,
    kind: str = "component",
) -> None:
    """``kind``: ``component`` (stored as NULL, as rows before m014) or ``answering``."""
    t = now()
    with ws.db.conn:
        existing = ws.db["eval_systems"].count_where("run_key = ?", [run_key])
        if existing:
            ws.db["eval_systems"].update(run_key, {"last_run_at": t})
        else:
            ws.db["eval_systems"].insert(
                {
                    "run_key": run_key,
                    "name": name,
                    "info": info.model_dump_json(),
                    "options": json.dumps(options, sort_keys=True, default=str),
                    "model": model,
                    "source_sha256": source_sha,
                    "created_at": t,
                    "last_run_at": t,
                    "kind": None if kind == "component" else kind,
                }
            )


def save_judge(
    ws: Workspace,
    key: str,
    kind: str,
    spec: str,
    family: str,
    heuristic: bool,
    rubric: str,
    rubric_sha: str,
    answer_rubric: str = "",
) -> None:
    t = now()
    with ws.db.conn:
        if ws.db["eval_judges"].count_where("judge_key = ?", [key]):
            ws.db["eval_judges"].update(key, {"last_used_at": t})
        else:
            ws.db["eval_judges"].insert(
                {
                    "judge_key": key,
                    "kind": kind,
                    "spec": spec,
                    "family": family,
                    "heuristic": int(heuristic),
                    "rubric": rubric,
                    "rubric_sha256": rubric_sha,
                    "answer_rubric": answer_rubric,
                    "created_at": t,
                    "last_used_at": t,
                }
            )


def judges(ws: Workspace) -> list[dict]:
    """Every judge used, newest use first."""
    return list(ws.db["eval_judges"].rows_where(order_by="last_used_at desc, rowid desc"))


def stored_traces(ws: Workspace, run_key: str) -> dict[str, str]:
    """arc id -> sha256 of the arc text its stored trace ran on."""
    return {
        a: s
        for a, s in ws.db.execute(
            "select arc_id, arc_sha256 from eval_traces where run_key = ?", [run_key]
        ).fetchall()
    }


def stored_scores(ws: Workspace, run_key: str, judge_key: str) -> dict[str, str]:
    return {
        a: s
        for a, s in ws.db.execute(
            "select arc_id, arc_sha256 from eval_scores where run_key = ? and judge_key = ?",
            [run_key, judge_key],
        ).fetchall()
    }


def load_trace(ws: Workspace, run_key: str, arc_id: str) -> Trace | None:
    row = ws.db.execute(
        "select trace from eval_traces where run_key = ? and arc_id = ?", [run_key, arc_id]
    ).fetchone()
    return Trace.model_validate_json(row[0]) if row else None


def save_finished(ws: Workspace, done: list[Finished]) -> None:
    """Store traces and scores in one transaction, and clear the failures they replace."""
    if not done:
        return
    t = now()
    traces = [
        {
            "run_key": d.run_key,
            "arc_id": d.arc_id,
            "system": d.system,
            "split": d.split,
            "arc_sha256": d.arc_sha,
            "trace": d.trace.model_dump_json(exclude_defaults=True),
            "calls": d.trace.calls,
            "user_messages": d.trace.user_messages,
            "created_at": t,
        }
        for d in done
        if d.trace is not None
    ]
    scores = [
        {
            "run_key": d.run_key,
            "arc_id": d.arc_id,
            "judge_key": d.judge_key,
            "system": d.system,
            "split": d.split,
            "level": d.level,
            "arc_sha256": d.arc_sha,
            "score": d.score.model_dump_json(),
            "created_at": t,
        }
        for d in done
        if d.score is not None
    ]
    with atomic(ws) as conn:  # a trace and its score land together, or neither does
        put(conn, "eval_traces", traces)
        put(conn, "eval_scores", scores)
        conn.executemany(
            "delete from eval_failures where run_key = ? and arc_id = ?",
            [[d.run_key, d.arc_id] for d in done],
        )


def save_failure(
    ws: Workspace, run_key: str, system: str, arc_id: str, stage: str, error: str
) -> None:
    with ws.db.conn:
        ws.db["eval_failures"].upsert(
            {
                "run_key": run_key,
                "arc_id": arc_id,
                "system": system,
                "stage": stage,
                "error": error,
                "created_at": now(),
            },
            pk=("run_key", "arc_id"),
        )


def failures(ws: Workspace, run_keys: list[str]) -> list[dict]:
    if not run_keys:
        return []
    q = ",".join("?" * len(run_keys))
    return list(
        ws.db.execute(
            f"select system, arc_id, stage, error from eval_failures where run_key in ({q}) "
            "order by system, arc_id",
            run_keys,
        ).fetchall()
    )


def latest_systems(ws: Workspace) -> dict[str, dict]:
    """system name -> its most recently run ``eval_systems`` row (info parsed)."""
    out: dict[str, dict] = {}
    for r in ws.db["eval_systems"].rows_where(order_by="last_run_at, rowid"):
        r = dict(r)
        r["info"] = SystemInfo.model_validate_json(r["info"])
        r["options"] = json.loads(r["options"] or "{}")
        out[r["name"]] = r
    return out


def stored_score_rows(ws: Workspace, run_key: str, judge_key: str) -> list[tuple[str, str, str]]:
    """(arc id, sha256 of the text it was scored on, score JSON) of one run under one judge;
    ``counted.scores`` keeps those that count."""
    return ws.db.execute(
        "select arc_id, arc_sha256, score from eval_scores where run_key = ? and judge_key = ?",
        [run_key, judge_key],
    ).fetchall()


def stored_score(
    ws: Workspace, run_key: str, judge_key: str, arc_id: str
) -> tuple[str, str] | None:
    """(sha256 of the text it was scored on, score JSON) of one arc, or None."""
    return ws.db.execute(
        "select arc_sha256, score from eval_scores where run_key = ? and judge_key = ? "
        "and arc_id = ?",
        [run_key, judge_key, arc_id],
    ).fetchone()


def answer_sets(ws: Workspace) -> dict[str, dict]:
    """name -> its ``eval_answer_sets`` row: uploaded answer sets, and the answers of each
    answering system run by ``amg eval run`` (kind ``system``)."""
    return {r["name"]: r for r in ws.db["eval_answer_sets"].rows}


def start_run(
    ws: Workspace, params: dict, systems: list[str], splits: list[str], judge_key: str
) -> int:
    with ws.db.conn:
        return (
            ws.db["eval_runs"]
            .insert(
                {
                    "params": json.dumps(params, sort_keys=True, default=str),
                    "systems": json.dumps(systems),
                    "splits": json.dumps(splits),
                    "judge_key": judge_key,
                    "started_at": now(),
                    "status": "running",
                }
            )
            .last_pk
        )


def finish_run(ws: Workspace, run_id: int, status: str) -> None:
    with ws.db.conn:
        ws.db["eval_runs"].update(run_id, {"finished_at": now(), "status": status})


def latest_run(ws: Workspace) -> dict | None:
    rows = list(ws.db["eval_runs"].rows_where(order_by="id desc", limit=1))
    return dict(rows[0]) if rows else None


def save_uploaded(
    ws: Workspace,
    name: str,
    run_key: str,
    path: str,
    file_sha: str,
    answers: dict[str, list[str | None]],
    verdict_rows: list[dict],
) -> None:
    """An uploaded answer set (``amg eval answers``), its answers and the verdicts judged now, in
    one transaction. Every answer is kept, judged or not; one not judged now keeps the verdict
    stored for it, unless the file changed (then the set's old answers go)."""
    with atomic(ws) as conn:
        previous = conn.execute(
            "select sha256 from eval_answer_sets where name = ?", [name]
        ).fetchall()
        if any(p[0] != file_sha for p in previous):
            conn.execute("delete from eval_answers where name = ?", [name])
        put(
            conn,
            "eval_answer_sets",
            [
                {
                    "name": name,
                    "run_key": run_key,
                    "path": path,
                    "sha256": file_sha,
                    "arcs": len(answers),
                    "lines": sum(a is not None for v in answers.values() for a in v),
                    "created_at": now(),
                }
            ],
        )
        judged = {(r["arc_id"], r["after_session"]) for r in verdict_rows}
        put(
            conn,
            "eval_answers",
            verdict_rows
            + [
                {
                    "name": name,
                    "arc_id": arc_id,
                    "after_session": i,
                    "answer": t,
                    "verdict": _stored_verdict(conn, name, arc_id, i),
                }
                for arc_id, texts in answers.items()
                for i, t in enumerate(texts)
                if t is not None and (arc_id, i) not in judged
            ],
        )


def _stored_verdict(conn: sqlite3.Connection, name: str, arc_id: str, i: int) -> str | None:
    row = conn.execute(
        "select verdict from eval_answers where name = ? and arc_id = ? and after_session = ?",
        [name, arc_id, i],
    ).fetchone()
    return row[0] if row else None


# -- answering systems run by ``amg eval run`` (migration m014) -------------------------------
def answering_names(ws: Workspace) -> set[str]:
    """Names of the answering systems run in this workspace (their answer sets have kind system)."""
    return {
        r[0]
        for r in ws.db.execute("select name from eval_answer_sets where kind = 'system'").fetchall()
    }


def begin_answering(ws: Workspace, name: str, run_key: str) -> None:
    """Make ``name``'s answer set point at ``run_key``; a changed system (another run key) drops
    the answers of the old one, so reports and audits never mix the two."""
    with atomic(ws) as conn:
        row = conn.execute(
            "select run_key, kind from eval_answer_sets where name = ?", [name]
        ).fetchone()
        if row is not None and row[1] != "system":
            raise ValueError(f"{name!r} is an uploaded answer set")
        if row is not None and row[0] == run_key:
            return
        conn.execute("delete from eval_answers where name = ?", [name])
        put(
            conn,
            "eval_answer_sets",
            [
                {
                    "name": name,
                    "run_key": run_key,
                    "path": "",
                    "sha256": run_key,
                    "arcs": 0,
                    "lines": 0,
                    "created_at": now(),
                    "kind": "system",
                }
            ],
        )


def stored_product_arcs(ws: Workspace, run_key: str) -> dict[str, str]:
    """arc id -> sha256 of the arc text its stored answers were made on."""
    return {
        a: s
        for a, s in ws.db.execute(
            "select distinct arc_id, arc_sha256 from eval_product_answers where run_key = ?",
            [run_key],
        ).fetchall()
    }


def load_product_answers(ws: Workspace, run_key: str, arc_id: str) -> list[dict]:
    """The stored sessions of one arc, in order (``retrieved`` parsed)."""
    rows = [
        dict(r)
        for r in ws.db["eval_product_answers"].rows_where(
            "run_key = ? and arc_id = ?", [run_key, arc_id], order_by="after_session"
        )
    ]
    for r in rows:
        r["retrieved"] = json.loads(r["retrieved"] or "[]")
        r["store"] = json.loads(r["store"]) if r.get("store") else None
    return rows


@dataclass
class Answered:
    """One (answering system, arc) done: its session rows (None when only re-scored), the
    verdict of each answer and the arc's score (None when scoring failed)."""

    run_key: str
    system: str
    arc_id: str
    split: str
    level: str
    arc_sha: str
    sessions: list[dict] | None  # after_session, date, answer, retrieved (list), calls, namespace
    answers: list[str]
    verdicts: list[str] | None  # AnswerVerdict JSON per session
    score: ArcScore | None
    judge_key: str


def save_answered(ws: Workspace, d: Answered) -> None:
    """Everything of one arc in one transaction: what the system retrieved and answered, the
    answers with their verdicts (as an uploaded answer set has them), the score."""
    t = now()
    with atomic(ws) as conn:
        if d.sessions is not None:
            conn.execute(
                "delete from eval_product_answers where run_key = ? and arc_id = ?",
                [d.run_key, d.arc_id],
            )
            put(
                conn,
                "eval_product_answers",
                [
                    {
                        "run_key": d.run_key,
                        "arc_id": d.arc_id,
                        "after_session": s["after_session"],
                        "system": d.system,
                        "arc_sha256": d.arc_sha,
                        "namespace": s["namespace"],
                        "date": s["date"],
                        "answer": s["answer"],
                        "retrieved": json.dumps(s["retrieved"], ensure_ascii=False, default=str),
                        "calls": s["calls"],
                        "created_at": t,
                        "store": json.dumps(s["store"], ensure_ascii=False, default=str)
                        if s.get("store") is not None
                        else None,
                    }
                    for s in d.sessions
                ],
            )
        conn.execute("delete from eval_answers where name = ? and arc_id = ?", [d.system, d.arc_id])
        put(
            conn,
            "eval_answers",
            [
                {
                    "name": d.system,
                    "arc_id": d.arc_id,
                    "after_session": i,
                    "answer": a,
                    "verdict": d.verdicts[i] if d.verdicts else None,
                }
                for i, a in enumerate(d.answers)
            ],
        )
        if d.score is not None:
            put(
                conn,
                "eval_scores",
                [
                    {
                        "run_key": d.run_key,
                        "arc_id": d.arc_id,
                        "judge_key": d.judge_key,
                        "system": d.system,
                        "split": d.split,
                        "level": d.level,
                        "arc_sha256": d.arc_sha,
                        "score": d.score.model_dump_json(),
                        "created_at": t,
                    }
                ],
            )
            conn.execute(
                "delete from eval_failures where run_key = ? and arc_id = ?", [d.run_key, d.arc_id]
            )
        arcs, lines = conn.execute(
            "select count(distinct arc_id), count(*) from eval_answers where name = ?", [d.system]
        ).fetchone()
        conn.execute(
            "update eval_answer_sets set arcs = ?, lines = ? where name = ?",
            [arcs, lines, d.system],
        )
