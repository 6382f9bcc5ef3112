"""The AgentMemGate memory system as a library: profile store, staging, pipeline components, gate.

``system`` holds the contract every memory system meets (and the evaluation protocol relies on).
"""

from .system import (ContextTurn, EventKind, ExtractedTuple, FieldKey, FieldState, MemoryEvent,
                     MemorySystem, StagedState, StoreSnapshot, SystemFactory, SystemInfo, UserTurn,
                     ValueInterval)

__all__ = [
    "ContextTurn", "EventKind", "ExtractedTuple", "FieldKey", "FieldState", "MemoryEvent",
    "MemorySystem", "StagedState", "StoreSnapshot", "SystemFactory", "SystemInfo", "UserTurn",
    "ValueInterval",
]
