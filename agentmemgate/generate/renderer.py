"""The renderer interface: turn an ``ArcSpec`` into an ``Arc``.

The offline template renderer and the LLM generators both implement it; ``generate.run`` drives
any renderer the same way (resume, progress, failures).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Iterable, Iterator

from pydantic import BaseModel, ConfigDict

from ..errors import ModelSpecError
from ..schema import Arc, ArcSpec


class RenderFailure(BaseModel):
    """An arc the renderer could not produce after its retries; the run goes on."""

    model_config = ConfigDict(extra="forbid")
    spec_id: str
    reason: str
    attempts: int


class Renderer(ABC):
    """Realizes specs as conversations. ``family`` feeds the judges' cross-family rule."""

    name: str = "renderer"
    family: str = "unknown"
    kind: str = "unknown"  # shown in provenance and the dataset card
    prompt_sha256: str = ""

    @abstractmethod
    def render(self, spec: ArcSpec) -> Arc:
        """Render one arc, or raise ``RenderError`` with the reason."""

    def render_many(self, specs: Iterable[ArcSpec]) -> Iterator[Arc | RenderFailure]:
        """Yield one result per spec as each finishes; LLM renderers run these concurrently."""
        for spec in specs:
            try:
                yield self.render(spec)
            except RenderError as e:
                yield RenderFailure(spec_id=spec.id, reason=str(e), attempts=e.attempts)

    def usage(self) -> dict[str, int]:
        """Counters for the progress bar and summary (calls, cache_hits, failures, tokens)."""
        return {}

    def planned_calls(self, specs: list[ArcSpec]) -> int:
        """How many model calls rendering ``specs`` would make (``--dry-run``)."""
        return 0


class RenderError(Exception):
    """A single arc failed to render; carries how many attempts were made."""

    def __init__(self, reason: str, attempts: int = 1):
        super().__init__(reason)
        self.attempts = attempts


# -- registry ----------------------------------------------------------------------------------
# A generator spec is "offline" or "provider:model". Each renderer module registers its factory
# (spec, **options) -> Renderer when imported (``generate/__init__`` imports the built-in ones),
# as the LLM providers register with ``llm.registry``; this module imports none of them.
RendererFactory = Callable[..., Renderer]
_FACTORIES: dict[str, RendererFactory] = {}
_HIDDEN: set[str] = set()


def register_renderer(prefix: str, factory: RendererFactory, *, user_pickable: bool = True) -> None:
    """Make ``--generator PREFIX`` (or ``PREFIX:MODEL``) resolve to ``factory``.

    ``user_pickable=False`` keeps a test-only renderer (``scripted``) out of the choices that
    error messages list; it still resolves.
    """
    _FACTORIES[prefix] = factory
    (_HIDDEN.add if not user_pickable else _HIDDEN.discard)(prefix)


_LOADERS: list[Callable[[], None]] = []


def register_loader(load: Callable[[], None]) -> None:
    """``load()`` registers more renderers; it runs the first time a spec is not found or the
    choices are listed (``generate/__init__`` defers the LLM renderers this way, so an offline
    build never imports them)."""
    _LOADERS.append(load)


def _load_deferred() -> None:
    while _LOADERS:
        _LOADERS.pop(0)()


def renderer_choices() -> list[str]:
    """What a user may pick, as error messages show it: ``offline``, ``openai:MODEL``, ..."""
    _load_deferred()
    return [p if p == "offline" else f"{p}:MODEL"
            for p in sorted(_FACTORIES, key=lambda p: (p != "offline", p)) if p not in _HIDDEN]


def get_renderer(spec: str, **options) -> Renderer:
    """Resolve a ``--generator`` value to a renderer, with a one-line error for bad names."""
    prefix, sep, model = spec.partition(":")
    if spec not in _FACTORIES and prefix not in _FACTORIES:
        _load_deferred()
    if spec in _FACTORIES:
        return _FACTORIES[spec](spec, **options)
    if sep and model and prefix in _FACTORIES:
        return _FACTORIES[prefix](spec, **options)
    raise ModelSpecError(
        f"Unknown generator {spec!r}: use 'offline' or 'provider:model' "
        f"(e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5); choose from: "
        f"{', '.join(renderer_choices()) or 'offline'}")
