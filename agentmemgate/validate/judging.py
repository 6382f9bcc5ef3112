"""Run the judges over a workspace's arcs and store every verdict (``amg validate``, ``amg build``).

Each (task, arc, criterion, judge) is answered once: a re-run skips stored answers whose input
(arc text, judge family -- the same ``openai:MODEL`` at another server is another judge --,
rubric or lexicon, option order) is unchanged, and LLM calls are cached by the LLM
layer, so an interrupted run resumes without repeating a finished call. A judge that gives no
valid answer after the layer's re-asks is stored as a judge failure, never as a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..design import Design
from ..design.stored import workspace_design
from ..errors import BadInput
from ..hashing import sha256_parts
from ..llm.ref import ModelRef
from ..schema import Arc
from ..stats import preload_wilson
from ..workspace import Workspace
from ._drive import ask_all
from .judges import (
    Judge,
    JudgeInfo,
    RealismVerdict,
    RecoveryVerdict,
    blind_recovery,
    check_families,
    get_judge,
    option_seed,
    realism_question,
)
from .judges.questions import Question, RealismQuestion
from .report import generator_families, validation_report
from .report_models import ValidationReport
from .run import StructureSummary, validate_structure
from .store import (
    VerdictRow,
    answered,
    arcs_with_sha,
    generator_families_of,
    save_verdicts,
    start_validation_run,
)

CHECKS = ("structure", "realism", "recovery")
JUDGE_TASKS = ("realism", "recovery")
DEFAULT_JUDGES = ("offline",)
FLUSH_EVERY = 25


class JudgingSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: int
    judges: list[JudgeInfo]
    checks: list[str]
    arcs: int
    generator_families: list[str]
    allow_same_family: bool
    same_family_judges: list[str]
    judged_now: int
    already_done: int
    failures: int
    failure_examples: list[str]

    def judges_line(self) -> str:
        from ..llm.model import display_spec

        return ", ".join(
            f"{display_spec(x.spec)} ({x.family}{', heuristic' if x.heuristic else ''})"
            for x in self.judges
        )

    def judged_line(self) -> str:
        """How many judge questions this run asked and how many got an answer (never "judged"
        for a question whose every call failed)."""
        return (
            f"asked now {self.judged_now}: {self.judged_now - self.failures} answered, "
            f"{self.failures} judge failures; already stored {self.already_done}"
        )


class ValidationSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    structure: StructureSummary | None = None
    judging: JudgingSummary | None = None
    report: ValidationReport | None = None

    @property
    def failures(self) -> int:
        """Failing arcs and failed judge calls (a re-run retries the calls)."""
        return len(self.structure.failing_arcs if self.structure else {}) + (
            self.judging.failures if self.judging else 0
        )

    def lines(self) -> list[str]:
        from ..llm.model import display_spec

        out: list[str] = []
        if st := self.structure:
            out.append(f"structural checks: {st.arcs_passing}/{st.arcs} arcs pass")
            out += [
                f"  {arc_id}: {'; '.join(problems)}" for arc_id, problems in st.failing_arcs.items()
            ]
        if j := self.judging:
            out.append(
                f"judges: {j.judges_line()}; generator family: "
                f"{', '.join(j.generator_families) or 'none'}"
            )
            if j.same_family_judges:
                out.append(f"same-family judging allowed for: {', '.join(j.same_family_judges)}")
            out.append(f"{', '.join(j.checks)}: {j.judged_line()}")
            out += [f"  judge failure {e}" for e in j.failure_examples]
        if self.report and self.report.judges:
            for spec, b in self.report.by_judge.items():
                out.append(
                    f"blind level recovery ({display_spec(spec)}): {b.recovery.overall.fmt()}"
                )
                out += [
                    f"realism {c} ({display_spec(spec)}): {p.fmt()}" for c, p in b.realism.items()
                ]
            out.append("full report: amg report validation")
        return out


def parse_checks(checks: str | Iterable[str]) -> list[str]:
    """``structure,realism,recovery`` (any subset, any order) -> names in canonical order."""
    names = [
        c.strip() for c in (checks.split(",") if isinstance(checks, str) else checks) if c.strip()
    ]
    bad = [c for c in names if c not in CHECKS]
    if bad or not names:
        raise BadInput(
            f"Unknown check {bad[0]!r}; choose from: {', '.join(CHECKS)}"
            if bad
            else f"No checks given; choose from: {', '.join(CHECKS)}"
        )
    return [c for c in CHECKS if c in names]


def judge_refs(
    judges: Iterable[str | ModelRef] | None,
    base_url: str | None = None,
    options: Mapping | None = None,
) -> list[ModelRef]:
    """The judges ``judges`` names (default: the offline heuristic judges) as references; the
    ones given as specs get ``base_url`` (one OpenAI-compatible server shared by the judges, as
    ``--judge-base-url`` is) and ``options`` (``timeout``, ``max_tokens``, ``structured_output``).
    ``resolve_judges`` sends the base URL to the ``openai:`` judges only."""
    return ModelRef.each(judges or DEFAULT_JUDGES, base_url, options)


def resolve_judges(
    ws: Workspace,
    judges: Iterable[str | ModelRef] | None,
    *,
    concurrency: int = 4,
    design: Design | None = None,
) -> list[Judge]:
    """Judge objects for ``judges``, specs or references (default: the offline heuristic
    judges), duplicates dropped, made for ``design`` (default: the workspace's; a build passes
    the one it is building).

    A judge's base URL (an OpenAI-compatible server, shared by the judges: ``judge_refs``) goes
    to the ``openai:`` judges only, so ``--judge anthropic:X --judge openai:Y --judge-base-url
    URL`` still sends X to Anthropic; with no ``openai:`` judge it is refused. A judge's options
    go to it when it is an LLM judge.
    """
    seen: list[ModelRef] = []
    for ref in judge_refs(judges):
        if ref not in seen:
            seen.append(ref)
    urls = [r.base_url for r in seen if r.base_url]
    if urls and not any(r.spec.startswith("openai:") for r in seen):
        raise BadInput(
            f"--judge-base-url {urls[0]} is for openai: judges (an OpenAI-compatible server); "
            "name one with --judge openai:MODEL"
        )
    design = workspace_design(ws, design)
    return [
        get_judge(
            ref.replace(
                base_url=ref.base_url if ref.spec.startswith("openai:") else None,
                options=ref.model_options(),
            ),
            workspace=ws,
            concurrency=concurrency,
            design=design,
        )
        for ref in seen
    ]


@dataclass
class _Item:
    task: str
    arc: Arc
    question: Question
    options: list[str]
    seed: int | None
    item_sha: str
    input_sha: str
    same_family: bool


def _items(
    task: str,
    judge: Judge,
    arcs: list[tuple[Arc, str]],
    families: dict[str, set[str]],
    seed: int,
    realism: dict[str, RealismQuestion] | None = None,
    design: Design | None = None,
) -> Iterator[_Item]:
    """``realism``: each arc's realism question when the caller built them already (frozen: the
    recovery question shares its sessions). ``design``: whose levels recovery offers."""
    realism = {} if realism is None else realism
    for arc, sha in arcs:
        same = judge.family in families[arc.id]
        rq = realism.get(arc.id) or realism_question(arc)
        if task == "recovery":
            s = option_seed(arc.id, seed)
            q = blind_recovery(arc, s, sessions=rq.sessions, design=design)
            opts = [o.level for o in q.options]
        else:
            s, q, opts = None, rq, []
        yield _Item(
            task,
            arc,
            q,
            opts,
            s,
            sha,
            sha256_parts(sha, judge.family, judge.rubric_sha256.get(task, ""), ",".join(opts)),
            same,
        )


def _rows(item: _Item, judge: Judge, answer, error: str, run_id: int) -> list[VerdictRow]:
    a = item.arc
    base = dict(
        task=item.task,
        item_id=a.id,
        judge=judge.spec,
        family=judge.family,
        heuristic=judge.heuristic,
        same_family=item.same_family,
        split=a.spec.split,
        factor=a.spec.factor,
        options=item.options,
        option_seed=item.seed,
        rubric=judge.rubric_ref(item.task),
        rubric_sha256=judge.rubric_sha256.get(item.task, ""),
        item_sha256=item.item_sha,
        input_sha256=item.input_sha,
        run_id=run_id,
    )
    if item.task == "recovery":
        base["intended"] = a.spec.level
        if isinstance(answer, RecoveryVerdict):
            return [
                VerdictRow(
                    **base,
                    verdict=answer.level,
                    rationale=answer.rationale,
                    strategy=answer.strategy or "",
                )
            ]
        return [VerdictRow(**base, status="failed", error=error)]
    if isinstance(answer, RealismVerdict):
        return [
            VerdictRow(
                **base,
                criterion=c,
                verdict="pass" if v.passed else "fail",
                rationale=v.rationale,
                strategy=answer.strategy or "",
            )
            for c, v in answer.criteria.items()
        ]
    return [
        VerdictRow(**base, criterion=c, status="failed", error=error)
        for c in judge.realism_criteria
    ]


def judged_together(design: Design, arcs: list[tuple[Arc, str]]) -> list[list[tuple[Arc, str]]]:
    """The sets a judge sees at once: the splits of each of the design's groups (the paper's:
    core, held-out and controlled) together, every other split (the paper's corrections) alone.
    A judge's whole-set counts (the repetition check) then see the same conversations whether
    or not another split was built, so a split's verdicts do not move with it."""
    keys = [*design.groups]
    key_of: dict[str, str] = {}
    for a, _ in arcs:
        s = a.spec.split
        if s not in key_of:
            key_of[s] = next(
                (g for g, members in design.groups.items() if s in members), f"split:{s}"
            )
            if key_of[s] not in keys:
                keys.append(key_of[s])
    sets: dict[str, list[tuple[Arc, str]]] = {k: [] for k in keys}
    for x in arcs:
        sets[key_of[x[0].spec.split]].append(x)
    return [g for g in sets.values() if g]


def judge_arcs(
    ws: Workspace,
    splits: list[str],
    judges: Iterable[str | ModelRef] | list[Judge] | None = None,
    checks: Iterable[str] = JUDGE_TASKS,
    *,
    allow_same_family: bool = False,
    concurrency: int = 4,
    seed: int = 0,
    show_progress: bool = True,
) -> JudgingSummary:
    """Ask every judge every check about every arc of ``splits``; store verdicts and failures.
    ``judges``: judge objects, or specs or references for ``resolve_judges``."""
    tasks = [t for t in JUDGE_TASKS if t in set(checks)]
    design = workspace_design(ws)
    judge_list = list(judges) if judges else []
    at_a_server = False  # recorded: whether the judges were given a base URL
    if not judge_list or not isinstance(judge_list[0], Judge):
        at_a_server = any(r.base_url for r in judge_refs(judge_list))
        judge_list = resolve_judges(ws, judge_list, concurrency=concurrency, design=design)
    arcs = list(arcs_with_sha(ws, splits))
    by_generator = generator_families_of(ws, [a.provenance.generator for a, _ in arcs])
    families = {a.id: by_generator[a.provenance.generator] for a, _ in arcs}
    gen_families = sorted(set().union(*families.values()))
    same = check_families(judge_list, set(gen_families), allow_same_family)
    run_id = start_validation_run(
        ws,
        "arcs",
        splits,
        tasks,
        [j.info.model_dump() for j in judge_list],
        allow_same_family,
        gen_families,
        {"seed": seed, "base_url": at_a_server},
    )
    now = done = failed = 0
    examples: list[str] = []
    groups = judged_together(design, arcs)
    questions = {a.id: realism_question(a) for a, _ in arcs}
    for judge, group in ((j, g) for j in judge_list for g in groups):
        if "realism" in tasks:  # before any input hash: a judge may count over the whole set
            judge.prepare([questions[a.id] for a, _ in group])
        # Every task's questions in one pass: a model judge keeps ``concurrency`` calls in flight
        # across the tasks instead of draining each task's last calls before the next starts.
        todo = []
        for task in tasks:
            stored = answered(ws, task, judge.spec)
            for it in _items(task, judge, group, families, seed, questions, design):
                keys = [
                    (it.arc.id, c)
                    for c in (("",) if task == "recovery" else judge.realism_criteria)
                ]
                if all(stored.get(k) == it.input_sha for k in keys):
                    done += 1
                else:
                    todo.append(it)
        buffer: list[VerdictRow] = []
        try:
            for it, answer, error in ask_all(
                judge,
                todo,
                lambda i: i.question,
                f"{', '.join(tasks)} ({judge.spec})",
                show_progress,
            ):
                buffer += _rows(it, judge, answer, error, run_id)
                now += 1
                if answer is None:
                    failed += 1
                    if len(examples) < 10:
                        examples.append(f"{it.arc.id} [{it.task}, {judge.spec}]: {error}")
                if len(buffer) >= FLUSH_EVERY and not judge.heuristic:
                    save_verdicts(ws, buffer)
                    buffer = []
        finally:
            save_verdicts(ws, buffer)
    return JudgingSummary(
        run_id=run_id,
        judges=[j.info for j in judge_list],
        checks=tasks,
        arcs=len(arcs),
        generator_families=gen_families,
        allow_same_family=allow_same_family,
        same_family_judges=sorted(same),
        judged_now=now,
        already_done=done,
        failures=failed,
        failure_examples=examples,
    )


def run_validation(
    ws: Workspace,
    splits: list[str],
    judges: Iterable[str | ModelRef] | None = None,
    checks: str | Iterable[str] = CHECKS,
    *,
    allow_same_family: bool = False,
    concurrency: int = 4,
    seed: int = 0,
    show_progress: bool = True,
) -> ValidationSummary:
    """``amg validate``: structural checks, then the judges' realism and blind recovery.
    ``judges``: specs or references (``judge_refs`` gives them one base URL and options)."""
    names = parse_checks(checks)
    judge_objs = None
    if any(c in names for c in JUDGE_TASKS):  # a bad spec, key or family fails before any work
        judge_objs = resolve_judges(ws, judges, concurrency=concurrency)
        check_families(judge_objs, generator_families(ws, splits), allow_same_family)
    summary = ValidationSummary()
    if "structure" in names:
        summary.structure = validate_structure(ws, splits)
    if judge_objs is not None:
        if any(not j.heuristic for j in judge_objs):
            preload_wilson()  # the report's intervals: imported while the judges' calls are out
        summary.judging = judge_arcs(
            ws,
            splits,
            judge_objs,
            names,
            allow_same_family=allow_same_family,
            seed=seed,
            show_progress=show_progress,
        )
        summary.report = validation_report(ws, splits)
    return summary
