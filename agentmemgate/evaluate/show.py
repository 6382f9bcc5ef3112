"""``amg eval show ARC_ID --system NAME``: one arc, turn by turn, as one system handled it --
what was extracted, matched, classified, staged, promoted or discarded, what a read returned as
each user turn arrived, the store after each session, and how each measure came out."""

from __future__ import annotations

import textwrap
from typing import Any

from ..answer_judge import AnswerVerdict
from ..errors import BadInput
from ..memory.system import MemoryEvent, StoreSnapshot
from ..schema import Arc, turn_labels
from ..suggest import did_you_mean
from ..validate.store import current_arc_shas
from ..workspace import Workspace
from . import counted, store
from .truth import truth_of

_WRAP = 100
# A score stored for the arc's earlier text: the report leaves it out, and so does show.
NOT_COUNTED = (
    "not counted: scored on the arc's text before it was rebuilt (`amg report eval` leaves "
    "such scores out; `amg eval run` scores the new text)"
)


def _q(v: str | None) -> str:
    return "nothing (no value)" if v is None else repr(v)


def event_line(e: MemoryEvent) -> str:
    parts = []
    if e.extracted is not None:
        x = e.extracted
        parts.append(
            f"extracted ({x.entity}, {x.attribute}, {x.value!r})"
            + (f" from {x.span!r}" if x.span else "")
        )
    if e.kind == "dropped_no_field":
        parts.append("matched no field: dropped before the gate")
    else:
        if e.key is not None and e.extracted is not None:
            parts.append(
                f"matched field {e.key.attribute}"
                + (" (via the plan-frame retry)" if e.matched_by_retry else "")
            )
        if e.evidence_type:
            p = (
                f" p={e.probs[e.evidence_type]:.2f}"
                if e.probs and e.evidence_type in e.probs
                else ""
            )
            parts.append(f"classified {e.evidence_type}{p}")
        parts.append(
            {
                "committed": f"committed {e.value!r}",
                "corrected": f"corrected to {e.value!r} (the old value is marked never valid)",
                "staged": f"staged {e.value!r} (confirm when: {e.confirm_when}; abandon when: {e.abandon_when})",
                "plan_committed": f"written as a masked plan-typed value {e.value!r}",
                "promoted": f"promoted staged {e.value!r} into the store (confirm predicate held)",
                "discarded": f"discarded staged {e.value!r} (abandon predicate held)",
                "refreshed": f"masked plan {e.value!r} turned into a fact (refresh-confirm)",
            }.get(e.kind, e.kind)
        )
    return " -> ".join(parts) + (f" [{e.detail}]" if e.detail else "")


def snapshot_lines(s: StoreSnapshot, labels: list[str] | None = None) -> list[str]:
    """The store after a session; ``labels`` (``turn_labels``) name the turns a history interval
    starts and ends at."""

    def at(t: int) -> str:
        return labels[t] if labels is not None and 0 <= t < len(labels) else f"turn {t}"

    out = []
    for f in s.fields:
        hist = ", ".join(
            f"{h.value!r} [{at(h.t_begin)}, {'now' if h.t_end is None else at(h.t_end)})"
            + (" never valid" if h.never_valid else "")
            + (" plan" if h.plan else "")
            + (f" via {h.via}" if h.via != "commit" else "")
            for h in f.history
        )
        out.append(f"{f.key.attribute} = {_q(f.current)}" + (f"; history: {hist}" if hist else ""))
    for st in s.staged:
        out.append(
            f"staged {st.value!r} for {st.key.attribute}: {st.status} (staged at {at(st.staged_at)}"
            + (f", resolved at {at(st.resolved_at)}" if st.resolved_at is not None else "")
            + ")"
        )
    return out or ["(empty)"]


def _wrap(prefix: str, text: str, indent: int) -> list[str]:
    return textwrap.wrap(text, _WRAP, initial_indent=prefix, subsequent_indent=" " * indent) or [
        prefix
    ]


