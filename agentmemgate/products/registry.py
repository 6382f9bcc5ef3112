"""Answering systems by name: the baselines, the products, and plug-ins (``amg eval systems``).

A name resolves to an ``Answering``: the system's ``SystemInfo``, a factory of fresh
``memory.answering.AnsweringSystem`` instances (one per conversation), and its provenance
(product, library and version, configuration, answer-prompt hash), which the evaluation stores
and hashes into the run key.

- Baselines (built in): ``full-context`` (the model answers from the whole conversation so far)
  and ``no-memory`` (the model answers with nothing: a floor).
- Products: ``mem0``, ``graphiti`` and ``langmem``, optional extras. Each is a module of this package
  (``products/mem0.py``) imported only when its library is installed, with one function
  ``build(options: AnsweringOptions) -> Answering``. A missing library is a one-line
  ``MissingExtra`` naming ``pip install 'agentmemgate[mem0]'``.
- Plug-ins: installed packages' entry points in the ``agentmemgate.systems`` group
  (``plugins``).

Every built-in answering system needs ``--model provider:model``: there is no offline answerer
(an offline "answer" would be a rule of ours, not what the baseline measures).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from ..errors import BadInput, MissingExtra
from ..llm.ref import ModelRef
from ..registry import Registry
from .contract import Answering, AnsweringOptions, Builder, library_version


@dataclass(frozen=True)
class Product:
    """An optional product: its adapter module here and the library its extra installs."""

    name: str
    module: str  # agentmemgate.products.<name>
    library: str  # the import name of the product's library
    distribution: str  # its PyPI name (for the version in provenance)
    description: str

    @property
    def install(self) -> str:
        import sys

        note = (
            " (its embedded FalkorDB needs Python 3.12+; on this Python also pass --graph-url "
            "to a FalkorDB or Neo4j server)"
            if self.name == "graphiti" and sys.version_info < (3, 12)
            else ""
        )
        return f"pip install 'agentmemgate[{self.name}]'{note}"


PRODUCTS: Registry[Product] = Registry("product")
PRODUCTS.update(
    {
        "mem0": Product(
            "mem0",
            "agentmemgate.products.mem0",
            "mem0",
            "mem0ai",
            "Mem0: LLM-extracted memories in a vector store, searched per question",
        ),
        "graphiti": Product(
            "graphiti",
            "agentmemgate.products.graphiti",
            "graphiti_core",
            "graphiti-core",
            "Graphiti: a temporal knowledge graph of episodes, "
            "facts with valid/invalid times, hybrid search",
        ),
        "langmem": Product(
            "langmem",
            "agentmemgate.products.langmem",
            "langmem",
            "langmem",
            "LangMem: a memory store manager over LangGraph's in-memory store, searched per question",
        ),
    }
)


def _baselines() -> dict[str, Builder]:
    from . import full_context, no_memory

    return {"full-context": full_context.build, "no-memory": no_memory.build}


BASELINE_NAMES = ("full-context", "no-memory")


def require_model(name: str, options: AnsweringOptions) -> None:
    if ModelRef.parse(options.model).offline:
        raise BadInput(
            f"{name} needs --model provider:model (e.g. openai:gpt-4o-mini): it answers "
            "with a model, and there is no offline answerer"
        )


def product_missing(p: Product) -> str | None:
    """None when the product's library is importable, else the one-line reason."""
    if importlib.util.find_spec(p.library) is None:
        return f"{p.name} is not installed: {p.install}"
    return None


def load_product(name: str) -> Builder:
    """The product's ``build`` function, or a one-line error naming the install command."""
    p = PRODUCTS[name]
    if (why := product_missing(p)) is not None:
        raise MissingExtra(why)
    try:
        module = importlib.import_module(p.module)
    except ModuleNotFoundError as e:
        if e.name == p.module:
            raise BadInput(
                f"The {name} adapter is not part of this build of agentmemgate "
                f"(no module {p.module})"
            ) from None
        raise MissingExtra(
            f"{name} needs {e.name!r}, which is not installed: {p.install}"
        ) from None
    return module.build


def answering_names() -> list[str]:
    """Built-in answering names (baselines, then products), installed or not."""
    return list(BASELINE_NAMES) + list(PRODUCTS)


def get_answering(name: str, options: AnsweringOptions) -> Answering:
    """Resolve a built-in answering system or an answering plug-in by name."""
    if name in BASELINE_NAMES:
        require_model(name, options)
        return _baselines()[name](options)
    if name in PRODUCTS:
        require_model(name, options)
        return load_product(name)(options)
    from .plugins import plugin_answering

    got = plugin_answering(name, options)
    if got is None:
        raise BadInput(
            f"Unknown answering system {name!r}; answering systems: "
            f"{', '.join(answering_names())} (see `amg eval systems`)"
        )
    return got


__all__ = [
    "Answering",
    "AnsweringOptions",
    "BASELINE_NAMES",
    "Builder",
    "PRODUCTS",
    "Product",
    "answering_names",
    "get_answering",
    "library_version",
    "load_product",
    "product_missing",
    "require_model",
]
