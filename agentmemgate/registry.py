"""One mechanism for every kind of named plug-in (generators, judges, audit sources, memory
systems, answering systems, dataset-card sections): a ``Registry`` per kind, one ``register``
call (or decorator), one ``lookup`` whose error names the choices and the closest one.

A name is ``NAME`` or ``NAME:ARG`` (``openai:gpt-4o-mini``, ``statements:longmemeval``); an
offline scorer with versioned rule files is pinned as ``offline:FILE.vN`` (``offline_version``).
Registries whose built-in members live in modules of their own import them on first use
(``load``), so a command that never resolves a name never pays for them.

    SOURCES: Registry[Loader] = Registry("source")

    @SOURCES.register("arcs", help="arcs[:SPLIT]  the workspace's arcs")
    def load_arcs(request): ...

    SOURCES.lookup("arcs")   # or: Unknown source 'arks'; did you mean 'arcs'?; choose one of: ...
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from .errors import AmgError, BadInput
from .suggest import did_you_mean

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered thing: its name, the object, whether error messages list it (a test
    double is ``hidden``), and what else its registry keeps about it (``help``, ``tasks``)."""

    name: str
    obj: T
    hidden: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Registry(MutableMapping[str, T]):
    """Named things of one kind, in the order they were registered; a mapping of name to thing
    (``name in R``, ``R.items()``), whose ``lookup`` raises a one-line error for an unknown name.

    ``kind`` names them in errors ("Unknown generator 'x'"); ``error`` is the exception raised for
    an unknown name; ``load`` imports the modules that register the built-in members, once,
    before the first lookup."""

    def __init__(
        self,
        kind: str,
        *,
        error: type[AmgError] = BadInput,
        load: Callable[[], None] | None = None,
    ):
        self.kind = kind
        self.error = error
        self._load = load
        self._entries: dict[str, Entry[T]] = {}

    @overload
    def register(
        self, name: str, obj: T, *, hidden: bool = ..., replace: bool = ..., **info: Any
    ) -> T: ...

    @overload
    def register(
        self, name: str, obj: None = ..., *, hidden: bool = ..., replace: bool = ..., **info: Any
    ) -> Callable[[T], T]: ...

    def register(self, name, obj=None, *, hidden=False, replace=True, **info):
        """Register ``obj`` under ``name`` (or, without ``obj``, decorate the thing to register).

        ``hidden``: resolvable, but never listed in errors (test doubles). ``replace=False``: keep
        an earlier registration of the name (the toolkit's built-ins, imported on first use, never
        replace what a user registered before them). ``info``: kept on the entry."""

        def add(thing: T) -> T:
            if replace or name not in self._entries:
                self._entries[name] = Entry(name, thing, hidden, dict(info))
            return thing

        return add if obj is None else add(obj)

    def _loaded(self) -> dict[str, Entry[T]]:
        if self._load is not None:
            load, self._load = self._load, None
            load()
        return self._entries

    # The mapping: names to things, hidden ones included (``names`` lists what users may pick).
    def __getitem__(self, name: str) -> T:
        return self._loaded()[name].obj

    def __setitem__(self, name: str, obj: T) -> None:
        self.register(name, obj)

    def __delitem__(self, name: str) -> None:
        del self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def __len__(self) -> int:
        return len(self._loaded())

    def entry(self, name: str) -> Entry[T] | None:
        return self._loaded().get(name)

    def entries(self, *, hidden: bool = False) -> list[Entry[T]]:
        return [e for e in self._loaded().values() if hidden or not e.hidden]

    def names(self, *, hidden: bool = False) -> list[str]:
        """What a user may pick (test doubles only with ``hidden``)."""
        return [e.name for e in self.entries(hidden=hidden)]

    def is_hidden(self, name: str) -> bool:
        e = self.entry(name)
        return e is not None and e.hidden

    def lookup(self, name: str, advice: str | None = None) -> T:
        """The object registered as ``name``; an unknown name raises ``unknown(name, advice)``
        (``get`` is the mapping's: None for an unknown name)."""
        e = self.entry(name)
        if e is None:
            raise self.unknown(name, advice)
        return e.obj

    def unknown(self, name: str, advice: str | None = None, *, near: str | None = None) -> AmgError:
        """``Unknown KIND 'NAME'; did you mean 'X'?; ADVICE``: ADVICE by default the choices, X
        the choice closest to ``near`` (default: the name; a spec's prefix, say)."""
        choices = self.names()
        if advice is None:
            advice = f"choose one of: {', '.join(choices) or '(none registered)'}"
        hint = did_you_mean(name if near is None else near, choices)
        return self.error(f"Unknown {self.kind} {name!r}{hint}; {advice}")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``"openai:gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; ``"offline"`` -> ``("offline",
    None)``; the argument is None when there is no colon, and "" when nothing follows it."""
    prefix, sep, arg = (spec or "").partition(":")
    return prefix, arg if sep else None


_PINNED = re.compile(r"offline:([A-Za-z_][\w-]*)\.v(\d+)")


def offline_version(spec: str, file: str, *, also: tuple[str, ...] = ()) -> int | None | bool:
    """Which version of the offline rule file ``file`` a spec names: None for ``offline`` (and
    the spellings in ``also``: the newest file), N for ``offline:FILE.vN``, False for a spec that
    names no version of ``file`` (a model spec, or another file)."""
    if spec == "offline" or spec in also:
        return None
    m = _PINNED.fullmatch(spec or "")
    return int(m.group(2)) if m and m.group(1) == file else False