def show_natural(ws: Workspace, key: str, system: str) -> str:
    """A natural item (``natural:SET:ITEM``) as one component system handled it; evidence turns
    are marked and assistant turns cut to 200 characters (an ``_s`` item has ~500 turns)."""
    import zlib

    from ..corpora.natural import NaturalItem, natural_set

    _, set_name, item_id = key.split(":", 2)
    natural_set(ws, set_name)
    row = ws.db.execute(
        "select item_z from natural_items where set_name = ? and item_id = ?", [set_name, item_id]
    ).fetchone()
    if row is None:
        raise BadInput(
            f"No item {item_id!r} in natural set {set_name!r} (see `amg natural show {set_name}`)"
        )
    item = NaturalItem.model_validate_json(zlib.decompress(row[0]))
    systems = store.latest_systems(ws)
    if system not in systems:
        raise BadInput(
            f"No evaluation results for system {system!r}{did_you_mean(system, systems)}; "
            f"systems with results: "
            f"{', '.join(sorted(systems)) or 'none (run `amg eval run --natural SET`)'}"
        )
    run_key = systems[system]["run_key"]
    out = [
        f"Natural item {item_id} of set {set_name} ({item.corpus}; {item.license})",
        f"Question ({item.question_date}): {item.question}",
        f"Gold answer: {item.gold_answer!r}; evidence: {', '.join(item.evidence)}",
        (
            f"Field {item.field.attribute}: {item.field.description}"
            if item.field
            else f"Field refused: {item.field_refused}"
        ),
        f"System {system}",
        "",
    ]
    trace = store.load_trace(ws, run_key, key)
    if trace is None:
        return (
            "\n".join(
                out
                + [f"No trace of {system} on this item: run `amg eval run --natural {set_name}`"]
            )
            + "\n"
        )
    by_t = {tt.t: tt for tt in trace.turns}
    evidence = set(item.evidence)
    labels = turn_labels(item.sessions)
    t = 0
    for si, sess in enumerate(item.sessions):
        out.append(f"Session {si} ({sess.date})")
        for turn in sess.turns:
            mark = " [evidence]" if turn.ref in evidence else ""
            text = (
                turn.text
                if turn.role == "user"
                else turn.text[:200] + ("..." if len(turn.text) > 200 else "")
            )
            out += _wrap(f"  {labels[t]} {turn.role}{mark}: ", text, 6)
            if (tt := by_t.get(t)) is not None:
                if tt.read_before is not None:
                    out.append(f"      read as it arrived: {_q(tt.read_before)}")
                for e in tt.events:
                    out += _wrap("      ", event_line(e), 8)
            t += 1
        if si < len(trace.snapshots):
            out.append(
                f"  Store after session {si}: "
                + "; ".join(snapshot_lines(trace.snapshots[si], labels))
            )
        out.append("")
    out.append(
        f"End read: {_q(trace.end_read)}; {trace.calls} component calls over "
        f"{trace.user_messages} user messages"
    )
    got = counted.arc_result(ws, counted.system_runs(ws)[system], key)
    if got.score is not None:
        sc = got.score
        out.append(
            f"task_accuracy (judge {got.judge}): "
            f"{'yes' if sc.values['task_accuracy'] else 'no'} ({sc.why['task_accuracy']})"
        )
    elif got.stale:
        out.append(f"task_accuracy (judge {got.judge}): {NOT_COUNTED}")
    return "\n".join(out).rstrip() + "\n"


