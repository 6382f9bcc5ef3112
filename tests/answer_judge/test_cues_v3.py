"""The offline answer rules version 3: version 2 with the frames it misread on product answers
(graph relations naming a plan, a change a third party has scheduled, a fact invalid since a
date), and every version 2 verdict on the older labelled sets kept."""

from __future__ import annotations

import json

import pytest

from agentmemgate.answer_judge import AnswerQuestion, get_answer_judge
from agentmemgate.answer_judge.devset import DEVSET, HELDOUT2, load_answer_set

V2 = get_answer_judge("offline:answer_cues.v2")
V3 = get_answer_judge("offline:answer_cues.v3")


def ask(judge, answer, values=("Boston", "Seattle"), field="home_city"):
    return judge.ask(
        AnswerQuestion(
            field=field, description="d", probe_question="q", answer=answer, candidates=values
        )
    )


def edge(name, fact, valid="2024-01-01T00:00:00Z", invalid=None):
    return {"name": name, "fact": fact, "valid_at": valid, "invalid_at": invalid}


@pytest.mark.parametrize(
    "answer, v3",
    [
        # a graph relation that names a plan asserts nothing
        (json.dumps([edge("LIVES_IN", "Sam lives in Boston"), edge("CONSIDERING_MOVE_TO", "Sam -> Seattle")]), ["Boston"]),
        ("- LIVES_IN: Boston\n- PLANS_TO_MOVE_TO: Seattle", ["Boston"]),
        ("user -- LIVES_IN --> Boston\nuser -- WANTS_TO_MOVE_TO --> Seattle", ["Boston"]),
        ("- MOVED_TO: Seattle", ["Seattle"]),  # a relation that is a change made
        # a fact marked invalid since a date has ended; an open date leaves it valid
        ("- Sam lives in Seattle (invalid since 2024-03-01)\n- Sam lives in Boston", ["Boston"]),
        ("- Sam lives in Seattle [invalidated 2024-03-01]\n- Sam lives in Boston", ["Boston"]),
        ("- Sam lives in Seattle (invalid since: none)\n- Sam lives in Boston", ["Boston", "Seattle"]),
        ("Fact: Sam lives in Seattle\nValid from: 2024-01-01\nInvalid since: 2024-02-01\n\n"
         "Fact: Sam lives in Boston\nValid from: 2020-01-01", ["Boston"]),
        # a change a third party is carrying out or has set
        ("Your movers have you living in Seattle by June 1.", []),
    ],
)  # fmt: skip
def test_version_3_reads_the_frames_version_2_misread(answer, v3):
    got = ask(V3, answer)
    assert sorted(got.asserted) == sorted(v3), got.rationale
    if "Seattle" not in v3:  # version 2 read the plan (or the ended value) as asserted
        assert "Seattle" in ask(V2, answer).asserted


def test_a_carrier_porting_your_number_is_a_change_not_made():
    got = ask(
        V3,
        "Google Fi is porting your number over from Verizon next week.",
        ("Verizon", "Google Fi"),
        "phone_carrier",
    )
    assert got.asserted == ["Verizon"], got.rationale


def test_version_3_keeps_every_version_2_verdict_on_the_older_sets():
    for path in (DEVSET, HELDOUT2):
        for it in load_answer_set(path).items:
            q = AnswerQuestion(
                field=it.field,
                description="d",
                probe_question=it.question,
                answer=it.answer,
                candidates=(it.values.initial, it.values.plan),
            )
            assert V3.ask(q).asserted == V2.ask(q).asserted, it.id
