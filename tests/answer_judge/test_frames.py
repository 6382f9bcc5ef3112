"""The version 2 reader's frame rules (step 5) one by one, their order against the rule file's
header, and the words file read with version 2. The sentences are written for these tests."""

from __future__ import annotations

import hashlib
import re

import pytest

from agentmemgate.answer_judge import ANSWER_CUES_DIR, AnswerQuestion, frames, get_answer_judge
from agentmemgate.answer_judge._clauses import clauses, drop_ignored, sentences, value_forms
from agentmemgate.answer_judge.cues import READER_WORDS_V2, Cues, load_cues
from agentmemgate.errors import BadInput

V2_PATH = ANSWER_CUES_DIR / "answer_cues.v2.toml"
C = load_cues(V2_PATH)
V2_SHA = "0f2c4dc15ecd4597fae9b71c2bb8e032792ce0463c5f52ce36d7706c7a164b81"
WORDS_SHA = "c8f1deb69f0d98eb1edfa22b1f32c9d4c0b3b8d027b79e4bb82eecc9ccbe44ed"


def scopes(answer: str, values=("Pandora", "Deezer")) -> list[frames.Scope]:
    """The scope of each value occurrence of a one-sentence answer, in order; the occurrences
    before one are read first, as the reader reads them."""
    ((toks, question),) = sentences(C, answer, value_forms(C, values))
    cls = clauses(C, drop_ignored(C, toks), 0, question)
    tail = [cl.s() for cl in cls]
    out = []
    for ci, cl in enumerate(cls):
        prev = None
        for ti, t in enumerate(cl.toks):
            if t.kind == "v":
                s = frames.scope_of(C, cl, ti, cls, ci, tail, prev, cl.readings)
                cl.readings.append(frames.read_frame(s))
                out.append(s)
                prev = ti
    return out


def one(answer: str, at: int = 0) -> frames.Scope:
    return scopes(answer)[at]


# -- each rule alone: it reads its own sign, and says nothing about a plain statement -----------
@pytest.mark.parametrize(
    "rule, answer, at, frame, asserted",
    [
        (frames.question, "Do you still use Deezer?", 0, "question", False),
        (frames.choice, "You can't decide between Pandora or Deezer.", 1, "choice", False),
        (frames.choice, "Either Deezer works for you.", 0, "choice", False),
        (frames.replaced, "Pandora was replaced by Deezer.", 0, "done", False),
        (frames.coordinated, "You dropped Pandora and Deezer.", 1, "done", False),
        (frames.kept, "You stayed with Deezer.", 0, "current", True),
        (frames.abandoned, "You gave up on Deezer.", 0, "abandoned", False),
        (frames.declined, "You picked Pandora instead of Deezer.", 1, "declined", False),
        (frames.someone_else, "Your partner listens on Deezer.", 0, "someone_else", False),
        (frames.negated, "You don't use Deezer.", 0, "negated", False),
        (frames.joined, "Deezer hired you last month.", 0, "done", True),
        (frames.offer, "Deezer mailed you a promo code.", 0, "offer", False),
        (frames.pending, "Your Deezer order is in transit.", 0, "pending", False),
        (frames.future_start, "Your Deezer plan begins June 1.", 0, "future_start", False),
        (frames.current_until_end, "Deezer expires in May.", 0, "current", True),
        (frames.plan, "You're planning to switch to Deezer.", 0, "plan", False),
        (frames.described, "Deezer is cheaper.", 0, "described", False),
        (frames.plan_signs, "You almost bought Deezer.", 0, "plan", False),
        (frames.mention, "You talked about Deezer.", 0, "mention", False),
        (frames.ended, "Your Deezer contract ended.", 0, "ended", False),
        (frames.past, "You used to have Deezer.", 0, "past", False),
        (frames.done, "You switched to Deezer.", 0, "done", True),
        (frames.current, "You use Deezer.", 0, "current", True),
    ],
)
def test_each_rule_reads_its_sign_alone(rule, answer, at, frame, asserted):
    r = rule(one(answer, at))
    assert r is not None and (r.frame, r.asserted) == (frame, asserted), r
    if rule is not frames.current:
        assert rule(one("You use Deezer.")) is None


def test_a_change_not_made_leaves_its_source_current():
    r = frames.negated(one("You never left Deezer."))
    assert (r.frame, r.role, r.asserted) == ("negated", "source", True)


def test_the_first_rule_that_applies_decides():
    s = one("You didn't order Deezer.")  # a negation and a pending cue: negated comes first
    assert frames.pending(s) is not None and frames.negated(s) is not None
    assert frames.read_frame(s).frame == "negated"
    s = one("You're planning to switch to Deezer.")  # a plan cue, and a change verb after it
    assert frames.read_frame(s).frame == "plan"


def test_the_role_of_an_occurrence():
    source, target = scopes("You switched from Pandora to Deezer.")
    assert (source.role, target.role) == ("source", "target")
    assert one("You work from Pandora.").role == "state"  # "from" needs a change word


# -- the table and the rule file's header -------------------------------------------------------
def test_the_rule_table_follows_the_header():
    step5 = V2_PATH.read_text("utf-8").split("#  5. FRAME")[1].split("#     The governing verb")[0]
    names = re.findall(r"^#     (?=[a-z_ ]{13}\S)([a-z_]+) ", step5, re.M)  # the names column
    table = [name.split()[0] for name, _ in frames.FRAME_RULES]
    # the header's plan rule is two entries: a plan cue before ``described``, its other signs after
    first, second = (i for i, name in enumerate(table) if name == "plan")
    assert table[first + 1 : second + 1] == ["described", "plan"]
    del table[second]
    assert table == names
    assert frames.FRAME_RULES[-1][1] is frames.current


def test_every_occurrence_gets_the_reading_of_the_table():
    for s in scopes("You left Pandora for Deezer, which your partner likes."):
        first = next(r for _, rule in frames.FRAME_RULES if (r := rule(s)) is not None)
        assert frames.read_frame(s) == first


# -- released files and the words file ----------------------------------------------------------
def test_the_released_rules_and_the_reader_words_are_pinned():
    assert hashlib.sha256(V2_PATH.read_bytes()).hexdigest() == V2_SHA
    assert hashlib.sha256(READER_WORDS_V2.read_bytes()).hexdigest() == WORDS_SHA
    # the judge's provenance is the rule file's hash alone, as when v2 was released
    assert get_answer_judge("offline:answer_cues.v2").rubric_sha256 == V2_SHA == C.sha256


def test_the_reader_words_are_read_with_version_2():
    assert C.sets["not_completed_words"] == {"yet"} and C.sets["first_person"] == {"i"}
    v = get_answer_judge("offline").ask(
        AnswerQuestion(
            field="music_app",
            description="The user's music app.",
            probe_question="Which app?",
            answer="You switched to Deezer, but haven't paid yet.",
            candidates=("Pandora", "Deezer"),
        )
    )
    assert v.asserted == [] and "a change not completed" in v.rationale


def test_a_later_rule_file_must_hold_the_reader_words_itself():
    raw = V2_PATH.read_text("utf-8").replace("\nversion = 2\n", "\nversion = 3\n").encode()
    with pytest.raises(BadInput, match=r"answer_cues.v3.toml has no \[structure\] fact_line"):
        Cues(raw, "answer_cues.v3.toml")