def show_arc(ws: Workspace, arc_id: str, system: str) -> str:
    if arc_id.startswith("natural:") and arc_id.count(":") >= 2:
        return show_natural(ws, arc_id, system)
    row = ws.db.execute("select json from arcs where id = ?", [arc_id]).fetchone()
    if row is None:
        raise BadInput(
            f"No arc {arc_id!r} in workspace {str(ws.path)!r} (ids are those of "
            "`amg export` data.jsonl)"
        )
    arc = Arc.model_validate_json(row[0])
    systems = store.latest_systems(ws)
    answer_sets = store.answer_sets(ws)
    if system not in systems and system not in answer_sets:
        known = sorted(systems) + sorted(answer_sets)
        raise BadInput(
            f"No evaluation results for system {system!r}{did_you_mean(system, known)}; "
            f"systems with results: {', '.join(known) or 'none (run `amg eval run`)'}"
        )
    truth = truth_of(arc)
    s = arc.spec
    marks = {truth.plan_t: "plan turn", truth.outcome_t: "outcome turn"}
    if arc.pending_turn is not None:
        from .truth import position

        marks[position(arc, arc.pending_turn)] = "still-pending mention"
    if s.outcome == "control":
        marks[truth.plan_t] = "completed change (control)"
    if (c := s.correction) is not None and truth.correction is not None:
        if c.target == "change":
            marks[truth.plan_t] = "reported change (later corrected)"
        marks[truth.correction.t] = f"explicit correction: {c.wrong_value!r} -> {c.value!r}"
    out = [
        f"Arc {arc.id}: {s.split}, {s.factor} level {s.level}"
        + (f", outcome {s.outcome}" if s.factor != "outcome" else ""),
        f"Field {s.field.attribute}: {s.field.description} Probe: {s.field.probe_question}",
        (
            f"Truth: initial {s.initial_value!r}, "
            + (
                f"correction {s.correction.wrong_value!r} -> {s.correction.value!r} (the corrected "
                "value was wrong when said: a gate marks its interval never valid)"
                if s.correction
                else f"plan {s.plan_value!r}"
            )
            + f"; current value after each session: "
            f"{', '.join(repr(v) for v in arc.expected_value_after_session)}"
        ),
    ]
    if answer_sets.get(system, {}).get("kind") == "system":
        return _show_answering(
            ws, arc, system, systems.get(system), answer_sets[system], out, marks
        )
    row = systems.get(system)
    run_key = row["run_key"] if row else answer_sets[system]["run_key"]
    if row:
        info = row["info"]
        out.append(
            f"System {system}: {info.description} ({'gated' if info.gated else 'ungated'}; "
            + ", ".join(f"{k} {v}" for k, v in info.components.items())
            + ("; offline rules" if info.offline else f"; model {row['model']}")
            + ("; ORACLE" if info.oracle else "")
            + ")"
        )
    else:
        out.append(f"System {system}: black-box answers from {answer_sets[system]['path']}")
    out.append("")
    trace = store.load_trace(ws, run_key, arc.id) if row else None
    fresh = current_arc_shas(ws, [s.split]).get(arc.id)
    traced_sha = ws.db.execute(
        "select arc_sha256 from eval_traces where run_key = ? and arc_id = ?", [run_key, arc.id]
    ).fetchone()
    if row and trace is None:
        failure = ws.db.execute(
            "select stage, error from eval_failures where run_key = ? and arc_id = ?",
            [run_key, arc.id],
        ).fetchone()
        out.append(
            f"No trace of {system} on this arc"
            + (f": it failed ({failure[0]}): {failure[1]}" if failure else ": run `amg eval run`")
        )
        return "\n".join(out) + "\n"
    if traced_sha and traced_sha[0] != fresh:
        out += ["Note: the arc was rebuilt after this trace was made; re-run `amg eval run`.", ""]
    by_t = {tt.t: tt for tt in trace.turns} if trace else {}
    answers = {}
    if not row:
        for r in ws.db["eval_answers"].rows_where(
            "name = ? and arc_id = ?", [system, arc.id], order_by="after_session"
        ):
            answers[r["after_session"]] = (r["answer"], r["verdict"])
    labels = turn_labels(arc.sessions)
    t = 0
    for si, sess in enumerate(arc.sessions):
        out.append(f"Session {si} ({sess.date.isoformat()})")
        for turn in sess.turns:
            mark = f" [{marks[t]}]" if t in marks else ""
            out += _wrap(f"  {labels[t]} {turn.role}{mark}: ", turn.text, 6)
            if (tt := by_t.get(t)) is not None:
                out.append(f"      read as it arrived: {_q(tt.read_before)}")
                for e in tt.events:
                    out += _wrap("      ", event_line(e), 8)
                if tt.calls:
                    out.append(f"      ({tt.calls} component call{'s' if tt.calls != 1 else ''})")
            t += 1
        if trace and si < len(trace.snapshots):
            out.append(f"  Store after session {si}:")
            out += [f"    {x}" for x in snapshot_lines(trace.snapshots[si], labels)]
        if si in answers:
            text, verdict = answers[si]
            out += _wrap(f"  Answer after session {si}: ", repr(text), 4)
            if verdict:
                v = AnswerVerdict.model_validate_json(verdict)
                out.append(
                    f"    asserts: {', '.join(map(repr, v.asserted)) or 'nothing'} ({v.rationale})"
                )
        out.append("")
    if trace:
        out.append(
            f"End read: {_q(trace.end_read)}; {trace.calls} component calls over "
            f"{trace.user_messages} user messages"
        )
    got = counted.arc_result(ws, counted.system_runs(ws)[system], arc.id)
    if got.score is not None:
        sc = got.score
        out.append(f"Measures (judge {got.judge}):")
        for m, v in sc.values.items():
            why = sc.why.get(m, "")
            out.append(f"  {m}: {'yes' if v else 'no'}" + (f" ({why})" if why else ""))
    elif got.stale:
        out.append(f"Measures (judge {got.judge}): {NOT_COUNTED}")
    return "\n".join(out).rstrip() + "\n"


