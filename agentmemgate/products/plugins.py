"""Plug-in systems: installed packages register systems in the ``agentmemgate.systems`` entry-point
group, under either contract.

An entry point's name is the system's name; it loads an object that makes one fresh system per
conversation:

- a class (or any callable) whose instances are ``memory.answering.AnsweringSystem`` -- a
  black-box system, asked the probe after every session and scored from its answers; if it takes
  an ``options`` keyword it is given the run's ``AnsweringOptions`` (``--model``, ``--base-url``,
  ``--embedder``, the workspace for the LLM layer's cache);
- a class (or callable) whose instances are ``memory.system.MemorySystem`` -- a component system,
  run turn by turn by the protocol like the paper's pipelines (called with no arguments).

The contract is told apart by what the object makes: a class by its base class, any other
callable by ``isinstance`` of one instance. ``info`` (a ``SystemInfo``) is read from the object,
else from that instance. A plug-in that fails to load or meets neither contract is a one-line
error naming its package, and never breaks the listing of the others.
"""

from __future__ import annotations

import importlib.metadata
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BadInput
from ..memory.answering import AnsweringSystem
from ..memory.system import MemorySystem, SystemInfo
from .contract import Answering, AnsweringOptions, library_version

GROUP = "agentmemgate.systems"


@dataclass
class Plugin:
    """One entry point of the group, loaded (``error`` says why not)."""

    name: str
    package: str
    value: str  # module:object
    contract: str | None = None  # "answering" | "component"
    info: SystemInfo | None = None
    obj: Any = None
    error: str | None = None

    @property
    def takes_options(self) -> bool:
        try:
            return "options" in inspect.signature(self.obj).parameters
        except (TypeError, ValueError):
            return False


def _package(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else ep.value.split(":")[0].split(".")[0]


def _contract(obj: Any, make: Callable[[], Any]) -> tuple[str, SystemInfo]:
    if isinstance(obj, type) and issubclass(obj, AnsweringSystem):
        kind = "answering"
    elif isinstance(obj, type) and issubclass(obj, MemorySystem):
        kind = "component"
    elif callable(obj):
        inst = make()
        kind = (
            "answering"
            if isinstance(inst, AnsweringSystem)
            else "component"
            if isinstance(inst, MemorySystem)
            else ""
        )
        if not kind:
            raise TypeError(
                f"it made a {type(inst).__name__}, neither an AnsweringSystem nor a MemorySystem"
            )
        obj = inst if getattr(obj, "info", None) is None else obj
    else:
        raise TypeError(f"{type(obj).__name__} is not a class or factory of systems")
    info = getattr(obj, "info", None)
    if info is None and isinstance(obj, type):
        info = getattr(make(), "info", None)
    if not isinstance(info, SystemInfo):
        raise TypeError("it has no info (a memory.system.SystemInfo)")
    return kind, info


def load(ep: importlib.metadata.EntryPoint, options: AnsweringOptions | None = None) -> Plugin:
    p = Plugin(name=ep.name, package=_package(ep), value=ep.value)
    try:
        p.obj = ep.load()
        opts = options or AnsweringOptions()
        make = (lambda: p.obj(options=opts)) if p.takes_options else p.obj
        p.contract, info = _contract(p.obj, make)
        p.info = info.model_copy(update={"name": ep.name})
    except Exception as e:  # a broken plug-in says so in one line and spoils nothing else
        msg = " ".join(str(e).split()) or type(e).__name__
        p.error = (
            f"plug-in {ep.name!r} from package {p.package} is broken ({ep.value}): "
            f"{type(e).__name__}: {msg}"
        )
    return p


def entry_points() -> list[importlib.metadata.EntryPoint]:
    seen: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        seen.setdefault(ep.name, ep)  # the first on the path wins, as imports do
    return list(seen.values())


def plugins(options: AnsweringOptions | None = None) -> list[Plugin]:
    return [load(ep, options) for ep in entry_points()]


def find(name: str, options: AnsweringOptions | None = None) -> Plugin | None:
    for ep in entry_points():
        if ep.name == name:
            p = load(ep, options)
            if p.error:
                raise BadInput(p.error[0].upper() + p.error[1:])
            return p
    return None


def _source(obj: Any) -> Path | None:
    try:
        return Path(inspect.getsourcefile(obj) or "")
    except TypeError:
        return None


def plugin_answering(name: str, options: AnsweringOptions) -> Answering | None:
    """An answering plug-in resolved for a run (None: no plug-in of that name)."""
    p = find(name, options)
    if p is None:
        return None
    if p.contract != "answering":
        raise BadInput(
            f"Plug-in {name!r} from package {p.package} is a component system, not an answering one"
        )
    info, obj = p.info, p.obj
    model = options.model if p.takes_options else "offline"

    def factory() -> AnsweringSystem:
        s = obj(options=options) if p.takes_options else obj()
        s.info = info
        return s

    return Answering(
        info=info,
        factory=factory,
        model=model,
        source=_source(obj),
        provenance={
            "product": name,
            "library": p.package,
            "library_version": library_version(p.package),
            "entry_point": p.value,
            "model": model if model != "offline" else None,
            "embedder": options.embedder if p.takes_options else None,
        },
    )


def plugin_component(name: str) -> tuple[SystemInfo, Callable[..., MemorySystem], Plugin] | None:
    """A component plug-in's info and factory (None: no plug-in of that name)."""
    p = find(name)
    if p is None:
        return None
    if p.contract != "component":
        raise BadInput(f"Plug-in {name!r} from package {p.package} is an answering system")
    return p.info, p.obj, p


__all__ = [
    "GROUP",
    "Plugin",
    "entry_points",
    "find",
    "load",
    "plugin_answering",
    "plugin_component",
    "plugins",
]
