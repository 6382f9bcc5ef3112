"""``full-context``: what a long-context assistant does -- no store; the model answers the probe
from the whole conversation so far (every session, with its date, every turn with its role),
through the fixed rubric ``rubrics/answer_full_context.v1.txt``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from .. import rubrics
from ..memory.answering import AnsweringSystem, ProbeAnswer, SessionInput
from ..memory.system import SystemInfo
from ._base import make_model, provenance
from .answer import ANSWER_MAX_TOKENS
from .contract import Answering, AnsweringOptions

RUBRIC, VERSION = "answer_full_context", 1


def transcript(sessions: list[SessionInput]) -> str:
    out = []
    for s in sessions:
        out.append(f"Session {s.index + 1} ({s.date.isoformat()})")
        out += [f"{t.role}: {' '.join(t.text.split())}" for t in s.turns]
        out.append("")
    return "\n".join(out).strip() or "(no conversation yet)"


def _prompt(sessions: list[SessionInput], question: str, date: dt.date) -> str:
    return rubrics.load(RUBRIC, VERSION).render(
        transcript=transcript(sessions), question=question, date=date.isoformat()
    )


class FullContext(AnsweringSystem):
    def __init__(self, info: SystemInfo, model: Any):
        self.info, self.model = info, model
        self.sessions: list[SessionInput] = []
        self._calls = 0

    def begin(self, namespace: str) -> None:
        self.sessions = []

    def ingest(self, session: SessionInput) -> None:
        self.sessions.append(session)

    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        self._calls += 1
        text = self.model.complete(
            _prompt(self.sessions, question, date),
            purpose="products.full_context",
            max_tokens=ANSWER_MAX_TOKENS,
        ).text.strip()
        return ProbeAnswer(answer=text, retrieved=[])

    def plan(self, sessions: list[SessionInput], question: str, date: dt.date) -> bool:
        return self.model.plan(_prompt(sessions, question, date), max_tokens=ANSWER_MAX_TOKENS)

    @property
    def calls(self) -> int:
        return self._calls


def build(options: AnsweringOptions) -> Answering:
    model = make_model(options)
    r = rubrics.load(RUBRIC, VERSION)
    info = SystemInfo(
        name="full-context",
        description="long-context baseline: no store; the model "
        "answers each probe from the whole conversation so far",
        gated=False,
        components={
            "store": "none (whole conversation in the prompt)",
            "answerer": f"{r.ref} on {options.model}",
        },
        offline=False,
    )
    return Answering(
        info=info,
        factory=lambda: FullContext(info, model),
        model=options.model,
        provenance=provenance(
            "full-context (baseline)",
            model=options.model,
            answer_prompt=r.ref,
            answer_prompt_sha256=r.sha256,
        ),
        source=Path(__file__),
        usage=lambda: model.usage.as_dict(),
    )
