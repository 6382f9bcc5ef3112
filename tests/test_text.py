"""The shared text helpers: tokens, phrases, sentences as each room splits them, months, rubric
slots filled with outside text, and whether a process runs."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest

from agentmemgate.atomic import process_alive
from agentmemgate.errors import BadInput
from agentmemgate.memory.rules import sentences as memory_sentences
from agentmemgate.rubrics import Rubric
from agentmemgate.text import (
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    PhraseMatcher,
    nearest_date,
    sentence_spans,
    sentences,
    tokens,
)
from agentmemgate.validate.judges._realism import sentences as realism_sentences

TEXT = (
    "I'll see Dr. Smith next week. \u201cReally?\u201d she asked. Then I left\n"
    "and came back (it was 3.50!) Done."
)


def pieces(text, **kw):
    return [text[a:b] for a, b in sentence_spans(text, **kw)]


def test_tokens_split_contractions_and_keep_offsets():
    text = "I\u2019d switch to Caf\u00e9 X_Y."
    assert tokens(text) == [
        (0, "i"),
        (1, "'d"),
        (4, "switch"),
        (11, "to"),
        (14, "café"),
        (19, "x"),
        (21, "y"),
    ]


def test_phrases_match_whole_words_stems_and_longest_first_word_lookups():
    m = PhraseMatcher(
        {"plan": ["plan to", "thinking about"], "ask": ["suggest*"], "move": ["go back*"]}
    )
    assert m.surfaces("I plan to go backwards; suggestions? I'm thinking about it") == [
        ("plan", "plan to"),
        ("move", "go backwards"),
        ("ask", "suggestions"),
        ("plan", "thinking about"),
    ]
    assert m.matches("airplane tomorrow") == set()


def test_the_default_split_is_the_miners_and_the_classifiers():
    """After . ! ? and any closing quote or bracket (which stays outside), not after a title, and
    at every line break."""
    assert pieces(TEXT) == [
        "I'll see Dr. Smith next week.",
        "\u201cReally?",
        "she asked.",
        "Then I left",
        "and came back (it was 3.50!",
        "Done.",
    ]


def test_the_memory_components_split_at_sentence_ends_only():
    """No split at a line break; a title ends a sentence; only straight quotes and brackets ride
    along."""
    got = [(s.start, s.end, s.text) for s in memory_sentences(TEXT)]
    assert [t for _, _, t in got] == [
        "I'll see Dr.",
        "Smith next week.",
        "\u201cReally?\u201d she asked.",
        "Then I left\nand came back (it was 3.50!",
        "Done.",
    ]
    assert all(TEXT[a:b] == t for a, b, t in got)
    assert [(s.start, s.end, s.text) for s in memory_sentences("  ")] == [
        (0, 2, "  ")
    ]  # never empty


def test_the_realism_checks_split_after_end_punctuation_and_space_only():
    assert realism_sentences(TEXT) == [
        "I'll see Dr.",
        "Smith next week.",
        "\u201cReally?\u201d she asked.",
        "Then I left\nand came back (it was 3.50!) Done.",
    ]
    assert realism_sentences("  ") == []


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"abbreviations": False},
        {"newlines": False, "abbreviations": False},
        {"closers": "", "newlines": False, "abbreviations": False},
    ],
)
def test_sentences_as_strings_are_the_spans(kw):
    for text in (TEXT, "", "  ", "a. ", "x.) y?\n\nz"):
        assert sentences(text, **kw) == pieces(text, **kw)


def test_months_and_the_nearest_reading_of_a_date():
    assert MONTH_NUMBERS["may"] == 5 and "sep" not in MONTH_NUMBERS
    assert MONTH_ABBREVIATIONS["sept"] == MONTH_ABBREVIATIONS["sep"] == 9
    said = dt.date(2024, 12, 20)
    assert nearest_date(said, 1, 3) == dt.date(2025, 1, 3)
    assert nearest_date(said, 11, 30) == dt.date(2024, 11, 30)
    assert nearest_date(dt.date(2023, 3, 1), 2, 29) == dt.date(2024, 2, 29)
    assert nearest_date(said, 2, 30) is None


def test_fill_reads_no_slot_inside_the_text_it_inserts():
    """A corpus turn may hold "{{...}}" (code in LongMemEval): ``fill`` inserts it as it is."""
    r = Rubric(name="t", version=1, text="A {{a}} B {{b}}", sha256="0" * 64)
    assert r.fill(a="{{b}}", b="x") == "A {{b}} B x"
    assert r.render(a="{{b}}", b="x") == "A x B x"  # render is for the package's own values
    with pytest.raises(BadInput, match=r"Rubric t.v1 needs values for: b$"):
        r.fill(a="x")


def test_process_alive():
    assert process_alive(os.getpid())
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert not process_alive(int(done.stdout))
