"""``amg eval run``: every chosen system on every arc of the chosen splits, stored as each finishes
(``answers_run`` scores an uploaded file of answers).

Arcs run concurrently through the LLM layer's ``run_concurrent`` (turns within an arc in order);
with offline components and an offline judge they run inline, which is faster than a thread pool
for pure-Python work. A (system, arc) whose trace and score are stored for the same arc text,
system run key and judge is skipped, so a re-run after kill -9 repeats only the unfinished pairs,
and the LLM layer's cache answers every model call those pairs had already made. A changed judge
re-scores stored traces without re-running systems. A component call that fails (``CallFailed``)
is stored as a failure of that pair; a re-run retries it (the policy for every failure:
``_drive.attempt``). ``run_eval`` plans first (``plan_eval``: what to run, what is stored, nothing
written), then executes the plan; a dry run prints the plan with its calls counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..llm.ref import ModelRef
from ..memory.system import SystemInfo
from ..run_context import current as run_context
from ..schema import Arc
from ..validate.judges import JudgeInfo
from ..workspace import Workspace
from . import store
from ._drive import ArcItem, Tally, WorkspaceOption, drive, usage_view
from .arcs import check_judge_family, load_arcs
from .judges import ValueJudge, get_value_judge
from .measures import score_trace
from .options import EvalOptions
from .protocol import Turns, arc_turns, new_system, run_arc
from .systems import DEFAULT_SYSTEMS, SystemSpec, display_name, repeat_spec, resolve_system
from .truth import Correction, truth_of

if TYPE_CHECKING:
    from ..answer_judge import AnswerJudge


class EvalSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workspace_option: str = WorkspaceOption
    run_id: int
    names: list[str]  # as results name them (``NAME@model`` for model components)
    answering: list[str] = []  # those of ``names`` that are answering systems (products, baselines)
    systems: list[SystemInfo]
    splits: list[str]
    arcs: int
    judge: JudgeInfo
    ran_now: int
    rescored: int
    already_done: int
    failed: int
    failure_examples: list[str]
    component_calls: int  # component systems' calls, and answering systems' model calls
    seconds: float
    repeat: int = 1  # --repeat: runs of each model-backed system

    def lines(self) -> list[str]:
        kinds = sorted({"offline rules" if i.offline else "LLM" for i in self.systems})
        return [
            f"systems: {', '.join(self.names)} ({', '.join(kinds)}); judge: {self.judge.spec}"
            f"{' (heuristic)' if self.judge.heuristic else ''}",
            f"{self.arcs} arcs x {len(self.systems)} systems: ran now {self.ran_now}, "
            f"re-scored {self.rescored}, already stored {self.already_done}, failed {self.failed}; "
            f"{self.component_calls} {'system' if self.answering else 'component'} calls; "
            f"{self.seconds:.1f} s",
            *(f"  failed {e}" for e in self.failure_examples),
            *(
                [
                    f"--repeat {self.repeat}: model-backed systems ran {self.repeat} times "
                    "(run k named NAME#k; the report gives the spread); systems of offline "
                    "rules ran once"
                ]
                if self.repeat > 1
                else []
            ),
            f"report: amg report eval{self.workspace_option}; one arc: amg eval show ARC_ID "
            f"--system NAME{self.workspace_option}",
        ]


class AnsweringPlan(BaseModel):
    """One answering system in ``amg eval run --dry-run``."""

    model_config = ConfigDict(extra="forbid")
    system: str
    arcs: int  # arcs to run (stored answers are re-scored, not asked again)
    answers: int  # probe answers those arcs ask for (one after every session)
    calls: int | None  # answer calls counted on the model's planned tally; None: not estimated
    unbuilt: str = ""  # why the dry run could not build it (its arcs are all counted as to run)


class EvalPlan(BaseModel):
    """What ``amg eval run --dry-run`` counted."""

    model_config = ConfigDict(extra="forbid")
    pairs: int  # (system, arc) pairs to run
    rescore: int  # stored traces to score again (no component calls)
    already_done: int
    extraction_calls: int  # user turns an LLM extractor reads (the models' planned tallies)
    llm_systems: int
    judge_heuristic: bool
    answering: list[AnsweringPlan] = []
    answer_judge_calls: int = 0  # an LLM answer judge: one call per answer (prompts not known yet)

    def lines(self) -> list[str]:
        out = [
            f"dry run: {self.pairs + sum(a.arcs for a in self.answering)} (system, arc) pairs "
            f"to run, {self.rescore} to re-score, {self.already_done} already stored"
        ]
        if self.llm_systems:
            out.append(
                f"  {self.extraction_calls} extraction calls (one per user turn); the "
                "matching, resolution and check calls after them depend on what"
            )
            out.append(
                "  extraction finds and are not counted: the cost below is for the "
                "extraction calls alone"
            )
        for a in self.answering:
            head = f"  {a.system}: {a.arcs} arcs, {a.answers} probe answers"
            if a.unbuilt:
                out.append(f"{head} at most; not estimated ({a.unbuilt})")
            elif a.calls is not None:
                out.append(f"{head}, {a.calls} answer calls (estimated below)")
            else:
                out.append(
                    f"{head}: the product's calls (its own extraction, embedding and "
                    "answer calls) depend on its store and are not estimated"
                )
        if self.answer_judge_calls:
            out.append(
                f"  the answer judge: {self.answer_judge_calls} calls, one per answer (their "
                "prompts hold the answers: counted, not estimated)"
            )
        if not self.judge_heuristic:
            out.append(
                "  the judge's value comparisons depend on the systems' answers: not counted"
            )
        return out


def resolve_systems(
    names: Iterable[str | SystemSpec] | None,
    *,
    model: ModelRef,
    workspace: Workspace,
    variants: list[str],
    concurrency: int | None = None,
    embedder: ModelRef | None = None,
    graph_url: str | None = None,
    unbuilt: dict[str, str] | None = None,
    repeat: int = 1,
) -> list[SystemSpec]:
    """``names`` (default: the paper's systems) on ``model`` (its options go to every model
    component). ``unbuilt`` (dry runs): a system whose building needs a model answer the workspace does
    not have (a product sizing its store by one embedding) is left out and recorded there with
    the reason, instead of stopping the dry run. ``repeat``: model-backed systems (named by
    ``names``) are resolved again for runs 2 to N (``systems.repeat_spec``)."""
    from ..errors import MissingApiKey
    from ..llm import DryRunCall

    out: list[SystemSpec] = []
    wanted = list(names) if names else list(DEFAULT_SYSTEMS)
    runs = [(n, 1) for n in wanted] + [
        (n, k) for k in range(2, repeat + 1) for n in wanted if not isinstance(n, SystemSpec)
    ]
    for n, k in runs:
        try:
            spec = (
                n
                if isinstance(n, SystemSpec)
                else resolve_system(
                    n,
                    model=model.replace(options={**model.options, "repeat": k}) if k > 1 else model,
                    workspace=workspace,
                    variants=variants,
                    concurrency=concurrency,
                    embedder=embedder,
                    graph_url=graph_url,
                )
            )
            if k > 1:
                if spec.info.offline and ModelRef.parse(spec.model).offline:
                    continue  # rules give the same result every run: one run is all there is
                spec = repeat_spec(spec, k)
        except MissingApiKey as e:
            raise e.for_flag("--model", model.spec) from None
        except DryRunCall as e:
            if unbuilt is None or isinstance(n, SystemSpec):
                raise
            unbuilt[n] = f"building it needs a model answer not in the workspace: {e.purpose}"
            continue
        if all(s.name != spec.name for s in out):
            out.append(spec)
    return out


@dataclass
class RunPlan:
    """What ``amg eval run`` will do, worked out before anything runs or is stored: the systems,
    the judges, the arcs, and the (system, arc) pairs to run, to re-score (a stored trace or
    stored answers, judged again) or stored already. A dry run counts the calls it would make
    (``dry_run``); ``execute`` runs it."""

    ws: Workspace
    splits: list[str]
    params: dict[str, Any]  # the run's settings, as ``eval_runs`` records them
    model: str
    concurrency: int
    systems: list[SystemSpec]  # every chosen system, in order: component and answering
    unbuilt: dict[str, str]  # dry runs: systems whose building needs a model answer, and why
    vj: ValueJudge
    aj: AnswerJudge | None  # None: no answering system (or a dry run with an offline judge)
    answers_key: str  # the answering systems' judge key ("" without ``aj``)
    arcs: list[tuple[Arc, str]]
    components: list[ArcItem]  # component pairs to run (no stored trace) or re-score
    answering: list[ArcItem]  # answering pairs to run (no stored answers) or re-score
    components_done: int
    answering_done: int
    started: float

    @property
    def component_specs(self) -> list[SystemSpec]:
        return [s for s in self.systems if s.kind != "answering"]

    @property
    def answering_specs(self) -> list[SystemSpec]:
        return [s for s in self.systems if s.kind == "answering"]

    def dry_run(self) -> EvalPlan:
        """The plan as ``--dry-run`` prints it: the component systems' extraction calls and the
        answering systems' probe answers counted on their models' ``planned`` tallies (answers
        already stored are re-scored, not asked again); nothing is stored."""
        from .answering_protocol import plan_answering_arc
        from .protocol import plan_arc

        to_run = [it for it in self.components if it.stored is None]
        calls = sum(
            plan_arc(new_system(it.spec.factory, it.spec.info, it.arc), it.arc)
            for it in to_run
            if not it.spec.info.offline
        )
        plans, to_judge = [], 0
        for s in self.answering_specs:
            todo = [it.arc for it in self.answering if it.spec is s and it.stored is None]
            system = s.factory() if todo else None
            counted = [plan_answering_arc(system, arc) for arc in todo]
            answers = sum(len(arc.sessions) for arc in todo)
            plans.append(
                AnsweringPlan(
                    system=s.name,
                    arcs=len(todo),
                    answers=answers,
                    calls=None if None in counted else sum(counted),
                )
            )
            to_judge += answers
        every = sum(len(arc.sessions) for arc, _ in self.arcs)
        for name, why in self.unbuilt.items():
            plans.append(
                AnsweringPlan(
                    system=display_name(name, self.model),
                    arcs=len(self.arcs),
                    answers=every,
                    calls=None,
                    unbuilt=why,
                )
            )
            to_judge += every
        judge_calls = 0
        if self.aj is not None and not self.vj.judge.heuristic and not self.aj.heuristic:
            judge_calls = to_judge
            self.aj.model.plan_unknown(judge_calls)
        return EvalPlan(
            pairs=len(to_run),
            rescore=len(self.components) - len(to_run),
            already_done=self.components_done,
            extraction_calls=calls,
            llm_systems=sum(not s.info.offline for s in self.component_specs),
            judge_heuristic=self.vj.judge.heuristic,
            answering=plans,
            answer_judge_calls=judge_calls,
        )


def plan_eval(
    ws: Workspace,
    splits: list[str],
    systems: Iterable[str | SystemSpec] | None = None,
    options: EvalOptions | None = None,
) -> RunPlan:
    """``run_eval``'s first half: every choice checked and every stored result looked up, nothing
    written. In a dry run (``run_context``) a plan to count (``RunPlan.dry_run``), not to execute:
    a system that cannot be built without a model answer is recorded in ``unbuilt`` instead of
    stopping the plan."""
    o = options or EvalOptions()
    if o.repeat < 1:
        raise BadInput(f"--repeat must be 1 or more, not {o.repeat}")
    t0 = time.perf_counter()
    dry_run = run_context().dry_run
    unbuilt: dict[str, str] = {}
    specs = resolve_systems(
        systems,
        model=o.model,
        workspace=ws,
        variants=list(o.variants),
        concurrency=max(16, o.concurrency),
        embedder=o.embedder,
        graph_url=o.graph_url,
        unbuilt=unbuilt if dry_run else None,
        repeat=o.repeat,
    )
    judge = o.judge
    vj = get_value_judge(judge, workspace=ws)
    arcs = load_arcs(ws, splits)
    check_judge_family(ws, vj, arcs, o.allow_same_family)
    components, components_done = _pairs(
        ws,
        [s for s in specs if s.kind != "answering"],
        arcs,
        vj.key,
        store.stored_traces,
        store.load_trace,
    )
    aj, ajk, answering, answering_done = None, "", [], 0
    if answering_specs := [s for s in specs if s.kind == "answering"]:
        from ..answer_judge import get_answer_judge
        from .answering_protocol import load_answers
        from .judges import answers_key

        if not (dry_run and vj.judge.heuristic):  # a dry run counts a model judge's calls only
            aj = get_answer_judge(judge, workspace=ws)
            ajk = answers_key(vj, aj)
        answering, answering_done = _pairs(
            ws, answering_specs, arcs, ajk or None, store.stored_product_arcs, load_answers
        )
    return RunPlan(
        ws=ws,
        splits=splits,
        params=o.params(),
        model=o.model.spec,
        concurrency=o.concurrency,
        systems=specs,
        unbuilt=unbuilt,
        vj=vj,
        aj=aj,
        answers_key=ajk,
        arcs=arcs,
        components=components,
        answering=answering,
        components_done=components_done,
        answering_done=answering_done,
        started=t0,
    )


def _pairs(
    ws: Workspace,
    specs: list[SystemSpec],
    arcs: list[tuple[Arc, str]],
    judge_key: str | None,
    made,
    load,
) -> tuple[list[ArcItem], int]:
    """Every (system, arc) pair not stored for ``judge_key``, with the system's stored output
    where it is there to be scored again (``made``: arc id -> the sha its output was made on;
    ``load``: that output), and how many pairs are stored already. ``judge_key`` None (a dry run
    without the answer judge): scores are not looked up, every stored output counts as to score."""
    todo: list[ArcItem] = []
    done = 0
    for s in specs:
        run_key = s.run_key  # a hash over the spec: computed once
        outputs = made(ws, run_key)
        scored = store.stored_scores(ws, run_key, judge_key) if judge_key else {}
        for arc, sha in arcs:
            if scored.get(arc.id) == sha and outputs.get(arc.id) == sha:
                done += 1
            elif outputs.get(arc.id) == sha:
                todo.append(ArcItem(s, arc, sha, run_key, load(ws, run_key, arc.id)))
            else:
                todo.append(ArcItem(s, arc, sha, run_key))
    return todo, done


def execute(
    plan: RunPlan, *, corrections: dict[str, Correction] | None = None, show_progress: bool = True
) -> EvalSummary:
    """``run_eval``'s second half: store the judges and systems, run the component pairs, then the
    answering ones (``evaluate.answering_protocol``), each result stored as it finishes."""
    ws, vj, jk = plan.ws, plan.vj, plan.vj.key
    specs, answering = plan.component_specs, plan.answering_specs
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
    uploaded = {n for n, r in store.answer_sets(ws).items() if r.get("kind") != "system"}
    if clash := [s.name for s in answering if s.name in uploaded]:
        raise BadInput(
            f"{clash[0]!r} is already the name of an uploaded answer set "
            "(`amg eval answers --name`); rename one of them"
        )
    for s in plan.systems:
        store.save_system(ws, s.run_key, s.name, s.info, s.options, s.model, s.source_sha, s.kind)
    aj, ajk = plan.aj, plan.answers_key
    if aj is not None:
        store.save_judge(
            ws,
            ajk,
            "answers",
            vj.judge.spec,
            vj.judge.family,
            vj.judge.heuristic,
            vj.rubric,
            vj.judge.rubric_sha256.get("equivalence", ""),
            aj.rubric,
        )
    run_id = store.start_run(ws, plan.params, [s.name for s in plan.systems], plan.splits, jk)
    corrections = corrections or {}
    # Made once per arc for every system: the turns the protocol sends (frozen models; each
    # system still gets its own context list) and the truth the scorer reads (never a system).
    shared_turns: dict[str, Turns] = {}
    truths: dict[str, Any] = {}

    def run(it: ArcItem):
        turns = shared_turns.get(it.arc.id)
        if turns is None:
            turns = shared_turns[it.arc.id] = arc_turns(it.arc)
        return run_arc(
            new_system(it.spec.factory, it.spec.info, it.arc), it.arc, it.spec.name, turns
        )

    def score(it: ArcItem, trace):
        field = it.arc.spec.field
        truth = truths.get(it.arc.id)
        if truth is None:
            truth = truths[it.arc.id] = truth_of(it.arc, corrections.get(it.arc.id))
        return score_trace(trace, truth, it.spec.info, lambda v, ref: vj.same(field, v, ref))

    def finished(it: ArcItem, trace, score) -> store.Finished:
        return store.Finished(
            run_key=it.run_key,
            system=it.spec.name,
            arc_id=it.arc.id,
            split=it.arc.spec.split,
            level=it.arc.spec.level,
            arc_sha=it.sha,
            trace=None if it.stored is not None else trace,
            score=score,
            judge_key=jk,
        )

    t = Tally(ws, vj.judge.heuristic and all(s.info.offline for s in specs))
    status = "failed"
    try:
        for r in drive(
            plan.components,
            run=run,
            score=score,
            row=finished,
            offline=t.offline,
            description=f"eval ({len(specs)} systems",
            usage=usage_view(specs, vj),
            concurrency=plan.concurrency,
            show_progress=show_progress and bool(plan.components),
        ):
            t.record(r)
        if aj is not None:  # the answering systems
            from .answering_protocol import run_answering

            run_answering(
                ws,
                answering,
                plan.answering,
                vj,
                aj,
                ajk,
                t,
                concurrency=plan.concurrency,
                corrections=corrections,
                usage=usage_view(answering, vj),
                show_progress=show_progress,
            )
        status = "ok" if t.failed == 0 else "partial"
    finally:
        t.flush()
        store.finish_run(ws, run_id, status)
    return EvalSummary(
        run_id=run_id,
        names=[s.name for s in plan.systems],
        answering=[s.name for s in answering],
        systems=[s.info for s in plan.systems],
        splits=plan.splits,
        arcs=len(plan.arcs),
        judge=vj.info,
        ran_now=t.ran,
        rescored=t.rescored,
        already_done=plan.components_done + plan.answering_done,
        failed=t.failed,
        failure_examples=t.examples,
        component_calls=t.calls,
        seconds=round(time.perf_counter() - plan.started, 3),
        repeat=plan.params.get("repeat", 1),
    )


def run_eval(
    ws: Workspace,
    splits: list[str],
    systems: Iterable[str | SystemSpec] | None = None,
    options: EvalOptions | None = None,
    *,
    corrections: dict[str, Correction] | None = None,
    show_progress: bool = True,
) -> EvalSummary:
    """Run ``systems`` (names such as ``literal-gated``, or ``SystemSpec`` objects; default:
    the paper's systems) on the arcs of ``splits`` in ``ws``, with ``options`` (``EvalOptions``:
    the model, the judge, concurrency, variants, repeat ...; default: offline rules and the
    offline judge)::

        run_eval(ws, ["core"], ["literal-gated"],
                 EvalOptions(model="openai:gpt-4o-mini", judge="anthropic:claude-sonnet-4-5"))

    The model options of ``options.model`` (``timeout``, ``max_tokens``, ``structured_output``)
    go to every component model, those of ``options.judge`` to an LLM judge. Answering systems
    (products, baselines, plug-ins; the embedder and the graph URL go to their builders) run by
    ``evaluate.answering_protocol`` and are scored from their answers by the answer judge.
    What it would do, counted without sending or storing: ``plan_eval(...).dry_run()`` in a dry
    run (``with run_context(dry_run=True)``).
    ``options.repeat``: model-backed systems run N times, runs 2 to N as ``NAME#k`` with LLM cache
    entries of their own (the report gives each measure's spread across the runs)."""
    plan = plan_eval(ws, splits, systems, options or EvalOptions())
    return execute(plan, corrections=corrections, show_progress=show_progress)
