"""``amg eval run --natural SET``: component systems on natural conversations (paper, Section 6.1).

Every system runs on a natural item the way it runs on an arc (``protocol.run_sessions``): the
sessions in date order, every user turn with the earlier turns as context, the session date and
the item's frozen value-free field (``corpora.natural_fields``). At the end the field is read and
that value is scored against the gold answer by the fixed equivalence judge (``task_accuracy``,
the one measure that applies: a natural item has no labelled plan, outcome or pending window).
Items whose field the value-free check refused are not run by component systems (reports count
them). Answering systems (products, baselines, plug-ins: ``memory.answering``) run on every item:
a fresh instance under an opaque namespace ingests the sessions in order and is asked the question
itself once, on the question's date; its answer is scored against the gold answer by the same
judge (the judge is shown the question as the field's description; the system never sees the
gold answer, evidence or ids).

Results are stored like arc results, keyed ``natural:SET:ITEM`` with split ``natural:SET`` and the
sha256 of the stored item, so a re-run skips what is done and a rebuilt item is run again.
Oracle ablations cannot run here: a natural item has no labelled values to give them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..corpora.natural import NaturalItem, as_date, load_items, natural_set
from ..errors import BadInput
from ..schema import FieldSpec
from ..workspace import Workspace
from . import store
from ._drive import Tally, WorkspaceOption, drive, usage_view
from .answering_protocol import namespace_for
from .judges import ValueJudge, get_value_judge
from .measures import ArcScore
from .options import EvalOptions
from .protocol import run_sessions
from .run import resolve_systems
from .systems import PAPER_SYSTEMS, SystemSpec

NATURAL_SYSTEMS = PAPER_SYSTEMS  # the paper's 6.1 check: both extraction styles, gate on and off


def split_of(name: str) -> str:
    return f"natural:{name}"


def key_of(set_name: str, item_id: str) -> str:
    return f"natural:{set_name}:{item_id}"


class NaturalEvalSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workspace_option: str = WorkspaceOption
    run_id: int
    sets: dict[str, dict[str, int]]  # set -> {"items", "fielded", "refused"}
    names: list[str]
    judge: dict
    offline: bool
    answering: bool = False  # some system is an answering system (asked the question itself)
    ran_now: int
    rescored: int
    already_done: int
    failed: int
    failure_examples: list[str]
    component_calls: int
    seconds: float

    def lines(self) -> list[str]:
        kinds = "offline rules" if self.offline else "LLM"
        out = [
            f"systems: {', '.join(self.names)} ({kinds}); judge: {self.judge['spec']}"
            + (" (heuristic)" if self.judge["heuristic"] else "")
        ]
        for name, c in self.sets.items():
            out.append(
                f"natural set {name}: {c['items']} item{'s' if c['items'] != 1 else ''}, "
                f"{c['fielded']} with a value-free "
                f"field (component systems run on these), {c['refused']} refused"
                + (" (answering systems run on all)" if self.answering else "")
            )
        out.append(
            f"ran now {self.ran_now}, re-scored {self.rescored}, already stored "
            f"{self.already_done}, failed {self.failed}; {self.component_calls} component "
            f"calls; {self.seconds:.1f} s"
        )
        out += [f"  failed {e}" for e in self.failure_examples]
        out.append(f"report: amg report eval{self.workspace_option}")
        return out


@dataclass
class _Job:
    """One system on one natural item; ``stored``: its stored trace, or an answering system's
    stored answer rows, to score again."""

    spec: SystemSpec
    set_name: str
    item: NaturalItem
    sha: str
    run_key: str  # the spec's (a hash: computed once per system)
    stored: Any = None

    @property
    def system(self) -> str:
        return self.spec.name

    @property
    def arc_id(self) -> str:
        return key_of(self.set_name, self.item.item_id)

    @property
    def answering(self) -> bool:
        return _answering(self.spec)


def _answering(spec: SystemSpec) -> bool:
    return getattr(spec, "kind", "component") == "answering"


def judge_field(item: NaturalItem) -> FieldSpec:
    """What the equivalence judge is told an answer is about: the item's field, or for a refused
    one the question itself (the judge is the scorer; no system sees this)."""
    return item.field or FieldSpec(
        attribute="answer_to_the_question", description=item.question, probe_question=item.question
    )


def ask_natural(system, item: NaturalItem, namespace: str) -> list[dict]:
    """Sessions in, in order; then the question once, on its date (an answering system)."""
    from ..memory.answering import ProbeAnswer

    sessions, question, date = answering_inputs(item)
    system.begin(namespace)
    try:
        for sess in sessions:
            system.ingest(sess)
        before = system.calls
        a = system.answer(question, date)
        if not isinstance(a, ProbeAnswer):
            raise TypeError(
                f"answer() returned {type(a).__name__}, not a memory.answering.ProbeAnswer"
            )
    finally:
        system.close()
    return [
        {
            "after_session": len(sessions) - 1,
            "date": date.isoformat(),
            "answer": a.answer,
            "retrieved": [r.model_dump(exclude_defaults=True) for r in a.retrieved],
            "calls": system.calls - before,
            "namespace": namespace,
        }
    ]


def answering_inputs(item: NaturalItem):
    """What an answering system (``memory.answering``) gets for a natural item: the sessions in
    order as ``SessionInput``, the question and its date -- never the gold answer, evidence or ids.
    (The answering route for natural sets waits for the products; see the README.)"""
    from ..memory.answering import SessionInput, SessionTurn

    dates = item.dates()
    sessions = [
        SessionInput(
            index=i,
            date=dates[i],
            turns=tuple(SessionTurn(role=t.role, text=t.text) for t in s.turns),
        )  # type: ignore[arg-type]
        for i, s in enumerate(item.sessions)
    ]
    return sessions, item.question, as_date(item.question_date) or dates[-1]


def score_natural(trace, item: NaturalItem, set_name: str, vj: ValueJudge) -> ArcScore:
    """``task_accuracy``: the field read at the end names the gold answer (the fixed judge)."""
    end = trace.end_read
    ok = vj.same(item.field, end, item.gold_answer)
    return ArcScore(
        arc_id=key_of(set_name, item.item_id),
        split=split_of(set_name),
        factor="natural",
        level="natural",
        outcome="natural",
        values={"task_accuracy": ok},
        why={"task_accuracy": f"end read {end!r}, gold answer {item.gold_answer!r}"},
        calls=trace.calls,
        user_messages=trace.user_messages,
    )


def score_answer(
    answer: str, calls: int, item: NaturalItem, set_name: str, vj: ValueJudge
) -> ArcScore:
    """``task_accuracy`` of an answering system: its answer names the gold answer."""
    ok = vj.same(judge_field(item), answer, item.gold_answer)
    return ArcScore(
        arc_id=key_of(set_name, item.item_id),
        split=split_of(set_name),
        factor="natural",
        level="natural",
        outcome="natural",
        values={"task_accuracy": ok},
        why={"task_accuracy": f"answer {answer!r}, gold answer {item.gold_answer!r}"},
        calls=calls,
        user_messages=sum(1 for x in item.sessions for t in x.turns if t.role == "user"),
    )


def run_natural(
    ws: Workspace,
    sets: list[str],
    systems: Iterable[str | SystemSpec] | None = None,
    options: EvalOptions | None = None,
    *,
    limit: int | None = None,
    show_progress: bool = True,
) -> NaturalEvalSummary:
    """Run ``systems`` (default: the paper's four) on every fielded item of ``sets``, with the
    model, judge, concurrency and variants of ``options`` (``EvalOptions``, as ``run_eval``).

    ``limit``: only the first N items of each set (a quick look, e.g. with a real model)."""
    t0 = time.perf_counter()
    if not sets:
        raise BadInput("--natural needs a set name (see `amg natural list`)")
    infos = {n: natural_set(ws, n) for n in dict.fromkeys(sets)}
    o = options or EvalOptions()
    specs = resolve_systems(
        systems or list(NATURAL_SYSTEMS),
        model=o.model,
        workspace=ws,
        variants=list(o.variants),
        concurrency=max(16, o.concurrency),
    )
    oracles = [s.name for s in specs if s.info.oracle]
    if oracles:
        raise BadInput(
            f"{oracles[0]} is an oracle ablation (it reads labelled values) and a "
            "natural item has none; run it on arcs"
        )
    vj = get_value_judge(o.judge, workspace=ws)
    jk = vj.key
    store.save_judge(
        ws,
        jk,
        "equivalence",
        vj.judge.spec,
        vj.judge.family,
        vj.judge.heuristic,
        vj.rubric,
        vj.judge.rubric_sha256.get("equivalence", ""),
    )
    for s in specs:
        store.save_system(
            ws,
            s.run_key,
            s.name,
            s.info,
            s.options,
            s.model,
            s.source_sha,
            getattr(s, "kind", "component"),
        )
        if _answering(s):
            store.begin_answering(ws, s.name, s.run_key)
    run_id = store.start_run(
        ws,
        {
            "model": o.model.spec,
            "judge": o.judge.spec,
            "concurrency": o.concurrency,
            "natural": list(infos),
            "limit": limit,
            "base_url": bool(o.model.base_url),
        },
        [s.name for s in specs],
        [split_of(n) for n in infos],
        jk,
    )
    counts: dict[str, dict[str, int]] = {}
    todo: list[_Job] = []
    done = 0
    run_keys = {s.name: s.run_key for s in specs}  # a hash over the spec: computed once
    stored = {}  # system -> (item key -> the sha its output was made on, the same for its score)
    for s in specs:
        made = store.stored_product_arcs if _answering(s) else store.stored_traces
        stored[s.name] = (made(ws, run_keys[s.name]), store.stored_scores(ws, run_keys[s.name], jk))
    for name in infos:
        c = counts[name] = {"items": 0, "fielded": 0, "refused": 0}
        for n, (item, sha) in enumerate(load_items(ws, name)):
            if limit and n >= limit:
                break
            c["items"] += 1
            c["refused" if item.field is None else "fielded"] += 1
            key = key_of(name, item.item_id)
            for s in specs:
                run_key = run_keys[s.name]
                made, scored = stored[s.name]
                answering = _answering(s)  # asked the question itself: every item, fielded or not
                if not answering and item.field is None:
                    continue
                if scored.get(key) == sha and made.get(key) == sha:
                    done += 1
                elif made.get(key) == sha:
                    load = store.load_product_answers if answering else store.load_trace
                    todo.append(_Job(s, name, item, sha, run_key, load(ws, run_key, key)))
                else:
                    todo.append(_Job(s, name, item, sha, run_key))

    def run(job: _Job):
        if job.answering:
            return ask_natural(job.spec.factory(), job.item, namespace_for(job.run_key, job.arc_id))
        item = job.item
        dates = item.dates()
        sessions = [
            (dates[i], [(t.role, t.text) for t in s.turns]) for i, s in enumerate(item.sessions)
        ]
        system = job.spec.factory()  # oracles were refused above
        return run_sessions(system, item.field, sessions, job.arc_id, job.spec.name)

    def score(job: _Job, output) -> ArcScore:
        if job.answering:
            return score_answer(
                output[-1]["answer"], sum(r["calls"] for r in output), job.item, job.set_name, vj
            )
        return score_natural(output, job.item, job.set_name, vj)

    def row(job: _Job, output, score: ArcScore | None) -> store.Answered | store.Finished:
        made_now = job.stored is None
        if job.answering:
            return store.Answered(
                run_key=job.run_key,
                system=job.spec.name,
                arc_id=job.arc_id,
                split=split_of(job.set_name),
                level="natural",
                arc_sha=job.sha,
                sessions=output if made_now else None,
                answers=[r["answer"] for r in output],
                verdicts=None,
                score=score,
                judge_key=jk,
            )
        return store.Finished(
            run_key=job.run_key,
            system=job.spec.name,
            arc_id=job.arc_id,
            split=split_of(job.set_name),
            level="natural",
            arc_sha=job.sha,
            trace=output if made_now else None,
            score=score,
            judge_key=jk,
        )

    offline = vj.judge.heuristic and all(s.info.offline for s in specs)
    t = Tally(ws, offline)
    status = "failed"
    try:
        for r in drive(
            todo,
            run=run,
            score=score,
            row=row,
            offline=offline,
            description=f"eval natural ({len(specs)} systems",
            usage=usage_view(specs, vj),
            concurrency=o.concurrency,
            show_progress=show_progress,
        ):
            t.record(r)
        status = "ok" if t.failed == 0 else "partial"
    finally:
        t.flush()
        store.finish_run(ws, run_id, status)
    return NaturalEvalSummary(
        run_id=run_id,
        sets=counts,
        names=[s.name for s in specs],
        judge=vj.info.model_dump(),
        offline=all(s.info.offline for s in specs),
        answering=any(_answering(s) for s in specs),
        ran_now=t.ran,
        rescored=t.rescored,
        already_done=done,
        failed=t.failed,
        failure_examples=t.examples,
        component_calls=t.calls,
        seconds=round(time.perf_counter() - t0, 3),
    )
