"""Systems known by their answers: products (Mem0, Graphiti), baselines and plug-ins (A.7).

- ``contract``: ``AnsweringOptions`` in, ``Answering`` (info, factory, provenance) out
- ``registry``: names -> builders (baselines, products imported lazily, plug-ins)
- ``answer``: the one answer call after a system's own retrieval (``rubrics/product_answer``)
- ``full_context`` / ``no_memory``: the long-context and no-memory baselines
- ``plugins``: the ``agentmemgate.systems`` entry-point group (either contract)

The contract itself is ``memory.answering``; ``evaluate`` runs these systems by the protocol.
"""

from .answer import answer_probe, answer_provenance, format_memories
from .contract import Answering, AnsweringOptions
from .registry import BASELINE_NAMES, PRODUCTS, answering_names, get_answering, product_missing

__all__ = ["Answering", "AnsweringOptions", "BASELINE_NAMES", "PRODUCTS", "answer_probe",
           "answer_provenance", "answering_names", "format_memories", "get_answering",
           "product_missing"]
