"""The plan-typed commit baseline (paper, Appendix A.1): read-time masking instead of staging.

Same extraction, matching and classification as the gated pipeline; routing differs:

* speculation -> written at once as a plan-typed entry in the field's history (event
  ``plan_committed``); reads skip plan entries and return the most recent factual value, or
  abstain when there is none. There is no staging area, no predicates and no checker.
* anything else -> committed as a fact (``committed``, or ``corrected`` for a correction) --
  except when its value equals an open (still masked) plan entry of the field:
  - refresh-confirm reading: the plan entry ends and the value becomes a fact (``refreshed``);
  - strict reading: plans never resolve; the commit is a no-op (the value is already in the store,
    as a plan), so reads keep returning the last factual value. No event is emitted for it, as
    nothing was written.

Both readings make exactly the same component calls, so on an LLM the second one is free from the
cache.
"""

from __future__ import annotations

from .gate import Pipeline
from .profile_store import same_value
from .system import ContextTurn, MemoryEvent, UserTurn

READINGS = ("refresh", "strict")


class PlanTypedMemory(Pipeline):
    def __init__(
        self,
        info,
        *,
        extractor,
        matcher,
        classifier,
        reading: str = "refresh",
        retry: bool = False,
        permissive=None,
    ):
        if reading not in READINGS:
            raise ValueError(f"unknown reading {reading!r}; choose one of: {', '.join(READINGS)}")
        if classifier is None:
            raise ValueError("the plan-typed baseline needs a classifier")
        super().__init__(
            info,
            extractor=extractor,
            matcher=matcher,
            classifier=classifier,
            retry=retry,
            permissive=permissive,
        )
        self.reading = reading

    def process_turn(self, turn: UserTurn, context: list[ContextTurn]) -> list[MemoryEvent]:
        events: list[MemoryEvent] = []
        for m in self.matched(turn, context):
            if m.field is None:
                events.append(
                    MemoryEvent(
                        kind="dropped_no_field",
                        t=turn.t,
                        extracted=m.extracted,
                        detail="no field matched",
                    )
                )
                continue
            key, value = self.key_of(m.field), m.filed.value
            dist = self.classify(m, turn, context)
            typed = self.typed(dist)
            if dist.predicted == "speculation":
                added = self.store.commit_plan(key, value, turn.t)
                events.append(
                    self.event(
                        "plan_committed",
                        turn,
                        m,
                        **typed,
                        detail="" if added else "the same plan is already masked",
                    )
                )
                continue
            masked = [iv for iv in self.store.open_plans(key) if same_value(iv.value, value)]
            if masked:
                if self.reading == "refresh":
                    self.store.refresh(key, value, turn.t)
                    events.append(
                        self.event(
                            "refreshed",
                            turn,
                            m,
                            **typed,
                            detail=f"masked plan of t={masked[0].t_begin} is now a fact",
                        )
                    )
                continue  # strict: a no-op, nothing written
            if dist.predicted == "explicit_correction":
                changed = self.store.correct(key, value, turn.t)
                kind = "corrected"
            else:
                changed = self.store.commit(key, value, turn.t)
                kind = "committed"
            events.append(
                self.event(
                    kind, turn, m, **typed, detail="" if changed else "already the current value"
                )
            )
        return events
