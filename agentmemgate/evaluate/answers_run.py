"""``amg eval answers``: a black-box system scored from an uploaded file of its answers (one
line per arc and session, or LongMemEval hypotheses), checked whole before anything is stored,
judged, and stored as an answer set with its per-arc scores."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..design.stored import workspace_design
from ..errors import BadInput
from ..llm.ref import ModelRef
from ..schema import Arc
from ..validate.judges import JudgeInfo
from ..workspace import Workspace
from . import store
from ._drive import Failure, WorkspaceOption, drive
from .arcs import check_judge_family, workspace_arcs
from .judges import get_value_judge
from .systems import DEFAULT_SYSTEMS
from .truth import truth_of


class AnswersSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workspace_option: str = WorkspaceOption
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

        return [
            f"{self.name}: {self.answers} answers for {self.arcs} arcs ("
            + ", ".join(f"{k} {v}" for k, v in self.splits.items())
            + f"); judge {self.judge.spec}{' (heuristic)' if self.judge.heuristic else ''}"
            + (f", answers read by {self.answer_rubric}" if self.answer_rubric else "")
            + f": scored now {self.scored_now}, already stored {self.already_done}, failed "
            f"{self.failed}",
            *(f"  failed {e}" for e in self.failure_examples),
            accuracy_line(self.judge.spec, self.answer_rubric),
            f"report: amg report eval{self.workspace_option}",
        ]


def _given(answers: dict[str, list[str | None]]) -> int:
    return sum(a is not None for v in answers.values() for a in v)


@dataclass
class _Uploaded:
    """One arc of an uploaded answer set: its answers are the stored output, scored (again)."""

    arc: Arc
    sha: str
    run_key: str
    system: str
    stored: list[str | None]

    @property
    def arc_id(self) -> str:
        return self.arc.id


@dataclass
class _AnswersJob:
    """An uploaded answer file checked against the workspace, with its judges and what is left
    to score: what ``plan_answers`` counts and ``run_answers`` runs."""

    name: str
    path: str | Path
    file_sha: str
    answers: dict[str, list[str | None]]
    chosen: list[tuple[Arc, str]]
    todo: list[tuple[Arc, str]]
    vj: Any
    aj: Any
    jk: str
    run_key: str


def _answers_job(
    ws: Workspace,
    path: str | Path,
    name: str,
    judge: str | ModelRef,
    allow_same_family: bool,
    format: str,
) -> _AnswersJob:
    """Check the whole file first (nothing is stored if any line is bad), build the judges and
    look up the answers already scored."""
    from ..answer_judge import get_answer_judge
    from .answer_scoring import read_answers
    from .judges import answers_key, sha256_parts

    name = name.strip()
    if not name or any(c in name for c in "\n\r\t"):
        raise BadInput("--name must be a non-empty name for the answering system, e.g. --name mem0")
    systems = store.latest_systems(ws)
    taken = set(DEFAULT_SYSTEMS) | set(systems)
    if name in taken:
        what = (
            "an answering system run by `amg eval run`"
            if systems.get(name, {}).get("kind") == "answering"
            else "a component system"
        )
        raise BadInput(
            f"--name {name!r} is already the name of {what}; pick another name "
            "for the answering system"
        )
    arcs = {a.id: (a, sha) for a, sha in workspace_arcs(ws, workspace_design(ws).split_names)}
    if not arcs:
        raise BadInput(f"No arcs in workspace {str(ws.path)!r}: build them with `amg build`")
    if format == "longmemeval":
        from .longmemeval import read_hypotheses

        answers = read_hypotheses(path, {i: a for i, (a, _) in arcs.items()})
    elif format == "amg":
        answers = read_answers(path, {i: len(a.sessions) for i, (a, _) in arcs.items()})
    else:
        raise BadInput(f"--format must be amg or longmemeval, not {format!r}")
    raw = Path(path).read_bytes()
    file_sha = hashlib.sha256(raw).hexdigest()
    judge = ModelRef.parse(judge)
    vj = get_value_judge(judge, workspace=ws)
    aj = get_answer_judge(judge, workspace=ws)
    chosen = [arcs[i] for i in answers]
    check_judge_family(ws, vj, chosen, allow_same_family)
    jk = answers_key(vj, aj)
    run_key = "answers:" + sha256_parts(name, file_sha)[:32]
    scored = store.stored_scores(ws, run_key, jk)
    todo = [(a, sha) for a, sha in chosen if scored.get(a.id) != sha]
    return _AnswersJob(name, path, file_sha, answers, chosen, todo, vj, aj, jk, run_key)


def plan_answers(
    ws: Workspace,
    path: str | Path,
    name: str,
    *,
    judge: str | ModelRef = "offline",
    allow_same_family: bool = False,
    format: str = "amg",
) -> int:
    """What ``run_answers`` with the same arguments would judge: the number of answers, their
    answer-judge calls counted on its model (``model.planned``); the value-equivalence calls that
    follow depend on those verdicts. Nothing is sent or stored."""
    from .answer_scoring import questions

    job = _answers_job(ws, path, name, judge, allow_same_family, format)
    n = 0
    for arc, _ in job.todo:
        for q in questions(truth_of(arc), job.answers[arc.id]):
            n += 1
            if not job.aj.heuristic:
                job.aj.plan(q)
    return n


def run_answers(
    ws: Workspace,
    path: str | Path,
    name: str,
    *,
    judge: str | ModelRef = "offline",
    allow_same_family: bool = False,
    concurrency: int = 4,
    show_progress: bool = True,
    format: str = "amg",
) -> AnswersSummary:
    """``amg eval answers``: check the whole file first (nothing is stored if any line is bad),
    then judge every answer and store the set and its per-arc scores. ``judge``: a spec or a
    ``ModelRef`` (its base URL and model options go to both the answer and the value judge).
    ``format``: ``amg`` (one line per arc and session) or ``longmemeval`` (LongMemEval
    hypotheses for the questions of ``amg export --format longmemeval``). What it would judge,
    counted without sending or storing: ``plan_answers``."""
    from .answer_scoring import assess, score_answers

    t0 = time.perf_counter()
    job = _answers_job(ws, path, name, judge, allow_same_family, format)
    name, answers, chosen, todo = job.name, job.answers, job.chosen, job.todo
    vj, aj, jk, run_key, file_sha = job.vj, job.aj, job.jk, job.run_key, job.file_sha

    def score(it: _Uploaded, texts: list[str]):
        truth = truth_of(it.arc)
        verdicts = assess(truth, texts, aj)
        return verdicts, score_answers(
            truth, texts, verdicts, lambda v, ref: vj.same(it.arc.spec.field, v, ref)
        )

    def row(it: _Uploaded, texts: list[str], scored) -> tuple[store.Finished, list[dict]]:
        verdicts, score = scored
        arc = it.arc
        return (
            store.Finished(
                run_key=run_key,
                system=name,
                arc_id=arc.id,
                split=arc.spec.split,
                level=arc.spec.level,
                arc_sha=it.sha,
                trace=None,
                score=score,
                judge_key=jk,
            ),
            [
                {
                    "name": name,
                    "arc_id": arc.id,
                    "after_session": i,
                    "answer": texts[i],
                    "verdict": v.model_dump_json(),
                }
                for i, v in enumerate(verdicts)
                if texts[i] is not None
            ],
        )

    inline = vj.judge.heuristic and aj.heuristic  # offline judging is quick: no progress bar
    finished: list[store.Finished] = []
    verdict_rows: list[dict] = []
    failed, examples = 0, []
    for r in drive(
        [_Uploaded(arc, sha, run_key, name, answers[arc.id]) for arc, sha in todo],
        run=None,
        score=score,
        row=row,
        offline=inline,
        description=f"answers ({name}",
        usage=None,
        concurrency=concurrency,
        show_progress=show_progress and not inline,
    ):
        if isinstance(r, Failure):
            failed += 1
            store.save_failure(ws, run_key, name, r.item.arc_id, r.stage, r.error)
            if len(examples) < 10:
                examples.append(f"{r.item.arc_id}: {r.error}")
            continue
        finished.append(r[0])
        verdict_rows += r[1]
    store.save_uploaded(ws, name, run_key, str(path), file_sha, answers, verdict_rows)
    store.save_judge(
        ws,
        jk,
        "answers",
        vj.judge.spec,
        vj.judge.family,
        vj.judge.heuristic,
        vj.rubric,
        vj.judge.rubric_sha256.get("equivalence", ""),
        aj.rubric,
    )
    store.save_finished(ws, finished)
    splits: dict[str, int] = {}
    for a, _ in chosen:
        splits[a.spec.split] = splits.get(a.spec.split, 0) + 1
    return AnswersSummary(
        name=name,
        path=str(path),
        arcs=len(answers),
        answers=_given(answers),
        splits=splits,
        judge=vj.info,
        answer_rubric=aj.rubric,
        scored_now=len(finished),
        already_done=len(chosen) - len(todo),
        failed=failed,
        failure_examples=examples,
        seconds=round(time.perf_counter() - t0, 3),
    )
