"""The offline answer rules version 4: version 3 with the frames in which it read a plan as
asserted (a self-correction, another person's thing, a plan described after "is", a gerund
object, a past event), checked on sentences of other words than the answers they were found on;
version 3 stays as it was."""

from __future__ import annotations

import pytest

from agentmemgate.answer_judge import AnswerQuestion, get_answer_judge

V3 = get_answer_judge("offline:answer_cues.v3")
V4 = get_answer_judge("offline:answer_cues.v4")


def ask(judge, answer, values=("Boston", "Seattle"), field="home_city"):
    return judge.ask(
        AnswerQuestion(
            field=field, description="d", probe_question="q", answer=answer, candidates=values
        )
    )


@pytest.mark.parametrize(
    "answer, v4",
    [
        # a self-correction takes back what came before it
        ("Seattle. Actually, no, that was only the city you toured. You're in Boston.", ["Boston"]),
        ("You're in Seattle now. Scratch that: Seattle is still just an idea; you live in Boston.", ["Boston"]),
        ("Seattle -- my mistake, you live in Boston.", ["Boston"]),
        # another person's thing; the user's plan described after "is"
        ("Seattle is your brother's city. You're in Boston.", ["Boston"]),
        ("Seattle is the place you want to relocate to; you live in Boston for now.", ["Boston"]),
        # a mention whose object is a gerund, and a gerund joined to it
        ("You live in Boston and have mentioned visiting Portland or trying Seattle.", ["Boston"]),
        # a retraction said in other words, after a dash
        ("You live in Seattle \u2014 hold on, that's not right. Seattle is only on your list; you live in Boston.", ["Boston"]),
        # a hedged statement ending in "?" asks what follows a break; a relative clause of a plan
        ("Boston, as far as I know - unless the Seattle plan worked out?", ["Boston"]),
        ("The one that came up is Seattle, which you told me you'd love to try.", []),
        # a "Label: value" line is read as the label's words before the value
        ("**City:** Boston\n**Thinking about:** Seattle", ["Boston"]),
        ("Home: Boston\nConsidering: Seattle", ["Boston"]),
        # a deposit is a plan, not a move made
        ("You put down a deposit on a condo in Seattle. You live in Boston until it closes.", ["Boston"]),
        # an event dated in the past is not a current value
        ("- Cat had dental work in Seattle two years ago\n- Lives in Boston", ["Boston"]),
    ],
)  # fmt: skip
def test_version_4_reads_the_frames_version_3_read_as_asserted(answer, v4):
    got = ask(V4, answer, ("Boston", "Seattle", "Portland"))
    assert sorted(got.asserted) == sorted(v4), got.rationale
    assert "Seattle" in ask(V3, answer, ("Boston", "Seattle", "Portland")).asserted


@pytest.mark.parametrize(
    "answer, asserted",
    [
        ("You've been apartment hunting in Seattle; you still live in Boston.", ["Boston"]),
        ("Boston, with Seattle as a place you've been hoping to move to.", ["Boston"]),
        ("You moved to Seattle last month.", ["Seattle"]),  # a change made, dated
        ("You've stayed in Seattle since last year.", ["Seattle"]),
        ("Seattle is where you live now.", ["Seattle"]),  # described as the user's
        ("Seattle. No wait, I mean Boston.", ["Boston", "Seattle"]),  # not a retraction cue
        ("Your streaming service was cancelled.", []),
        ("**City:** Seattle", ["Seattle"]),  # a label line with a current value
        ("Seattle, which you've called home since 2019.", ["Seattle"]),  # a relative, no plan
        ("Seattle, I think?", ["Seattle"]),  # a hedged statement
        ("You toured Seattle and moved there in May.", ["Seattle"]),  # a change made
    ],
)  # fmt: skip
def test_version_4_reads_plans_current_and_changed_values(answer, asserted):
    got = ask(V4, answer)
    assert sorted(got.asserted) == sorted(asserted), got.rationale


def test_the_cancelled_passive_ends_a_value():
    got = ask(V4, "Hulu got canceled in March; you watch Max these days.", ("Hulu", "Max"), "tv")
    assert got.asserted == ["Max"], got.rationale
