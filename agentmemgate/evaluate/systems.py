"""Which memory systems an evaluation runs, and the run key that says when one must be re-run.

Names resolve through ``agentmemgate.memory.get_system`` (the memory room's registry); a test
or a notebook can also hand ``system_spec`` any factory that meets the contract.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import BadInput
from ..memory.system import SystemFactory, SystemInfo

# The paper's component systems (Section 4, Appendix A.1) and the retry ablation (Section 6.3).
DEFAULT_SYSTEMS = (
    "literal-ungated", "literal-gated", "cautious-ungated", "cautious-gated",
    "plan-typed-literal", "plan-typed-cautious", "plan-typed-literal-strict",
    "plan-typed-cautious-strict", "cautious-gated[no-retry]",
)
PAPER_SYSTEMS = ("cautious-ungated", "cautious-gated", "literal-ungated", "literal-gated")

_PACKAGE = Path(__file__).resolve().parent.parent
# What a component system is made of: a change to any of these files re-runs it.
_SOURCE_DIRS = ("memory", "classify", "rubrics")


@dataclass
class SystemSpec:
    name: str
    factory: SystemFactory
    info: SystemInfo
    model: str = "offline"
    options: dict[str, Any] = field(default_factory=dict)
    source_sha: str = ""

    @property
    def run_key(self) -> str:
        h = hashlib.sha256()
        for part in (self.name, json.dumps(self.options, sort_keys=True, default=str), self.model,
                     self.info.model_dump_json(), self.source_sha):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()[:32]


@lru_cache(maxsize=None)
def _sha_of_files(paths: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def source_sha(extra: Path | None = None) -> str:
    """sha256 over the memory, classifier and rubric files (and ``extra``, a factory's module)."""
    files: list[Path] = []
    for d in _SOURCE_DIRS:
        files += sorted(p for p in (_PACKAGE / d).rglob("*")
                        if p.is_file() and p.suffix in (".py", ".toml", ".txt", ".json"))
    if extra is not None and extra.is_file() and not any(extra == f for f in files):
        files.append(extra)
    return _sha_of_files(tuple(files))


def system_spec(factory: SystemFactory, *, name: str | None = None, model: str = "offline",
                options: dict[str, Any] | None = None, info: SystemInfo | None = None) -> SystemSpec:
    """A spec for any factory: its info comes from ``factory.info`` or from one fresh instance."""
    info = info or getattr(factory, "info", None)
    if info is None:
        info = factory().info
    try:
        module = Path(inspect.getsourcefile(factory) or "")
    except TypeError:
        module = None
    return SystemSpec(name=name or info.name, factory=factory, info=info, model=model,
                      options=dict(options or {}), source_sha=source_sha(module))


def with_variants(name: str, variants: list[str]) -> str:
    """``cautious-gated`` + ``["no-retry"]`` -> ``cautious-gated[no-retry]`` (merged into an
    existing bracket), the memory registry's spelling of options."""
    if not variants:
        return name
    if name.endswith("]") and "[" in name:
        base, opts = name[:-1].split("[", 1)
        have = [o.strip() for o in opts.split(",") if o.strip()]
    else:
        base, have = name, []
    return f"{base}[{','.join(dict.fromkeys(have + variants))}]"


def resolve_system(name: str, *, model: str = "offline", workspace: Any = None,
                   base_url: str | None = None, variants: list[str] | None = None,
                   concurrency: int | None = None,
                   llm_options: dict[str, Any] | None = None) -> SystemSpec:
    """``name`` (e.g. ``cautious-gated[no-retry]``) through the memory room's registry; the
    spec carries the registry's canonical name (``cautious-gated[retry]`` is ``cautious-gated``)."""
    from ..memory import get_system

    kwargs: dict[str, Any] = {"model": model, "workspace": workspace}
    if base_url:
        kwargs["base_url"] = base_url
    if concurrency:
        kwargs["concurrency"] = concurrency
    if llm_options and model not in ("offline", "", None):  # --timeout, --max-tokens, ...
        kwargs.update(llm_options)
    info, factory = get_system(with_variants(name, list(variants or [])), **kwargs)
    return system_spec(factory, name=display_name(info.name, model), model=model, info=info,
                       options={"base_url": bool(base_url)} if base_url else {})


def display_name(name: str, model: str) -> str:
    """How results name a system: ``literal-gated`` offline, ``literal-gated@openai:gpt-4o``
    with model components (so runs of one system on two models sit side by side)."""
    return name if model in ("offline", "", None) else f"{name}@{model}"


def twin_name(display: str, twin: str | None) -> str | None:
    """The ungated twin's display name, on the same model as ``display``."""
    if twin is None:
        return None
    _, sep, model = display.partition("@")
    return f"{twin}@{model}" if sep else twin


def variant_base(name: str) -> str | None:
    """``cautious-gated[no-retry]`` -> ``cautious-gated`` (``...@model`` kept): the system a
    bracketed variant varies."""
    core, sep, model = name.partition("@")
    if core.endswith("]") and "[" in core:
        return core[:core.index("[")] + (sep + model)
    return None
