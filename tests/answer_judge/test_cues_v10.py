"""The offline answer rules version 10: version 9 with the frames in which it read a plan as
asserted (a change still being processed, an account opened to try the value out, a came-true cue
denied by a negation, a "key_with_underscores: value" line, a JSON list of strings under its key),
checked on sentences of other words than the answers they were found on; version 9 stays as it
was, and what the user states still asserts."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V9 = get_answer_judge("offline:answer_cues.v9")
V10 = get_answer_judge("offline:answer_cues.v10")
VALUES = ("Harbor Physio", "Eastside Sports Therapy")

ask = asker("physio", VALUES)


@pytest.mark.parametrize(
    "answer, v10",
    [
        # a change still being processed, in a "Label: value" line
        ("Current clinic: Harbor Physio\nIn progress: referral to Eastside Sports Therapy, first session TBC", ["Harbor Physio"]),
        # an account opened to try the value out
        ("You still see Harbor Physio, though you joined Eastside Sports Therapy last week to try it out.", ["Harbor Physio"]),
        # a came-true cue denied by a negation
        ("Harbor Physio still treats you. Your insurer said it would move your claim to Eastside Sports Therapy, but that has not happened yet.", ["Harbor Physio"]),
        # a key with "_": someone else's value, money put aside, the value to come
        ("physio: Harbor Physio\nsister_physio: Eastside Sports Therapy", ["Harbor Physio"]),
        ("physio: Harbor Physio\nsaving_for: Eastside Sports Therapy block of ten sessions", ["Harbor Physio"]),
        ("physio: Harbor Physio\nphysio_next: Eastside Sports Therapy", ["Harbor Physio"]),
        # a JSON list of strings under a key that names a stage
        ('{"physio": {"clinics_on_waitlist": ["Eastside Sports Therapy, spot 3"]}, "notes": ["Goes to Harbor Physio weekly"]}', ["Harbor Physio"]),
    ],
)  # fmt: skip
def test_version_10_reads_the_frames_version_9_read_as_asserted(answer, v10):
    got = ask(V10, answer)
    assert sorted(got.asserted) == sorted(v10), got.rationale
    assert "Eastside Sports Therapy" in ask(V9, answer).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # a came-true cue with no negation before it
        ("You said you would switch from Harbor Physio to Eastside Sports Therapy, and that happened in May.", ["Eastside Sports Therapy"]),
        # a key with "_" that says nothing about the value's status
        ("physio_clinic: Eastside Sports Therapy\nprevious_clinic: Harbor Physio", ["Eastside Sports Therapy"]),
        # a JSON list under a key that is the user's own
        ('{"clinics": ["Eastside Sports Therapy"]}', ["Eastside Sports Therapy"]),
    ],
)  # fmt: skip
def test_version_10_keeps_what_the_user_states(answer, asserted):
    got = ask(V10, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
