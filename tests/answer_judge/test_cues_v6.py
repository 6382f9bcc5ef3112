"""The offline answer rules version 6: version 5 with the frames in which it read a plan as
asserted (a value's name split by other words, a pending noun after a possessive, a date a third
party has set, a review not decided, a subject-predicate-object record whose predicate names a
plan), checked on sentences of other words than the answers they were found on; version 5 stays
as it was, and what the user states still asserts."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V5 = get_answer_judge("offline:answer_cues.v5")
V6 = get_answer_judge("offline:answer_cues.v6")
VALUES = ("Comcast Xfinity", "Sonic Fiber, Oakland office")

ask = asker("internet_provider", VALUES)


@pytest.mark.parametrize(
    "answer, v6",
    [
        # the value's name split by other words: one occurrence, framed as a whole
        ("Comcast Xfinity is your provider; Sonic Fiber in the Oakland office has booked you an install for May 4.", ["Comcast Xfinity"]),
        ("You're on Comcast Xfinity. You paid a deposit on a line from Sonic Fiber, the one with the Oakland office.", ["Comcast Xfinity"]),
        # a pending noun after a possessive, a review not decided
        ("Comcast Xfinity is what you have. Your order with Sonic Fiber, Oakland office, is being reviewed.", ["Comcast Xfinity"]),
        ("You use Comcast Xfinity at home. Your application for Sonic Fiber, Oakland office, is under review.", ["Comcast Xfinity"]),
        # a street title before "Your" ends its sentence
        ("You're with Comcast Xfinity on Market St. Your order at Sonic Fiber, Oakland office, is in review.", ["Comcast Xfinity"]),
        # a date a third party has set
        ("Comcast Xfinity for now. Sonic Fiber, Oakland office, set the install date for the 12th.", ["Comcast Xfinity"]),
        # a triple whose predicate names a plan, printed or in JSON
        ("[Triple(subject='user', predicate='internet_through', object='Comcast Xfinity'), "
         "Triple(subject='user', predicate='intends_to_order', object='Sonic Fiber, Oakland office', context='a neighbour recommended it')]",
         ["Comcast Xfinity"]),
    ],
)  # fmt: skip
def test_version_6_reads_the_frames_version_5_read_as_asserted(answer, v6):
    got = ask(V6, answer)
    assert sorted(got.asserted) == sorted(v6), got.rationale
    assert "Sonic Fiber, Oakland office" in ask(V5, answer).asserted


def test_version_6_reads_triples_in_json_where_version_5_read_nothing():
    answer = (
        '[{"subject": "user", "predicate": "has_service_from", "object": "Comcast Xfinity"}, '
        '{"subject": "user", "predicate": "evaluating", "object": "Sonic Fiber, Oakland office"}]'
    )
    got = ask(V6, answer)
    assert got.asserted == ["Comcast Xfinity"], got.rationale
    assert "predicate evaluating names a plan" in got.rationale
    assert ask(V5, answer).asserted == []


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # a change made, in prose with a split name and in a triple's context
        ("You left Comcast Xfinity in March and switched to Sonic Fiber in the Oakland office.", ["Sonic Fiber, Oakland office"]),
        ("Triple(subject='user', predicate='gets_internet_from', object='Sonic Fiber, Oakland office', context='dropped Comcast Xfinity in June')",
         ["Sonic Fiber, Oakland office"]),
        # a value repeated is read at each place, not joined ("..., so X")
        ("One memory says Comcast Xfinity, a later one says Sonic Fiber, Oakland office. The later wins, so Sonic Fiber, Oakland office.",
         ["Sonic Fiber, Oakland office"]),
        # a title before a name stays in its sentence
        ("You have Comcast Xfinity at the shop by St. Mary's. Sonic Fiber, Oakland office, is an option you're weighing.", ["Comcast Xfinity"]),
    ],
)  # fmt: skip
def test_version_6_keeps_what_the_user_states(answer, asserted):
    got = ask(V6, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
