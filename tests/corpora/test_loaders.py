"""Loaders: both corpora into one shape, detection by structure, streaming, one-line errors."""

from __future__ import annotations

import json
import shutil

import pytest

from agentmemgate.corpora import detect_format, iter_conversations, load_corpus
from agentmemgate.errors import CorpusError

from .paths import (
    LOCOMO,
    LONGMEMEVAL,
    REAL_LOCOMO,
    REAL_LONGMEMEVAL,
    needs_real_locomo,
    needs_real_longmemeval,
)


def test_locomo_fixture_keeps_both_speakers_dates_and_empty_sessions():
    convs = load_corpus(LOCOMO)
    assert [c.conversation_id for c in convs] == ["conv-30", "conv-26"]
    c26 = convs[1]
    assert c26.speakers == ["Caroline", "Melanie"]
    assert [s.session_id for s in c26.sessions] == ["session_1", "session_2", "session_20"]
    dateless_turns = c26.sessions[2]
    assert dateless_turns.turns == [] and dateless_turns.date == "2023-10-26T16:10"
    first = c26.sessions[0]
    assert first.date == "2023-05-08T13:56"  # "1:56 pm on 8 May, 2023"
    assert first.turns[0].ref == "D1:1" and first.turns[0].mined
    image_turn = next(t for t in first.turns if t.ref == "D1:5")
    assert "blip" not in image_turn.text and image_turn.text.startswith("The transgender stories")
    assert {t.speaker for t in first.turns} == {"Caroline", "Melanie"}


def test_longmemeval_fixture_mines_user_turns_only():
    convs = load_corpus(LONGMEMEVAL)
    assert [c.conversation_id for c in convs] == ["0db4c65d", "06f04340", "gpt4_70e84552_abs"]
    c = convs[0]
    assert c.sessions[0].session_id == "answer_b9e32ff8_1"
    assert c.sessions[0].date == "2022-12-28T16:10"
    t0, t1 = c.sessions[0].turns[:2]
    assert (t0.speaker, t0.mined, t1.speaker, t1.mined) == ("user", True, "assistant", False)
    assert t0.ref == "0db4c65d/answer_b9e32ff8_1/0"


def test_format_is_detected_by_structure_not_name(tmp_path):
    misleading = tmp_path / "locomo10.json"
    shutil.copy(LONGMEMEVAL, misleading)
    assert detect_format(misleading) == "longmemeval"
    assert detect_format(LOCOMO) == "locomo"
    with pytest.raises(
        CorpusError, match=r"^locomo10.json: looks like a longmemeval file, not locomo"
    ):
        list(iter_conversations(misleading, "locomo"))


def test_loading_is_lazy(tmp_path):
    """The first conversation arrives before a broken later item is parsed (streaming)."""
    items = json.loads(LONGMEMEVAL.read_text())
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(items[:1])[:-1] + ', {"question_id": "x", "haystack_sessions": [[')
    it = iter_conversations(path)
    assert next(it).conversation_id == "0db4c65d"
    with pytest.raises(CorpusError, match=r"^lme.json: malformed JSON after item 1"):
        next(it)


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty file"),
        ('{"a": 1}', "a JSON object, expected a JSON list"),
        ("not json", "not JSON"),
        ('[{"foo": 1}]', "unknown structure (item 0 has keys foo"),
        ("[1, 2]", "a list of non-objects"),
        ('[{"question_id": "q", "haystack_sessions": [[{"role": "user"', "malformed JSON"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "corpus.json"
    path.write_text(content)
    with pytest.raises(CorpusError) as e:
        list(iter_conversations(path))
    assert message in str(e.value)
    assert str(e.value).startswith("corpus.json: ")
    assert "\n" not in str(e.value)


def test_item_without_haystack_is_named(tmp_path):
    items = json.loads(LONGMEMEVAL.read_text())
    bad = items + [items[0], {"question_id": "q9", "question": "?"}]
    path = tmp_path / "longmemeval.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CorpusError) as e:
        list(iter_conversations(path))
    assert str(e.value) == (
        "longmemeval.json: not a JSON list of LongMemEval instances "
        "(item 4 has no 'haystack_sessions')"
    )


def test_turn_without_content_is_named(tmp_path):
    items = json.loads(LONGMEMEVAL.read_text())
    del items[1]["haystack_sessions"][0][2]["content"]
    path = tmp_path / "lme_s.json"
    path.write_text(json.dumps(items))
    with pytest.raises(
        CorpusError, match=r"item 1 \(06f04340\) session 0 turn 2 has no 'role' and 'content'"
    ):
        list(iter_conversations(path))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(CorpusError, match="No such file"):
        detect_format("/nonexistent/file.json")
    with pytest.raises(
        CorpusError, match="is a folder, not a file: give a LongMemEval or LoCoMo JSON file"
    ):
        detect_format(tmp_path)


@needs_real_locomo
def test_real_locomo_file():
    convs = load_corpus(REAL_LOCOMO)
    assert len(convs) == 10
    sessions = [s for c in convs for s in c.sessions]
    assert sum(len(s.turns) for s in sessions) == 5882  # SOURCE.txt: 5,882 turns
    assert sum(1 for s in sessions if s.turns) == 272  # and 272 sessions with turns
    c26 = next(c for c in convs if c.conversation_id == "conv-26")
    assert [s.session_id for s in c26.sessions if not s.turns][:2] == ["session_20", "session_21"]
    assert all(s.date and s.date[:4] in ("2022", "2023", "2024") for s in sessions)  # all parse


@needs_real_longmemeval
def test_real_longmemeval_sample():
    convs = list(iter_conversations(REAL_LONGMEMEVAL, "longmemeval"))
    assert len(convs) == 61
    assert sum(len(c.sessions) for c in convs) == 99
    assert sum(len(s.turns) for c in convs for s in c.sessions) == 1174
    assert all(c.variant == "oracle" for c in convs)
