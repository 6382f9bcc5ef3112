"""A model reference: what names a model, parsed once and passed whole.

    ref = ModelRef.parse("openai:qwen2.5-7b", base_url="http://localhost:8000/v1",
                         options={"timeout": 300})
    ref.offline    # False: a model answers (True for offline, offline:NAME.vN, offline-rules)
    ref.family     # "openai-compatible:localhost:8000": the cross-family rule's name for it
    get_model(ref, workspace=ws)

A spec is ``offline`` (the offline rules, templates and heuristics; ``offline:NAME.vN`` pins a
version of a rule file, ``offline-NAME`` names another offline backend) or ``provider:model``.
Which offline names a room accepts, and which providers exist, is for the room's registry and
``get_model`` to say: they raise the one-line errors for a bad spec when it is used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from .servers import family_of

OFFLINE = "offline"


@dataclasses.dataclass(frozen=True)
class ModelRef:
    """A model spec with the base URL and the options (``timeout``, ``max_tokens``,
    ``structured_output``, ``price`` ...) its calls are made with."""

    spec: str = OFFLINE
    base_url: str | None = None
    options: Mapping[str, Any] = dataclasses.field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", self.spec or "")
        object.__setattr__(self, "base_url", self.base_url or None)
        object.__setattr__(self, "options", MappingProxyType(dict(self.options or {})))

    @classmethod
    def parse(
        cls,
        spec: str | ModelRef | None,
        base_url: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ModelRef:
        """``spec`` as a reference (a reference as it is, unless ``base_url`` or ``options``
        are given to replace its own); an empty spec is offline."""
        if isinstance(spec, ModelRef):
            if base_url is None and options is None:
                return spec
            return spec.replace(
                base_url=base_url if base_url is not None else spec.base_url,
                options=options if options is not None else spec.options,
            )
        return cls(spec or "", base_url, options or {})

    @classmethod
    def each(
        cls,
        specs: Iterable[str | ModelRef],
        base_url: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> list[ModelRef]:
        """Several models sharing one server and one set of options (``--judge X --judge Y
        --judge-base-url URL``): the ones given as specs get ``base_url`` and ``options``;
        references are kept as they are. Which of them a base URL may reach (``openai:`` ones
        only) is for the room that makes the models to say."""
        return [s if isinstance(s, ModelRef) else cls.parse(s, base_url, options) for s in specs]

    def replace(self, **changes: Any) -> ModelRef:
        """A copy with ``changes`` (``spec``, ``base_url``, ``options``)."""
        return dataclasses.replace(self, **changes)

    @property
    def provider(self) -> str:
        """The part before the colon (``openai``; ``offline`` for ``offline:NAME.vN``)."""
        return self.spec.partition(":")[0]

    @property
    def name(self) -> str | None:
        """The part after the colon (the model's name), None for a spec without one."""
        _, sep, name = self.spec.partition(":")
        return name if sep else None

    @property
    def offline(self) -> bool:
        """Whether no model answers: an empty spec, ``offline``, ``offline:NAME.vN`` or an
        offline backend's own name (``offline-rules``)."""
        p = self.provider
        return not self.spec or p == OFFLINE or p.startswith(OFFLINE + "-")

    @property
    def is_model(self) -> bool:
        """Whether the spec names a model (``provider:model``, not an offline backend)."""
        return not self.offline and self.name is not None

    @property
    def family(self) -> str:
        """The family the cross-family rule compares: the provider, or for an ``openai:`` model
        at a base URL the server (``llm.servers.family_of``); an offline spec's own name before
        any colon (an offline renderer or judge reports a family of its own)."""
        at = self.base_url if self.provider == "openai" and not self.offline else None
        return family_of(self.provider, at)

    def model_options(self) -> dict[str, Any]:
        """The options a model is made with; none for an offline spec."""
        return {} if self.offline else dict(self.options)

    def __str__(self) -> str:
        return self.spec
