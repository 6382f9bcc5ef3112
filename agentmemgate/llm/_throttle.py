"""Calls in flight to one model, and backing off when its server answers one request at a time.

A small model on a CPU (llama-cpp-python's server) computes one request at a time; the others
wait in its queue. With four in flight each waits for the ones ahead, the client's timeout fires
while the server is still busy, and the work is lost and asked again. Two signs give such a
server away, and either lowers this model's limit to one call in flight, with a message:

- a burst of requests sent together whose latencies grow with their place in the queue, by
  about one service time each (serial: about s, 2s, 3s, ...; a parallel server answers them in
  about the same time, in no particular order);
- a request that timed out client-side while other requests were in flight.

The limit holds for the model's lifetime (one command run). Cache hits never reach this.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable, Iterator

BURST_WINDOW_S = 0.25  # requests sent within this of the first are one burst
MIN_BURST = 3


class Slot:
    """One request's place in the throttle: when it left, how many others were in flight."""

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
    def __init__(self, label: Callable[[], str], say: Callable[[str], None],
                 on_change: Callable[[int], None]):
        self._label = label
        self._say = say
        self._on_change = on_change  # in-flight count, for progress displays
        self._cond = threading.Condition()
        self.limit: int | None = None
        self.in_flight = 0
        self.reason: str | None = None
        self._burst: list[Slot] = []
        self._decided = False

    @contextlib.contextmanager
    def slot(self) -> Iterator[Slot]:
        with self._cond:
            while self.limit is not None and self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
            slot = Slot(others=self.in_flight - 1)
            if not self._decided and (not self._burst
                                      or slot.sent - self._burst[0].sent <= BURST_WINDOW_S):
                self._burst.append(slot)
            self._on_change(self.in_flight)
        try:
            yield slot
        finally:
            with self._cond:
                slot.done = time.monotonic()
                self.in_flight -= 1
                self._on_change(self.in_flight)
                if not self._decided and slot in self._burst:
                    self._judge_burst()
                self._cond.notify_all()

    def _judge_burst(self) -> None:
        if any(s.done is None for s in self._burst):
            return
        usable = [s for s in self._burst if s.usable]
        self._burst = []
        if len(usable) < MIN_BURST:
            return  # refused or failed requests say nothing about queueing: wait for another burst
        self._decided = True
        lat = [s.latency for s in sorted(usable, key=lambda s: s.sent)]
        gaps = [b - a for a, b in zip(lat, lat[1:])]
        # Serial: each answer waits for the ones before it, so latencies rise in send order by
        # about one service time each (the first may be slower still: a grammar to compile).
        if min(gaps) > 0 and sum(gaps) / len(gaps) >= 0.35 * lat[0]:
            shown = ", ".join(f"{x:.1f}" for x in lat)
            self._lower(f"{len(lat)} requests sent together took {shown} s, each waiting for the "
                        "ones before it")

    def timed_out(self, slot: Slot, timeout: float | None) -> None:
        """A request of ``slot`` got no answer within the client's timeout."""
        timeout = timeout or 0.0
        with self._cond:
            if slot.others > 0:
                self._lower(f"a request timed out client-side after {timeout:g} s while "
                            f"{slot.others} other(s) were in flight")
            elif self.reason is None:
                self.reason = "slow"
                self._say(f"{self._label()}: a request timed out client-side after {timeout:g} s with "
                          "no other request in flight; the server may still be computing. Raise "
                          "--timeout for this server (a timeout is not a model failure).")

    def _lower(self, why: str) -> None:
        if self.limit == 1:
            return
        self.limit = 1
        self.reason = why
        self._decided = True
        self._say(f"{self._label()} answers one request at a time ({why}): lowering concurrency to 1 "
                  "so requests do not wait in its queue until they time out.")
        self._cond.notify_all()
