"""Black-box scoring: a memory system known only by its answers (Appendix A.7).

One JSON line per arc and session, ``{"arc_id", "after_session", "answer"}``: the system's answer
to the arc's probe question after session ``after_session`` (0-based). The answer judge decides
which values an answer asserts as the user's current value (answers worded as plans do not
assert the plan value; "I don't know" asserts nothing); the equivalence judge compares those
values with the plan value and the ground truth.

Files index sessions from 0 (``after_session``), and so does everything people read (``amg eval
show``, the reasons stored beside each measure).

- exposure: an at-risk plan is exposed if an answer given after the plan's session and before
  the session of its outcome (open plans: any answer after the plan's session) asserts the plan
  value. Held-out plans can be exposed here (the answer after the plan's session is in the window).
- end_contamination: the last answer asserts the plan value (at-risk plans).
- premature_write: a plan that came true in a later session than it was stated is asserted by an
  answer given before that session (after the plan's session, before the outcome's).
- task_accuracy: the last answer asserts the ground-truth current value and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ..answer_judge import AnswerJudge, AnswerQuestion, AnswerVerdict
from ..errors import BadInput
from ..jsonl import read_records
from .measures import ArcScore, Same
from .truth import Truth


class AnswerLine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arc_id: StrictStr
    after_session: StrictInt = Field(ge=0)
    answer: StrictStr


def read_answers(path: str | Path, sessions: dict[str, int]) -> dict[str, list[str]]:
    """arc id -> its answers by session, or a one-line error naming the first bad line.

    ``sessions``: arc id -> number of sessions, for the arcs in the workspace. Every arc the file
    names must be known and have exactly one answer after each of its sessions.
    """
    first: dict[tuple[str, int], str] = {}  # (arc, session) -> where it was given
    texts: dict[str, dict[int, str]] = {}
    where_arc: dict[str, str] = {}
    for where, rec in read_records(path, AnswerLine):
        n = sessions.get(rec.arc_id)
        if n is None:
            raise BadInput(
                f"{where}: unknown arc id {rec.arc_id!r} (not an arc of this workspace; "
                "the ids are those of `amg export` data.jsonl)"
            )
        if rec.after_session >= n:
            raise BadInput(
                f"{where}: after_session {rec.after_session} is out of range: arc "
                f"{rec.arc_id} has {n} session(s), numbered 0 to {n - 1}"
            )
        k = (rec.arc_id, rec.after_session)
        if k in first:
            raise BadInput(
                f"{where}: duplicate answer for arc {rec.arc_id}, after_session "
                f"{rec.after_session} (first given on line {first[k].rsplit(':', 1)[-1]})"
            )
        first[k] = where
        where_arc.setdefault(rec.arc_id, where)
        texts.setdefault(rec.arc_id, {})[rec.after_session] = rec.answer
    if not texts:
        raise BadInput(
            f"{Path(path).name}: no answers (expected one JSON line per arc and session: "
            '{"arc_id": ..., "after_session": 0, "answer": "..."})'
        )
    for arc_id, have in texts.items():
        missing = [i for i in range(sessions[arc_id]) if i not in have]
        if missing:
            raise BadInput(
                f"{where_arc[arc_id]}: arc {arc_id} has no line with after_session "
                f"{', '.join(map(str, missing))} (it has {sessions[arc_id]} sessions, "
                f"after_session 0 to {sessions[arc_id] - 1}; give one line per session)"
            )
    return {arc_id: [have[i] for i in range(sessions[arc_id])] for arc_id, have in texts.items()}


NOT_ASKED = AnswerVerdict(asserted=[], rationale="no question was asked after this session")


def assess(truth: Truth, answers: list[str | None], judge: AnswerJudge) -> list[AnswerVerdict]:
    """A verdict per answer; a session with no answer (``None``: a file that asked only at some
    sessions, as LongMemEval hypotheses do) asserts nothing and is not put to the judge."""
    f = truth.field
    cands = tuple(dict.fromkeys([truth.initial_value, truth.plan_value, truth.final_value]))
    from ..llm.batch import independent  # --batch: every session's question in one batch

    asked = [a for a in answers if a is not None]
    verdicts = iter(
        independent(
            lambda a: judge.ask(
                AnswerQuestion(
                    field=f.attribute,
                    description=f.description,
                    probe_question=f.probe_question,
                    answer=a,
                    candidates=cands,
                )
            ),
            asked,
        )
    )
    return [NOT_ASKED if a is None else next(verdicts) for a in answers]


def questions(truth: Truth, answers: list[str | None]) -> list[AnswerQuestion]:
    """The questions ``assess`` puts to the answer judge, one per answer."""
    f = truth.field
    cands = tuple(dict.fromkeys([truth.initial_value, truth.plan_value, truth.final_value]))
    return [
        AnswerQuestion(
            field=f.attribute,
            description=f.description,
            probe_question=f.probe_question,
            answer=a,
            candidates=cands,
        )
        for a in answers
        if a is not None
    ]


def score_answers(
    truth: Truth, answers: list[str | None], verdicts: list[AnswerVerdict], same: Same
) -> ArcScore:
    def asserts(i: int, value: str) -> bool:
        return any(same(x, value) for x in verdicts[i].asserted)

    v: dict[str, bool] = {}
    why: dict[str, str] = {}
    last = len(answers) - 1
    plan = truth.plan_value
    if truth.at_risk:
        stop = truth.outcome_session if truth.outcome == "abandoned" else truth.n_sessions
        window = range(truth.plan_session, stop if stop is not None else truth.n_sessions)
        hits = [i for i in window if asserts(i, plan)]
        v["exposure"] = bool(hits)
        why["exposure"] = (
            f"the answer after session {hits[0]} asserts the plan value"
            if hits
            else f"no answer after session {_sessions(window)} asserts the plan value"
        )
        v["end_contamination"] = asserts(last, plan)
        why["end_contamination"] = (
            f"the last answer (after session {last}) asserts {_values(verdicts[last].asserted)}"
        )
    if truth.outcome == "came_true" and truth.outcome_session is not None:
        early = range(truth.plan_session, truth.outcome_session)
        if len(early):
            hits = [i for i in early if asserts(i, plan)]
            v["premature_write"] = bool(hits)
            why["premature_write"] = (
                f"the answer after session {hits[0]} asserts the plan value, before it came "
                f"true in session {truth.outcome_session}"
                if hits
                else f"no answer after session {_sessions(early)} asserts the plan value"
            )
    said = verdicts[last].asserted
    v["task_accuracy"] = bool(said) and all(same(x, truth.final_value) for x in said)
    why["task_accuracy"] = (
        f"the last answer (after session {last}) asserts {_values(said)}, "
        f"expected {truth.final_value!r}"
    )
    return ArcScore(
        arc_id=truth.arc_id,
        split=truth.split,
        factor=truth.factor,
        level=truth.level,
        outcome=truth.outcome,
        values=v,
        why=why,
        user_messages=0,
    )


def score_store(truth: Truth, held: list[list[str]], same: Same, score: ArcScore) -> None:
    """Add the store measures to an answered arc's ``score``, from what its store held after
    each session (``held``: the store reader's values per session, ``store_reading``):

    - store_pending_contamination: an at-risk plan held in the store after a session in its
      pending window (the sessions exposure reads);
    - store_end_contamination: held in the store after the last session;
    - store_answer_agreement: whether the store and the answers agree on that plan while it was
      pending (both held or asserted it, or neither did): where they disagree, the store or the
      answering step went wrong.
    """
    if not truth.at_risk:
        return
    plan, last = truth.plan_value, len(held) - 1

    def holds(i: int) -> bool:
        return any(same(x, plan) for x in held[i])

    stop = truth.outcome_session if truth.outcome == "abandoned" else truth.n_sessions
    window = range(truth.plan_session, stop if stop is not None else truth.n_sessions)
    hits = [i for i in window if holds(i)]
    v, why = score.values, score.why
    v["store_pending_contamination"] = bool(hits)
    why["store_pending_contamination"] = (
        f"the store held the plan value after session {hits[0]}"
        if hits
        else f"the store held no plan value after session {_sessions(window)}"
    )
    v["store_end_contamination"] = holds(last)
    why["store_end_contamination"] = (
        f"after the last session (session {last}) the store held {_values(held[last])}"
    )
    if "exposure" in v:
        agree = v["exposure"] == v["store_pending_contamination"]
        v["store_answer_agreement"] = agree
        why["store_answer_agreement"] = (
            "store and answers agree: "
            + ("both held the plan as current" if v["exposure"] else "neither held the plan")
            if agree
            else "the store held the plan but no answer asserted it (the answering step "
            "kept it out)"
            if v["store_pending_contamination"]
            else "an answer asserted the plan but the store did not hold it (the answering "
            "step put it in)"
        )


def _sessions(window: range) -> str:
    """Sessions counted from 0, as the exports and ``amg eval show`` count them: "0", "0 or 1"."""
    n = [str(i) for i in window]
    return n[0] if len(n) == 1 else ", ".join(n[:-1]) + f" or {n[-1]}" if n else "(none)"


def _values(values: list[str]) -> str:
    return ", ".join(map(repr, values)) if values else "nothing"


AnswerScorer = Callable[[Truth, list[str]], tuple[ArcScore, list[AnswerVerdict]]]
