"""``run_eval`` under ``--batch``: an arc's turns depend on each other, so they go in waves (every
arc's next turn in one batch), through the real OpenAI SDK over a mock Batch API."""

from __future__ import annotations

from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from pydantic import BaseModel

from agentmemgate.evaluate import run_eval, system_spec
from agentmemgate.llm import get_model
from agentmemgate.llm.batch import run_batched

from .doubles import ScriptedSystem, info
from .test_run import ARCS, LITERAL


class Step(BaseModel):
    n: int


def test_eval_run_batches_each_arcs_next_turn_in_waves(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for a in ARCS:
        ws.save_specs([a.spec])
        ws.save_arc(a)
    api = OpenAIBatchApi(
        lambda cid, body: {"n": int(body["messages"][-1]["content"].split()[3]) + 1}
    )
    model = get_model("openai:gpt-test", workspace=ws, http_client=api.client(), max_retries=0)

    class Chained(ScriptedSystem):
        """Asks the model at every user turn; each prompt carries the previous answer."""

        def begin(self, fields):
            super().begin(fields)
            self.n = 0

        def process_turn(self, turn, context):
            self.said = getattr(self, "said", "") + " / " + turn.text
            self.n = model.complete(
                f"Turn {turn.t} after {self.n} steps of{self.said}",
                schema=Step,
                purpose="eval.test",
                max_tokens=20,
            ).parsed.n
            return super().process_turn(turn, context)

    system_info = info("chained", False, offline=False)

    def make(**_):
        return Chained(LITERAL, system_info)

    make.info = system_info
    core = [a for a in ARCS if a.spec.split == "core"]
    said = [[t.text for s in a.sessions for t in s.turns if t.role == "user"] for a in core]
    user_turns = [len(x) for x in said]
    # wave k asks every arc's (k+1)-th turn; arcs that said the same so far ask the same question
    expected = [
        len({tuple(x[: k + 1]) for x in said if len(x) > k}) for k in range(max(user_turns))
    ]
    assert expected[0] > 1
    s = run_batched(
        ws,
        lambda: run_eval(ws, ["core"], [system_spec(make)], show_progress=False),
        poll_interval=0,
        show_progress=False,
    )
    assert s.failed == 0  # the last pass's summary: arcs done in earlier waves count as stored
    assert s.ran_now + s.already_done == len(core)
    assert ws.db["eval_failures"].count == 0
    # one batch per wave: wave k holds the k-th turn of every arc that has one
    sizes = [len(api.lines[f"batch_{k + 1}"]) for k in range(api.created)]
    assert api.created == max(user_turns)
    assert sizes == expected
    assert all(
        f"after {k} steps of" in x["body"]["messages"][-1]["content"]
        for k in range(api.created)
        for x in api.lines[f"batch_{k + 1}"]
    )
    # a re-run: everything is stored; nothing is submitted
    s = run_batched(
        ws,
        lambda: run_eval(ws, ["core"], [system_spec(make)], show_progress=False),
        poll_interval=0,
        show_progress=False,
    )
    assert s.already_done == len(core) and api.created == max(user_turns)


def test_eval_answers_batch_asks_every_sessions_question_in_one_batch(ws, tmp_path, monkeypatch):
    import json

    import openai

    from agentmemgate.evaluate import run_answers
    from agentmemgate.llm import Request

    from .test_run import HELDOUT, OPEN, _equal_judge

    for a in ARCS:
        ws.save_specs([a.spec])
        ws.save_arc(a)

    def respond(cid, body):
        prompt = body["messages"][-1]["content"]
        if "Value 1:" in prompt:
            return _equal_judge(Request(prompt=prompt))
        answer = prompt.split("<<<\n")[1].split("\n>>>")[0]
        return {
            "asserted": [] if "know" in answer else [answer.rstrip(".")],
            "rationale": "read the answer",
        }

    api = OpenAIBatchApi(respond)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    p = tmp_path / "a.jsonl"
    p.write_text(
        "\n".join(
            json.dumps({"arc_id": arc.id, "after_session": i, "answer": a})
            for arc, answers in (
                (OPEN, ["Pandora.", "I don't know."]),
                (HELDOUT, ["Deezer.", "Pandora."]),
            )
            for i, a in enumerate(answers)
        )
        + "\n"
    )
    s = run_batched(
        ws,
        lambda: run_answers(ws, p, "product", judge="openai:gpt-test", show_progress=False),
        poll_interval=0,
        show_progress=False,
    )
    assert s.failed == 0 and s.scored_now + s.already_done == 2
    # wave 1: every answer's assertion question together (the two "Pandora." answers to the same
    # field ask the same question: one request); then the equivalence questions
    assert len(api.lines["batch_1"]) == 3
    assert all("Value 1:" not in x["body"]["messages"][-1]["content"] for x in api.lines["batch_1"])
    assert all(
        "Value 1:" in x["body"]["messages"][-1]["content"]
        for k in range(2, api.created + 1)
        for x in api.lines[f"batch_{k}"]
    )
