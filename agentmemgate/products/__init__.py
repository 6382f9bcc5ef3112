"""Systems known by their answers: products (Mem0, Graphiti), baselines and plug-ins (A.7).

- ``contract``: ``AnsweringOptions`` in, ``Answering`` (info, factory, provenance) out
- ``registry``: names -> builders (baselines, products imported lazily, plug-ins)
- ``answer``: the one answer call after a system's own retrieval (``rubrics/product_answer``)
- ``full_context`` / ``no_memory``: the long-context and no-memory baselines
- ``plugins``: the ``agentmemgate.systems`` entry-point group (either contract)

The contract itself is ``memory.answering``; ``evaluate`` runs these systems by the protocol.
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "answer_probe": ("answer", None),
    "answer_provenance": ("answer", None),
    "format_memories": ("answer", None),
    "Answering": ("contract", None),
    "AnsweringOptions": ("contract", None),
    "BASELINE_NAMES": ("registry", None),
    "PRODUCTS": ("registry", None),
    "answering_names": ("registry", None),
    "get_answering": ("registry", None),
    "product_missing": ("registry", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "Answering",
    "AnsweringOptions",
    "BASELINE_NAMES",
    "PRODUCTS",
    "answer_probe",
    "answer_provenance",
    "answering_names",
    "format_memories",
    "get_answering",
    "product_missing",
]
