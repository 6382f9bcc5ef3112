"""What one provider call takes and gives back (``Model.execute``'s request and raw reply), and
the rule that a dry run sends none.

``Request`` is the one list of a call's fields: ``Model.complete`` builds it from its arguments,
and the cache key (``cache``), each try (``asking``), a dry run's count (``planning``) and a
batch's calls (``batch``) read it from there.

Apart from ``model`` so that both ways a model reaches its provider -- ``Model.complete`` and
the pass-through products' calls take (``forwarding``) -- build on them without an import circle.
"""

from __future__ import annotations

import dataclasses
import hashlib

from pydantic import BaseModel, ConfigDict

from .. import run_context
from ._errors import DryRunCall


@dataclasses.dataclass(frozen=True)
class Request:
    """One completion request as a provider sees it."""

    prompt: str
    system: str | None = None
    schema: type[BaseModel] | None = None
    temperature: float = 0.0
    logprobs: bool = False
    top_logprobs: int = 0
    seed_key: str = ""
    purpose: str = ""
    strategy: str | None = None  # how to ask for ``schema`` (see ``structured.STRATEGIES``)
    max_tokens: int | None = None  # output budget; None: the provider's default

    @property
    def seed(self) -> int | None:
        """A provider sampling seed derived from ``seed_key`` (None when no key was given)."""
        if not self.seed_key:
            return None
        return int(hashlib.sha256(self.seed_key.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


class RawReply(BaseModel):
    """What ``execute`` returns: the provider's answer before validation."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    resolved_model: str = ""
    input_tokens: int = 0  # all input tokens, cached ones included
    output_tokens: int = 0
    cached_tokens: int = 0
    logprobs: list[dict[str, float]] | None = None
    refusal: str | None = None  # set when the model declined to answer
    truncated: bool = False  # stopped at the output token limit


def refuse_in_dry_run(label: str, purpose: str) -> None:
    """A dry run sends nothing: a call it reaches that the cache cannot answer stops it."""
    if run_context.current().dry_run:
        raise DryRunCall(
            f"{label}: a dry run sends nothing, and this step ({purpose or 'a call'}) "
            "needs an answer not in the workspace",
            purpose,
        )
