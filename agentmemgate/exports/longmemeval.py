"""The benchmark in LongMemEval's layout (Wu et al., 2024), for memory harnesses that read it.

LongMemEval's evaluation code (``src/evaluation/evaluate_qa.py``) reads a JSON list of instances,
one question each with its haystack: ``question_id``, ``question_type``, ``question``,
``answer``, ``question_date``, ``haystack_session_ids``, ``haystack_dates``,
``haystack_sessions`` (lists of ``{"role", "content", "has_answer"}`` turns) and
``answer_session_ids``; a system's hypotheses come back as one ``{"question_id", "hypothesis"}``
per line. This module writes one instance per probe point of every arc:

- the probes inside the plan's pending window (after each session from the plan's session until
  its outcome's; an open plan's runs to the end) and the end probe (after the last session);
  controls and corrections have only the end probe;
- the haystack is the arc's sessions up to and including the probe's, cut there; the question is
  the field's probe question, the answer the value current after that session;
- ``question_type`` is ``knowledge-update`` (LongMemEval's type for a fact that changes; its
  evaluator grades each type by its own template and refuses unknown ones); no ``_abs`` in ids
  (LongMemEval reads ``_abs`` as an abstention question);
- evidence follows LongMemEval's conventions: the user turns that state the value current at the
  probe (the initial statement, and the outcome, correction or completed change once it has
  happened) have ``has_answer: true``, every other turn ``false``; the sessions holding them are
  ``answer_session_ids`` and their ids start with ``answer_`` (its retrieval code tells evidence
  sessions by that prefix);
- dates in LongMemEval's format, ``2023/05/20 (Sat) 00:00``: sessions at 00:00 on their date,
  the question at 23:59 on the probe session's date (after the session, before the next);
- extra keys, prefixed ``amg_``, say what the instance is: the arc id, split, outcome, field, the
  probe's place (``pending`` or ``end``; ``amg_in_pending_window``), the session it follows
  (0-based), the plan value, whether the plan is at risk and the value current then.
  LongMemEval's code ignores them; ``amg eval answers --format longmemeval`` reads them back.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..atomic import replaced_folder
from ..errors import BadInput, WorkspaceError
from ..schema import Arc
from ..workspace import Workspace

QUESTION_TYPE = "knowledge-update"
FOLDER = "longmemeval"


class ProbePoint(BaseModel):
    """One question of an arc: asked after session ``after_session`` (0-based)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    question_id: str
    arc_id: str
    after_session: int
    place: str  # "pending" | "end"
    in_pending_window: bool


def question_id(arc_id: str, after_session: int) -> str:
    return f"{arc_id}_after{after_session}"


def pending_sessions(arc: Arc) -> range:
    """Sessions after which the plan is stated and its outcome not yet known (for answers: the
    probes whose answers count toward exposure and premature writes)."""
    s = arc.spec
    if s.outcome in ("control", "correction") or s.correction is not None:
        return range(0)
    start = arc.plan_turn.session
    if s.outcome in ("abandoned", "came_true") and arc.outcome_turn is not None:
        return range(start, arc.outcome_turn.session)
    return range(start, len(arc.sessions))  # open: pending to the end


def probe_points(arc: Arc) -> list[ProbePoint]:
    window = pending_sessions(arc)
    last = len(arc.sessions) - 1
    return [
        ProbePoint(
            question_id=question_id(arc.id, i),
            arc_id=arc.id,
            after_session=i,
            place="end" if i == last else "pending",
            in_pending_window=i in window,
        )
        for i in sorted(set(window) | {last})
    ]


def lme_date(day: dt.date, time: str = "00:00") -> str:
    return f"{day.strftime('%Y/%m/%d')} ({day.strftime('%a')}) {time}"


def _evidence(arc: Arc, upto: int) -> set[tuple[int, int]]:
    """(session, turn) of the user turns that state the value current after session ``upto``."""
    refs = [arc.initial_turn, arc.outcome_turn, arc.correction_turn]
    if arc.spec.outcome == "control":
        refs.append(arc.plan_turn)  # the completed change
    return {(r.session, r.turn) for r in refs if r is not None and r.session <= upto}


