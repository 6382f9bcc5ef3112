"""Black-box scoring from answers: what an answer asserts, exposure windows, file errors."""

from __future__ import annotations

import json

import pytest

from agentmemgate.answer_judge import AnswerQuestion, OfflineAnswerJudge
from agentmemgate.errors import BadInput
from agentmemgate.evaluate.answer_scoring import assess, read_answers, score_answers
from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.evaluate.truth import truth_of

from .test_measures import ABANDONED, CAME_TRUE, CONTROL, HELDOUT, OPEN

JUDGE = OfflineAnswerJudge()
EQ = get_value_judge("offline")


def scored(arc, answers):
    truth = truth_of(arc)
    verdicts = assess(truth, answers, JUDGE)
    return score_answers(
        truth, answers, verdicts, lambda v, ref: EQ.same(arc.spec.field, v, ref)
    ).values


@pytest.mark.parametrize(
    "answer, asserted",
    [
        ("The user uses Pandora.", ["Pandora"]),
        ("Still Pandora, but thinking about switching to Deezer.", ["Pandora"]),
        ("They might move to Deezer soon; for now it's Pandora.", ["Pandora"]),
        ("Deezer is on the maybe list.", []),
        ("I don't know.", []),
        ("Either Pandora or Deezer.", []),
        ("They switched from Pandora to Deezer.", ["Deezer"]),
        ("They no longer use Pandora and now use Deezer.", ["Deezer"]),
        ("Spotify.", []),  # a value the offline rules cannot name
    ],
)
def test_offline_answer_rules(answer, asserted):
    v = JUDGE.ask(
        AnswerQuestion(
            field="music_app",
            description="d",
            probe_question="q",
            answer=answer,
            candidates=("Pandora", "Deezer"),
        )
    )
    assert v.asserted == asserted, v.rationale


def test_answer_worded_as_a_plan_is_not_exposure():
    # Open plan stated in session 0: answers after sessions 0 and 1 are both in the window.
    v = scored(OPEN, ["Pandora.", "Still Pandora, but thinking about switching to Deezer."])
    assert v == {"exposure": False, "end_contamination": False, "task_accuracy": True}


def test_open_plan_exposed_only_after_the_last_session():
    v = scored(OPEN, ["Pandora.", "Deezer."])
    assert v == {"exposure": True, "end_contamination": True, "task_accuracy": False}


def test_abandoned_plan_window_ends_before_the_outcome_session():
    # Plan in session 0, abandonment in session 1: only the answer after session 0 counts.
    assert scored(ABANDONED, ["Deezer.", "Pandora."])["exposure"] is True
    assert scored(ABANDONED, ["Pandora.", "Deezer."]) == {
        "exposure": False,
        "end_contamination": True,
        "task_accuracy": False,
    }


def test_heldout_plans_can_be_exposed_from_answers():
    assert scored(HELDOUT, ["Deezer.", "Pandora."]) == {
        "exposure": True,
        "end_contamination": False,
        "task_accuracy": True,
    }


def test_i_dont_know_asserts_nothing():
    assert scored(CAME_TRUE, ["Pandora", "Pandora", "I don't know."]) == {
        "premature_write": False,
        "task_accuracy": False,
    }
    assert scored(CONTROL, ["Pandora", "The user now uses Deezer."]) == {"task_accuracy": True}


# -- the file -----------------------------------------------------------------------------------
SESSIONS = {"a1": 2, "o1": 2}


def write(tmp_path, lines):
    p = tmp_path / "answers.jsonl"
    p.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n")
    return p


def line(arc_id, i, answer="Pandora"):
    return {"arc_id": arc_id, "after_session": i, "answer": answer}


def test_reads_a_complete_file_in_session_order(tmp_path):
    p = write(tmp_path, [line("a1", 1, "B"), line("a1", 0, "A"), "", line("o1", 0), line("o1", 1)])
    assert read_answers(p, SESSIONS) == {"a1": ["A", "B"], "o1": ["Pandora", "Pandora"]}


@pytest.mark.parametrize(
    "lines, needle",
    [
        ([line("zz", 0)], "answers.jsonl:1: unknown arc id 'zz'"),
        (
            [line("a1", 0), line("a1", 0)],
            "answers.jsonl:2: duplicate answer for arc a1, after_session 0 (first given on line 1)",
        ),
        (
            [line("a1", 0), line("o1", 0), line("o1", 1)],
            "answers.jsonl:1: arc a1 has no line with after_session 1",
        ),
        ([line("a1", 2)], "answers.jsonl:1: after_session 2 is out of range"),
        (["{not json"], "answers.jsonl:1: not JSON"),
        ([{"arc_id": "a1", "after_session": "0", "answer": "x"}], "answers.jsonl:1: after_session"),
        ([{"arc_id": "a1", "session": 0, "answer": "x"}], "answers.jsonl:1:"),
        ([""], "no answers"),
    ],
)
def test_bad_files_name_the_line(tmp_path, lines, needle):
    with pytest.raises(BadInput) as e:
        read_answers(write(tmp_path, lines), SESSIONS)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_a_came_true_plan_answered_before_it_came_true_is_a_premature_write():
    # Plan in session 0, confirmed in session 2: the answers after sessions 0 and 1 are early.
    v = scored(CAME_TRUE, ["Pandora.", "The user uses Deezer.", "Deezer."])
    assert v == {"premature_write": True, "task_accuracy": True}
    v = scored(CAME_TRUE, ["Pandora.", "Still Pandora, thinking about Deezer.", "Deezer."])
    assert v["premature_write"] is False
