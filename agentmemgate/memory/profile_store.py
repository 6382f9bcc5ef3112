"""The profile store and the staging area (paper, Section 3 and Figure 4).

The store maps keys (entity, attribute) to one current value plus a history of validity intervals
[t_begin, t_end). A field changes only through its own writes (no cross-field inference). Writes:

* ``commit``: the new value begins at ``t``; the old one ends at ``t``. Committing the value that
  is already current changes nothing (a restatement is not a new interval).
* ``correct``: like a commit, but the old value's interval is marked never valid (it was wrong
  when it was written, not superseded).
* ``commit_plan`` (plan-typed baseline only, Appendix A.1): the value enters the history as a
  plan-typed entry; reads skip it and keep returning the latest factual value.
* ``refresh`` (plan-typed, refresh-confirm reading): a masked plan entry of the same value ends
  and the value begins as a fact.

Staged items live outside the store (``StagingArea``), invisible to reads; each ends promoted,
discarded or pending. Both are plain data: ``snapshot`` gives a ``StoreSnapshot`` at any moment,
and the same writes always give the same snapshot.
"""

from __future__ import annotations

from ..schema import normalize_text
from .system import FieldKey, FieldState, StagedState, StoreSnapshot, ValueInterval


def same_value(a: str | None, b: str | None) -> bool:
    """Values compare up to case, punctuation and spacing ("Trader Joe's" == "trader joe's")."""
    if a is None or b is None:
        return a is b
    return normalize_text(a) == normalize_text(b)


class ProfileStore:
    """Keys -> current value + history. Deterministic: insertion order is the order of writes."""

    def __init__(self) -> None:
        # Keyed by (entity, attribute): hashing and comparing the frozen FieldKey model on every
        # read cost more than the reads. ``_keys`` keeps each key as first written, in order.
        self._history: dict[tuple[str, str], list[ValueInterval]] = {}
        self._keys: dict[tuple[str, str], FieldKey] = {}

    def _slot(self, key: FieldKey) -> list[ValueInterval]:
        """The history of ``key``, created (and the key recorded) on its first write."""
        k = (key.entity, key.attribute)
        slot = self._history.get(k)
        if slot is None:
            slot = self._history[k] = []
            self._keys[k] = key
        return slot

    # -- reads ----------------------------------------------------------------------------
    def read(self, key: FieldKey) -> str | None:
        """The latest factual value still current (plan-typed entries are masked); None if none."""
        current = self._current(key)
        return current.value if current is not None else None

    def history(self, key: FieldKey) -> list[ValueInterval]:
        return [iv.model_copy() for iv in self._history.get((key.entity, key.attribute), [])]

    def keys(self) -> list[FieldKey]:
        return list(self._keys.values())

    def open_plans(self, key: FieldKey) -> list[ValueInterval]:
        """Plan-typed entries not yet resolved (still masked)."""
        return [
            iv
            for iv in self._history.get((key.entity, key.attribute), [])
            if iv.plan and iv.t_end is None
        ]

    def _current(self, key: FieldKey) -> ValueInterval | None:
        for iv in reversed(self._history.get((key.entity, key.attribute), [])):
            if not iv.plan and iv.t_end is None:
                return iv
        return None

    # -- writes ---------------------------------------------------------------------------
    def commit(self, key: FieldKey, value: str, t: int, *, via: str = "commit") -> bool:
        """Make ``value`` current from ``t``; False (nothing written) if it already is."""
        current = self._current(key)
        if current is not None and same_value(current.value, value):
            return False
        if current is not None:
            current.t_end = t
        self._slot(key).append(ValueInterval(value=value, t_begin=t, via=via))  # type: ignore[arg-type]
        return True

    def correct(self, key: FieldKey, value: str, t: int) -> bool:
        """Replace a wrong value: its interval ends at ``t`` and is marked never valid."""
        current = self._current(key)
        if current is not None and same_value(current.value, value):
            return False
        if current is not None:
            current.t_end = t
            current.never_valid = True
        self._slot(key).append(ValueInterval(value=value, t_begin=t, via="correction"))
        return True

    def commit_plan(self, key: FieldKey, value: str, t: int) -> bool:
        """Write a masked plan-typed entry; False if the same plan is already open."""
        if any(same_value(iv.value, value) for iv in self.open_plans(key)):
            return False
        self._slot(key).append(ValueInterval(value=value, t_begin=t, plan=True))
        return True

    def refresh(self, key: FieldKey, value: str, t: int) -> bool:
        """Turn the open plan entry of ``value`` into a fact from ``t``; False if there is none."""
        plans = [iv for iv in self.open_plans(key) if same_value(iv.value, value)]
        if not plans:
            return False
        for iv in plans:
            iv.t_end = t
        current = self._current(key)
        if current is not None:
            current.t_end = t
        self._slot(key).append(ValueInterval(value=value, t_begin=t, via="refresh"))
        return True

    def field_states(self, keys: list[FieldKey] | None = None) -> list[FieldState]:
        keys = list(dict.fromkeys((keys or []) + self.keys()))
        return [FieldState(key=k, current=self.read(k), history=self.history(k)) for k in keys]


class StagingArea:
    """Staged items (key, value, confirm predicate, abandon predicate), outside the store."""

    def __init__(self) -> None:
        self._items: list[StagedState] = []

    def stage(
        self, key: FieldKey, value: str, confirm_when: str, abandon_when: str, t: int
    ) -> StagedState:
        item = StagedState(
            key=key, value=value, confirm_when=confirm_when, abandon_when=abandon_when, staged_at=t
        )
        self._items.append(item)
        return item

    def find_pending(self, key: FieldKey, value: str) -> StagedState | None:
        for item in self._items:
            if item.status == "pending" and item.key == key and same_value(item.value, value):
                return item
        return None

    def pending(self, before: int | None = None) -> list[StagedState]:
        """Pending items, oldest first; ``before``: only those staged before turn position t."""
        return [
            i
            for i in self._items
            if i.status == "pending" and (before is None or i.staged_at < before)
        ]

    def resolve(self, item: StagedState, status: str, t: int) -> None:
        item.status = status  # type: ignore[assignment]
        item.resolved_at = t

    def states(self) -> list[StagedState]:
        return [i.model_copy() for i in self._items]


def snapshot(
    store: ProfileStore, staging: StagingArea | None, t: int, keys: list[FieldKey] | None = None
) -> StoreSnapshot:
    """The whole memory after turn position ``t`` (fields registered at ``begin`` listed first)."""
    return StoreSnapshot(
        t=t, fields=store.field_states(keys), staged=staging.states() if staging is not None else []
    )
