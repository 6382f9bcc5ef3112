"""The ``answers:SYSTEM`` audit source: a black-box system's stored answers for a blind human audit.

``amg audit create NAME --task answer_assertion --from answers:SYSTEM`` freezes one item per
stored (arc, after_session) answer that the answer judge has judged. The annotator sees the probe
question, the answer and the arc's two labelled values (initial and plan value) as "Value A" and
"Value B", in an order drawn per item from the audit's seed; never which one is the plan value,
nor the arc, its split, level or outcome, nor the judge's verdict. Item ids are opaque digests.

The hidden reference is the answer judge's verdict, mapped onto the two options with the same
equivalence judge the scoring used (the judge recorded in ``eval_judges`` for the answer set):
``value_a``, ``value_b``, ``both``, or ``neither`` (nothing asserted, or only values that are
neither option). Which letter holds the plan value, the verdict class in role terms, the arc and
the asserted values stay in the audit's strata table, read by reports only.

This room registers the source with the audit room at import time (evaluate imports
annotate_app, never the other way round).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterable

from ..annotate_app.items import (
    AnswerShown,
    ItemDisplay,
    Reference,
    SourceItem,
    SourceRequest,
    ValuePair,
)
from ..annotate_app.sources import register_source
from ..answer_judge import AnswerVerdict, canonical_value
from ..errors import AmgError, BadInput
from ..hashing import sha256_parts
from ..validate.judges import OFFLINE_JUDGE
from .judges import ValueJudge, get_value_judge

TASK = "answer_assertion"
PREFIX = "answers"


def options_seed(seed: int, item_id: str) -> str:
    """The per-item seed of the option order: ``random.Random(this).random() < 0.5`` puts the plan
    value first (Value A); it is recorded in the audit params."""
    return f"answer-options:{seed}:{item_id}"


def item_id_of(system: str, arc_id: str, after_session: int) -> str:
    """Opaque and stable: a digest of the system, arc and session (arc ids spell split and level)."""
    return "ans-" + sha256_parts("answer-audit", system, arc_id, str(after_session))[:16]


def systems_with_answers(ws) -> list[str]:
    return [n for (n,) in ws.db.execute("select distinct name from eval_answers order by name")]


def _judge_row(ws, system: str) -> tuple[dict | None, dict[str, str]]:
    """The answer set's judge (the one whose scores are newest) and, per arc, the judge key of its
    newest score: an arc's stored verdicts were written with its newest score."""
    row = ws.db.execute("select run_key from eval_answer_sets where name = ?", [system]).fetchone()
    if row is None:
        return None, {}
    per_arc: dict[str, str] = {}
    newest = None
    for arc_id, jk in ws.db.execute(
        "select arc_id, judge_key from eval_scores where run_key = ? order by created_at, rowid",
        [row[0]],
    ).fetchall():
        per_arc[arc_id] = newest = jk
    if newest is None:
        return None, per_arc
    j = ws.db.execute(
        "select judge_key, spec, family, heuristic, rubric, rubric_sha256, "
        "answer_rubric from eval_judges where judge_key = ?",
        [newest],
    ).fetchone()
    if j is None:
        return None, per_arc
    keys = (
        "judge_key",
        "spec",
        "family",
        "heuristic",
        "equivalence_rubric",
        "equivalence_rubric_sha256",
        "answer_rubric",
    )
    out = dict(zip(keys, j))
    out["heuristic"] = bool(out["heuristic"])
    return out, per_arc


class _Matcher:
    """Asserted value vs labelled value: the same text (after normalizing) or the eval's
    equivalence judge; the judge is built only when a value needs it."""

    def __init__(self, ws, spec: str):
        self.ws, self.spec = ws, spec
        self._judge: ValueJudge | None = None

    def same(self, field, value: str, labelled: str) -> bool:
        if canonical_value(value) == canonical_value(labelled):
            return True
        if self._judge is None:
            try:
                self._judge = get_value_judge(self.spec, workspace=self.ws)
            except AmgError as e:
                raise BadInput(
                    f"These answers were judged by {self.spec}; matching its asserted values to "
                    f"the options needs that judge's equivalence verdicts, and it cannot be "
                    f"reached: {str(e).splitlines()[0]} (an OpenAI-compatible server is named by "
                    "OPENAI_BASE_URL)"
                ) from None
        return self._judge.same(field, value, labelled)


def reference_of(verdict: AnswerVerdict, initial: str, plan: str, same) -> tuple[str, list[str]]:
    """The verdict in role terms: ``initial``, ``plan``, ``both`` or ``neither``, and the asserted
    values that match neither labelled value."""
    hit_i = hit_p = False
    other = []
    for x in verdict.asserted:
        i, p = same(x, initial), same(x, plan)
        hit_i, hit_p = hit_i or i, hit_p or p
        if not (i or p):
            other.append(x)
    cls = "both" if hit_i and hit_p else "initial" if hit_i else "plan" if hit_p else "neither"
    return cls, other


