"""The answer judge: which values a free-text answer asserts as the user's current value.

``get_answer_judge("offline")`` gives the newest offline rule file (heuristic, labelled so in every
report), ``"offline:answer_cues.vN"`` pins one, ``"provider:model"`` asks a model through the LLM
layer. Beside the judges: the hand-labelled dev set they are measured on (``devset``) and the
accuracy recorded from it, which reports quote (``accuracy``).

- ``base``: the question, the verdict and the interface; ``registry``: specs to judges
- ``offline``: rule file version 1, and the judge for version 2 on, read by ``scoped``
- ``scoped``, ``cues``, ``frames``: the version 2 reader, its rule file compiled, its table of frames
- ``llm``: the model judge (rubric ``answer_assertion``)
"""

from .base import ANSWER_CUES_DIR, AnswerJudge, AnswerQuestion, AnswerVerdict
from .registry import get_answer_judge, offline_answer_judge, offline_answer_version

# Resolved on first use (PEP 562): the rule readers, the model judge and the dev set cost an
# import only where they are used.
_LAZY = {
    "ANSWER_CUES_PATH": ("offline", None),
    "OfflineAnswerJudge": ("offline", None),
    "ScopedOfflineAnswerJudge": ("offline", None),
    "canonical_value": ("offline", None),
    "LLMAnswerJudge": ("llm", None),
    "AnswerSet": ("devset", None),
    "DevsetReport": ("devset", None),
    "load_answer_set": ("devset", None),
    "measure": ("devset", None),
    "MeasuredAccuracy": ("accuracy", None),
    "accuracy_line": ("accuracy", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ANSWER_CUES_DIR",
    "ANSWER_CUES_PATH",
    "AnswerJudge",
    "AnswerQuestion",
    "AnswerSet",
    "AnswerVerdict",
    "DevsetReport",
    "LLMAnswerJudge",
    "MeasuredAccuracy",
    "OfflineAnswerJudge",
    "ScopedOfflineAnswerJudge",
    "accuracy_line",
    "canonical_value",
    "get_answer_judge",
    "load_answer_set",
    "measure",
    "offline_answer_judge",
    "offline_answer_version",
]
