"""AgentMemGate: Algorithm 1 of the paper as a memory system built from swappable components.

``Gate.process_turn(turn, context)`` is ProcessTurn(u_t, C_t, P, H):

1. T <- Extract(u_t, C_t)                                   one call per user turn
2. for each tuple: k <- Match(tuple, F)                      one call per tuple
   if none and the retry is on: k <- RetryPlanFrame(...)     one more call, only when it strips
   if none and the matcher is permissive: a second matcher   one more call
   if none: event ``dropped_no_field`` -- nothing written or staged
3. gate off: commit (event ``committed``).
   gate on:  c <- argmax q(c | span, two preceding turns)    one classifier call per matched tuple
             speculation -> stage with predicates written now (one call per new staged item;
             a value already pending for the key is not staged twice)       event ``staged``
             explicit_correction -> commit, old interval never valid       event ``corrected``
             completed_event / other -> commit                             event ``committed``
4. every item staged at an EARLIER turn and still pending is checked against u_t (one call per
   item): confirm -> promote into the store (``promoted``); abandon -> discard (``discarded``).

``calls`` counts one per component invocation above, whether the component is an offline rule,
an oracle or a model (cache hits included), so gated-minus-ungated overhead compares like with
like. A component's model call that fails raises ``CallFailed`` out of ``process_turn``: the
instance is then half-way through a turn, so discard it and re-run the conversation (answered
calls come from the cache).

Building a memory system from the parts (any component can be swapped for your own object with
the same one method: ``extract``, ``match``, ``classify``, ``write`` or ``check``)::

    import datetime as dt
    from agentmemgate.classify import get_classifier
    from agentmemgate.memory import (CueChecker, FieldKey, Gate, OfflineExtractor,
                                     TemplatePredicateWriter, UserTurn, WordOverlapMatcher, gate_info)
    from agentmemgate.schema import FieldSpec

    field = FieldSpec(attribute="grocery_store", description="The user's current grocery store.",
                      probe_question="Which grocery store does the user currently shop at?")
    gate = Gate(gate_info("my-gate"), extractor=OfflineExtractor("literal"),
                matcher=WordOverlapMatcher(), classifier=get_classifier("offline"),
                predicates=TemplatePredicateWriter(), checker=CueChecker())
    gate.begin([field])                          # the frozen, value-free field set
    day = dt.date(2024, 5, 1)
    gate.process_turn(UserTurn(text="I shop at Safeway.", session=0, turn=0, date=day, t=0), [])
    events = gate.process_turn(
        UserTurn(text="I might switch to Aldi next month.", session=0, turn=2, date=day, t=2), [])
    [e.kind for e in events]                     # ['staged']
    gate.read(FieldKey.of(field))                # 'Safeway': the staged plan is invisible to reads
    gate.snapshot(2).staged[0].confirm_when      # the promotion predicate written at staging
"""

from __future__ import annotations

from dataclasses import dataclass

from ..classify.classes import Distribution
from ..corpora.model import ContextTurn as StatementTurn
from ..corpora.statements import Statement
from ..schema import FieldSpec
from .components import Checker, Extractor, Matcher, PredicateWriter
from .match import retry_tuple, strip_value
from .profile_store import ProfileStore, StagingArea, snapshot
from .system import (
    ContextTurn,
    ExtractedTuple,
    FieldKey,
    MemoryEvent,
    MemorySystem,
    StoreSnapshot,
    SystemInfo,
    UserTurn,
)

CLASSIFIER_CONTEXT = 2  # preceding turns the classifier sees (paper, Section 3)


def gate_info(name: str, *, gated: bool = True, description: str = "") -> SystemInfo:
    """A minimal SystemInfo for a hand-built pipeline (the registry fills in the rest)."""
    return SystemInfo(name=name, description=description or name, gated=gated)


