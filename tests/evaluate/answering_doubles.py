"""A toy answering system for the answering-route tests: a keyword memory over a backend shared by
every instance (as a product's vector store or graph database is), partitioned by namespace."""

from __future__ import annotations

import threading

from agentmemgate.memory.answering import AnsweringSystem, ProbeAnswer, Retrieved
from agentmemgate.memory.system import SystemInfo

INFO = SystemInfo(
    name="toy-keyword",
    description="keyword memory over a shared backend",
    gated=False,
    components={"store": "shared dict"},
    offline=True,
)
VALUES = ("Deezer", "Pandora")


class Backend:
    """One store for every conversation, as a product's is; what each instance saw is recorded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows: dict[str, list[tuple[str, str, str]]] = {}  # namespace -> (date, role, text)
        self.received: list[dict] = []  # everything any instance was given, in order
        self.begun: list[str] = []
        self.fail_when: tuple[str, int] | None = None  # (text in the conversation, session)


class ToyKeyword(AnsweringSystem):
    info = INFO

    def __init__(self, backend: Backend):
        self.b, self.ns, self._calls, self.seen = backend, None, 0, []

    def begin(self, namespace):
        self.ns = namespace
        with self.b.lock:
            self.b.begun.append(namespace)
            self.b.received.append({"begin": namespace})

    def ingest(self, session):
        with self.b.lock:
            self.b.received.append({"ingest": session.model_dump(mode="json"), "ns": self.ns})
            for t in session.turns:
                self.b.rows.setdefault(self.ns, []).append(
                    (session.date.isoformat(), t.role, t.text)
                )
        self.seen.append(session)
        fw = self.b.fail_when
        if (
            fw
            and session.index == fw[1]
            and any(fw[0] in t.text for s in self.seen for t in s.turns)
        ):
            raise RuntimeError("the toy backend went away")

    def answer(self, question, date):
        self._calls += 1
        with self.b.lock:
            self.b.received.append({"question": question, "date": date.isoformat(), "ns": self.ns})
            mine = [r for r in self.b.rows.get(self.ns, []) if r[1] == "user"]
        hits = [r for r in mine if any(v in r[2] for v in VALUES)]
        last = next((v for r in reversed(hits) for v in VALUES if v in r[2]), None)
        return ProbeAnswer(
            answer=f"You use {last}." if last else "I don't know.",
            retrieved=[Retrieved(text=r[2], valid_at=r[0]) for r in hits],
        )

    @property
    def calls(self):
        return self._calls


def toy_factory(backend: Backend):
    def make():
        return ToyKeyword(backend)

    make.info = INFO
    return make
