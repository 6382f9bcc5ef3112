"""Calls in flight to one model, and backing off when its server answers one request at a time.

A small model on a CPU (llama-cpp-python's server) computes one request at a time; the others
wait in its queue. With four in flight each waits for the ones ahead, the client's timeout fires
while the server is still busy, and the work is lost and asked again. Two signs give such a
server away, and either lowers this model's limit to one call in flight, with a message:

- latency that grows with concurrency: the first requests sent together come back spread out
  (serial: about s, 2s, 3s, ...), so two probe requests are then sent alone; if the burst's mean
  latency is well above the probes', the server queues and the limit stays at one (a parallel
  server answers a burst and a lone request in about the same time, and gets its limit back);
- a request that timed out client-side while other requests were in flight.

The limit holds for the model's lifetime (one command run). Cache hits never reach this.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from ._errors import CallFailed

BURST_WINDOW_S = 0.25  # requests sent within this of the first (before any is back) are a burst
MIN_BURST = 3
SPREAD = 1.5  # a burst whose slowest answer took this many times its fastest is suspicious
PROBES = 2
SLOWER = 1.5  # serial when the burst's mean latency is this many times the lone requests'


class Slot:
    """One request's place in the throttle: when it left, and the most other requests in flight
    at any moment of its life (a request that waited alongside others may have been queued)."""

    __slots__ = ("sent", "done", "others", "usable")

    def __init__(self, others: int) -> None:
        self.sent = time.monotonic()
        self.done: float | None = None
        self.others = others
        self.usable = False  # set when the server answered (latency means something)

    @property
    def latency(self) -> float:
        return (self.done or time.monotonic()) - self.sent


class Throttle:
    def __init__(
        self,
        label: Callable[[], str],
        say: Callable[[str], None],
        on_change: Callable[[int], None],
        timeout: Callable[[], float] = lambda: 0.0,
    ):
        self._label = label
        self._timeout = timeout  # the client-side timeout of one HTTP attempt (seconds)
        self._say = say
        self._on_change = on_change  # in-flight count, for progress displays
        self._cond = threading.Condition()
        self.limit: int | None = None
        self.in_flight = 0
        self.reason: str | None = None
        self._burst: list[Slot] = []
        self._decided = False
        self._open: set[Slot] = set()
        self._burst_latency: list[float] = []  # set while probing
        self._probes: list[Slot] = []

    @contextlib.contextmanager
    def slot(self) -> Iterator[Slot]:
        with self._cond:
            while self.limit is not None and self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
            slot = Slot(others=self.in_flight - 1)
            alone = slot.others == 0
            for other in self._open:
                other.others = max(other.others, self.in_flight - 1)
            self._open.add(slot)
            if self._decided:
                pass
            elif self._burst_latency:
                if alone and len(self._probes) < PROBES:
                    self._probes.append(slot)
            elif not self._burst or (
                slot.sent - self._burst[0].sent <= BURST_WINDOW_S
                and all(s.done is None for s in self._burst)
            ):
                self._burst.append(slot)  # sent together: none of them is back yet
            self._on_change(self.in_flight)
        try:
            yield slot
        finally:
            with self._cond:
                slot.done = time.monotonic()
                self._open.discard(slot)
                self.in_flight -= 1
                self._on_change(self.in_flight)
                if not self._decided:
                    if slot in self._burst and not slot.usable:
                        # a refused or failed request says nothing about queueing; leaving the
                        # burst at once lets the retries sent right after it join the others
                        self._burst.remove(slot)
                        if self._burst:
                            self._judge_burst()
                    elif slot in self._burst:
                        self._judge_burst()
                    elif slot in self._probes:
                        self._judge_probes(slot)
                self._cond.notify_all()

    def _judge_burst(self) -> None:
        if any(s.done is None for s in self._burst):
            return
        usable = [s for s in self._burst if s.usable]
        self._burst = []
        if len(usable) < MIN_BURST:
            return  # too few answers to tell: wait for another burst
        lat = sorted(s.latency for s in usable)
        if lat[-1] < SPREAD * lat[0]:
            self._decided = True  # answered together: not a queue
            return
        self._burst_latency = lat  # spread out: send two alone and compare
        self.limit = 1

    def _judge_probes(self, slot: Slot) -> None:
        if not slot.usable:
            self._probes.remove(slot)
            return
        done = [s for s in self._probes if s.done is not None and s.usable]
        if len(done) < PROBES:
            return
        together = sum(self._burst_latency) / len(self._burst_latency)
        alone = sum(s.latency for s in done) / len(done)
        self._decided = True
        self.limit = None
        if together >= SLOWER * alone:
            shown = ", ".join(f"{x:.1f}" for x in self._burst_latency)
            self._lower(
                f"{len(self._burst_latency)} requests sent together took {shown} s, one at "
                f"a time {alone:.1f} s each"
            )

    def timed_out(self, slot: Slot, timeout: float | None) -> None:
        """A request of ``slot`` got no answer within the client's timeout."""
        timeout = timeout or 0.0
        with self._cond:
            if slot.others > 0:
                self._lower(
                    f"a request timed out client-side after {timeout:g} s while "
                    f"{slot.others} other(s) were in flight"
                )
            elif self.reason is None:
                self.reason = "slow"
                self._say(
                    f"{self._label()}: a request timed out client-side after {timeout:g} s with "
                    "no other request in flight; the server may still be computing. Raise "
                    "--timeout for this server (a timeout is not a model failure)."
                )

    def lost(self, slot: Slot, waited: float) -> None:
        """The SDK retries an attempt of ``slot`` that got no answer after ``waited`` seconds."""
        timeout = self._timeout()
        if waited >= timeout:
            self.timed_out(slot, timeout)

    def timeout_error(self, slot: Slot, attempts: int) -> CallFailed:
        """The failure of a call of ``slot`` whose last attempt timed out client-side."""
        timeout = self._timeout()
        self.timed_out(slot, timeout)
        queued = (
            f"; {slot.others} other request(s) were in flight, so it may have waited in "
            "the server's queue (concurrency is now 1)"
            if slot.others
            else ""
        )
        return CallFailed(
            f"{self._label()}: no reply within the client-side timeout of {timeout:g} s "
            f"({attempts} attempt{'s' if attempts != 1 else ''}){queued}. A timeout, not a model "
            "failure: the server may still be computing; raise --timeout",
            kind="timeout",
        )

    def _lower(self, why: str) -> None:
        if self.limit == 1:
            return
        self.limit = 1
        self.reason = why
        self._decided = True
        self._say(
            f"{self._label()} answers one request at a time ({why}): lowering concurrency to 1 "
            "so requests do not wait in its queue until they time out."
        )
        self._cond.notify_all()