# -- answering systems run by `amg eval run` (products, baselines, plug-ins) -------------------
def arc_values(arc: Arc) -> list[str]:
    """The labelled values a store reader looks for: initial, plan, and every current one."""
    s = arc.spec
    return list(dict.fromkeys([s.initial_value, s.plan_value, *arc.expected_value_after_session]))


def store_lines(info: Any, values: list[str], got: dict, asserted: list[str] | None) -> list[str]:
    """What the product's store held after a session, read by its store reader, record by
    record; and a line where the store and the answer disagree on the plan value (``info``: the
    system's ``SystemInfo``, which names its reader; ``values``: ``arc_values``, the plan value
    second)."""
    import datetime as dt

    from ..memory.profile_store import same_value
    from .store_reading import reader_of

    records = got.get("store")
    reader = reader_of(info)
    if records is None or reader is None:
        return []
    plan = values[1] if len(values) > 1 else values[0]
    reading = reader.read(records, values, dt.date.fromisoformat(got["date"]))
    out = [
        f"  Store after session {got['after_session']} ({len(records)} record"
        f"{'' if len(records) == 1 else 's'}, read by {reader.ref}): holds "
        f"{', '.join(map(repr, reading.held)) or 'none of the values'}"
    ]
    for text, why in reading.records:
        out += _wrap("    - ", f"{text!r}: {why}", 6)
    if asserted is not None:
        in_store = any(same_value(v, plan) for v in reading.held)
        in_answer = any(same_value(v, plan) for v in asserted)
        if in_store != in_answer:
            out.append(
                "    store and answer disagree on the plan value: "
                + (
                    "the store holds it, the answer does not assert it"
                    if in_store
                    else "the answer asserts it, the store does not hold it"
                )
            )
    return out


def retrieved_line(i: int, r: dict) -> str:
    """One retrieved memory as show prints it: text, score, validity interval."""
    extra = []
    if r.get("score") is not None:
        extra.append(f"score {r['score']:.3g}")
    if r.get("valid_at") or r.get("invalid_at"):
        extra.append(f"valid {r.get('valid_at') or '?'} to {r.get('invalid_at') or 'now'}")
    return f"{i}. {r['text']!r}" + (f" ({'; '.join(extra)})" if extra else "")


