"""Model specs ``provider:model`` resolved through a registry every provider joins the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import BadInput, ModelSpecError
from ..workspace import Workspace
from .model import Model
from .ref import ModelRef

ProviderFactory = Callable[..., Model]
_PROVIDERS: dict[str, ProviderFactory] = {}
EXAMPLES = "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5"


_HIDDEN: set[str] = set()


def register_provider(name: str, factory: ProviderFactory, *, user_pickable: bool = True) -> None:
    """Make ``name:MODEL`` specs resolve to ``factory(MODEL, workspace=, base_url=, **options)``;
    ``user_pickable=False`` (a test double, e.g. the test suite's ``scripted``) keeps it out of
    what errors list."""
    _PROVIDERS[name] = factory
    (_HIDDEN.add if not user_pickable else _HIDDEN.discard)(name)


def providers() -> list[str]:
    return sorted(_PROVIDERS)


def is_test_double(provider: str) -> bool:
    """Whether ``provider`` is a test double (registered ``user_pickable=False``): it answers
    without HTTP, and nobody charges for its calls."""
    return provider in _HIDDEN


def get_model(
    spec: str | ModelRef,
    *,
    workspace: Workspace | str | Path | None = None,
    base_url: str | None = None,
    **options: Any,
) -> Model:
    """Resolve ``provider:model`` to a Model bound to ``workspace``'s cache and call log.

    ``base_url`` points ``openai:MODEL`` at any OpenAI-compatible server (vLLM, Ollama,
    llama.cpp). Unknown specs raise ``ModelSpecError``; a missing key raises ``MissingApiKey``.
    A ``ModelRef`` brings its own base URL and options (``options`` given here add to them).
    """
    if isinstance(spec, ModelRef):
        base_url = base_url or spec.base_url
        options = {**spec.options, **options}
        spec = spec.spec
    provider, sep, name = (spec or "").partition(":")
    if not sep or not name.strip() or provider not in _PROVIDERS:
        raise ModelSpecError(
            f"Unknown model {spec!r}: use provider:model (e.g. {EXAMPLES}); "
            f"providers: {', '.join(p for p in providers() if p not in _HIDDEN)}"
        )
    try:
        model = _PROVIDERS[provider](
            name.strip(), workspace=workspace, base_url=base_url, **options
        )
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "options"
        raise BadInput(f"Bad option {where!r} for {spec}: {err.get('msg')}") from None
    from .. import run_context

    if run_context.current().batch:  # a server without a batch API is refused before any work
        model.check_batch_api()
    return model


def _options(cls: type[Model], options: dict[str, Any]):
    return cls.Options(**options)


def _openai(name: str, *, workspace=None, base_url=None, **options) -> Model:
    from .openai_provider import OpenAIModel

    return OpenAIModel(
        name, workspace=workspace, base_url=base_url, options=_options(OpenAIModel, options)
    )


def _anthropic(name: str, *, workspace=None, base_url=None, **options) -> Model:
    from .anthropic_provider import AnthropicModel

    return AnthropicModel(
        name, workspace=workspace, base_url=base_url, options=_options(AnthropicModel, options)
    )


register_provider("openai", _openai)
register_provider("anthropic", _anthropic)
