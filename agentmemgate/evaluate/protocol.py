"""The protocol: feed one arc to a fresh memory system exactly as an assistant would see it.

Every user turn goes in order with every earlier turn as context (assistant turns are context
only). The store is read when each user turn arrives, before it is processed (what an assistant
would consult to answer it), and once at the end; it is snapshotted after every session (the last
snapshot is the end state). Nothing else reaches the system: no arc id, split, level, outcome or
turn role in the design -- only text, session, date and the frozen, value-free field. Oracle
ablations (``info.oracle``) are the one documented exception: their factory gets the truth.
"""

from __future__ import annotations

import datetime as dt

from ..memory.system import ContextTurn, FieldKey, MemorySystem, SystemFactory, SystemInfo, UserTurn
from ..schema import Arc, FieldSpec
from .trace import Trace, TurnTrace


def new_system(factory: SystemFactory, info: SystemInfo, arc: Arc) -> MemorySystem:
    """A fresh system for one conversation; oracles are told the values (and say so in reports)."""
    if info.oracle:
        s = arc.spec
        return factory(truth={s.field.attribute: [s.initial_value, s.plan_value]})
    return factory()


def run_arc(
    system: MemorySystem, arc: Arc, name: str | None = None, turns: Turns | None = None
) -> Trace:
    """Run one conversation through ``system`` and record what it read, did and held.
    ``turns``: ``arc_turns(arc)``, made once and given to every system run on the arc."""
    return run_sessions(
        system, arc.spec.field, turns if turns is not None else arc_turns(arc), arc.id, name
    )


class Turns(tuple):
    """A conversation as the protocol sends it, built once and shared by every system run on it:
    per session, per turn, the ``UserTurn`` (None for an assistant turn) and the ``ContextTurn``
    it becomes for later turns. Both models are frozen, and every system still gets its own
    context list, so sharing them lets nothing pass from one system to another."""


def prepare_turns(sessions: list[tuple[dt.date, list[tuple[str, str]]]]) -> Turns:
    out, t = [], 0
    for si, (date, session_turns) in enumerate(sessions):
        steps = []
        for ti, (role, text) in enumerate(session_turns):
            user = (
                UserTurn(text=text, session=si, turn=ti, date=date, t=t) if role == "user" else None
            )
            steps.append((user, ContextTurn(role=role, text=text, session=si, date=date)))
            t += 1
        out.append(tuple(steps))
    return Turns(out)


def arc_turns(arc: Arc) -> Turns:
    return prepare_turns([(s.date, [(t.role, t.text) for t in s.turns]) for s in arc.sessions])


def run_sessions(
    system: MemorySystem,
    field: FieldSpec,
    sessions: list[tuple[dt.date, list[tuple[str, str]]]] | Turns,
    conversation_id: str,
    name: str | None = None,
) -> Trace:
    """The protocol over any dated sessions of (role, text) turns (or their ``prepare_turns``):
    an arc's or a natural conversation's (``conversation_id`` names the trace only; the system
    never sees it)."""
    prepared = sessions if isinstance(sessions, Turns) else prepare_turns(sessions)
    key = FieldKey.of(field)
    system.begin([field])
    context: list[ContextTurn] = []
    turns: list[TurnTrace] = []
    snapshots = []
    start_calls = system.calls
    t = 0
    for steps in prepared:
        for user, ctx in steps:
            if user is not None:
                read = system.read(key)
                before = system.calls
                events = system.process_turn(user, list(context))
                turns.append(
                    TurnTrace(
                        t=t,
                        session=user.session,
                        turn=user.turn,
                        read_before=read,
                        events=list(events),
                        calls=system.calls - before,
                    )
                )
            context.append(ctx)
            t += 1
        snapshots.append(system.snapshot(t - 1))
    return Trace(
        system=name or system.info.name,
        arc_id=conversation_id,
        key=key,
        turns=turns,
        end_read=system.read(key),
        snapshots=snapshots,
        calls=system.calls - start_calls,
        user_messages=len(turns),
    )


def plan_arc(system: MemorySystem, arc: Arc) -> int:
    """A dry run of ``run_arc``: count the extraction call of every user turn on the extractor's
    model (``model.planned``) when the system extracts with a model; returns the calls counted.
    Later calls (matching, resolution, checks) depend on what extraction finds: not counted."""
    extractor = getattr(system, "extractor", None)
    if not hasattr(extractor, "plan"):
        return 0
    context: list[ContextTurn] = []
    n, t = 0, 0
    for si, session in enumerate(arc.sessions):
        for ti, turn in enumerate(session.turns):
            if turn.role == "user":
                extractor.plan(
                    UserTurn(text=turn.text, session=si, turn=ti, date=session.date, t=t),
                    list(context),
                )
                n += 1
            context.append(
                ContextTurn(role=turn.role, text=turn.text, session=si, date=session.date)
            )
            t += 1
    return n
