"""The one answer call every product and baseline makes after its own retrieval (Appendix A.7).

``answer_probe(model, question, date, retrieved)`` renders the fixed, versioned rubric
``rubrics/product_answer.v1.txt`` with the retrieved memories, the probe question and the date --
nothing else reaches the model -- and returns the model's plain-text answer. The rubric's sha256
goes into every system's provenance (``answer_provenance``), so a changed prompt is a new run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from .. import rubrics
from ..memory.answering import Retrieved

ANSWER_RUBRIC = "product_answer"
ANSWER_VERSION = 1
ANSWER_MAX_TOKENS = 200  # one or two sentences; --max-tokens overrides it
NO_MEMORIES = "(no memories were retrieved)"


def answer_rubric() -> rubrics.Rubric:
    return rubrics.load(ANSWER_RUBRIC, ANSWER_VERSION)


def format_memories(retrieved: Sequence[Retrieved]) -> str:
    """One numbered line per memory, with its validity interval when the system gives one."""
    if not retrieved:
        return NO_MEMORIES
    lines = []
    for i, r in enumerate(retrieved, 1):
        when = []
        if r.valid_at:
            when.append(f"true from {r.valid_at}")
        if r.invalid_at:
            when.append(f"no longer true from {r.invalid_at}")
        text = " ".join(r.text.split())
        lines.append(f"{i}. {text}" + (f" ({'; '.join(when)})" if when else ""))
    return "\n".join(lines)


def answer_probe(model: Any, question: str, date: dt.date, retrieved: Sequence[Retrieved]) -> str:
    """One call of ``model`` (an ``llm.Model``): the answer to ``question`` asked on ``date``
    from ``retrieved`` only, as plain text."""
    prompt = answer_rubric().render(
        memories=format_memories(retrieved), question=question, date=date.isoformat()
    )
    return model.complete(
        prompt, purpose="products.answer", max_tokens=ANSWER_MAX_TOKENS
    ).text.strip()


def plan_probe(model: Any, question: str, date: dt.date, retrieved: Sequence[Retrieved]) -> bool:
    """``answer_probe`` in a dry run: the call counted on ``model.planned``, not made."""
    prompt = answer_rubric().render(
        memories=format_memories(retrieved), question=question, date=date.isoformat()
    )
    return model.plan(prompt, max_tokens=ANSWER_MAX_TOKENS)


def answer_provenance() -> dict[str, str]:
    """What a system's provenance records of the answer prompt."""
    r = answer_rubric()
    return {"answer_prompt": r.ref, "answer_prompt_sha256": r.sha256}


__all__ = [
    "ANSWER_RUBRIC",
    "NO_MEMORIES",
    "answer_probe",
    "answer_provenance",
    "answer_rubric",
    "format_memories",
    "plan_probe",
]
