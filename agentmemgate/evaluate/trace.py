"""What one system did on one arc, turn by turn: the record every measure and the viewer read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..memory.system import FieldKey, MemoryEvent, StoreSnapshot


class TurnTrace(BaseModel):
    """One user turn: the store read as it arrived (before processing), then what it caused."""

    model_config = ConfigDict(extra="forbid")
    t: int
    session: int
    turn: int
    read_before: str | None
    events: list[MemoryEvent] = []
    calls: int = 0  # component calls this turn made


class Trace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str
    arc_id: str
    key: FieldKey
    turns: list[TurnTrace]
    end_read: str | None  # the read at the end of the conversation
    snapshots: list[StoreSnapshot]  # after each session, in order; the last one is the end state
    calls: int
    user_messages: int

    def reads(self) -> list[tuple[int, str | None]]:
        """Every read as (position, value): one per user turn, then the end read at ``end``."""
        end = (self.snapshots[-1].t + 1) if self.snapshots else 0
        return [(tt.t, tt.read_before) for tt in self.turns] + [(end, self.end_read)]

    def events(self) -> list[MemoryEvent]:
        return [e for tt in self.turns for e in tt.events]
