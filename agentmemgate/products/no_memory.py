"""``no-memory``: the floor -- the model answers the probe with no memories at all, through the
same answer rubric the products use (``rubrics/product_answer.v1.txt``, memories: none)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ..memory.answering import AnsweringSystem, ProbeAnswer, SessionInput
from ..memory.system import SystemInfo
from ._base import make_model, provenance
from .answer import answer_probe, answer_provenance, plan_probe
from .contract import Answering, AnsweringOptions


class NoMemory(AnsweringSystem):
    def __init__(self, info: SystemInfo, model: Any):
        self.info, self.model, self._calls = info, model, 0

    def begin(self, namespace: str) -> None:
        pass

    def ingest(self, session: SessionInput) -> None:
        pass  # remembers nothing

    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        self._calls += 1
        return ProbeAnswer(answer=answer_probe(self.model, question, date, []), retrieved=[])

    def plan(self, sessions: list[SessionInput], question: str, date: dt.date) -> bool:
        return plan_probe(self.model, question, date, [])

    @property
    def calls(self) -> int:
        return self._calls


def build(options: AnsweringOptions) -> Answering:
    model = make_model(options)
    prompt = answer_provenance()
    info = SystemInfo(
        name="no-memory",
        description="floor baseline: the model answers each probe with no memories",
        gated=False,
        components={"store": "none", "answerer": f"{prompt['answer_prompt']} on {options.model}"},
        offline=False,
    )
    return Answering(
        info=info,
        factory=lambda: NoMemory(info, model),
        model=options.model,
        provenance=provenance("no-memory (baseline)", model=options.model, **prompt),
        source=Path(__file__),
        usage=lambda: model.usage.as_dict(),
    )
