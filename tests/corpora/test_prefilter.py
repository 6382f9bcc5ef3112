"""Stage 1: high recall on plans and hedges, requests to the assistant filtered, data-file lexicon."""

from __future__ import annotations

import pytest

from agentmemgate.corpora import (
    load_corpus,
    load_lexicon,
    scan_conversation,
    scan_turn,
    split_sentences,
)

from .paths import LOCOMO, LONGMEMEVAL

HEDGES = [
    "I might move to Seattle, my dad lives there.",  # the paper's opening example
    "Here\u2019s where I\u2019m stuck. I\u2019m torn between staying with Ghost 14 and switching to Pegasus 39 for my next pair.",
    "Oh, Pegasus 39 is still on the maybe list and I need a sale check.",
    "I'm thinking about switching to a standing desk.",
    "We're planning to adopt a rescue dog next month.",
    "I'm moving to Austin on March 3rd.",
    "I've been considering going back to school for a master's degree.",
    "I wanna start a dance studio so I can teach others.",
    "Not sure yet whether to take the job in Denver.",
    # real turns an earlier lexicon missed (locomo10.json, longmemeval_oracle_subset.json)
    "Researching adoption agencies \u2014 it's been a dream to have a family and give a loving home to kids who need it.",
    "I'm looking forward to expanding our family and creating even more beautiful memories.",
    "I still haven\u2019t gotten a dog, but I still really want one.",
    "Not yet, but I'm keen to give it a go.",
    "I'm currently on the hunt for a new job, which hasn't been easy, but I'm keeping my spirits up.",
    "I've always wanted to learn Spanish.",
    "I'm also interested in getting a portable power bank to charge my phone on-the-go.",
    "I'm really excited to explore the Bay Area.",
]
NOT_HEDGES = [
    "Can you recommend a hotel in Rome?",
    "I'd like to know more about the history of jazz.",
    "The weather was lovely yesterday.",
    "Could you help me plan a menu?",
    "Thanks, that was helpful!",
    # v2: follow-ups, requests and modals in questions (most of LongMemEval's v1 cost)
    "I'll definitely check out those resources.",
    "I'll keep that in mind, thanks!",
    "I'd love to know more about the other dinosaurs of that period.",
    "I'm interested in learning more about the Nabataeans, can you tell me about them?",
    "Do you think I should include the original lens?",
    "Maybe it's a special deal or something?",
    "I was thinking about our leadership team and I realized we have 100 positions.",
    # v2: one-off events and errands change no profile attribute
    "I'm thinking of visiting South Korea.",
    "Can't wait to visit next month.",
    "I think I'll go with the fruit salad.",
]


@pytest.mark.parametrize("text", HEDGES)
def test_plans_and_hedges_reach_stage_2(text):
    assert scan_turn(text).hit, text


@pytest.mark.parametrize("text", NOT_HEDGES)
def test_requests_and_plain_statements_do_not(text):
    assert not scan_turn(text).hit, text


def test_cues_and_spans_are_recorded():
    text = "We had pizza. I might move to Seattle next year! Anyway, how are you?"
    scan = scan_turn(text)
    assert scan.sentences == 3
    assert [text[a:b] for a, b in scan.spans] == ["I might move to Seattle next year!"]
    assert scan.cues == ["change:move", "hedge:might", "weak:next year"]


def test_sentences_without_a_subject_count_when_they_open_with_a_cue():
    assert scan_turn("Thinking about moving to Denver.").hit
    assert not scan_turn("The dog might be tired.").hit  # a cue, but not the speaker's plan


def test_stop_phrases_blank_only_the_request():
    # "could you" is a request, but the same sentence still carries the user's own plan
    assert scan_turn("Could you suggest neighborhoods, since I'm planning to move to Denver?").hit


def test_sentence_splitting_keeps_titles_and_initials():
    """LongMemEval users name doctors: "Dr." must not cut the statement span short."""
    text = "I'll see Dr. Smith next week. J. K. Rowling is next. I should, shouldn't I. Yes."
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "I'll see Dr. Smith next week.",
        "J. K. Rowling is next.",
        "I should, shouldn't I.",
        "Yes.",
    ]


def test_sentence_splitting_keeps_decimals_and_splits_lines():
    text = "I paid 3.50 for it. Then I left\nand came back"
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "I paid 3.50 for it.",
        "Then I left",
        "and came back",
    ]


def test_lexicon_is_a_versioned_data_file():
    lex = load_lexicon()
    assert lex.ref == "cues.v3" and len(lex.sha256) == 64
    assert {"hedge", "intention", "future_time", "change", "first_person", "weak", "event"} <= set(
        lex.cues
    )
    assert "torn between" in lex.cues["hedge"] and "could you" in lex.stop


def test_released_v1_lexicon_still_applies_its_own_rule():
    """A pinned v1 reproduces v1 mining runs: every modal qualifies, no weak or event cues."""
    v1 = load_lexicon(1)
    assert v1.ref == "cues.v1" and "weak" not in v1.cues
    assert scan_turn("I'll definitely check out those resources.", v1).hit
    assert scan_turn("I'm thinking of visiting South Korea.", v1).hit
    assert not scan_turn("Yoga is fun, and joining a new class might be a good option.", v1).hit


@pytest.mark.parametrize(
    "text, hit",
    [
        ("I'll get a dash cam for the car.", True),  # weak modal + change cue
        ("I'll definitely call you later.", False),  # weak modal alone
        ("Should I get a dash cam?", False),  # weak cues never count in a question
        ("Is it crazy that I might move to Lisbon?", True),  # a hedge in a question, speaker's own
        ("Yoga is fun, and joining a new class might be a good option.", True),  # clause opening
        ("I'm thinking of hosting a gathering at my place.", False),  # one-off event, no change
        (
            "I'm thinking of visiting colleges to apply for a degree.",
            True,
        ),  # event, but a change too
    ],
)
def test_v2_weak_cues_questions_events_and_clause_openings(text, hit):
    assert scan_turn(text).hit is hit, text


def test_weak_cues_need_a_change_cue_only_where_users_talk_to_an_assistant():
    text = "I think working with them would be really cool."
    assert not scan_turn(text, corpus="longmemeval").hit  # a request-like modal, no change
    assert scan_turn(text, corpus="locomo").hit  # between two people: the speaker's own wish


def test_fixture_conversations():
    conv30 = load_corpus(LOCOMO)[0]
    scan = scan_conversation(conv30)
    refs = [c.source_ref for c in scan.candidates]
    assert "D1:6" in refs  # Jon: "I wanna start a dance studio ..."
    cand = scan.candidates[refs.index("D1:6")]
    assert cand.speaker == "Jon" and cand.date == "2023-01-20T16:04"
    assert [c.speaker for c in cand.context] == ["Jon", "Gina"]  # two preceding turns (D1:4-5)
    assert cand.id == "locomo:conv-30:D1:6"
    assert scan.turns_scanned == 11  # both speakers' turns


def test_longmemeval_sessions_repeated_across_questions_are_scanned_once():
    convs = load_corpus(LONGMEMEVAL)
    seen: set[str] = set()
    first = scan_conversation(convs[0], seen_sessions=seen)
    again = scan_conversation(convs[0], seen_sessions=seen)
    assert first.turns_scanned == 12 and first.candidates  # user turns only
    assert again.turns_scanned == 0 and again.duplicate_sessions == 2 and not again.candidates