@dataclass(frozen=True)
class Matched:
    """One extracted tuple after matching: the field (or None) and the tuple as filed."""

    extracted: ExtractedTuple
    field: FieldSpec | None
    filed: ExtractedTuple  # the retry's / permissive matcher's stripped tuple, else the original
    how: str = ""  # "", "retry" or "permissive"


class Pipeline(MemorySystem):
    """Extraction and matching shared by every routing policy (gate on/off, plan-typed)."""

    def __init__(
        self,
        info: SystemInfo,
        *,
        extractor: Extractor,
        matcher: Matcher,
        classifier=None,
        retry: bool = False,
        permissive: Matcher | None = None,
    ):
        self.info = info
        self.extractor = extractor
        self.matcher = matcher
        self.classifier = classifier
        self.retry = retry
        self.permissive = permissive
        self.begin([])

    def begin(self, fields: list[FieldSpec]) -> None:
        self.fields = list(fields)
        self._keys = [FieldKey.of(f) for f in self.fields]
        self.store = ProfileStore()
        self.staging = StagingArea()
        self._calls = 0

    @property
    def calls(self) -> int:
        return self._calls

    def read(self, key: FieldKey) -> str | None:
        return self.store.read(key)

    def snapshot(self, t: int) -> StoreSnapshot:
        return snapshot(self.store, self.staging, t, self._keys)

    def field_of(self, key: FieldKey) -> FieldSpec:
        for f, k in zip(self.fields, self._keys):
            if k is key or k == key:
                return f
        raise StopIteration(key)

    def key_of(self, field: FieldSpec) -> FieldKey:
        """``FieldKey.of(field)``, the one made at ``begin`` for a field of this conversation."""
        for f, k in zip(self.fields, self._keys):
            if f is field:
                return k
        return FieldKey.of(field)

    # -- stages ----------------------------------------------------------------------------
    def matched(self, turn: UserTurn, context: list[ContextTurn]) -> list[Matched]:
        self._calls += 1
        out = []
        for tup in self.extractor.extract(turn, context):
            self._calls += 1
            field, filed, how = self.matcher.match(tup, self.fields), tup, ""
            if field is None and self.retry and (again := retry_tuple(tup)) is not None:
                self._calls += 1
                field = self.matcher.match(again, self.fields)
                if field is not None:
                    filed, how = again, "retry"
            if field is None and self.permissive is not None:
                self._calls += 1
                field = self.permissive.match(tup, self.fields)
                if field is not None:
                    filed = tup.model_copy(update={"value": strip_value(tup.value)})
                    how = "permissive"
            out.append(Matched(tup, field, filed, how))
        return out

    def classify(self, m: Matched, turn: UserTurn, context: list[ContextTurn]) -> Distribution:
        """The evidence type of the tuple's source span (the original, plan framing and all)."""
        self._calls += 1
        statement = Statement(
            id=f"turn-{turn.t}",
            text=m.extracted.span or m.extracted.value,
            speaker="user",
            context=[
                StatementTurn(speaker=c.role, text=c.text) for c in context[-CLASSIFIER_CONTEXT:]
            ],
            date=turn.date.isoformat(),
        )
        return self.classifier.classify(statement)

    def event(self, kind: str, turn: UserTurn, m: Matched, **kw) -> MemoryEvent:
        key = self.key_of(m.field) if m.field is not None else None
        value = m.filed.value if m.field is not None else None
        return MemoryEvent(
            kind=kind,
            t=turn.t,
            key=key,
            value=value,
            extracted=m.extracted,  # type: ignore[arg-type]
            matched_by_retry=m.how == "retry",
            **kw,
        )

    @staticmethod
    def typed(dist: Distribution) -> dict:
        return {"evidence_type": dist.predicted, "probs": dict(dist.probs)}


