"""The offline answer rules version 7: version 6 with the frames in which it read a plan as
asserted (going back and forth between values, a "Label: value" line in a list), checked on
sentences of other words than the answers they were found on; version 6 stays as it was, and
what the user states still asserts."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V6 = get_answer_judge("offline:answer_cues.v6")
V7 = get_answer_judge("offline:answer_cues.v7")
VALUES = ("Lyft", "Uber")

ask = asker("rideshare_app", VALUES)


@pytest.mark.parametrize(
    "answer, v7",
    [
        # a decision not made: back and forth
        ("Lyft or Uber, I can't tell; you kept going back and forth between them.", []),
        ("Hard to say: you were flip-flopping between Lyft and Uber last time we spoke.", []),
        # a "Label: value" line in a list
        ("* Rides with: Lyft\n* Thinking about: Uber, since the airport pickups are easier", ["Lyft"]),
        ("1. App: Lyft\n2. Might switch to: Uber", ["Lyft"]),
    ],
)  # fmt: skip
def test_version_7_reads_the_frames_version_6_read_as_asserted(answer, v7):
    got = ask(V7, answer)
    assert sorted(got.asserted) == sorted(v7), got.rationale
    assert "Uber" in ask(V6, answer).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # a listed label that states the current value, and a change made
        ("- Current app: Uber\n- Previous app: Lyft", ["Uber"]),
        ("- Switched to: Uber (in May)\n- Dropped: Lyft", ["Uber"]),
        # undecided in words version 6 read already
        ("You've been on the fence between Lyft and Uber for weeks.", []),
        # the choice made after going back and forth
        ("After going back and forth for a month, you settled on Uber.", ["Uber"]),
    ],
)  # fmt: skip
def test_version_7_keeps_what_the_user_states(answer, asserted):
    got = ask(V7, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
