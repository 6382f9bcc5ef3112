"""Answer judge specs to judges: ``offline`` (the newest rule file), ``offline:answer_cues.vN``
(one pinned) and ``provider:model``.

Kept apart from ``base`` (the interface the judges subclass), so the interface never imports its
own implementations.
"""

from __future__ import annotations

from typing import Any

from ..llm.ref import ModelRef
from ..registry import offline_version
from ..validate.judges import OFFLINE_JUDGE
from ..versioned import versioned_file
from .base import ANSWER_CUES_DIR, AnswerJudge


def offline_answer_version(spec: str) -> int | None | bool:
    """``None`` for ``offline`` (the newest rules), N for ``offline:answer_cues.vN``, False for a
    spec that names no offline answer rules (a model spec)."""
    return offline_version(spec, "answer_cues")


def offline_answer_judge(version: int | None = None) -> AnswerJudge:
    """The offline answer rules ``answer_cues.vN.toml`` (the newest when ``version`` is None):
    v1 read by ``OfflineAnswerJudge`` (unchanged), v2 on by ``ScopedOfflineAnswerJudge``.
    ``spec`` is ``offline`` for the newest rules and ``offline:answer_cues.vN`` when pinned;
    ``rubric`` names the file's version either way."""
    from .offline import OfflineAnswerJudge, ScopedOfflineAnswerJudge

    v, path = versioned_file(
        ANSWER_CUES_DIR, "answer_cues", "toml", version, "offline answer rules"
    )
    judge: AnswerJudge = OfflineAnswerJudge(path) if v == 1 else ScopedOfflineAnswerJudge(v, path)
    judge.spec = OFFLINE_JUDGE if version is None else f"offline:answer_cues.v{v}"
    return judge


def get_answer_judge(
    judge: str | ModelRef = OFFLINE_JUDGE,
    *,
    workspace: Any = None,
    **llm_options: Any,
) -> AnswerJudge:
    """``offline`` (the newest answer rules), ``offline:answer_cues.vN`` (pinned: v1 stays
    selectable, so results stored under it reproduce) or a model, as a spec or a ``ModelRef``
    (its base URL and model options go to the model; ``llm_options`` add to them)."""
    ref = ModelRef.parse(judge)
    spec = ref.spec
    version = offline_answer_version(spec)
    if version is not False:
        return offline_answer_judge(version)
    if ref.offline:
        from ..errors import BadInput

        raise BadInput(
            f"Unknown offline answer judge {spec!r}; use offline (the newest rules) or "
            "offline:answer_cues.vN (N a released version, e.g. offline:answer_cues.v1)"
        )
    from .llm import LLMAnswerJudge

    return LLMAnswerJudge(ref, workspace=workspace, **llm_options)
