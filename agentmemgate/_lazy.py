"""Lazy re-exports for the rooms' ``__init__.py`` (PEP 562 module ``__getattr__``).

A room lists ``name -> (submodule, attribute or None for the same name)``; the submodule is imported
the first time the name is asked for, and the value is then cached in the package's namespace.
"""

from __future__ import annotations

import importlib


def resolve(namespace: dict, table: dict[str, tuple[str, str | None]], name: str):
    try:
        module, attr = table[name]
    except KeyError:
        raise AttributeError(
            f"module {namespace['__name__']!r} has no attribute {name!r}"
        ) from None
    # a submodule by its name, or a neighbouring room as written (``..answer_judge``)
    relative = module if module.startswith(".") else f".{module}"
    value = getattr(importlib.import_module(relative, namespace["__name__"]), attr or name)
    namespace[name] = value
    return value
