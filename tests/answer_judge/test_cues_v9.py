"""The offline answer rules version 9: version 8 with the frames in which it read a plan as
asserted (a reservation or appointment ahead, a change under way, a start date in a later clause,
a list nested under a "key:" line, "it" in a judged clause of a dropped plan), checked on
sentences of other words than the answers they were found on; version 8 stays as it was, and what
the user states still asserts."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V8 = get_answer_judge("offline:answer_cues.v8")
V9 = get_answer_judge("offline:answer_cues.v9")
VALUES = ("Harbor Physio", "Eastside Sports Therapy")

ask = asker("physio", VALUES)


@pytest.mark.parametrize(
    "answer, v9",
    [
        # a reservation ahead, in a memory line
        ("- Sees a therapist at Harbor Physio\n- Reserved an assessment slot with Eastside Sports Therapy for the 9th", ["Harbor Physio"]),
        # a change under way: the cue before the source holds the target
        ("You're in the process of transferring your care from Harbor Physio to Eastside Sports Therapy; the referral letter hasn't gone out.", ["Harbor Physio"]),
        # a start date in a later clause, with the current value named after it
        ("You signed up with Eastside Sports Therapy, with a start date of May 3; until then, Harbor Physio is still treating you.", ["Harbor Physio"]),
        ("You enrolled with Eastside Sports Therapy, whose program begins on May 3; Harbor Physio is still treating you.", ["Harbor Physio"]),
        # a list nested under a key
        ("clinic:\n  current: Harbor Physio\n  shortlisted:\n    - Eastside Sports Therapy\n    - Core Motion", ["Harbor Physio"]),
        # "it" in a judged clause of a dropped plan
        ("You go to Harbor Physio. You looked at Eastside Sports Therapy, but decided it isn't worth it.", ["Harbor Physio"]),
    ],
)  # fmt: skip
def test_version_9_reads_the_frames_version_8_read_as_asserted(answer, v9):
    got = ask(V9, answer)
    assert sorted(got.asserted) == sorted(v9), got.rationale
    assert "Eastside Sports Therapy" in ask(V8, answer).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # a change made, not under way
        ("You moved your care from Harbor Physio to Eastside Sports Therapy in March.", ["Eastside Sports Therapy"]),
        # a nested list of what the user has now
        ("clinic:\n  current:\n    - Eastside Sports Therapy\n  previous: Harbor Physio", ["Eastside Sports Therapy"]),
        # a dropped plan does not retire the value kept
        ("Harbor Physio. Eastside Sports Therapy was not worth it, you said.", ["Harbor Physio"]),
    ],
)  # fmt: skip
def test_version_9_keeps_what_the_user_states(answer, asserted):
    got = ask(V9, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
