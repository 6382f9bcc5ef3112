"""The offline answer rules version 5: version 4 with the frames in which it read a plan as
asserted ("both" in a report of what was said, an anaphor in someone else's act, a value as the
subject of a judged clause), checked on sentences of other words than the answers they were
found on; version 4 stays as it was, and the user's own "both" and "it" still assert."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import get_answer_judge

from ._asking import asker

V4 = get_answer_judge("offline:answer_cues.v4")
V5 = get_answer_judge("offline:answer_cues.v5")
VALUES = ("T-Mobile", "Visible")

ask = asker("phone_carrier", VALUES)


@pytest.mark.parametrize(
    "answer, v5",
    [
        # "both" only reports what was said
        ("T-Mobile or Visible, I can't say. Both have come up when we talked.", []),
        ("It's T-Mobile or Visible; you brought up both, and it's unclear which you're on.", []),
        # an anaphor in someone else's act, or as its clause's subject
        ("You're with T-Mobile. The Visible move fell apart when the store clerk set it up wrong.", ["T-Mobile"]),
        ("T-Mobile for now. Visible came up once, and it is still an open question.", ["T-Mobile"]),
        # a value as the subject of a negated judged clause
        ("You stayed with T-Mobile and decided Visible wasn't for you.", ["T-Mobile"]),
        ("You kept T-Mobile and concluded Visible isn't worth the hassle.", ["T-Mobile"]),
    ],
)  # fmt: skip
def test_version_5_reads_the_frames_version_4_read_as_asserted(answer, v5):
    got = ask(V5, answer)
    assert sorted(got.asserted) == sorted(v5), got.rationale
    assert "Visible" in ask(V4, answer).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        # the user's own "both" and "it" still assert
        ("You've had T-Mobile for years and added Visible for your second line. You use both.", ["T-Mobile", "Visible"]),
        ("You looked at Visible for months, then signed up and now use it every day.", ["Visible"]),
        # a negated judgment taken back by a change made later
        ("You figured Visible wasn't worth it at first, but you switched to Visible in May.", ["Visible"]),
    ],
)  # fmt: skip
def test_version_5_keeps_what_the_user_states(answer, asserted):
    got = ask(V5, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale
