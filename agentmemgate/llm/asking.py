"""One ``complete`` call across its tries, and the rules both ways of sending it follow: live
(``Model.complete``) and in a provider batch (``batch``).

A reply is read against the caller's schema (or ``parse``); an invalid one is asked again with
the problem sent back, with more room when a structured reply was cut off at its output budget;
after the last try the call fails with the last problem.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ._errors import CallFailed
from .request import RawReply, Request
from .structured import feedback, validate_reply

MAX_BUDGET = 16384  # the most a re-ask after a cut-off reply may raise the output budget to
DEFAULT_BUDGET = (
    2048  # for a call that states none: never generate to the context limit by omission
)

Parse = Callable[[str], Any]
"""A caller's reply parser for plain-text answers: returns the value or raises ValueError(problem)."""


@dataclasses.dataclass
class Asking:
    """One ``complete`` call across its tries: the question, what the next try asks, and how far
    it got (replies so far, call-log rows so far, the last reply's problem)."""

    key: str
    question: Request  # what the caller asked (its ``max_tokens``: the budget to start with)
    parse: Parse | None
    forced_budget: bool  # --max-tokens: the budget stays as given
    asked: str = ""  # what the next try sends: the prompt, or the re-ask with the problem
    budget: int = 0  # output tokens; raised after a structured reply was cut off
    note: str | None = None  # for the next try's call-log row (a re-ask, a strategy moved on)
    tries: int = 0  # replies received
    logged: int = 0  # call-log rows so far (attempt numbers run on across tries)
    problem: str = ""  # what was wrong with the last reply

    def __post_init__(self) -> None:
        self.asked = self.asked or self.question.prompt
        self.budget = self.budget or self.question.max_tokens or DEFAULT_BUDGET

    @property
    def schema(self) -> Any:
        return self.question.schema

    def request(self, prompt: str, strategy: str | None) -> Request:
        """The request of the next try: ``prompt`` as sent (the re-ask and the strategy's
        instructions included), in ``strategy``, with the budget of the moment."""
        return dataclasses.replace(
            self.question,
            prompt=prompt,
            strategy=strategy if self.schema is not None else None,
            max_tokens=self.budget,
        )


def check(text: str, schema: Any, parse: Parse | None) -> tuple[Any, str | None]:
    """(parsed, None) or (None, one-line reason) for a reply."""
    if schema is not None:
        return validate_reply(text, schema)
    if parse is not None:
        try:
            return parse(text), None
        except ValueError as e:
            return None, str(e) or "the reply could not be read"
    return None, None


def read_reply(
    ask: Asking, raw: RawReply, hint: Callable[[], str] | None = None
) -> tuple[Any, str | None]:
    """(parsed, None) for a valid reply, else (None, the problem as the re-ask states it).
    ``hint``: what to check when a reply is empty (the provider's advice), if anything."""
    parsed, problem = check(raw.text, ask.schema, ask.parse)
    if problem is not None and not raw.text.strip():
        problem = "the reply is empty"
        if hint is not None and (said := hint()):
            problem += f" ({said})"
    if problem is not None and raw.truncated:
        problem += f" (the reply was cut off at the output token limit of {ask.budget} tokens" + (
            ": raise --max-tokens)" if ask.forced_budget or not ask.budget else ")"
        )
    return parsed, problem


def reask(ask: Asking, raw: RawReply, problem: str) -> None:
    """Set up the next try after an invalid reply: the problem sent back with the reply, and
    more room for a structured reply that was cut off."""
    ask.problem = problem
    ask.asked = feedback(ask.question.prompt, problem, raw.text)
    ask.note = f"re-ask {ask.tries + 1}: the problem was sent back"
    if (
        raw.truncated
        and ask.schema is not None
        and ask.budget
        and not ask.forced_budget
        and ask.budget < MAX_BUDGET
    ):  # a cut-off one-word answer rambled: no more room
        ask.budget = min(ask.budget * 2, MAX_BUDGET)
        ask.note += f"; output budget raised to {ask.budget} tokens"


def gave_up(label: str, ask: Asking, tries: int, problem: str) -> CallFailed:
    """The failure of a call whose every try brought an invalid reply."""
    what = ask.schema.__name__ if ask.schema else "reply"
    return CallFailed(
        f"{label} gave no valid {what} in {tries} tr{'y' if tries == 1 else 'ies'}: {problem}",
        kind="invalid_output",
        problem=problem,
    )
