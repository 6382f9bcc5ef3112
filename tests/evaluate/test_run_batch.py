"""``run_eval`` under ``--batch``: an arc's turns depend on each other, so they go in waves (every
arc's next turn in one batch), through the real OpenAI SDK over a mock Batch API."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel

from agentmemgate.evaluate import run_eval, system_spec
from agentmemgate.llm import get_model
from agentmemgate.llm.batch import run_batched

from .doubles import ScriptedSystem, info
from .test_run import ARCS, LITERAL

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from batch_fakes import OpenAIBatchApi  # noqa: E402
from llm_fakes import OPENAI_KEY  # noqa: E402


class Step(BaseModel):
    n: int


def test_eval_run_batches_each_arcs_next_turn_in_waves(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for a in ARCS:
        ws.save_specs([a.spec])
        ws.save_arc(a)
    api = OpenAIBatchApi(lambda cid, body: {"n": int(body["messages"][-1]["content"].split()[3]) + 1})
    model = get_model("openai:gpt-test", workspace=ws, http_client=api.client(), max_retries=0)

    class Chained(ScriptedSystem):
        """Asks the model at every user turn; each prompt carries the previous answer."""

        def begin(self, fields):
            super().begin(fields)
            self.n = 0

        def process_turn(self, turn, context):
            self.said = getattr(self, "said", "") + " / " + turn.text
            self.n = model.complete(f"Turn {turn.t} after {self.n} steps of{self.said}", schema=Step,
                                    purpose="eval.test", max_tokens=20).parsed.n
            return super().process_turn(turn, context)

    system_info = info("chained", False, offline=False)

    def make(**_):
        return Chained(LITERAL, system_info)

    make.info = system_info
    core = [a for a in ARCS if a.spec.split == "core"]
    said = [[t.text for s in a.sessions for t in s.turns if t.role == "user"] for a in core]
    user_turns = [len(x) for x in said]
    # wave k asks every arc's (k+1)-th turn; arcs that said the same so far ask the same question
    expected = [len({tuple(x[:k + 1]) for x in said if len(x) > k}) for k in range(max(user_turns))]
    assert expected[0] > 1
    s = run_batched(ws, lambda: run_eval(ws, ["core"], [system_spec(make)], show_progress=False),
                    poll_interval=0, show_progress=False)
    assert s.failed == 0  # the last pass's summary: arcs done in earlier waves count as stored
    assert s.ran_now + s.already_done == len(core)
    assert ws.db["eval_failures"].count == 0
    # one batch per wave: wave k holds the k-th turn of every arc that has one
    sizes = [len(api.lines[f"batch_{k + 1}"]) for k in range(api.created)]
    assert api.created == max(user_turns)
    assert sizes == expected
    assert all(f"after {k} steps of" in x["body"]["messages"][-1]["content"]
               for k in range(api.created) for x in api.lines[f"batch_{k + 1}"])
    # a re-run: everything is stored; nothing is submitted
    s = run_batched(ws, lambda: run_eval(ws, ["core"], [system_spec(make)], show_progress=False),
                    poll_interval=0, show_progress=False)
    assert s.already_done == len(core) and api.created == max(user_turns)
