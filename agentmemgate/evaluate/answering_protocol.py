"""The protocol for answering systems (products, baselines, plug-ins): ``amg eval run --system``.

For each arc a fresh system begins under an opaque namespace unique to (run key, arc, attempt) --
never the arc id -- so nothing of one conversation is retrieved for another, and a re-run after a
kill rebuilds the arc's memory from scratch under a new namespace (the LLM layer's cache answers
every call the killed attempt made). Sessions go in, in order, every turn with its role and the
session's date; after each the system is asked the arc's probe question (on that session's date).
Nothing else reaches it: no arc id, split, level, outcome or labelled value.

When an arc's sessions are all answered, its answers are judged and scored exactly as an uploaded
answer set is (``answers.assess`` / ``score_answers``), and the retrieved memories, answers,
verdicts and score are stored together (``store.save_answered``): a kill mid-arc loses only that
arc; a re-run redoes only unfinished arcs; another judge re-scores stored answers without running
the system again. Arcs run concurrently through ``run_concurrent``.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..errors import AmgError
from ..llm import CallFailed, Failed, run_concurrent
from ..memory.answering import AnsweringSystem, ProbeAnswer, SessionInput, SessionTurn
from ..schema import Arc
from ..workspace import Workspace
from . import store
from .answer_scoring import assess, score_answers
from ..answer_judge import AnswerJudge
from .judges import ValueJudge
from .systems import SystemSpec
from .truth import Correction, truth_of


def namespace_for(run_key: str, arc_id: str) -> str:
    """Opaque and unique per (run key, arc, attempt): a hash with a fresh random part, which
    spells no label and is never the same twice."""
    h = hashlib.sha256(f"{run_key}\0{arc_id}\0{uuid.uuid4().hex}".encode()).hexdigest()
    return f"amg-{h[:24]}"


def session_inputs(arc: Arc) -> list[SessionInput]:
    """What a system is given of an arc: its sessions' turns (role, text) and dates, nothing else."""
    return [SessionInput(index=i, date=s.date,
                         turns=tuple(SessionTurn(role=t.role, text=t.text) for t in s.turns))
            for i, s in enumerate(arc.sessions)]


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
                raise TypeError(f"answer() returned {type(a).__name__}, not a "
                                "memory.answering.ProbeAnswer")
            out.append({"after_session": s.index, "date": s.date.isoformat(), "answer": a.answer,
                        "retrieved": [r.model_dump(exclude_defaults=True) for r in a.retrieved],
                        "calls": system.calls - before, "namespace": namespace})
    finally:
        system.close()
    return out


def plan_answering_arc(system: AnsweringSystem, arc: Arc) -> int | None:
    """A dry run of ``ask_arc``: the probe answer after every session counted on the system's
    model (``AnsweringSystem.plan``), nothing started; the calls counted, or None when the
    system cannot say what it would send."""
    question, sessions, n = arc.spec.field.probe_question, session_inputs(arc), 0
    for i, s in enumerate(sessions):
        planned = system.plan(sessions[:i + 1], question, s.date)
        if planned is None:
            return None
        n += bool(planned)
    return n


@dataclass
class _Item:
    spec: SystemSpec
    arc: Arc
    sha: str
    sessions: list[dict] | None = None  # stored answers to re-score instead of running


@dataclass
class _Failure:
    item: _Item
    stage: str
    error: str
    sessions: list[dict] | None = None  # the system ran; only scoring failed


@dataclass
class AnsweringResult:
    ran: int = 0
    rescored: int = 0
    done: int = 0
    failed: int = 0
    calls: int = 0
    examples: list[str] = field(default_factory=list)


def run_answering(ws: Workspace, specs: list[SystemSpec], arcs: list[tuple[Arc, str]],
                  vj: ValueJudge, aj: AnswerJudge, judge_key: str, *, concurrency: int = 4,
                  corrections: dict[str, Correction] | None = None, usage: Any = None,
                  show_progress: bool = True) -> AnsweringResult:
    corrections = corrections or {}
    res = AnsweringResult()
    todo: list[_Item] = []
    for s in specs:
        store.begin_answering(ws, s.name, s.run_key)
        produced = store.stored_product_arcs(ws, s.run_key)
        scored = store.stored_scores(ws, s.run_key, judge_key)
        for arc, sha in arcs:
            if produced.get(arc.id) == sha and scored.get(arc.id) == sha:
                res.done += 1
            elif produced.get(arc.id) == sha:
                rows = store.load_product_answers(ws, s.run_key, arc.id)
                for r in rows:
                    r["retrieved"] = list(r["retrieved"])
                todo.append(_Item(s, arc, sha, rows))
            else:
                todo.append(_Item(s, arc, sha))

    def work(it: _Item):
        stage, sessions = "system", it.sessions
        try:
            if sessions is None:
                sessions = ask_arc(it.spec.factory(), it.arc, namespace_for(it.spec.run_key,
                                                                            it.arc.id))
            stage = "scoring"
            truth = truth_of(it.arc, corrections.get(it.arc.id))
            answers = [r["answer"] for r in sessions]
            verdicts = assess(truth, answers, aj)
            score = score_answers(truth, answers, verdicts,
                                  lambda v, ref: vj.same(it.arc.spec.field, v, ref))
        except CallFailed as e:
            return _Failure(it, stage, str(e), sessions if stage == "scoring" else None)
        except AmgError:
            raise  # a bad key, an exhausted quota, bad input: stop the run, one line
        except Exception as e:  # a bug in a system: record it against this arc, go on
            if stage == "scoring":
                raise
            return _Failure(it, stage, f"{it.spec.name} raised {type(e).__name__}: {e}")
        return it, sessions, verdicts, score

    def answered(it: _Item, sessions, verdicts, score) -> store.Answered:
        return store.Answered(
            run_key=it.spec.run_key, system=it.spec.name, arc_id=it.arc.id,
            split=it.arc.spec.split, level=it.arc.spec.level, arc_sha=it.sha,
            sessions=sessions if it.sessions is None else None,
            answers=[r["answer"] for r in sessions],
            verdicts=[v.model_dump_json() for v in verdicts] if verdicts else None, score=score,
            judge_key=judge_key)

    names = ", ".join(dict.fromkeys(s.name for s in specs))
    for r in run_concurrent(work, todo, concurrency=concurrency, description=f"eval ({names})",
                            usage=usage, progress=show_progress,
                            is_failure=lambda x: isinstance(x, _Failure)):
        if isinstance(r, Failed):
            r = _Failure(r.item, "system", r.error)
        if isinstance(r, _Failure):
            res.failed += 1
            it = r.item
            if r.sessions is not None and it.sessions is None:  # keep the answers: re-score later
                store.save_answered(ws, answered(it, r.sessions, None, None))
            store.save_failure(ws, it.spec.run_key, it.spec.name, it.arc.id, r.stage, r.error)
            if len(res.examples) < 10:
                res.examples.append(f"{it.spec.name} on {it.arc.id} ({r.stage}): {r.error}")
            continue
        it, sessions, verdicts, score = r
        store.save_answered(ws, answered(it, sessions, verdicts, score))
        if it.sessions is None:
            res.ran += 1
            res.calls += sum(x["calls"] for x in sessions)
        else:
            res.rescored += 1
    return res


__all__ = ["AnsweringResult", "ask_arc", "namespace_for", "plan_answering_arc", "run_answering",
           "session_inputs"]