def load_answer_items(req: SourceRequest) -> Iterable[SourceItem]:
    ws, system = req.workspace, (req.arg or "").strip()
    known = systems_with_answers(ws)
    listing = ", ".join(known) or "none (store some with `amg eval answers FILE --name SYSTEM`)"
    if not system:
        raise BadInput(f"Use --from answers:SYSTEM; systems with answers: {listing}")
    rows = ws.db.execute(
        "select arc_id, after_session, answer, verdict from eval_answers "
        "where name = ? order by arc_id, after_session",
        [system],
    ).fetchall()
    if not rows:
        raise BadInput(f"No stored answers for system {system!r}; systems with answers: {listing}")
    judge, per_arc = _judge_row(ws, system)
    judged = [r for r in rows if r[3]]
    if not judged or judge is None:
        raise BadInput(
            f"None of the {len(rows)} stored answers of {system!r} is judged yet; run "
            f"`amg eval answers FILE --name {system}` again to judge them"
        )
    from ..design.stored import workspace_design

    arcs = {a.id: a for split in workspace_design(ws).split_names for a in ws.arcs(split)}
    notes: list[str] = []
    skipped_unjudged = len(rows) - len(judged)
    other_judge = [r for r in judged if per_arc.get(r[0]) != judge["judge_key"]]
    gone = [r for r in judged if r[0] not in arcs]
    use = [r for r in judged if per_arc.get(r[0]) == judge["judge_key"] and r[0] in arcs]
    if skipped_unjudged:
        notes.append(f"Skipped {skipped_unjudged} answer(s) not judged yet.")
    if other_judge:
        notes.append(
            f"Skipped {len(other_judge)} answer(s) whose stored verdict is from another "
            f"judge than {judge['spec']} (re-run `amg eval answers` to judge them again)."
        )
    if gone:
        notes.append(f"Skipped {len(gone)} answer(s) of arcs no longer in the workspace.")
    if not use:
        raise BadInput(f"No judged answers of {system!r} to audit: " + " ".join(notes))
    matcher = _Matcher(ws, judge["spec"])
    n_other = 0
    items = []
    for arc_id, after, answer, raw in use:
        arc = arcs[arc_id]
        s = arc.spec
        verdict = AnswerVerdict.model_validate_json(raw)
        cls, other = reference_of(
            verdict, s.initial_value, s.plan_value, functools.partial(matcher.same, s.field)
        )
        iid = item_id_of(system, arc_id, after)
        plan_first = random.Random(options_seed(req.seed, iid)).random() < 0.5
        a, b = (s.plan_value, s.initial_value) if plan_first else (s.initial_value, s.plan_value)
        plan_option = "value_a" if plan_first else "value_b"
        initial_option = "value_b" if plan_first else "value_a"
        label = {
            "initial": initial_option,
            "plan": plan_option,
            "both": "both",
            "neither": "neither",
        }[cls]
        strata = {
            "verdict": cls,
            "reference": label,
            "plan_option": plan_option,
            "arc_id": arc_id,
            "after_session": str(after),
            "split": s.split,
            "factor": s.factor,
            "level": s.level,
            "outcome": s.outcome,
            "asserted": json.dumps(verdict.asserted),
        }
        if other:
            n_other += 1
            strata["reference_note"] = (
                f"the judge's asserted value(s) {', '.join(map(repr, other))} match neither "
                f"labelled value" + ("; the reference is neither" if cls == "neither" else "")
            )
        items.append(
            SourceItem(
                display=ItemDisplay(
                    id=iid,
                    kind="answer",
                    answer=AnswerShown(question=s.field.probe_question, text=answer),
                    pair=ValuePair(
                        field=s.field.attribute, description=s.field.description, a=a, b=b
                    ),
                ),
                reference=Reference(label=label, source="judge"),
                strata=strata,
            )
        )
    if n_other:
        notes.append(
            f"{n_other} verdict(s) assert a value that is neither labelled value "
            "(counted as neither when nothing else is asserted)."
        )
    req.info.update(
        {
            "system": system,
            "notes": notes,
            "answers": {
                "stored": len(rows),
                "audited_from": len(use),
                "not_judged": skipped_unjudged,
                "other_judge": len(other_judge),
                "arc_missing": len(gone),
                "other_value": n_other,
            },
            "reference_judge": {**judge, "offline": judge["spec"] == OFFLINE_JUDGE},
            "options_order": "random.Random(f'answer-options:{seed}:{item_id}').random() < 0.5 "
            "puts the plan value in Value A",
        }
    )
    return items


register_source(
    PREFIX,
    load_answer_items,
    tasks=(TASK,),
    help="answers:SYSTEM  a black-box system's stored answers (amg eval answers); "
    "reference = the answer judge's verdict",
)
