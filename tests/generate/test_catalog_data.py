"""The domain catalog is data the offline renderer trusts blindly; these checks keep it honest.

They enforce the slot grammar the phrase banks rely on (see the header of ``catalog.toml``), the
value-free field rule of the paper (A.6: no field may contain a label value) and that no value can
be mistaken for another value or for a hedge/outcome word.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from agentmemgate.schema import contains_value

CATALOG = Path(__file__).parents[2] / "agentmemgate" / "generate" / "catalog.toml"
with open(CATALOG, "rb") as _f:
    DATA: dict = tomllib.load(_f)
ATTRS = sorted(DATA)

STRING_KEYS = ("noun", "probe_question", "stay", "switch", "switching", "switched", "oblique_thing")
LIST_MINIMUMS = {"current": 3, "doing": 3, "reasons": 3, "user_chat": 3, "assistant_chat": 3,
                 "values": 8, "long_values": 8}
SLOTTED = ("current", "stay", "switch", "switching", "switched", "doing")
UNSLOTTED = ("noun", "probe_question", "oblique_thing", "reasons", "user_chat", "assistant_chat",
             "values", "long_values")
# Words that signal a hedge level or an outcome; a judge must never meet them where the arc does
# not intend them (values, statements of fact, small talk, reasons).
LEVEL_WORDS = ("maybe", "might", "plan", "plans", "planned", "planning", "switch", "switched",
               "switching", "decide", "decided", "deciding", "considering", "torn", "undecided")
VALUE_BANNED_WORDS = LEVEL_WORDS + ("new", "old", "current", "currently", "former", "previous",
                                    "still", "soon")
DOING_BANNED_WORDS = LEVEL_WORDS + ("change", "changed", "moved", "new", "first", "yesterday",
                                    "today", "tonight", "morning", "week", "ago")
IRREGULAR_PAST = {"did", "ran", "took", "got", "had", "made", "sat", "sent", "wrote", "met",
                  "fell", "found", "paid", "went", "kept", "bought", "drove", "rode",
                  "spent", "left", "ate", "read", "heard", "caught"}


def _strings(body: dict, key: str) -> list[str]:
    value = body[key]
    return value if isinstance(value, list) else [value]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _has_word(text: str, words) -> list[str]:
    return sorted(set(_words(text)) & set(words))


def test_catalog_has_enough_attributes():
    assert len(DATA) >= 28


@pytest.mark.parametrize("attr", ATTRS)
def test_shape(attr):
    body = DATA[attr]
    assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", attr), attr
    assert set(body) == set(STRING_KEYS) | set(LIST_MINIMUMS), sorted(set(body) ^ (set(STRING_KEYS) | set(LIST_MINIMUMS)))
    for key in STRING_KEYS:
        assert isinstance(body[key], str) and body[key].strip() == body[key] != "", key
    for key, minimum in LIST_MINIMUMS.items():
        items = body[key]
        assert isinstance(items, list) and len(items) >= minimum, key
        assert all(isinstance(s, str) and s.strip() == s != "" for s in items), key
        assert len({s.lower() for s in items}) == len(items), f"{key} has duplicates"


@pytest.mark.parametrize("attr", ATTRS)
def test_slots(attr):
    body = DATA[attr]
    for key in SLOTTED:
        for s in _strings(body, key):
            assert re.findall(r"\{[^}]*\}", s) == ["{value}"], f"{key}: {s!r}"
            assert s.count("{") == s.count("}") == 1, f"{key}: {s!r}"
    for key in UNSLOTTED:
        for s in _strings(body, key):
            assert "{" not in s and "}" not in s, f"{key}: {s!r}"


@pytest.mark.parametrize("attr", ATTRS)
def test_field_and_small_talk_are_value_free(attr):
    body = DATA[attr]
    every_value = body["values"] + body["long_values"]
    field_texts = [body["noun"], body["probe_question"], attr.replace("_", " ")]
    free_texts = [body["oblique_thing"], *body["reasons"], *body["user_chat"], *body["assistant_chat"]]
    # Template text around the slot must not name a value either, or a filled turn would mention two.
    frames = [s.replace("{value}", " | ") for key in SLOTTED for s in _strings(body, key)]
    for value in every_value:
        for text in field_texts + free_texts + frames:
            assert not contains_value(text, value), f"{value!r} appears in {text!r}"


@pytest.mark.parametrize("attr", ATTRS)
def test_values_are_distinct_and_unambiguous(attr):
    body = DATA[attr]
    every_value = body["values"] + body["long_values"]
    assert len({v.lower() for v in every_value}) == len(every_value)
    for group in ("values", "long_values"):
        lowered = [v.lower() for v in body[group]]
        for a in lowered:
            for b in lowered:
                assert a == b or a not in b, f"{group}: {a!r} is inside {b!r}"
    for value in every_value:
        assert not _has_word(value, VALUE_BANNED_WORDS), value
        assert not any(w in value.lower() for w in ("maybe", "plan", "switch", "decided")), value
    for value in body["values"]:
        assert len(value.split()) <= 4 and not value.lower().startswith("the "), value
    for value in body["long_values"]:
        assert value.startswith("the ") and 6 <= len(value.split()) <= 14, value
        # A long value may become the NEW value, so it must not carry its own history.
        assert not _has_word(value, ("ago", "since", "years", "decades", "last", "used")), value


@pytest.mark.parametrize("attr", ATTRS)
def test_probe_question(attr):
    probe = DATA[attr]["probe_question"]
    assert probe.split()[0] in {"What", "Which", "Where", "How"}, probe
    assert "currently" in _words(probe) and probe.endswith("?"), probe


@pytest.mark.parametrize("attr", ATTRS)
def test_phrases_fit_the_renderer_frames(attr):
    body = DATA[attr]
    assert body["noun"] == body["noun"].lower()
    # "{current}." / "So, {current} now." / "{current}, as of last week.": plain present, "I" first,
    # the value last, no duration (the same list states the new value right after a change).
    for s in body["current"]:
        assert s.split()[0] in {"I", "I'm"} and s.endswith("{value}"), s
        assert not _has_word(s, LEVEL_WORDS + ("been", "since", "now", "new", "days", "years")), s
    assert body["stay"].split()[0].endswith("ing"), body["stay"]
    assert body["switching"].split()[0].endswith("ing"), body["switching"]
    assert not body["switch"].split()[0].endswith(("ing", "ed")), body["switch"]
    # "As of last month I've {switched}" needs a verb whose past tense is also its participle.
    assert body["switched"].split()[0].endswith("ed"), body["switched"]
    for s in body["doing"]:
        first = s.split()[0]
        assert first.endswith("ed") or first in IRREGULAR_PAST, s
        assert s.endswith("{value}") and not _has_word(s, DOING_BANNED_WORDS), s
    assert body["oblique_thing"].startswith(("the ", "my ")), body["oblique_thing"]
    for s in body["reasons"]:
        assert (s[0].islower() or s.startswith("I ")) and s[-1] not in ".!?", s
        assert not _has_word(s, LEVEL_WORDS), s
    for key in ("user_chat", "assistant_chat"):
        for s in body[key]:
            assert s[0].isupper() and s[-1] in ".!?", s
            assert not _has_word(s, LEVEL_WORDS + ("moving", "move", "changing")), s
    for s in body["assistant_chat"]:
        assert 1 <= len(re.findall(r"[.!?](?:\s|$)", s)) <= 3, s


@pytest.mark.parametrize("attr", ATTRS)
def test_every_value_fills_every_frame(attr):
    body = DATA[attr]
    for value in body["values"] + body["long_values"]:
        for key in SLOTTED:
            for s in _strings(body, key):
                filled = s.format(value=value)
                assert value in filled and "{" not in filled and "the the " not in filled.lower()
