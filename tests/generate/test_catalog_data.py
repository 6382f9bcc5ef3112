"""The domain catalog is data the offline renderer trusts blindly; these checks keep it honest.

They enforce the slot grammar of ``generate/catalog/README.md``, the value-free field rule of the
paper (A.6: no field may contain a label value), that no value can be mistaken for another value
or for a hedge/outcome word, and that every small-talk pair is a question with its answer.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from agentmemgate.design.catalog import CATALOG_DIR, Exchange
from agentmemgate.generate.offline import second_person
from agentmemgate.schema import contains_value
from agentmemgate.validate.judges._realism import qa_overlap

DATA: dict = {p.stem: tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(CATALOG_DIR.glob("*.toml"))}
ATTRS = sorted(DATA)

STRING_KEYS = ("noun", "probe_question", "change", "stay", "switch", "switching", "switched", "oblique_thing")
LIST_MINIMUMS = {"current": 3, "doing": 3, "reasons": 4, "reasons_done": 3, "weigh": 3, "steps": 3,
                 "settle": 3, "tips": 3, "stay_tips": 2, "exchanges": 10, "values": 8, "long_values": 8}
SLOTTED = ("current", "stay", "switch", "switching", "switched", "doing")
CLAUSES = ("reasons", "reasons_done", "weigh", "steps", "settle", "tips", "stay_tips")
UNSLOTTED = ("noun", "probe_question", "change", "oblique_thing", *CLAUSES, "values", "long_values")
# Words that signal a hedge level or an outcome; a judge must never meet them where the arc does
# not intend them (values, statements of fact, small talk, reasons).
LEVEL_WORDS = ("maybe", "might", "plan", "plans", "planned", "planning", "switch", "switched",
               "switching", "decide", "decided", "deciding", "considering", "torn", "undecided")
VALUE_BANNED_WORDS = LEVEL_WORDS + ("new", "old", "current", "currently", "former", "previous",
                                    "still", "soon")
DOING_BANNED_WORDS = LEVEL_WORDS + ("change", "changed", "moved", "new", "first", "yesterday",
                                    "today", "tonight", "morning", "week", "ago")
# Small talk must not sound like a plan, a change or an outcome, or the arc's labels would be
# ambiguous: no hedges, futures, completions, or talk of staying.
SMALL_TALK_BANNED = LEVEL_WORDS + ("move", "moving", "moved", "changing", "changed", "will", "i'll",
                                   "probably", "perhaps", "finally", "anymore", "already", "decision")
SMALL_TALK_BANNED_PHRASES = ("going to", "no longer", "keep my", "keep the", "stick with", "stay with",
                             "sticking with", "staying with", "thinking about", "not sure")
IRREGULAR_PAST = {"did", "ran", "took", "got", "had", "made", "sat", "sent", "wrote", "met",
                  "fell", "found", "paid", "went", "kept", "bought", "drove", "rode",
                  "spent", "left", "ate", "read", "heard", "caught", "was", "were", "i'd", "wanted", "felt"}
VOWEL_OK = ("one", "uni", "use", "usu", "eu", "ur")  # "a one-pan", "a unique", "a usual"


def _strings(body: dict, key: str) -> list[str]:
    value = body[key]
    return value if isinstance(value, list) else [value]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _has_word(text: str, words) -> list[str]:
    return sorted(set(_words(text)) & set(words))


def _exchanges(attr: str) -> list[Exchange]:
    return [Exchange(**e) for e in DATA[attr]["exchanges"]]


def _fillings(attr: str) -> list[tuple[str, str]]:
    return [e.fill(i) for e in _exchanges(attr) for i in range(e.fillings)]


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
        if key != "exchanges":
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
def test_field_reasons_replies_and_small_talk_are_value_free(attr):
    body = DATA[attr]
    every_value = body["values"] + body["long_values"]
    field_texts = [body["noun"], body["probe_question"], attr.replace("_", " ")]
    free_texts = [body["oblique_thing"], *(s for k in CLAUSES for s in body[k])]
    free_texts += [t for pair in _fillings(attr) for t in pair]
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
    assert re.fullmatch(r"[b-df-hj-np-tv-z][a-z]+", body["change"]), body["change"]  # "a {change}"
    # "{current}." / "So, {current} now." / "as of Tuesday, {current}.": plain present, "I" first,
    # the value last, no duration (the same list states the NEW value right after a change).
    for s in body["current"]:
        assert s.split()[0] in {"I", "I'm"} and s.endswith("{value}"), s
        assert not _has_word(s, LEVEL_WORDS + ("been", "since", "now", "new", "days", "years")), s
    assert body["stay"].split()[0].endswith("ing"), body["stay"]
    assert body["switching"].split()[0].endswith("ing"), body["switching"]
    assert not body["switch"].split()[0].endswith(("ing", "ed")), body["switch"]
    # "I {switched} yesterday" needs a verb whose past tense is also its participle.
    assert body["switched"].split()[0].endswith("ed"), body["switched"]
    for s in body["doing"]:
        first = s.split()[0]
        assert first.endswith("ed") or first in IRREGULAR_PAST, s
        assert s.endswith("{value}") and not _has_word(s, DOING_BANNED_WORDS), s
    assert body["oblique_thing"].startswith(("the ", "my ")), body["oblique_thing"]


@pytest.mark.parametrize("attr", ATTRS)
def test_clauses_fit_their_frames(attr):
    body = DATA[attr]
    for key in CLAUSES:
        for s in body[key]:
            first = s.split()[0]
            assert (s[0].islower() or first in {"I", "I've", "I'm"} or first.isupper()) and s[-1] not in ".!?", \
                f"{key}: {s!r}"
    for s in body["reasons"] + body["reasons_done"]:
        assert not _has_word(s, LEVEL_WORDS), s
        # A motive supports moving toward the new value: it is about the current situation, not
        # a vague pull toward some other place.
        assert not re.search(r"somewhere else|elsewhere|another (place|chain|one)|the other", s), s
    for s in body["reasons_done"]:
        assert any(w.endswith("ed") or w in IRREGULAR_PAST for w in _words(s)), f"not past: {s!r}"
    for s in body["weigh"]:
        assert "," in s or " and " in s, f"weigh is a list of things to compare: {s!r}"
    for key in ("steps", "settle", "tips", "stay_tips"):
        for s in body[key]:
            first = s.split()[0]
            assert first not in {"you", "your", "it", "the", "a", "i", "my"}, f"{key} starts with a verb: {s!r}"
            assert first in {"bring"} or not first.endswith(("ing", "ed")), f"{key} starts with a base verb: {s!r}"


def _check_small_talk(q: str, a: str) -> None:
    assert "?" in q and "{" not in q + a, (q, a)
    assert q[0].isupper() and a[0].isupper() and a.endswith("."), (q, a)
    assert 1 <= len(re.findall(r"[.!?](?:\s|$)", a)) <= 3, a
    low = q.lower()
    assert not _has_word(q, SMALL_TALK_BANNED), (q, _has_word(q, SMALL_TALK_BANNED))
    assert not [p for p in SMALL_TALK_BANNED_PHRASES if p in low], q
    for text in (q, a):
        for m in re.finditer(r"\b[Aa] ([a-z]+)", text):
            word = m.group(1)
            assert word[0] not in "aeiou" or word.startswith(VOWEL_OK), f"'a {word}' in {text!r}"
    assert qa_overlap(q, a), f"the answer shares no content word with its question: {q!r} -> {a!r}"


@pytest.mark.parametrize("attr", ATTRS)
def test_exchanges_are_questions_with_their_answers(attr):
    for ex in _exchanges(attr):
        assert ex.slots and 4 <= ex.fillings <= 8, ex.q
        assert re.search(r"\{\w+\}", ex.q) and re.search(r"\{\w+\}", ex.a), ex.q
    fillings = _fillings(attr)
    assert len({q for q, _ in fillings}) == len(fillings), "two fillings give the same question"
    assert len({a for _, a in fillings}) == len(fillings), "two fillings give the same answer"
    for q, a in fillings:
        _check_small_talk(q, a)


def test_off_topic_small_talk_follows_the_same_rules():
    from agentmemgate.generate.offline import phrase_bank

    talk = phrase_bank()["chat"]["exchanges"]
    assert len(talk) >= 20
    for ex in talk:
        assert 4 <= ex.fillings <= 8, ex.q
        for i in range(ex.fillings):
            _check_small_talk(*ex.fill(i))


@pytest.mark.parametrize("attr", ATTRS)
def test_every_value_fills_every_frame(attr):
    body = DATA[attr]
    for value in body["values"] + body["long_values"]:
        for key in SLOTTED:
            for s in _strings(body, key):
                filled = s.format(value=value)
                assert value in filled and "{" not in filled and "the the " not in filled.lower()
                # The assistant quotes it in the second person: no first person may be left.
                assert not _has_word(second_person(filled), ("i", "i'm", "i've", "my", "me", "mine")), filled
