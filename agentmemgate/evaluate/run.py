"""``amg eval run``: every chosen system on every arc of the chosen splits, stored as each finishes.

Arcs run concurrently through the LLM layer's ``run_concurrent`` (turns within an arc in order);
with offline components and an offline judge they run inline, which is faster than a thread pool
for pure-Python work. A (system, arc) whose trace and score are stored for the same arc text,
system run key and judge is skipped, so a re-run after kill -9 repeats only the unfinished pairs,
and the LLM layer's cache answers every model call those pairs had already made. A changed judge
re-scores stored traces without re-running systems. A component call that fails (``CallFailed``)
is stored as a failure of that pair; a re-run retries it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import BaseModel, ConfigDict

from .._gc import fewer_collections
from ..design.stored import workspace_design
from ..errors import AmgError, BadInput
from ..llm import CallFailed, Failed, run_concurrent
from ..memory.system import SystemInfo
from ..progress import progress_bar
from ..schema import Arc
from ..validate.judges import JudgeInfo, check_families
from ..validate.store import generator_families_of, sha256_text
from ..workspace import Workspace, now
from . import store
from .judges import ValueJudge, get_value_judge
from .measures import score_trace
from .protocol import Turns, arc_turns, new_system, run_arc
from .systems import DEFAULT_SYSTEMS, SystemSpec, display_name, resolve_system
from .truth import Correction, truth_of

FLUSH_OFFLINE = 200  # offline pairs are cheap to redo: store them in batches


class EvalSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
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

    def lines(self) -> list[str]:
        kinds = sorted({"offline rules" if i.offline else "LLM" for i in self.systems})
        return [f"systems: {', '.join(self.names)} ({', '.join(kinds)}); judge: {self.judge.spec}"
                f"{' (heuristic)' if self.judge.heuristic else ''}",
                f"{self.arcs} arcs x {len(self.systems)} systems: ran now {self.ran_now}, "
                f"re-scored {self.rescored}, already stored {self.already_done}, failed {self.failed}; "
                f"{self.component_calls} {'system' if self.answering else 'component'} calls; "
                f"{self.seconds:.1f} s",
                *(f"  failed {e}" for e in self.failure_examples),
                "report: amg report eval; one arc: amg eval show ARC_ID --system NAME"]


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
        out = [f"dry run: {self.pairs + sum(a.arcs for a in self.answering)} (system, arc) pairs "
               f"to run, {self.rescore} to re-score, {self.already_done} already stored"]
        if self.llm_systems:
            out.append(f"  {self.extraction_calls} extraction calls (one per user turn); the "
                       "matching, resolution and check calls after them depend on what")
            out.append("  extraction finds and are not counted: the cost below is for the "
                       "extraction calls alone")
        for a in self.answering:
            head = f"  {a.system}: {a.arcs} arcs, {a.answers} probe answers"
            if a.unbuilt:
                out.append(f"{head} at most; not estimated ({a.unbuilt})")
            elif a.calls is not None:
                out.append(f"{head}, {a.calls} answer calls (estimated below)")
            else:
                out.append(f"{head}: the product's calls (its own extraction, embedding and "
                           "answer calls) depend on its store and are not estimated")
        if self.answer_judge_calls:
            out.append(f"  the answer judge: {self.answer_judge_calls} calls, one per answer (their "
                       "prompts hold the answers: counted, not estimated)")
        if not self.judge_heuristic:
            out.append("  the judge's value comparisons depend on the systems' answers: not counted")
        return out


def _plan_answering(ws: Workspace, specs: list[SystemSpec], arcs: list[tuple[Arc, str]]
                    ) -> tuple[list[AnsweringPlan], int]:
    """The dry run of the answering systems: arcs without stored answers, the probe answers they
    ask for (counted on each system's model where it can say), and the answers to judge."""
    from .answering_protocol import plan_answering_arc

    plans, to_judge = [], 0
    for s in specs:
        produced = store.stored_product_arcs(ws, s.run_key)
        todo = [arc for arc, sha in arcs if produced.get(arc.id) != sha]
        system = s.factory() if todo else None
        counted = [plan_answering_arc(system, arc) for arc in todo]
        answers = sum(len(arc.sessions) for arc in todo)
        plans.append(AnsweringPlan(system=s.name, arcs=len(todo), answers=answers,
                                   calls=None if None in counted else sum(counted)))
        to_judge += answers
    return plans, to_judge


@dataclass
class _Item:
    spec: SystemSpec
    arc: Arc
    sha: str
    trace: Any = None  # a stored trace to re-score instead of running


@dataclass
class _Failure:
    item: _Item
    stage: str
    error: str
    trace: Any = None  # a scoring failure keeps the trace: a re-run only re-scores it


class Tally:
    """What a drive's results add up to (ran, re-scored, failed, component calls, the first ten
    failures), with each result stored as it comes (offline ones in batches of FLUSH_OFFLINE:
    cheap to redo after a kill); ``run_eval`` and ``run_natural`` share it."""

    def __init__(self, ws: Workspace, judge_key: str, offline: bool):
        self.ws, self.judge_key, self.offline = ws, judge_key, offline
        self.ran = self.rescored = self.failed = self.calls = 0
        self.examples: list[str] = []
        self.buffer: list[store.Finished] = []

    def failure(self, *, run_key: str, system: str, arc_id: str, split: str, level: str,
                sha: str, trace: Any, stage: str, error: str) -> None:
        self.failed += 1
        if trace is not None:  # the system ran; only its scoring failed: keep the trace
            store.save_finished(self.ws, [store.Finished(
                run_key=run_key, system=system, arc_id=arc_id, split=split, level=level,
                arc_sha=sha, trace=trace, score=None, judge_key=self.judge_key)])
        store.save_failure(self.ws, run_key, system, arc_id, stage, error)
        if len(self.examples) < 10:
            self.examples.append(f"{system} on {arc_id} ({stage}): {error}")

    def finished(self, r: store.Finished) -> None:
        if r.trace is not None:
            self.ran += 1
            self.calls += r.trace.calls
        else:
            self.rescored += 1
        self.buffer.append(r)
        if not self.offline or len(self.buffer) >= FLUSH_OFFLINE:
            self.flush()

    def answered(self, r: store.Answered) -> None:
        store.save_answered(self.ws, r)
        if r.sessions is not None:
            self.ran += 1
            self.calls += sum(x["calls"] for x in r.sessions)
        else:
            self.rescored += 1

    def flush(self) -> None:
        store.save_finished(self.ws, self.buffer)
        self.buffer = []


def drive(work, todo: list, *, offline: bool, description: str, usage: Any, concurrency: int,
          show_progress: bool, failure: type) -> Iterator:
    """``work`` over ``todo``, results as they finish: inline when everything is offline rules
    (faster than a thread pool for pure Python), else through ``run_concurrent``; an item whose
    work raised is yielded as ``failure(item, "system", error)``. ``description`` is the progress
    label without its closing parenthesis (", offline)" or ")" is added)."""
    if offline:
        # the eval's pure-Python rules make few cycles: young collections every 50,000
        with fewer_collections(50_000, older=10), progress_bar(f"{description}, offline)", total=len(todo),
                                               enabled=show_progress) as advance:
            for it in todo:
                r = work(it)
                advance(failed=isinstance(r, failure))
                yield r
        return
    for r in run_concurrent(work, todo, concurrency=concurrency, description=f"{description})",
                            usage=usage, progress=show_progress,
                            is_failure=lambda x: isinstance(x, failure)):
        yield r if not isinstance(r, Failed) else failure(r.item, "system", r.error)


def resolve_systems(names: Iterable[str | SystemSpec] | None, *, model: str, workspace: Workspace,
                    base_url: str | None, variants: list[str],
                    concurrency: int | None = None,
                    llm_options: dict[str, Any] | None = None, embedder: str | None = None,
                    embedder_base_url: str | None = None,
                    graph_url: str | None = None,
                    unbuilt: dict[str, str] | None = None) -> list[SystemSpec]:
    """``unbuilt`` (dry runs): a system whose building needs a model answer the workspace does
    not have (a product sizing its store by one embedding) is left out and recorded there with
    the reason, instead of stopping the dry run."""
    from ..errors import MissingApiKey
    from ..llm import DryRunCall

    out: list[SystemSpec] = []
    for n in (list(names) if names else list(DEFAULT_SYSTEMS)):
        try:
            spec = n if isinstance(n, SystemSpec) else resolve_system(
                n, model=model, workspace=workspace, base_url=base_url, variants=variants,
                concurrency=concurrency, llm_options=llm_options, embedder=embedder,
                embedder_base_url=embedder_base_url, graph_url=graph_url)
        except MissingApiKey as e:
            raise e.for_flag("--model", model) from None
        except DryRunCall as e:
            if unbuilt is None or isinstance(n, SystemSpec):
                raise
            unbuilt[n] = f"building it needs a model answer not in the workspace: {e.purpose}"
            continue
        if all(s.name != spec.name for s in out):
            out.append(spec)
    return out


def workspace_arcs(ws: Workspace, splits: Iterable[str]) -> list[tuple[Arc, str]]:
    """Every arc of ``splits`` (built or imported) with the sha256 of its stored JSON, in plan
    order where there is a plan (arcs with no spec row, e.g. imported ones, come after)."""
    splits = list(splits)
    q = ",".join("?" * len(splits))
    rows = ws.db.execute(
        f"select arcs.json from arcs left join specs on specs.id = arcs.id where arcs.split in ({q}) "
        "order by specs.rowid is null, specs.rowid, arcs.rowid", splits).fetchall()
    return [(Arc.model_validate_json(raw), sha256_text(raw)) for (raw,) in rows]


def load_arcs(ws: Workspace, splits: list[str]) -> list[tuple[Arc, str]]:
    arcs = workspace_arcs(ws, splits)
    if not arcs:
        raise BadInput(f"No arcs in split(s) {', '.join(splits)} of workspace {str(ws.path)!r}: "
                       "build them with `amg build` (or bring them in with `amg import`)")
    return arcs


def check_judge_family(ws: Workspace, judge: ValueJudge, arcs: list[tuple[Arc, str]],
                       allow_same_family: bool) -> None:
    gens = generator_families_of(ws, [a.provenance.generator for a, _ in arcs])
    families = set().union(*gens.values()) if gens else set()
    check_families([judge.judge], families, allow_same_family, what="the arcs' generator")


def _usage(specs: list[SystemSpec], judge: ValueJudge):
    """Summed model usage of the systems' factories (``factory.usage``) and the judge."""

    def read(obj: Any) -> dict[str, int]:
        u = getattr(obj, "usage", None)
        u = u() if callable(u) else u
        return u.as_dict() if hasattr(u, "as_dict") else dict(u or {})

    def total() -> dict[str, int]:
        out: dict[str, int] = {}
        seen: set[int] = set()
        for obj in [s.factory for s in specs if id(s.factory) not in seen] + [judge.judge]:
            seen.add(id(obj))
            for k, v in read(obj).items():
                out[k] = out.get(k, 0) + v
        return out

    return total


class _UsageView:
    """What a progress bar reads: the summed usage of the systems' models and the judge."""

    def __init__(self, total):
        self.as_dict = total


def run_eval(ws: Workspace, splits: list[str], systems: Iterable[str | SystemSpec] | None = None, *,
             model: str = "offline", base_url: str | None = None, judge: str = "offline",
             judge_base_url: str | None = None, allow_same_family: bool = False,
             concurrency: int = 4, variants: list[str] | None = None,
             corrections: dict[str, Correction] | None = None,
             llm_options: dict[str, Any] | None = None, embedder: str | None = None,
             embedder_base_url: str | None = None, graph_url: str | None = None,
             show_progress: bool = True, dry_run: bool = False) -> EvalSummary | EvalPlan:
    """``llm_options`` (``timeout``, ``max_tokens``, ``structured_output``) go to every model of
    the run: the components' and an LLM judge's. Answering systems (products, baselines,
    plug-ins; ``embedder``, ``embedder_base_url`` and ``graph_url`` go to their builders) run by
    ``evaluate.answering`` and are scored from their answers by the answer judge. ``dry_run``:
    count what would run (the component systems' extraction calls on the models' ``planned``
    tallies; answering systems are not counted) and store nothing."""
    t0 = time.perf_counter()
    variants = list(variants or [])
    unbuilt: dict[str, str] = {}
    all_specs = resolve_systems(systems, model=model, workspace=ws, base_url=base_url,
                                variants=variants, concurrency=max(16, concurrency),
                                llm_options=llm_options, embedder=embedder,
                                embedder_base_url=embedder_base_url, graph_url=graph_url,
                                unbuilt=unbuilt if dry_run else None)
    specs = [s for s in all_specs if s.kind != "answering"]
    answering = [s for s in all_specs if s.kind == "answering"]
    vj = get_value_judge(judge, workspace=ws, base_url=judge_base_url, **(llm_options or {}))
    arcs = load_arcs(ws, splits)
    check_judge_family(ws, vj, arcs, allow_same_family)
    jk = vj.key
    todo: list[_Item] = []
    done = 0
    for s in specs:
        traced = store.stored_traces(ws, s.run_key)
        scored = store.stored_scores(ws, s.run_key, jk)
        for arc, sha in arcs:
            if scored.get(arc.id) == sha and traced.get(arc.id) == sha:
                done += 1
            elif traced.get(arc.id) == sha:
                todo.append(_Item(s, arc, sha, store.load_trace(ws, s.run_key, arc.id)))
            else:
                todo.append(_Item(s, arc, sha))
    if dry_run:
        from .protocol import plan_arc

        to_run = [it for it in todo if it.trace is None]
        calls = sum(plan_arc(new_system(it.spec.factory, it.spec.info, it.arc), it.arc)
                    for it in to_run if not it.spec.info.offline)
        plans, answers_to_judge = _plan_answering(ws, answering, arcs)
        every = sum(len(arc.sessions) for arc, _ in arcs)
        for name, why in unbuilt.items():
            plans.append(AnsweringPlan(system=display_name(name, model), arcs=len(arcs),
                                       answers=every, calls=None, unbuilt=why))
            answers_to_judge += every
        judge_calls = 0
        if answering and not vj.judge.heuristic:
            from ..answer_judge import get_answer_judge

            aj = get_answer_judge(judge, workspace=ws, base_url=judge_base_url,
                                  **(llm_options or {}))
            if not aj.heuristic:
                judge_calls = answers_to_judge
                aj.model.plan_unknown(judge_calls)
        return EvalPlan(pairs=len(to_run), rescore=len(todo) - len(to_run), already_done=done,
                        extraction_calls=calls, llm_systems=sum(not s.info.offline for s in specs),
                        judge_heuristic=vj.judge.heuristic, answering=plans,
                        answer_judge_calls=judge_calls)
    store.save_judge(ws, jk, "equivalence", vj.judge.spec, vj.judge.family, vj.judge.heuristic,
                     vj.rubric, vj.judge.rubric_sha256.get("equivalence", ""))
    uploaded = {r["name"] for r in ws.db["eval_answer_sets"].rows if r.get("kind") != "system"}
    if clash := [s.name for s in answering if s.name in uploaded]:
        raise BadInput(f"{clash[0]!r} is already the name of an uploaded answer set "
                       "(`amg eval answers --name`); rename one of them")
    for s in all_specs:
        store.save_system(ws, s.run_key, s.name, s.info, s.options, s.model, s.source_sha, s.kind)
    aj = ajk = None
    if answering:
        from ..answer_judge import get_answer_judge
        from .judges import answers_key

        aj = get_answer_judge(judge, workspace=ws, base_url=judge_base_url, **(llm_options or {}))
        ajk = answers_key(vj, aj)
        store.save_judge(ws, ajk, "answers", vj.judge.spec, vj.judge.family, vj.judge.heuristic,
                         vj.rubric, vj.judge.rubric_sha256.get("equivalence", ""), aj.rubric)
    run_id = store.start_run(ws, {"model": model, "judge": judge, "concurrency": concurrency,
                                  "variants": variants, "base_url": bool(base_url),
                                  "embedder": embedder,
                                  "embedder_base_url": bool(embedder_base_url),
                                  "graph_url": bool(graph_url)},
                             [s.name for s in all_specs], splits, jk)
    corrections = corrections or {}
    # Made once per arc for every system: the turns the protocol sends (frozen models; each
    # system still gets its own context list) and the truth the scorer reads (never a system).
    shared_turns: dict[str, Turns] = {}
    truths: dict[str, Any] = {}
    run_keys = {s.name: s.run_key for s in all_specs}  # a hash over the spec: computed once

    def work(it: _Item):
        stage, trace = "system", it.trace
        try:
            if trace is None:
                turns = shared_turns.get(it.arc.id)
                if turns is None:
                    turns = shared_turns[it.arc.id] = arc_turns(it.arc)
                trace = run_arc(new_system(it.spec.factory, it.spec.info, it.arc), it.arc,
                                it.spec.name, turns)
            stage = "scoring"
            field = it.arc.spec.field
            truth = truths.get(it.arc.id)
            if truth is None:
                truth = truths[it.arc.id] = truth_of(it.arc, corrections.get(it.arc.id))
            score = score_trace(trace, truth, it.spec.info, lambda v, ref: vj.same(field, v, ref))
        except CallFailed as e:
            return _Failure(it, stage, str(e), trace if it.trace is None else None)
        except AmgError:
            raise  # a bad key, an exhausted quota, bad input: stop the run, one line
        except Exception as e:  # a bug in a system: record it against this arc, go on
            if stage == "scoring":
                raise
            return _Failure(it, stage, f"{it.spec.name} raised {type(e).__name__}: {e}")
        return store.Finished(run_key=run_keys[it.spec.name], system=it.spec.name, arc_id=it.arc.id,
                              split=it.arc.spec.split, level=it.arc.spec.level, arc_sha=it.sha,
                              trace=None if it.trace is not None else trace, score=score,
                              judge_key=jk)

    offline = vj.judge.heuristic and all(s.info.offline for s in specs)
    t = Tally(ws, jk, offline)
    status = "failed"
    try:
        for r in drive(work, todo, offline=offline, description=f"eval ({len(specs)} systems",
                       usage=_UsageView(_usage(specs, vj)), concurrency=concurrency,
                       show_progress=show_progress and bool(todo), failure=_Failure):
            if isinstance(r, _Failure):
                t.failure(run_key=r.item.spec.run_key, system=r.item.spec.name,
                          arc_id=r.item.arc.id, split=r.item.arc.spec.split,
                          level=r.item.arc.spec.level, sha=r.item.sha, trace=r.trace,
                          stage=r.stage, error=r.error)
            else:
                t.finished(r)
        ran, rescored, failed, calls, examples = t.ran, t.rescored, t.failed, t.calls, t.examples
        if answering:
            from .answering_protocol import run_answering

            a = run_answering(ws, answering, arcs, vj, aj, ajk, concurrency=concurrency,
                              corrections=corrections,
                              usage=_UsageView(_usage(answering, vj)), show_progress=show_progress)
            ran, rescored, done, failed = (ran + a.ran, rescored + a.rescored, done + a.done,
                                           failed + a.failed)
            calls += a.calls
            examples += a.examples[:max(0, 10 - len(examples))]
        status = "ok" if failed == 0 else "partial"
    finally:
        t.flush()
        store.finish_run(ws, run_id, status)
    return EvalSummary(run_id=run_id, names=[s.name for s in all_specs],
                       answering=[s.name for s in answering],
                       systems=[s.info for s in all_specs], splits=splits,
                       arcs=len(arcs), judge=vj.info, ran_now=ran, rescored=rescored,
                       already_done=done, failed=failed, failure_examples=examples,
                       component_calls=calls, seconds=round(time.perf_counter() - t0, 3))


# -- black-box answers ------------------------------------------------------------------------
class AnswersSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    path: str
    arcs: int
    answers: int  # lines of the answers file
    splits: dict[str, int]
    judge: JudgeInfo
    answer_rubric: str = ""  # the answer judge's rules or rubric (its accuracy is looked up by it)
    scored_now: int
    already_done: int
    failed: int
    failure_examples: list[str]
    seconds: float

    def lines(self) -> list[str]:
        from ..answer_judge.accuracy import accuracy_line

        return [f"{self.name}: {self.answers} answers for {self.arcs} arcs ("
                + ", ".join(f"{k} {v}" for k, v in self.splits.items())
                + f"); judge {self.judge.spec}{' (heuristic)' if self.judge.heuristic else ''}"
                + (f", answers read by {self.answer_rubric}" if self.answer_rubric else "")
                + f": scored now {self.scored_now}, already stored {self.already_done}, failed "
                f"{self.failed}",
                *(f"  failed {e}" for e in self.failure_examples),
                accuracy_line(self.judge.spec, self.answer_rubric),
                "report: amg report eval"]


def _old_verdict(conn, name: str, arc_id: str, i: int) -> str | None:
    row = conn.execute("select verdict from eval_answers where name = ? and arc_id = ? and "
                       "after_session = ?", [name, arc_id, i]).fetchone()
    return row[0] if row else None


def run_answers(ws: Workspace, path: str | Path, name: str, *, judge: str = "offline",
                judge_base_url: str | None = None, allow_same_family: bool = False,
                concurrency: int = 4, llm_options: dict[str, Any] | None = None,
                show_progress: bool = True, dry_run: bool = False) -> AnswersSummary | int:
    """``amg eval answers``: check the whole file first (nothing is stored if any line is bad),
    then judge every answer and store the set and its per-arc scores. ``dry_run``: return how
    many answers would be judged, their answer-judge calls counted on its model
    (``model.planned``); the value-equivalence calls that follow depend on those verdicts."""
    from .answer_scoring import assess, questions, read_answers, score_answers
    from ..answer_judge import get_answer_judge
    from .judges import answers_key, sha256_parts

    t0 = time.perf_counter()
    name = name.strip()
    if not name or any(c in name for c in "\n\r\t"):
        raise BadInput("--name must be a non-empty name for the answering system, e.g. --name mem0")
    systems = store.latest_systems(ws)
    taken = set(DEFAULT_SYSTEMS) | set(systems)
    if name in taken:
        what = ("an answering system run by `amg eval run`"
                if systems.get(name, {}).get("kind") == "answering" else "a component system")
        raise BadInput(f"--name {name!r} is already the name of {what}; pick another name "
                       "for the answering system")
    arcs = {a.id: (a, sha) for a, sha in workspace_arcs(ws, workspace_design(ws).split_names)}
    if not arcs:
        raise BadInput(f"No arcs in workspace {str(ws.path)!r}: build them with `amg build`")
    answers = read_answers(path, {i: len(a.sessions) for i, (a, _) in arcs.items()})
    raw = Path(path).read_bytes()
    file_sha = hashlib.sha256(raw).hexdigest()
    vj = get_value_judge(judge, workspace=ws, base_url=judge_base_url, **(llm_options or {}))
    aj = get_answer_judge(judge, workspace=ws, base_url=judge_base_url, **(llm_options or {}))
    chosen = [arcs[i] for i in answers]
    check_judge_family(ws, vj, chosen, allow_same_family)
    jk = answers_key(vj, aj)
    run_key = "answers:" + sha256_parts(name, file_sha)[:32]
    scored = store.stored_scores(ws, run_key, jk)
    todo = [(a, sha) for a, sha in chosen if scored.get(a.id) != sha]
    if dry_run:
        n = 0
        for arc, _ in todo:
            for q in questions(truth_of(arc), answers[arc.id]):
                n += 1
                if not aj.heuristic:
                    aj.plan(q)  # type: ignore[attr-defined]
        return n

    def work(item):
        arc, sha = item
        truth = truth_of(arc)
        try:
            verdicts = assess(truth, answers[arc.id], aj)
            score = score_answers(truth, answers[arc.id], verdicts,
                                  lambda v, ref: vj.same(arc.spec.field, v, ref))
        except CallFailed as e:
            return _Failure(_Item(None, arc, sha), "scoring", str(e))  # type: ignore[arg-type]
        return arc, sha, score, verdicts

    if vj.judge.heuristic and aj.heuristic:
        results = (work(it) for it in todo)
    else:
        results = (r if not isinstance(r, Failed) else _Failure(_Item(None, r.item[0], r.item[1]),  # type: ignore[arg-type]
                                                                 "scoring", r.error)
                   for r in run_concurrent(work, todo, concurrency=concurrency,
                                           description=f"answers ({name})", progress=show_progress,
                                           is_failure=lambda x: isinstance(x, _Failure)))
    finished: list[store.Finished] = []
    verdict_rows: list[dict] = []
    failed, examples = 0, []
    for r in results:
        if isinstance(r, _Failure):
            failed += 1
            store.save_failure(ws, run_key, name, r.item.arc.id, r.stage, r.error)
            if len(examples) < 10:
                examples.append(f"{r.item.arc.id}: {r.error}")
            continue
        arc, sha, score, verdicts = r
        finished.append(store.Finished(run_key=run_key, system=name, arc_id=arc.id,
                                       split=arc.spec.split, level=arc.spec.level, arc_sha=sha,
                                       trace=None, score=score, judge_key=jk))
        verdict_rows += [{"name": name, "arc_id": arc.id, "after_session": i,
                          "answer": answers[arc.id][i], "verdict": v.model_dump_json()}
                         for i, v in enumerate(verdicts)]
    with store.atomic(ws) as conn:  # the set, its answers and their verdicts together
        previous = conn.execute("select sha256 from eval_answer_sets where name = ?", [name]).fetchall()
        if any(p[0] != file_sha for p in previous):
            conn.execute("delete from eval_answers where name = ?", [name])
        store.put(conn, "eval_answer_sets", [
            {"name": name, "run_key": run_key, "path": str(path), "sha256": file_sha,
             "arcs": len(answers), "lines": sum(len(v) for v in answers.values()),
             "created_at": now()}])
        judged = {(r["arc_id"], r["after_session"]) for r in verdict_rows}
        store.put(conn, "eval_answers", verdict_rows + [  # every answer is kept, judged or not
            {"name": name, "arc_id": arc_id, "after_session": i, "answer": t,
             "verdict": _old_verdict(conn, name, arc_id, i)}
            for arc_id, texts in answers.items() for i, t in enumerate(texts)
            if (arc_id, i) not in judged])
    store.save_judge(ws, jk, "answers", vj.judge.spec, vj.judge.family, vj.judge.heuristic,
                     vj.rubric, vj.judge.rubric_sha256.get("equivalence", ""), aj.rubric)
    store.save_finished(ws, finished)
    splits: dict[str, int] = {}
    for a, _ in chosen:
        splits[a.spec.split] = splits.get(a.spec.split, 0) + 1
    return AnswersSummary(name=name, path=str(path), arcs=len(answers),
                          answers=sum(len(v) for v in answers.values()), splits=splits,
                          judge=vj.info, answer_rubric=aj.rubric, scored_now=len(finished),
                          already_done=len(chosen) - len(todo), failed=failed,
                          failure_examples=examples, seconds=round(time.perf_counter() - t0, 3))
