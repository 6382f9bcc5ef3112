"""The one failure policy of an eval's items (``_drive.attempt``), called directly; what the tally
stores of a failure; and the policy end to end for answering systems and natural items."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agentmemgate.errors import AmgError, BadInput
from agentmemgate.evaluate import EvalOptions, store
from agentmemgate.evaluate._drive import Failure, Tally, attempt, drive
from agentmemgate.llm import CallFailed, FatalProviderError


@dataclass
class Item:
    run_key: str = "rk"
    system: str = "toy"
    arc_id: str = "a1"
    stored: Any = None


def row(item, output, scored):
    return ("row", output, scored)


def raises(error):
    def fn(*_):
        raise error

    return fn


def answer(item):
    return ["You use Deezer."]


def half(item, output):
    return 0.5


def test_a_finished_item_is_its_row_and_a_stored_output_is_scored_not_made_again():
    assert attempt(Item(), answer, half, row) == ("row", ["You use Deezer."], 0.5)
    made_again = raises(AssertionError("the stored output is made again"))
    assert attempt(Item(stored=["stored"]), made_again, half, row) == ("row", ["stored"], 0.5)


def test_a_failed_call_while_the_system_runs_is_recorded_at_that_stage():
    r = attempt(
        Item(), raises(CallFailed("server error (HTTP 503)", kind="server_error")), half, row
    )
    assert isinstance(r, Failure)
    assert (r.item, r.stage, r.error, r.kept) == (Item(), "system", "server error (HTTP 503)", None)


def test_a_failed_call_while_scoring_keeps_what_the_system_said():
    r = attempt(Item(), answer, raises(CallFailed("the judge timed out", kind="timeout")), row)
    assert isinstance(r, Failure) and (r.stage, r.error) == ("scoring", "the judge timed out")
    assert r.kept == ("row", ["You use Deezer."], None)  # stored without a score


def test_a_stored_output_whose_scoring_fails_is_not_stored_again():
    r = attempt(Item(stored=["stored"]), answer, raises(CallFailed("the judge timed out")), row)
    assert isinstance(r, Failure) and (r.stage, r.kept) == ("scoring", None)


@pytest.mark.parametrize(
    "error", [FatalProviderError("the API key was rejected"), BadInput("a bad value")]
)
@pytest.mark.parametrize("stage", ["system", "scoring"])
def test_an_amg_error_stops_the_run(error, stage):
    run, score = (raises(error), half) if stage == "system" else (answer, raises(error))
    with pytest.raises(type(error)):
        attempt(Item(), run, score, row)


def test_a_bug_in_the_system_is_recorded_against_the_item():
    r = attempt(Item(system="buggy"), raises(ValueError("index out of range")), half, row)
    assert isinstance(r, Failure)
    assert (r.stage, r.error, r.kept) == (
        "system",
        "buggy raised ValueError: index out of range",
        None,
    )


def test_a_bug_while_scoring_is_the_toolkits_and_raised():
    with pytest.raises(KeyError):
        attempt(Item(), answer, raises(KeyError("truth")), row)


@pytest.mark.parametrize("offline", [True, False])
def test_the_drive_gives_every_item_its_result_or_its_failure(offline):
    """Inline (offline rules) or through the thread pool, a failed call is a ``Failure`` of its
    item and the others finish."""

    def run(item):
        if item.arc_id == "a2":
            raise CallFailed("server error (HTTP 503)", kind="server_error")
        return [item.arc_id]

    items = [Item(arc_id=f"a{i}") for i in range(5)]
    results = list(
        drive(
            items,
            run=run,
            score=half,
            row=row,
            offline=offline,
            description="toy",
            usage=None,
            concurrency=2,
            show_progress=False,
        )
    )
    failed = [r for r in results if isinstance(r, Failure)]
    assert [(f.item.arc_id, f.stage, f.error) for f in failed] == [
        ("a2", "system", "server error (HTTP 503)")
    ]
    assert sorted(r for r in results if not isinstance(r, Failure)) == [
        ("row", [f"a{i}"], 0.5) for i in (0, 1, 3, 4)
    ]


def test_a_failed_call_is_not_an_amg_error():
    """So ``except AmgError`` (stop the run) can never catch one, whatever the clauses' order."""
    assert not issubclass(CallFailed, AmgError)
    assert issubclass(FatalProviderError, AmgError)


