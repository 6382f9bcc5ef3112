"""One way for the rule-version tests to put an answer to a judge."""

from __future__ import annotations

from agentmemgate.answer_judge import AnswerQuestion


def asker(field: str, values: tuple[str, ...]):
    """``ask(judge, answer, values=values)``: the judge's verdict on one answer to ``field``."""

    def ask(judge, answer, values=values):
        return judge.ask(
            AnswerQuestion(
                field=field, description="d", probe_question="q", answer=answer, candidates=values
            )
        )

    return ask
