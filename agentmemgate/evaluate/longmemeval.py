"""A LongMemEval hypothesis file, read back onto the arcs (``amg eval answers --format
longmemeval``).

A harness that ran the questions of ``amg export --format longmemeval`` writes one
``{"question_id", "hypothesis"}`` per line (LongMemEval's own output; a JSON list of them is read
too, as LongMemEval's evaluator does; other keys are ignored). Each question id names an arc and
the session it follows (``exports.longmemeval.probe_points``), so the hypotheses become the
answers of the black-box protocol at those sessions: the probes in the pending window score
exposure and premature writes, the end probe end contamination and task accuracy. Sessions with
no probe point have no answer (``None``) and count toward nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from ..errors import BadInput, unreadable
from ..exports.longmemeval import probe_points
from ..schema import Arc


class Hypothesis(BaseModel):
    model_config = ConfigDict(extra="ignore")
    question_id: StrictStr
    hypothesis: StrictStr


def _records(path: Path) -> list[tuple[str, object]]:
    """(where, parsed JSON) per record: a JSON list, or one JSON object per line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise unreadable(path, e) from None
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadInput(f"{path.name}: not a JSON list ({e.msg}, line {e.lineno})") from None
        return [(f"{path.name} item {i}", x) for i, x in enumerate(items)]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path.name}:{n}", json.loads(line)))
        except json.JSONDecodeError as e:
            raise BadInput(f"{path.name}:{n}: not JSON ({e.msg})") from None
    return out


def read_hypotheses(path: str | Path, arcs: dict[str, Arc]) -> dict[str, list[str | None]]:
    """arc id -> its answer after each session (None where no question was asked), or a
    one-line error naming the first bad record. Every arc a file names must have a hypothesis
    for each of its questions."""
    path = Path(path)
    points = {p.question_id: p for a in arcs.values() for p in probe_points(a)}
    got: dict[str, dict[int, str]] = {}
    first: dict[str, str] = {}
    where_arc: dict[str, str] = {}
    for where, raw in _records(path):
        try:
            h = Hypothesis.model_validate(raw)
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"]) or "record"
            raise BadInput(
                f"{where}: {loc}: {err['msg']} (expected "
                '{"question_id": "...", "hypothesis": "..."})'
            ) from None
        p = points.get(h.question_id)
        if p is None:
            raise BadInput(
                f"{where}: unknown question_id {h.question_id!r} (not a question of this "
                "workspace's arcs; the ids are those of `amg export --format longmemeval`)"
            )
        if h.question_id in first:
            raise BadInput(
                f"{where}: duplicate hypothesis for question_id {h.question_id!r} (first given "
                f"at {first[h.question_id]})"
            )
        first[h.question_id] = where
        where_arc.setdefault(p.arc_id, where)
        got.setdefault(p.arc_id, {})[p.after_session] = h.hypothesis
    if not got:
        raise BadInput(
            f"{path.name}: no hypotheses (expected one JSON line per question: "
            '{"question_id": ..., "hypothesis": "..."})'
        )
    out: dict[str, list[str | None]] = {}
    for arc_id, have in got.items():
        arc = arcs[arc_id]
        missing = [p.question_id for p in probe_points(arc) if p.after_session not in have]
        if missing:
            raise BadInput(
                f"{where_arc[arc_id]}: arc {arc_id} has no hypothesis for question_id "
                f"{', '.join(missing)} (score every question of an arc, or none of them)"
            )
        out[arc_id] = [have.get(i) for i in range(len(arc.sessions))]
    return out


__all__ = ["Hypothesis", "read_hypotheses"]