def answered(score=None, sessions=True) -> store.Answered:
    rows = [
        {
            "after_session": 0,
            "date": "2024-01-01",
            "answer": "You use Deezer.",
            "retrieved": [],
            "calls": 1,
            "namespace": "amg-x",
        }
    ]
    return store.Answered(
        run_key="rk",
        system="toy",
        arc_id="a1",
        split="core",
        level="open",
        arc_sha="sha",
        sessions=rows if sessions else None,
        answers=["You use Deezer."],
        verdicts=None,
        score=score,
        judge_key="jk",
    )


def test_the_tally_stores_a_failure_with_the_answers_it_kept(ws):
    t = Tally(ws, offline=False)
    t.record(Failure(Item(), "scoring", "the judge timed out", kept=answered()))
    assert (t.failed, t.ran, t.calls) == (1, 0, 0)
    assert t.examples == ["toy on a1 (scoring): the judge timed out"]
    assert [r["answer"] for r in ws.db["eval_product_answers"].rows] == ["You use Deezer."]
    assert [(r["answer"], r["verdict"]) for r in ws.db["eval_answers"].rows] == [
        ("You use Deezer.", None)
    ]
    assert ws.db["eval_scores"].count == 0
    assert [(r["stage"], r["error"]) for r in ws.db["eval_failures"].rows] == [
        ("scoring", "the judge timed out")
    ]


# -- end to end --------------------------------------------------------------------------------
def _judge(name: str, down: bool):
    """A scripted judge that is down (every call fails) or reads 'Deezer' and compares exactly."""
    from agentmemgate.llm import get_model

    def respond(req):
        if down:
            return CallFailed("the judge's server error (HTTP 503)", kind="server_error")
        if "assistant's answer" in req.prompt:
            return {
                "asserted": ["Deezer"] if "Deezer" in req.prompt.split("<<<")[-1] else [],
                "rationale": "read the answer",
            }
        return {
            "verdict": "not_equivalent",
            "confidence": 0.9,
            "rationale": "compared the two values",
        }

    get_model(f"scripted:{name}").respond_with(respond)
    return f"scripted:{name}"


def test_an_answering_systems_answers_survive_its_judge_failing(ws):
    from agentmemgate.evaluate import answering_spec, run_eval

    from .answering_doubles import Backend, toy_factory
    from .test_measures import ABANDONED, OPEN

    ws.save_specs([ABANDONED.spec, OPEN.spec])
    for a in (ABANDONED, OPEN):
        ws.save_arc(a)
    b = Backend()
    spec = answering_spec(toy_factory(b))
    s = run_eval(
        ws, ["core"], [spec], EvalOptions(judge=_judge("judge-down", True)), show_progress=False
    )
    assert (s.ran_now, s.failed) == (0, 2) and "(scoring)" in s.failure_examples[0]
    assert {r["stage"] for r in ws.db["eval_failures"].rows} == {"scoring"}
    assert ws.db["eval_product_answers"].count == 4  # every answer kept, two arcs x two sessions
    assert {r["verdict"] for r in ws.db["eval_answers"].rows} == {None}
    begun = len(b.begun)
    s = run_eval(
        ws, ["core"], [spec], EvalOptions(judge=_judge("judge-down", False)), show_progress=False
    )
    assert (s.ran_now, s.rescored, s.failed) == (0, 2, 0) and len(b.begun) == begun, (
        s.failure_examples
    )
    assert ws.db["eval_failures"].count == 0 and ws.db["eval_scores"].count == 2


def test_a_natural_items_answer_survives_its_judge_failing(ws):
    from agentmemgate.corpora.natural import build_natural_set
    from agentmemgate.evaluate import answering_spec
    from agentmemgate.evaluate.natural import run_natural

    from .test_natural_eval import NAT_LME, Recorder

    build_natural_set(ws, NAT_LME, "longmemeval", "lme", progress=False)  # 3 items
    log: list = []
    factory = lambda: Recorder(log)
    factory.info = Recorder([]).info
    spec = answering_spec(factory, name="recorder")
    s = run_natural(
        ws, ["lme"], [spec], EvalOptions(judge=_judge("nat-judge-down", True)), show_progress=False
    )
    assert (s.ran_now, s.failed) == (0, 3)
    assert {r["stage"] for r in ws.db["eval_failures"].rows} == {"scoring"}
    assert ws.db["eval_product_answers"].count == 3  # every item's answer kept
    asked = len(log)
    again = run_natural(
        ws, ["lme"], [spec], EvalOptions(judge=_judge("nat-judge-down", False)), show_progress=False
    )
    assert (again.ran_now, again.rescored, again.failed) == (0, 3, 0) and len(log) == asked
    assert ws.db["eval_failures"].count == 0 and ws.db["eval_scores"].count == 3
