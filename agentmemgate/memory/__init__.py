"""The AgentMemGate memory system as a library: profile store, staging, pipeline components, gate.

``system`` holds the contract every memory system meets (and the evaluation protocol relies on);
``registry.get_system(name)`` builds the paper's systems; ``gate.Gate`` is Algorithm 1 over
swappable components (``extract``, ``match``, ``resolve``, the ``classify`` classifiers), each
with an offline rule implementation and an LLM one.
"""

# Re-exports resolved on first use (PEP 562), so importing the package costs only what it uses;
# ``from agentmemgate.ROOM import name`` works as before.
_LAZY = {
    "user_turns": ("conversation", None),
    "Checker": ("components", None),
    "Extractor": ("components", None),
    "Matcher": ("components", None),
    "PredicateWriter": ("components", None),
    "Predicates": ("components", None),
    "Verdict": ("components", None),
    "LLMExtractor": ("extract", None),
    "OfflineExtractor": ("extract", None),
    "Gate": ("gate", None),
    "Pipeline": ("gate", None),
    "gate_info": ("gate", None),
    "LLMMatcher": ("match", None),
    "PermissiveMatcher": ("match", None),
    "WordOverlapMatcher": ("match", None),
    "retry_tuple": ("match", None),
    "strip_attribute": ("match", None),
    "strip_value": ("match", None),
    "OracleExtractor": ("oracle", None),
    "OracleMatcher": ("oracle", None),
    "PlanTypedMemory": ("plan_typed", None),
    "Factory": ("registry", None),
    "get_system": ("registry", None),
    "parse_name": ("registry", None),
    "system_names": ("registry", None),
    "CueChecker": ("resolve", None),
    "LLMChecker": ("resolve", None),
    "LLMPredicateWriter": ("resolve", None),
    "TemplatePredicateWriter": ("resolve", None),
    "ProfileStore": ("profile_store", None),
    "StagingArea": ("profile_store", None),
    "ContextTurn": ("system", None),
    "EventKind": ("system", None),
    "ExtractedTuple": ("system", None),
    "FieldKey": ("system", None),
    "FieldState": ("system", None),
    "MemoryEvent": ("system", None),
    "MemorySystem": ("system", None),
    "StagedState": ("system", None),
    "StoreSnapshot": ("system", None),
    "SystemFactory": ("system", None),
    "SystemInfo": ("system", None),
    "UserTurn": ("system", None),
    "ValueInterval": ("system", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "Checker",
    "ContextTurn",
    "CueChecker",
    "EventKind",
    "ExtractedTuple",
    "Extractor",
    "Factory",
    "FieldKey",
    "FieldState",
    "Gate",
    "LLMChecker",
    "LLMExtractor",
    "LLMMatcher",
    "LLMPredicateWriter",
    "Matcher",
    "MemoryEvent",
    "MemorySystem",
    "OfflineExtractor",
    "OracleExtractor",
    "OracleMatcher",
    "PermissiveMatcher",
    "Pipeline",
    "PlanTypedMemory",
    "PredicateWriter",
    "Predicates",
    "ProfileStore",
    "StagedState",
    "StagingArea",
    "StoreSnapshot",
    "SystemFactory",
    "SystemInfo",
    "TemplatePredicateWriter",
    "UserTurn",
    "ValueInterval",
    "Verdict",
    "WordOverlapMatcher",
    "gate_info",
    "get_system",
    "parse_name",
    "retry_tuple",
    "strip_attribute",
    "strip_value",
    "system_names",
    "user_turns",
]
