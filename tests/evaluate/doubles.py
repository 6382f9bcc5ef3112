"""Hand-written memory systems and hand-built arcs, so the measures are tested without any real
system: each double does exactly what its script says at each user turn, and each arc is small
enough to work its right answers out by hand."""

from __future__ import annotations

import datetime as dt

from agentmemgate.memory.system import (
    FieldKey,
    FieldState,
    MemoryEvent,
    MemorySystem,
    StagedState,
    StoreSnapshot,
    SystemInfo,
    ValueInterval,
)
from agentmemgate.schema import Arc, ArcSpec, FieldSpec, Provenance, Session, Turn, TurnRef

FIELD = FieldSpec(
    attribute="music_app",
    description="The user's current music app.",
    probe_question="Which music app does the user currently use?",
)


def info(name: str, gated: bool, twin: str | None = None, **kw) -> SystemInfo:
    kw.setdefault("components", {"extractor": "script (test double)"})
    return SystemInfo(
        name=name, description=f"test double {name}", gated=gated, ungated_twin=twin, **kw
    )


class ScriptedSystem(MemorySystem):
    """At the i-th user turn (0-based) perform ``script[i]``: a list of actions

    ("commit", v[, {"matched_by_retry": ..., "evidence_type": ...}]) ("correct", v) ("stage", v) ("promote",) ("discard",) ("plan", v) ("drop", v)

    ``calls_per_turn`` component calls are counted per user turn (plus one per staged item
    pending at the turn, like a checker)."""

    def __init__(
        self,
        script: dict[int, list[tuple]],
        system_info: SystemInfo,
        calls_per_turn: int = 1,
        seen: list | None = None,
    ):
        self.info = system_info
        self.script = script
        self.calls_per_turn = calls_per_turn
        self.seen = seen  # what the protocol sent (blindness tests)
        self._calls = 0
        self.i = 0

    def begin(self, fields):
        assert len(fields) == 1
        self.key = FieldKey.of(fields[0])
        self.current: str | None = None
        self.history: list[ValueInterval] = []
        self.staged: list[StagedState] = []
        if self.seen is not None:
            self.seen.append(("begin", fields))

    def _write(self, value: str, t: int, via: str = "commit", plan: bool = False) -> None:
        for h in self.history:
            if h.t_end is None:
                h.t_end = t
                if via == "correction":
                    h.never_valid = True
        self.history.append(ValueInterval(value=value, t_begin=t, via=via, plan=plan))
        if not plan:
            self.current = value

    def process_turn(self, turn, context):
        if self.seen is not None:
            self.seen.append(("turn", turn, context))
        events: list[MemoryEvent] = []
        self._calls += self.calls_per_turn + sum(s.status == "pending" for s in self.staged)
        for action in self.script.get(self.i, []):
            kind = action[0]
            if kind == "commit":
                self._write(action[1], turn.t)
                how = action[2] if len(action) > 2 else {}  # matched_by_retry, evidence_type
                events.append(
                    MemoryEvent(kind="committed", t=turn.t, key=self.key, value=action[1], **how)
                )
            elif kind == "correct":
                self._write(action[1], turn.t, via="correction")
                events.append(
                    MemoryEvent(kind="corrected", t=turn.t, key=self.key, value=action[1])
                )
            elif kind == "plan":
                self._write(action[1], turn.t, plan=True)
                events.append(
                    MemoryEvent(kind="plan_committed", t=turn.t, key=self.key, value=action[1])
                )
            elif kind == "stage":
                self.staged.append(
                    StagedState(
                        key=self.key,
                        value=action[1],
                        confirm_when="done",
                        abandon_when="dropped",
                        staged_at=turn.t,
                    )
                )
                events.append(
                    MemoryEvent(
                        kind="staged",
                        t=turn.t,
                        key=self.key,
                        value=action[1],
                        confirm_when="done",
                        abandon_when="dropped",
                    )
                )
            elif kind in ("promote", "discard"):
                item = next(s for s in self.staged if s.status == "pending")
                item.status = "promoted" if kind == "promote" else "discarded"
                item.resolved_at = turn.t
                if kind == "promote":
                    self._write(item.value, turn.t, via="promotion")
                events.append(
                    MemoryEvent(
                        kind="promoted" if kind == "promote" else "discarded",
                        t=turn.t,
                        key=self.key,
                        value=item.value,
                    )
                )
            elif kind == "drop":
                events.append(MemoryEvent(kind="dropped_no_field", t=turn.t))
        self.i += 1
        return events

    def read(self, key):
        return self.current if key == self.key else None

    def snapshot(self, t):
        return StoreSnapshot(
            t=t,
            fields=[
                FieldState(
                    key=self.key,
                    current=self.current,
                    history=[h.model_copy() for h in self.history],
                )
            ],
            staged=[s.model_copy() for s in self.staged],
        )

    @property
    def calls(self):
        return self._calls


def factory(script: dict[int, list[tuple]], system_info: SystemInfo, **kw):
    def make(**_truth):
        return ScriptedSystem(script, system_info, **kw)

    make.info = system_info
    return make


def make_arc(
    arc_id: str,
    outcome: str,
    sessions: list[list[str]],
    *,
    plan: tuple[int, int],
    outcome_turn: tuple[int, int] | None = None,
    pending: tuple[int, int] | None = None,
    initial: tuple[int, int] = (0, 0),
    split: str = "core",
    level: str | None = None,
    factor: str = "outcome",
    pending_window: bool = True,
    initial_value: str = "Pandora",
    plan_value: str = "Deezer",
    expected: list[str] | None = None,
) -> Arc:
    """Sessions are lists of turn texts, alternating user/assistant, starting with the user."""
    n = len(sessions)
    start = dt.date(2024, 1, 1)
    dates = [start + dt.timedelta(days=7 * i) for i in range(n)]
    if expected is None:
        if outcome == "came_true":
            expected = [
                plan_value if outcome_turn and i >= outcome_turn[0] else initial_value
                for i in range(n)
            ]
        elif outcome == "control":
            expected = [plan_value if i >= plan[0] else initial_value for i in range(n)]
        else:
            expected = [initial_value] * n
    spec = ArcSpec(
        id=arc_id,
        split=split,
        factor=factor,
        level=level or outcome.replace("control", "completed_change"),
        outcome=outcome,
        field=FIELD,
        domain="music_app",
        initial_value=initial_value,
        plan_value=plan_value,
        plan_wording="weakly_hedged" if outcome != "control" else "completed_change",
        confirmation_wording="verbatim" if outcome == "came_true" else None,
        session_dates=dates,
        pending_window=pending_window,
        seed=0,
        plan_seed=0,
    )
    return Arc(
        spec=spec,
        sessions=[
            Session(
                date=d,
                turns=[
                    Turn(role="user" if i % 2 == 0 else "assistant", text=t)
                    for i, t in enumerate(texts)
                ],
            )
            for d, texts in zip(dates, sessions)
        ],
        initial_turn=TurnRef(session=initial[0], turn=initial[1]),
        plan_turn=TurnRef(session=plan[0], turn=plan[1]),
        outcome_turn=TurnRef(session=outcome_turn[0], turn=outcome_turn[1])
        if outcome_turn
        else None,
        pending_turn=TurnRef(session=pending[0], turn=pending[1]) if pending else None,
        expected_value_after_session=expected,
        provenance=Provenance(
            generator="hand-built",
            generator_kind="test",
            prompt_sha256="",
            seed=0,
            toolkit_version="test",
        ),
    )
