"""The renderer interface: turn an ``ArcSpec`` into an ``Arc``.

The offline template renderer and the LLM generators both implement it; ``generate.run`` drives
any renderer the same way (resume, progress, failures).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..errors import ModelSpecError
from ..registry import Registry, split_spec
from ..schema import Arc, ArcSpec

if TYPE_CHECKING:
    from ..llm.ref import ModelRef


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
# (ref: ModelRef, **renderer options) -> Renderer when imported, as the LLM providers register with
# ``llm.registry``. The built-in modules are imported on the registry's first use, not with the
# package: a command that only checks a split name never pays for the template grammar.
RendererFactory = Callable[..., Renderer]
RENDERERS: Registry[RendererFactory] = Registry("generator", error=ModelSpecError)
_loaded: set[str] = set()


def _load_builtin(llm: bool = False) -> None:
    """Import the template renderer (and with ``llm`` the LLM renderers: an offline build never
    needs them) once; each registers itself."""
    import importlib

    for name in ("offline", "llm_renderer") if llm else ("offline",):
        if name not in _loaded:
            _loaded.add(name)
            importlib.import_module(f"{__package__}.{name}")


def register_renderer(
    prefix: str, factory: RendererFactory, *, user_pickable: bool = True, builtin: bool = False
) -> None:
    """Make ``--generator PREFIX`` (or ``PREFIX:MODEL``) resolve to ``factory``.

    ``user_pickable=False`` keeps a test-only renderer (``scripted``) out of the choices that
    error messages list; it still resolves. ``builtin``: the toolkit's own renderers, imported
    on first use, never replace a registration made before them.
    """
    RENDERERS.register(prefix, factory, hidden=not user_pickable, replace=not builtin)


def renderer_choices() -> list[str]:
    """What a user may pick, as error messages show it: ``offline``, ``openai:MODEL``, ..."""
    _load_builtin(llm=True)
    return [
        p if p == "offline" else f"{p}:MODEL"
        for p in sorted(RENDERERS.names(), key=lambda p: (p != "offline", p))
    ]


# What a renderer is made with besides its model; every other option is the model's.
RENDERER_OPTIONS = ("workspace", "design", "concurrency", "max_attempts")


def get_renderer(spec: str | ModelRef, **options) -> Renderer:
    """Resolve a ``--generator`` value to a renderer, with a one-line error for bad names.
    ``spec``: a spec or a ``ModelRef``. ``options``: the renderer's own (``workspace``,
    ``design``, ``concurrency``, ``max_attempts``); any other (``base_url``, ``timeout``,
    ``max_tokens`` ...) joins the reference's. The registered factory gets the reference and
    the renderer's options: ``factory(ref, workspace=..., design=...)``."""
    from ..llm.ref import ModelRef

    ref = ModelRef.parse(spec)
    own = {k: v for k, v in options.items() if k in RENDERER_OPTIONS}
    extra = {k: v for k, v in options.items() if k not in RENDERER_OPTIONS}
    if extra:
        url = extra.pop("base_url", None)
        ref = ref.replace(base_url=url or ref.base_url, options={**ref.options, **extra})
    spec = ref.spec
    prefix, model = split_spec(spec)
    _load_builtin(llm=spec not in RENDERERS and prefix not in RENDERERS and prefix != "offline")
    if spec in RENDERERS:
        return RENDERERS.lookup(spec)(ref, **own)
    if model and prefix in RENDERERS:
        return RENDERERS.lookup(prefix)(ref, **own)
    raise RENDERERS.unknown(
        spec,
        "use 'offline' or 'provider:model' (e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5); "
        f"choose from: {', '.join(renderer_choices()) or 'offline'}",
        near=prefix,
    )
