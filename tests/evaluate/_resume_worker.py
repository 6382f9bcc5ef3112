"""An eval run whose system calls a slow scripted model, killed with -9 and re-run by test_resume.

Usage: python _resume_worker.py WORKSPACE REQUEST_LOG DELAY_SECONDS
Each request's prompt hash is appended to REQUEST_LOG before the (slow) answer is sent.
"""

from __future__ import annotations

import hashlib
import re
import sys

from llm.scripted import register
from pydantic import BaseModel

from agentmemgate.evaluate import EvalOptions, run_eval, system_spec
from agentmemgate.llm import get_model
from agentmemgate.memory.system import (
    FieldKey,
    FieldState,
    MemoryEvent,
    MemorySystem,
    StoreSnapshot,
    SystemInfo,
)
from agentmemgate.workspace import Workspace


class Reply(BaseModel):
    value: str | None


INFO = SystemInfo(
    name="llm-echo",
    description="commits the last capitalised phrase a model finds",
    gated=False,
    components={"extractor": "scripted:resume"},
    offline=False,
)


class LLMEcho(MemorySystem):
    info = INFO

    def __init__(self, model):
        self.model, self._calls, self.current = model, 0, None

    def begin(self, fields):
        self.key = FieldKey.of(fields[0])

    def process_turn(self, turn, context):
        self._calls += 1
        r = self.model.complete(
            f"{len(context)} turns before. User: {turn.text}", schema=Reply, purpose="test.extract"
        ).parsed
        if r.value:
            self.current = r.value
            return [MemoryEvent(kind="committed", t=turn.t, key=self.key, value=r.value)]
        return []

    def read(self, key):
        return self.current

    def snapshot(self, t):
        return StoreSnapshot(t=t, fields=[FieldState(key=self.key, current=self.current)])

    @property
    def calls(self):
        return self._calls


def main(ws_path: str, log_path: str, delay: float) -> None:
    register()  # scripted:NAME, as the suite's conftest registers it
    ws = Workspace(ws_path)
    model = get_model("scripted:resume", workspace=ws, delay=delay)

    def responder(req):
        with open(log_path, "a") as f:
            f.write(hashlib.sha256(req.prompt.encode()).hexdigest() + "\n")
        words = re.findall(r"\b[A-Z][a-z]+\b", req.prompt.split("User: ", 1)[1])
        return {"value": words[-1] if words else None}

    model.respond_with(responder)

    def make(**_):
        return LLMEcho(model)

    make.info = INFO
    s = run_eval(ws, ["core"], [system_spec(make)], EvalOptions(concurrency=4), show_progress=False)
    print(s.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
