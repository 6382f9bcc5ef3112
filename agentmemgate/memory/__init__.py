"""The AgentMemGate memory system as a library: profile store, staging, pipeline components, gate.

``system`` holds the contract every memory system meets (and the evaluation protocol relies on);
``registry.get_system(name)`` builds the paper's systems; ``gate.Gate`` is Algorithm 1 over
swappable components (``extract``, ``match``, ``resolve``, the ``classify`` classifiers), each
with an offline rule implementation and an LLM one.
"""

from .conversation import user_turns
from .components import Checker, Extractor, Matcher, PredicateWriter, Predicates, Verdict
from .extract import LLMExtractor, OfflineExtractor
from .gate import Gate, Pipeline, gate_info
from .match import (LLMMatcher, PermissiveMatcher, WordOverlapMatcher, retry_tuple, strip_attribute,
                    strip_value)
from .oracle import OracleExtractor, OracleMatcher
from .plan_typed import PlanTypedMemory
from .registry import Factory, get_system, parse_name, system_names
from .scripted import scripted_responder
from .resolve import CueChecker, LLMChecker, LLMPredicateWriter, TemplatePredicateWriter
from .store import ProfileStore, StagingArea
from .system import (ContextTurn, EventKind, ExtractedTuple, FieldKey, FieldState, MemoryEvent,
                     MemorySystem, StagedState, StoreSnapshot, SystemFactory, SystemInfo, UserTurn,
                     ValueInterval)

__all__ = [
    "Checker", "ContextTurn", "CueChecker", "EventKind", "ExtractedTuple", "Extractor", "Factory",
    "FieldKey", "FieldState", "Gate", "LLMChecker", "LLMExtractor", "LLMMatcher",
    "LLMPredicateWriter", "Matcher", "MemoryEvent", "MemorySystem", "OfflineExtractor",
    "OracleExtractor", "OracleMatcher", "PermissiveMatcher", "Pipeline", "PlanTypedMemory",
    "PredicateWriter", "Predicates", "ProfileStore", "StagedState", "StagingArea", "StoreSnapshot",
    "SystemFactory", "SystemInfo", "TemplatePredicateWriter", "UserTurn", "ValueInterval", "Verdict",
    "WordOverlapMatcher", "gate_info", "get_system", "parse_name", "retry_tuple", "strip_attribute",
    "scripted_responder", "strip_value", "system_names", "user_turns",
]
