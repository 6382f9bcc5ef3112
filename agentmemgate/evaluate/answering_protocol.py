"""The protocol for answering systems (products, baselines, plug-ins): ``amg eval run --system``.

For each arc a fresh system begins under an opaque namespace unique to (run key, arc, attempt) --
never the arc id -- so nothing of one conversation is retrieved for another, and a re-run after a
kill rebuilds the arc's memory from scratch under a new namespace (the LLM layer's cache answers
every call the killed attempt made). Sessions go in, in order, every turn with its role and the
session's date; after each the system is asked the arc's probe question (on that session's date).
Nothing else reaches it: no arc id, split, level, outcome or labelled value.

When an arc's sessions are all answered, its answers are judged and scored exactly as an uploaded
answer set is (``answer_scoring.assess`` / ``score_answers``), and the retrieved memories, answers,
verdicts and score are stored together (``store.save_answered``): a kill mid-arc loses only that
arc; a re-run redoes only unfinished arcs; another judge re-scores stored answers without running
the system again. Arcs run concurrently through ``run_concurrent``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from typing import Any

from ..answer_judge import AnswerJudge
from ..memory.answering import AnsweringSystem, ProbeAnswer, SessionInput, SessionTurn
from ..schema import Arc
from ..workspace import Workspace
from . import store
from ._drive import ArcItem, Tally, drive
from .answer_scoring import assess, score_answers, score_store
from .judges import ValueJudge
from .store_reading import reader_of
from .systems import SystemSpec
from .truth import Correction, truth_of


def namespace_for(run_key: str, arc_id: str) -> str:
    """Opaque and unique per (run key, arc, attempt): a hash with a fresh random part, which
    spells no label and is never the same twice."""
    h = hashlib.sha256(f"{run_key}\0{arc_id}\0{uuid.uuid4().hex}".encode()).hexdigest()
    return f"amg-{h[:24]}"


def session_inputs(arc: Arc) -> list[SessionInput]:
    """What a system is given of an arc: its sessions' turns (role, text) and dates, nothing else."""
    return [
        SessionInput(
            index=i,
            date=s.date,
            turns=tuple(SessionTurn(role=t.role, text=t.text) for t in s.turns),
        )
        for i, s in enumerate(arc.sessions)
    ]


def ask_arc(system: AnsweringSystem, arc: Arc, namespace: str) -> list[dict]:
    """Feed one conversation to ``system`` and ask the probe after every session."""
    question = arc.spec.field.probe_question
    out = []
    system.begin(namespace)
    try:
        for s in session_inputs(arc):
            system.ingest(s)
            before = system.calls
            a = system.answer(question, s.date)
            if not isinstance(a, ProbeAnswer):
                raise TypeError(
                    f"answer() returned {type(a).__name__}, not a memory.answering.ProbeAnswer"
                )
            row = {
                "after_session": s.index,
                "date": s.date.isoformat(),
                "answer": a.answer,
                "retrieved": [r.model_dump(exclude_defaults=True) for r in a.retrieved],
                "calls": system.calls - before,
                "namespace": namespace,
            }
            held = system.store_snapshot()
            if held is not None:
                row["store"] = held
            out.append(row)
    finally:
        system.close()
    return out


def plan_answering_arc(system: AnsweringSystem, arc: Arc) -> int | None:
    """A dry run of ``ask_arc``: the probe answer after every session counted on the system's
    model (``AnsweringSystem.plan``), nothing started; the calls counted, or None when the
    system cannot say what it would send."""
    question, sessions, n = arc.spec.field.probe_question, session_inputs(arc), 0
    for i, s in enumerate(sessions):
        planned = system.plan(sessions[: i + 1], question, s.date)
        if planned is None:
            return None
        n += bool(planned)
    return n


def load_answers(ws: Workspace, run_key: str, arc_id: str) -> list[dict]:
    """An arc's stored session rows, to be judged again."""
    rows = store.load_product_answers(ws, run_key, arc_id)
    for r in rows:
        r["retrieved"] = list(r["retrieved"])
    return rows


def run_answering(
    ws: Workspace,
    specs: list[SystemSpec],
    todo: list[ArcItem],
    vj: ValueJudge,
    aj: AnswerJudge,
    judge_key: str,
    tally: Tally,
    *,
    concurrency: int = 4,
    corrections: dict[str, Correction] | None = None,
    usage: Any = None,
    show_progress: bool = True,
) -> None:
    """Run (or re-score) ``todo``, the pairs of ``specs`` that ``run.plan_eval`` found not stored
    for ``judge_key``, into ``tally``; each arc's answers are kept even when judging them fails."""
    corrections = corrections or {}
    for s in specs:
        store.begin_answering(ws, s.name, s.run_key)

    def run(it: ArcItem) -> list[dict]:
        return ask_arc(it.spec.factory(), it.arc, namespace_for(it.run_key, it.arc.id))

    def score(it: ArcItem, sessions: list[dict]):
        truth = truth_of(it.arc, corrections.get(it.arc.id))
        answers = [r["answer"] for r in sessions]
        verdicts = assess(truth, answers, aj)
        same = lambda v, ref: vj.same(it.arc.spec.field, v, ref)
        scored = score_answers(truth, answers, verdicts, same)
        reader = reader_of(it.spec.info)
        if reader is not None and sessions and all(r.get("store") is not None for r in sessions):
            values = list(dict.fromkeys([truth.initial_value, truth.plan_value, truth.final_value]))
            held = [
                reader.read(r["store"], values, dt.date.fromisoformat(r["date"])).held
                for r in sessions
            ]
            score_store(truth, held, same, scored)
        return verdicts, scored

    def answered(it: ArcItem, sessions: list[dict], scored) -> store.Answered:
        verdicts, score = scored or (None, None)
        return store.Answered(
            run_key=it.run_key,
            system=it.spec.name,
            arc_id=it.arc.id,
            split=it.arc.spec.split,
            level=it.arc.spec.level,
            arc_sha=it.sha,
            sessions=sessions if it.stored is None else None,
            answers=[r["answer"] for r in sessions],
            verdicts=[v.model_dump_json() for v in verdicts] if verdicts else None,
            score=score,
            judge_key=judge_key,
        )

    names = ", ".join(dict.fromkeys(s.name for s in specs))
    for r in drive(
        todo,
        run=run,
        score=score,
        row=answered,
        offline=False,
        description=f"eval ({names}",
        usage=usage,
        concurrency=concurrency,
        show_progress=show_progress,
    ):
        tally.record(r)


__all__ = [
    "ask_arc",
    "load_answers",
    "namespace_for",
    "plan_answering_arc",
    "run_answering",
    "session_inputs",
]
