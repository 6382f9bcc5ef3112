"""Stage 2 with an LLM (rubric ``hedge_extract``): keep or reject each prefilter hit.

The model's span must be a verbatim part of the turn (checked here, up to whitespace and case); a
kept answer whose span is not found is recorded as rejected with that reason, never silently
rewritten. A reply whose every field holds the same text, or with no real reason, or whose
hedge level is not one of the design's, is invalid output (re-asked with the problem, then a
recorded failure). The hedge levels, with their definitions, are those of the workspace's design
(its plan-wording factor without the control). Answers are cached in the workspace, so a re-run
repeats no finished call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, create_model, field_validator

from .. import rubrics
from ..design import Design, Factor
from ..design.stored import workspace_design
from ..errors import BadInput
from ..llm import Failed, get_model, run_concurrent
from ..llm._errors import shorten
from ..llm.ref import ModelRef
from ..llm.structured import Prose
from ..workspace import Workspace
from .context import format_context
from .model import Candidate, Extraction


class HedgeAnswer(BaseModel):
    """The JSON the model must return (validated; invalid replies are re-asked by the LLM layer)."""

    model_config = ConfigDict(extra="forbid")
    keep: bool
    span: str | None
    attribute: str | None
    plan_value: str | None
    hedge_level: str | None  # one of the design's levels: ``answer_schema`` narrows it
    reason: Prose


@lru_cache(maxsize=16)
def answer_schema(levels: tuple[str, ...], design: str = "paper") -> type[HedgeAnswer]:
    """``HedgeAnswer`` whose ``hedge_level`` must be one of ``levels`` (a JSON Schema enum the
    server can enforce; a reply outside it is invalid output, re-asked then recorded, naming the
    level it gave and the design's)."""

    def known(value):
        if value is not None and value not in levels:
            raise ValueError(
                f"{value!r} is not a hedge level of design {design!r}; choose one "
                f"of: {', '.join(levels)}"
            )
        return value

    return create_model(
        "HedgeAnswer",
        __base__=HedgeAnswer,
        __doc__=HedgeAnswer.__doc__,
        __validators__={"_known": field_validator("hedge_level", mode="before")(known)},
        hedge_level=(Literal[levels] | None, ...),
    )  # type: ignore[valid-type]


def hedge_factor(design: Design) -> Factor:
    """The design's plan-wording factor, whose levels the LLM miner labels plans with."""
    factor = design.by_role("plan_wording")
    if factor is None or not [lv for lv in factor.levels if not lv.control]:
        raise BadInput(
            f"Design {design.name!r} has no plan-wording factor (a factor with "
            f"role = \"plan_wording\" and a level that is not a control): the LLM "
            "miner labels each plan with one of its levels"
        )
    return factor


def level_lines(design: Design) -> str:
    """The rubric's list of hedge levels: each non-control level of the plan-wording factor,
    in the design's order, with its definition."""
    return "\n".join(
        f"  {lv.name}: {lv.definition}" for lv in hedge_factor(design).levels if not lv.control
    )


NO_PREFILTER = "(none: no keyword filter ran on this turn (--prefilter none); read the whole turn)"
# A turn only the lexicon's turn model passed (cues.v3 on) has no cue phrase: say so, so the
# model does not look for one in the sentences listed.
MODEL_ONLY = (
    "(no cue phrase here: a word model over the whole turn flagged it; read the whole turn)"
)
MAX_TOKENS = 300  # a short JSON object: a span copied from one turn, a few words, a reason


def find_verbatim(span: str, turn: str) -> str | None:
    """The turn's own text for ``span`` (exact, else whitespace/case-insensitive), or None."""
    span = span.strip().strip('"\u201c\u201d')
    if not span:
        return None
    if span in turn:
        return span
    words = [re.escape(w) for w in span.split()]
    m = re.search(r"\s+".join(words), turn, re.IGNORECASE)
    return turn[m.start() : m.end()] if m else None


class LLMExtractor:
    kind = "LLM"

    def __init__(
        self,
        miner: str | ModelRef,
        *,
        workspace: Workspace,
        concurrency: int = 4,
        progress: bool = True,
        model=None,
        design: Design | None = None,
        **model_options,
    ):
        """``miner``: a model spec or a ``ModelRef`` (its base URL and options go to the model;
        ``model_options`` add to them)."""
        self.design = workspace_design(workspace, design)
        factor = hedge_factor(self.design)
        self.levels = tuple(lv.name for lv in factor.levels if not lv.control)
        self.schema = answer_schema(self.levels, self.design.name)
        self.hedge_levels = level_lines(self.design)
        self.model = model or get_model(miner, workspace=workspace, **model_options)
        self.rubric = rubrics.load("hedge_extract")
        self.name = f"{self.model.spec}/{self.rubric.ref}"
        self.concurrency = concurrency
        self.progress = progress

    def prompt(self, cand: Candidate) -> str:
        return self.rubric.fill(
            speaker=cand.speaker,
            context=format_context(cand.context),
            turn=cand.turn_text,
            hedge_levels=self.hedge_levels,
            cue_sentences=self._cue_sentences(cand),
        )

    @staticmethod
    def _cue_sentences(cand: Candidate) -> str:
        listed = "\n".join(f"- {s}" for s in cand.cue_sentences())
        if not listed:
            return NO_PREFILTER
        if cand.model_only:
            return f"{listed}\n{MODEL_ONLY}"
        return listed

    def plan(self, cand: Candidate) -> bool:
        """Count the call ``extract`` would make (dry runs); True unless it is cached."""
        return self.model.plan(
            self.prompt(cand),
            schema=self.schema,
            temperature=0.0,
            seed_key=cand.id,
            max_tokens=MAX_TOKENS,
        )

    def extract(self, cand: Candidate) -> Extraction:
        resp = self.model.complete(
            self.prompt(cand),
            schema=self.schema,
            temperature=0.0,
            purpose="mine.hedge_extract",
            seed_key=cand.id,
            max_tokens=MAX_TOKENS,
        )
        a: HedgeAnswer = resp.parsed
        fallback = (cand.cue_sentences() or [cand.turn_text])[0]
        calls = dict(llm_calls=1, cached_calls=int(resp.cached), strategy=resp.strategy)
        if not a.keep:
            return Extraction(
                kept=False, text=fallback, reject_reason=shorten(f"model: {a.reason}"), **calls
            )
        span = find_verbatim(a.span or "", cand.turn_text)
        if span is None or not a.plan_value or not a.hedge_level:
            why = (
                "span not verbatim in the turn" if span is None else "no plan value or hedge level"
            )
            return Extraction(
                kept=False, text=fallback, reject_reason=f"model answer unusable: {why}", **calls
            )
        return Extraction(
            kept=True,
            text=span,
            attribute=a.attribute,
            plan_value=a.plan_value.strip(),
            hedge_level=a.hedge_level,
            **calls,
        )

    def extract_many(self, candidates: list[Candidate], on_result: Callable[..., None]) -> None:
        for result in run_concurrent(
            lambda c: (c, self.extract(c)),
            candidates,
            concurrency=self.concurrency,
            description=f"Stage 2 ({self.model.display})",
            usage=self.model.usage,
            progress=self.progress,
        ):
            if isinstance(result, Failed):
                on_result(result.item, None, result.error, result.kind)
            else:
                on_result(result[0], result[1], None)
