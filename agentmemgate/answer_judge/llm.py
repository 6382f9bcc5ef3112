"""The LLM answer judge: a model reads the answer through the rubric ``answer_assertion``.

It is shown only the field, its description, the probe question and the answer (never the arc's
labelled values), through the LLM layer (cache, call log, retries). Its reply is checked before it
counts: a copied format example or a value the answer does not contain is re-asked.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from ..llm.ref import ModelRef
from ..llm.structured import Prose, real_text
from ..schema import normalize_text
from .base import AnswerJudge, AnswerQuestion, AnswerVerdict

ANSWER_RUBRIC = "answer_assertion"
ANSWER_BUDGET = 400  # output tokens of one verdict: a few values and a sentence


def _not_placeholder(values: list[str]) -> list[str]:
    for v in values:
        if v.strip() and _PLACEHOLDER.match(v):
            real_text(v)  # raises "copies the format example (...)"
    # A small model (SmolLM2-135M) lists "I don't know" as the asserted value when it finds none:
    # that says nothing is asserted, so it is read as the empty list, not as a value.
    return [v for v in values if v.strip() and not _NO_VALUE.match(v)]


_NO_VALUE = re.compile(
    r"^\s*(?:i\s+(?:do\s*n[o']?t|dont)\s+know|i\s+have\s+no\s+record(?:\s+of\s+that)?"
    r"|unknown|none|nothing|no\s+(?:value|answer|record|information)|n/?a"
    r"|not\s+(?:stated|mentioned|known))\W*$",
    re.I,
)


_PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]{0,120}>|\.\.\.|…|value|x|y)\s*$", re.I)


class AssertionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asserted: Annotated[list[str], AfterValidator(_not_placeholder)]
    # minLength reaches a server's decoding grammar (llama-cpp-python's json_object): under it
    # SmolLM2-135M otherwise closed the rationale at once ("rationale": "").
    rationale: Annotated[Prose, Field(min_length=12)]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", normalize_text(text))


def assertion_schema(answer: str) -> type[AssertionAnswer]:
    """``AssertionAnswer`` that also refuses a value the answer does not contain (a small model
    invents values, "1.0", or copies the example's): each content word of every listed value
    must occur in the answer. The JSON schema and name are those of ``AssertionAnswer``, so the
    cache key does not depend on the answer twice."""
    have = set(_words(answer))

    class _Checked(AssertionAnswer):
        @field_validator("asserted")
        @classmethod
        def _in_answer(cls, values: list[str]) -> list[str]:
            for v in values:
                missing = [w for w in _words(v) if w not in have]
                if missing:
                    raise ValueError(
                        f"{v!r} is not in the answer ({', '.join(missing[:3])} "
                        "not found): list only values the answer itself gives, in "
                        "its words"
                    )
            return values

    _Checked.__name__ = _Checked.__qualname__ = "AssertionAnswer"
    return _Checked


class LLMAnswerJudge(AnswerJudge):
    heuristic = False

    def __init__(self, judge: str | ModelRef, *, workspace: Any = None, **llm_options: Any):
        """``judge``: a model spec or a ``ModelRef`` (its base URL and options go to the model;
        ``llm_options`` add to them)."""
        from .. import rubrics
        from ..errors import MissingApiKey
        from ..llm import get_model

        ref = ModelRef.parse(judge)
        spec = ref.spec
        try:
            self.model = get_model(ref, workspace=workspace, **llm_options)
        except MissingApiKey as e:
            raise e.for_flag("--judge", f"judge {spec}") from None
        self.spec, self.family = spec, self.model.family
        r = rubrics.load(ANSWER_RUBRIC)
        self._rubric = r
        self.rubric, self.rubric_sha256 = r.ref, r.sha256

    def prompt(self, q: AnswerQuestion) -> str:
        return self._rubric.render(
            field=q.field,
            description=q.description,
            probe_question=q.probe_question,
            answer=q.answer,
        )

    def plan(self, q: AnswerQuestion) -> bool:
        """Count the call ``ask`` would make (dry runs, ``model.planned``)."""
        return self.model.plan(
            self.prompt(q),
            schema=assertion_schema(q.answer),
            purpose="eval.answer",
            max_tokens=ANSWER_BUDGET,
        )

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        a = self.model.complete(
            self.prompt(q),
            schema=assertion_schema(q.answer),
            purpose="eval.answer",
            max_tokens=ANSWER_BUDGET,
        ).parsed
        return AnswerVerdict(asserted=[v for v in a.asserted if v.strip()], rationale=a.rationale)

    def usage(self) -> dict[str, int]:
        return self.model.usage.as_dict()