class Gate(Pipeline):
    """Algorithm 1 with the gate on (``gated=True``) or off (every match commits)."""

    def __init__(
        self,
        info: SystemInfo,
        *,
        extractor: Extractor,
        matcher: Matcher,
        classifier=None,
        predicates: PredicateWriter | None = None,
        checker: Checker | None = None,
        gated: bool = True,
        retry: bool = False,
        permissive: Matcher | None = None,
    ):
        if gated and (classifier is None or predicates is None or checker is None):
            raise ValueError(
                "a gated pipeline needs a classifier, a predicate writer and a checker"
            )
        super().__init__(
            info,
            extractor=extractor,
            matcher=matcher,
            classifier=classifier,
            retry=retry,
            permissive=permissive,
        )
        self.predicates = predicates
        self.checker = checker
        self.gated = gated

    def process_turn(self, turn: UserTurn, context: list[ContextTurn]) -> list[MemoryEvent]:
        events: list[MemoryEvent] = []
        t = turn.t
        for m in self.matched(turn, context):
            if m.field is None:
                events.append(
                    MemoryEvent(
                        kind="dropped_no_field",
                        t=t,
                        extracted=m.extracted,
                        detail="no field matched"
                        + (" (after the plan-frame retry)" if self.retry else ""),
                    )
                )
                continue
            key, value = self.key_of(m.field), m.filed.value
            if not self.gated:
                changed = self.store.commit(key, value, t)
                events.append(
                    self.event(
                        "committed", turn, m, detail="" if changed else "already the current value"
                    )
                )
                continue
            dist = self.classify(m, turn, context)
            if dist.predicted == "speculation":
                existing = self.staging.find_pending(key, value)
                if existing is not None:
                    events.append(
                        self.event(
                            "staged",
                            turn,
                            m,
                            **self.typed(dist),
                            confirm_when=existing.confirm_when,
                            abandon_when=existing.abandon_when,
                            detail=f"already pending since t={existing.staged_at}; "
                            "not staged twice",
                        )
                    )
                    continue
                self._calls += 1
                p = self.predicates.write(m.field, m.filed, value, self.store.read(key), context)
                self.staging.stage(key, value, p.confirm_when, p.abandon_when, t)
                events.append(
                    self.event(
                        "staged",
                        turn,
                        m,
                        **self.typed(dist),
                        confirm_when=p.confirm_when,
                        abandon_when=p.abandon_when,
                    )
                )
            elif dist.predicted == "explicit_correction":
                changed = self.store.correct(key, value, t)
                events.append(
                    self.event(
                        "corrected",
                        turn,
                        m,
                        **self.typed(dist),
                        detail="" if changed else "already the current value",
                    )
                )
            else:
                changed = self.store.commit(key, value, t)
                events.append(
                    self.event(
                        "committed",
                        turn,
                        m,
                        **self.typed(dist),
                        detail="" if changed else "already the current value",
                    )
                )
        if self.gated:
            events.extend(self.check_staged(turn, context))
        return events

    def check_staged(self, turn: UserTurn, context: list[ContextTurn]) -> list[MemoryEvent]:
        """Algorithm 1, lines 12-14, for items staged before this turn."""
        events = []
        for item in self.staging.pending(before=turn.t):
            self._calls += 1
            field = self.field_of(item.key)
            verdict = self.checker.check(item, field, turn, context)
            common = dict(
                t=turn.t,
                key=item.key,
                value=item.value,
                confirm_when=item.confirm_when,
                abandon_when=item.abandon_when,
            )
            if verdict == "confirm":
                changed = self.store.commit(item.key, item.value, turn.t, via="promotion")
                self.staging.resolve(item, "promoted", turn.t)
                events.append(
                    MemoryEvent(
                        kind="promoted",
                        **common,
                        detail=(
                            f"staged at t={item.staged_at}"
                            + ("" if changed else "; value was already current")
                        ),
                    )
                )
            elif verdict == "abandon":
                self.staging.resolve(item, "discarded", turn.t)
                events.append(
                    MemoryEvent(kind="discarded", **common, detail=f"staged at t={item.staged_at}")
                )
        return events
