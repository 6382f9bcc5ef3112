"""Helpers for the memory tests: hand-built turns, a field, a classifier that answers from a script."""

from __future__ import annotations

import datetime as dt

import pytest

from agentmemgate.classify.classes import Distribution
from agentmemgate.memory import ContextTurn, UserTurn
from agentmemgate.schema import FieldSpec

FIELD = FieldSpec(
    attribute="grocery_store",
    description="The user's current grocery store.",
    probe_question="Which grocery store does the user currently shop at?",
)


class ScriptedClassifier:
    """Answers each statement with the evidence type its text is scripted to (default 'other')."""

    name = "scripted-classifier"
    kind = "evidence_type"
    family = "test"
    rubric_ref = "none"
    sha256 = ""

    def __init__(self, answers: dict[str, str] | None = None, default: str = "other"):
        self.answers = answers or {}
        self.default = default
        self.seen: list = []

    def classify(self, statement, run: int = 0) -> Distribution:
        self.seen.append(statement)
        label = next((v for k, v in self.answers.items() if k in statement.text), self.default)
        return Distribution(
            probs={
                label: 0.9,
                **{
                    c: 0.1 / 3
                    for c in ("speculation", "completed_event", "explicit_correction", "other")
                    if c != label
                },
            },
            method="scripted",
        )


def conversation(*user_texts: str, start: dt.date = dt.date(2024, 3, 1)):
    """(turn, context) pairs for user turns separated by a fixed assistant reply, one session each
    line unless a text starts with '|' (then it continues the previous session)."""
    out, context, t, session, turn_in_session = [], [], 0, -1, 0
    for text in user_texts:
        if text.startswith("|"):
            text = text[1:]
        else:
            session += 1
            turn_in_session = 0
        date = start + dt.timedelta(days=7 * session)
        out.append(
            (
                UserTurn(text=text, session=session, turn=turn_in_session, date=date, t=t),
                list(context),
            )
        )
        context.append(ContextTurn(role="user", text=text, session=session, date=date))
        context.append(ContextTurn(role="assistant", text="Noted.", session=session, date=date))
        t += 2
        turn_in_session += 2
    return out


@pytest.fixture
def field():
    return FIELD
