"""The offline answer rules version 8: version 7 with the frame in which it read a plan as
asserted (a deposit paid or a place reserved for what starts later), checked on sentences of
other words than the answer it was found on; version 7 stays as it was, and what the user states
still asserts."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V7 = get_answer_judge("offline:answer_cues.v7")
V8 = get_answer_judge("offline:answer_cues.v8")
VALUES = ("Little Sprouts", "Maple Tree Montessori")

ask = asker("daycare", VALUES)


@pytest.mark.parametrize(
    "answer, v8",
    [
        # an -ed word ("extended") after the deposit hid "paid" in version 7
        ("Little Sprouts. You have paid a deposit for the extended toddler group at Maple Tree Montessori.", ["Little Sprouts"]),
        ("Little Sprouts. A spot at Maple Tree Montessori becomes available for him in March.", ["Little Sprouts"]),
        ("Little Sprouts; the holding fee for Maple Tree Montessori is paid.", ["Little Sprouts"]),
    ],
)  # fmt: skip
def test_version_8_reads_the_frame_version_7_read_as_asserted(answer, v8):
    got = ask(V8, answer)
    assert sorted(got.asserted) == sorted(v8), got.rationale
    assert "Maple Tree Montessori" in ask(V7, answer).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # the place taken up: a change made
        ("You paid the deposit in spring and your son moved to Maple Tree Montessori in September; he left Little Sprouts.", ["Maple Tree Montessori"]),
        ("Little Sprouts, where he has been since 2023.", ["Little Sprouts"]),
    ],
)  # fmt: skip
def test_version_8_keeps_what_the_user_states(answer, asserted):
    got = ask(V8, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
