"""The scorer's equivalence judge (value vs value) and the keys scores are stored under.

The equivalence judge is named like every judge: ``offline`` (heuristic rules, labelled so in every
report) or ``provider:model`` through the LLM layer (cache, call log, retries). It is the
validation room's (``validate.judges``), reused, with a memo so each distinct pair is asked once per
run. The answer judge (what a free-text answer asserts as the user's current value) is
``answer_judge``.
"""

from __future__ import annotations

import threading
from typing import Any

from ..answer_judge.base import AnswerJudge
from ..answer_judge.registry import offline_answer_version
from ..hashing import sha256_parts
from ..llm.ref import ModelRef
from ..schema import FieldSpec
from ..validate.judges import OFFLINE_JUDGE, Judge, JudgeInfo, get_judge
from ..validate.judges.questions import EquivalenceQuestion

# Part of every score key: a change to how measures or their stored reasons are computed
# re-scores stored traces and answers (no system is re-run; the judges' cache answers again).
# 2: reasons count sessions from 1 and every measure has one.
# 3: correction arcs keep their end read and whether the wrong value ended never valid.
# 4: premature writes (came-true plans read or answered as current before they came true).
SCORING_VERSION = 4


class ValueJudge:
    """``same(field, value, reference)`` through one equivalence judge, each pair asked once."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self._memo: dict[tuple[str, str, str, str], bool] = {}
        self._lock = threading.Lock()

    @property
    def info(self) -> JudgeInfo:
        return self.judge.info

    @property
    def rubric(self) -> str:
        return self.judge.rubric_ref("equivalence")

    @property
    def key(self) -> str:
        """Scores are stored under this: a judge (or rubric) change re-scores stored traces."""
        return sha256_parts(
            "equivalence",
            f"scoring-v{SCORING_VERSION}",
            self.judge.spec,
            self.judge.family,
            self.judge.rubric_sha256.get("equivalence", ""),
        )

    def same(self, field: FieldSpec, value: str | None, reference: str) -> bool:
        if value is None or not value.strip():
            return False
        k = (field.attribute, field.description, value, reference)
        with self._lock:
            hit = self._memo.get(k)
        if hit is not None:
            return hit
        # Position order is fixed per pair (not by role), so a position-biased judge is not
        # biased toward either the stored value or the reference.
        a, b = sorted((value, reference), key=lambda s: sha256_parts(s, value + reference))
        verdict = self.judge.ask(
            EquivalenceQuestion(
                field=field.attribute, description=field.description, first=a, second=b
            )
        )
        with self._lock:
            self._memo[k] = bool(verdict.equivalent)
        return bool(verdict.equivalent)


def get_value_judge(judge: str | ModelRef = OFFLINE_JUDGE, *, workspace: Any = None) -> ValueJudge:
    """The value-equivalence judge ``judge`` names (a spec, or a ``ModelRef`` with its base URL
    and model options)."""
    ref = ModelRef.parse(judge)
    if offline_answer_version(ref.spec) is not False:
        # ``offline:answer_cues.vN`` pins the answer rules; equivalence stays the offline judge
        ref = ModelRef(OFFLINE_JUDGE)  # the CLI refuses LLM options when no model uses them
    return ValueJudge(get_judge(ref, workspace=workspace))


def answers_key(value_judge: ValueJudge, answer_judge: AnswerJudge) -> str:
    """Answering systems' and answer sets' scores are stored under this: the judges, and the
    store readers' rules (products whose store is read are scored from it too)."""
    from .store_reading import load_cues

    return sha256_parts(
        value_judge.key,
        "answers",
        answer_judge.spec,
        answer_judge.family,
        answer_judge.rubric_sha256,
        load_cues().ref,
    )