def instance(arc: Arc, point: ProbePoint) -> dict:
    upto = point.after_session
    evidence = _evidence(arc, upto)
    answer_sessions = sorted({s for s, _ in evidence})
    ids = [f"{'answer_' if i in answer_sessions else ''}{arc.id}_s{i}" for i in range(upto + 1)]
    s = arc.spec
    return {
        "question_id": point.question_id,
        "question_type": QUESTION_TYPE,
        "question": s.field.probe_question,
        "answer": arc.expected_value_after_session[upto],
        "question_date": lme_date(arc.sessions[upto].date, "23:59"),
        "haystack_session_ids": ids,
        "haystack_dates": [lme_date(arc.sessions[i].date) for i in range(upto + 1)],
        "haystack_sessions": [
            [
                {
                    "role": t.role,
                    "content": t.text,
                    "has_answer": t.role == "user" and (i, j) in evidence,
                }
                for j, t in enumerate(arc.sessions[i].turns)
            ]
            for i in range(upto + 1)
        ],
        "answer_session_ids": [ids[i] for i in answer_sessions],
        "amg_arc_id": arc.id,
        "amg_split": s.split,
        "amg_outcome": s.outcome,
        "amg_field": s.field.attribute,
        "amg_probe": point.place,
        "amg_in_pending_window": point.in_pending_window,
        "amg_after_session": upto,
        "amg_plan_value": s.plan_value,
        "amg_at_risk": s.outcome in ("abandoned", "open"),
        "amg_current_value": arc.expected_value_after_session[upto],
    }


def instances(arcs: list[Arc]) -> list[dict]:
    return [instance(a, p) for a in arcs for p in probe_points(a)]


class LongMemEvalSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_dir: str
    counts: dict[str, int]  # split -> instances
    arcs: dict[str, int]
    files: list[str]

    def lines(self) -> list[str]:
        return [
            f"exported to {self.out_dir} in LongMemEval's layout: "
            + ", ".join(
                f"{k} {self.counts[k]} questions ({self.arcs[k]} arcs)" for k in self.counts
            ),
            "score a system's hypotheses: amg eval answers HYPOTHESES.jsonl --format "
            "longmemeval --name NAME",
        ]


def export_longmemeval(ws: Workspace, out_dir: str | Path, splits: list[str]) -> LongMemEvalSummary:
    """``out_dir/longmemeval/<split>.json`` (a JSON list of instances, LongMemEval's reference
    file) and a manifest, the folder replaced in one step."""
    from . import row_order
    from .files import write_manifest

    split_arcs = {s: row_order(list(ws.arcs(s)), s) for s in splits}
    split_arcs = {s: a for s, a in split_arcs.items() if a}
    if not split_arcs:
        raise BadInput(
            f"No arcs to export in workspace {str(ws.path)!r} (split {', '.join(splits)}): "
            "run `amg build` or `amg generate` first"
        )
    out = Path(out_dir)
    counts: dict[str, int] = {}
    files: list[str] = []
    try:
        with replaced_folder(out, replace=[FOLDER], protect=[ws.path]) as stage:
            folder = stage / FOLDER
            folder.mkdir()
            for split, arcs in split_arcs.items():
                rows = instances(arcs)
                counts[split] = len(rows)
                with open(folder / f"{split}.json", "w", encoding="utf-8", newline="\n") as f:
                    json.dump(rows, f, ensure_ascii=False, indent=1)
                    f.write("\n")
                files.append(str(out / FOLDER / f"{split}.json"))
            write_manifest(
                folder,
                {"questions": counts, "arcs": {s: len(a) for s, a in split_arcs.items()}},
                {"format": "longmemeval", "question_type": QUESTION_TYPE},
            )
            files.append(str(out / FOLDER / "manifest.json"))
    except OSError as e:
        raise WorkspaceError(f"Cannot write export to {str(out)!r}: {e.strerror or e}") from None
    return LongMemEvalSummary(
        out_dir=str(out / FOLDER),
        counts=counts,
        arcs={s: len(a) for s, a in split_arcs.items()},
        files=files,
    )


__all__ = [
    "ProbePoint",
    "export_longmemeval",
    "instance",
    "instances",
    "lme_date",
    "pending_sessions",
    "probe_points",
    "question_id",
]
