"""An arc's conversation as a memory system sees it: user turns in order, every earlier turn as context.

Takes the sessions only (``arc.sessions``), never the arc, so nothing of the arc's labels (level,
outcome, values, turn roles) can reach a system through this path.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..schema import Session
from .system import ContextTurn, UserTurn


def user_turns(sessions: list[Session]) -> Iterator[tuple[UserTurn, list[ContextTurn]]]:
    """(turn, context) for each user turn; ``t`` counts every turn of the conversation from 0."""
    context: list[ContextTurn] = []
    t = 0
    for s, session in enumerate(sessions):
        for i, turn in enumerate(session.turns):
            if turn.role == "user":
                yield (
                    UserTurn(text=turn.text, session=s, turn=i, date=session.date, t=t),
                    list(context),
                )
            context.append(
                ContextTurn(role=turn.role, text=turn.text, session=s, date=session.date)
            )
            t += 1