def _show_answering(
    ws: Workspace,
    arc: Arc,
    system: str,
    row: dict | None,
    answer_set: dict,
    out: list[str],
    marks: dict[int, str],
) -> str:
    run_key = answer_set["run_key"]
    if row is not None:
        info, prov = row["info"], row["options"]
        desc = [f"answering system; model {row['model']}"]
        if prov.get("product"):
            desc.append(f"{prov['product']}, {prov.get('library')} {prov.get('library_version')}")
        for k in ("embedder", "dimensions", "store"):
            if prov.get(k) not in (None, "", "none"):
                desc.append(f"{k} {prov[k]}")
        if prov.get("answer_prompt"):
            desc.append(
                f"answer prompt {prov['answer_prompt']} "
                f"(sha256 {str(prov.get('answer_prompt_sha256', ''))[:12]})"
            )
        out.append(f"System {system}: {info.description} ({'; '.join(desc)})")
    else:
        out.append(f"System {system}: answering system")
    sessions = {r["after_session"]: r for r in store.load_product_answers(ws, run_key, arc.id)}
    if not sessions:
        failure = ws.db.execute(
            "select stage, error from eval_failures where run_key = ? and arc_id = ?",
            [run_key, arc.id],
        ).fetchone()
        out += [
            "",
            f"No answers of {system} on this arc"
            + (f": it failed ({failure[0]}): {failure[1]}" if failure else ": run `amg eval run`"),
        ]
        return "\n".join(out) + "\n"
    first = next(iter(sessions.values()))
    out.append(f"Namespace {first['namespace']} (opaque; this arc's attempt only)")
    if first["arc_sha256"] != current_arc_shas(ws, [arc.spec.split]).get(arc.id):
        out += ["Note: the arc was rebuilt after these answers were made; re-run `amg eval run`."]
    verdicts = {
        r["after_session"]: r["verdict"]
        for r in ws.db["eval_answers"].rows_where("name = ? and arc_id = ?", [system, arc.id])
    }
    out.append("")
    labels = turn_labels(arc.sessions)
    t = 0
    for si, sess in enumerate(arc.sessions):
        out.append(f"Session {si} ({sess.date.isoformat()})")
        for turn in sess.turns:
            mark = f" [{marks[t]}]" if t in marks else ""
            out += _wrap(f"  {labels[t]} {turn.role}{mark}: ", turn.text, 6)
            t += 1
        got = sessions.get(si)
        if got is None:
            out += ["  (no answer stored after this session)", ""]
            continue
        mems = got["retrieved"]
        out.append(
            f"  Retrieved for the probe after session {si}: "
            + (
                f"{len(mems)} memor{'y' if len(mems) == 1 else 'ies'}"
                if mems
                else "nothing (no store)"
                if row and row["options"].get("store") == "none"
                else "nothing"
            )
        )
        for i, r in enumerate(mems, 1):
            out += _wrap("    ", retrieved_line(i, r), 7)
        out += _wrap(f"  Answer after session {si}: ", repr(got["answer"]), 4)
        asserted = None
        if verdicts.get(si):
            v = AnswerVerdict.model_validate_json(verdicts[si])
            asserted = v.asserted
            out.append(
                f"    asserts: {', '.join(map(repr, v.asserted)) or 'nothing'} ({v.rationale})"
            )
        out += store_lines(row["info"] if row else None, arc_values(arc), got, asserted)
        if got["calls"]:
            out.append(f"    ({got['calls']} model call{'s' if got['calls'] != 1 else ''})")
        out.append("")
    got = counted.arc_result(ws, counted.system_runs(ws)[system], arc.id)
    if got.score is not None:
        sc = got.score
        out.append(f"Measures (judge {got.judge}):")
        for m, v in sc.values.items():
            out.append(f"  {m}: {'yes' if v else 'no'} ({sc.why.get(m, '')})")
    elif got.stale:
        out.append(f"Measures (judge {got.judge}): {NOT_COUNTED}")
    return "\n".join(out).rstrip() + "\n"


__all__ = [
    "event_line",
    "retrieved_line",
    "show_arc",
    "show_natural",
    "snapshot_lines",
    "turn_labels",
]
