"""The offline classifier v2's rules, each alone: what it reads in one sentence and what it leaves;
the order table against the data file's header; the words the rules name."""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import re
import tomllib
from pathlib import Path

import pytest

from agentmemgate.classify import lexicon_classifier
from agentmemgate.classify import scoped_rules as R
from agentmemgate.classify._scoped_sentence import (
    DROPS,
    FORMS,
    SCOPED_WORDS_V2,
    V2_SYNTAX,
    Found,
    Lexicon,
    d_as_had,
    get_a_without_acquiring,
    going_to_a_place,
    may_the_month,
    past_form_as_adjective,
)
from agentmemgate.classify.classes import EVIDENCE_TYPES
from agentmemgate.text import tokens

CLASSIFY = Path(R.__file__).parent
V2 = CLASSIFY / "evidence_cues.v2.toml"
V2_SHA256 = "c67fefb48a1541fbd0c9955c6db23f5d766ceed99553885539a312eb606043d0"
SCOPED_WORDS_V2_SHA256 = "e6cc3ecbf17fde0cbbcbfd60222de7af1c762f42d796520792f5f2e110c7a955"
CLF = lexicon_classifier(2)
W = CLF.lex.w
DAY = "2024-11-01"


def sentence(text: str):
    return CLF.sentence(0, text, dt.date(2024, 11, 1))


def verb(text: str) -> R.Scope:
    s = sentence(text)
    assert len(s.verbs) == 1, s.verbs
    return R.Scope(s, s.verbs[0])


def cue(text: str, cat: str) -> R.Scope:
    s = sentence(text)
    return R.Scope(s, next(sp for sp in s.spans if cat in sp.cats))


def whole(text: str) -> R.Scope:
    return R.Scope(sentence(text))


def reads(reading) -> tuple | None:
    return None if reading is None else (reading.cls, reading.weight, reading.rule)


SPEC, DONE, CORR, OTHER = EVIDENCE_TYPES

# rule -> (a sentence it reads, what it reads there), (a sentence it leaves alone)
VERB_CASES = {
    "governed_by_you": (
        ("If you switch banks, tell me.", R.NOTHING[:3]),
        "If I switch banks, I'll tell you.",
    ),
    "declined_change": (
        ("I won't switch banks.", (SPEC, W["unrealized"], "declined change: not real")),
        "I might not switch banks.",
    ),
    "governed_change": (
        ("I might switch banks.", (SPEC, W["governed_change"], "change under hedge 'might'")),
        "I switched banks.",
    ),
    "pending_completion": (
        ("I have not switched banks.", (SPEC, W["pending_change"], "negated completion: not yet")),
        "I never switched banks.",
    ),
    "negated_past": (
        ("Nothing changed.", (SPEC, W["unrealized"], "negated past: no change happened")),
        "Everything changed.",
    ),
    "hedged_recall": (
        (
            "I might have switched banks.",
            (OTHER, W["hedged_recall"], "hedged recall (modal + have)"),
        ),
        "I have switched banks.",
    ),
    "past_with_future_time": (
        (
            "I moved the appointment to next week.",
            (SPEC, W["scheduled_change"], "past form beside a future time: scheduled"),
        ),
        "I moved to Denver last week.",
    ),
    "completed_change": (
        (
            "I moved to Denver last week.",
            (DONE, W["completed_change"] + W["completion_bonus"], "past change, first person"),
        ),
        "My sister moved to Denver.",
    ),
    "completed_other_subject": (
        (
            "My sister moved to Denver.",
            (DONE, W["completed_other_subject"], "past change, another subject"),
        ),
        "My sister is moving to Denver.",
    ),
    "abandoned_change": (
        ("I gave up on switching banks.", (SPEC, W["unrealized"], "abandoned change: not real")),
        "I'm thinking about switching banks.",
    ),
    "pending_change": (
        (
            "No news on switching banks yet.",
            (SPEC, W["pending_change"], "pending: a negation with 'yet'"),
        ),
        "News on switching banks.",
    ),
    "futurate_progressive": (
        ("I'm switching banks.", (SPEC, W["futurate"], "futurate progressive")),
        "I was switching banks.",
    ),
    "prospective_gerund": (
        (
            "We're excited about moving to Denver.",
            (SPEC, W["prospective_gerund"], "prospective gerund"),
        ),
        "Congrats on moving to Denver!",
    ),
    "scheduled_change": (
        ("I start at Acme next month.", (SPEC, W["scheduled_change"], "change with a future time")),
        "I start at Acme.",
    ),
    "present_state": (
        ("I subscribe to the newsletter now.", (DONE, W["present_state"], "present state")),
        "I subscribe to the newsletter.",
    ),
}

SENTENCE_CASES = {
    "bare_operator": (
        ("Maybe.", (SPEC, W["bare_hedge"], "hedge with no change verb 'maybe'")),
        "I love hiking.",
    ),
    "pending_bare": (
        ("Not yet.", (SPEC, W["pending_bare"], "negation with 'yet'")),
        "Yet another rainy day.",
    ),
    "past_time_alone": (
        ("That was last week.", (DONE, W["past_time_alone"], "past time, no change verb")),
        "Maybe last week.",
    ),
    "now_state": (
        ("It's fine now.", (DONE, W["now_state"], "'now' in a present-tense clause")),
        "Is it fine now?",
    ),
    "weak_correction": (
        ("Actually, I live in Tacoma.", (CORR, W["correction_weak"], "weak corrective marker")),
        "I live in Tacoma.",
    ),
    "other": (("I love hiking.", (OTHER, W["other_cue"], "non-revisionary cues")), "Okay."),
}


@pytest.mark.parametrize("name", list(VERB_CASES))
def test_each_change_verb_rule_alone(name):
    rule = getattr(R, name)
    (text, expected), untouched = VERB_CASES[name]
    assert reads(rule(verb(text))) == expected
    assert rule(verb(untouched)) is None


@pytest.mark.parametrize("name", list(SENTENCE_CASES))
def test_each_sentence_rule_alone(name):
    rule = getattr(R, name)
    (text, expected), untouched = SENTENCE_CASES[name]
    assert reads(rule(whole(text))) == expected
    assert rule(whole(untouched)) is None


def test_the_cue_rules_alone():
    assert reads(R.completion_idiom(cue("I finally pulled the trigger.", "completion_idiom"))) == (
        DONE,
        W["completion_idiom"],
        "completion idiom",
    )
    assert (
        R.completion_idiom(cue("I pulled the trigger and it ships tomorrow.", "completion_idiom"))
        is None
    )
    assert reads(
        R.correction(cue("Scratch that, I bank with the credit union.", "correction"))
    ) == (CORR, W["correction"], "corrective marker")
    assert R.correction(cue("Actually, I live in Tacoma.", "correction_weak")) is None


def test_what_a_rule_reads_depends_on_its_scope_only_as_stated():
    """An activity verb's progressive decides its verb and counts nothing; "you" the same; a
    weak corrective marker counts more beside a negation; a modal alone is weak evidence."""
    assert R.futurate_progressive(verb("I'm learning Spanish.")) is R.NOTHING
    assert reads(R.weak_correction(whole("Actually, I don't live in Tacoma."))) == (
        CORR,
        W["correction_weak_negated"],
        "weak corrective marker with a negation",
    )
    assert R.bare_operator(whole("I'll do it.")).weak
    assert R.continuation(whole("Thanks, I'll let you know!")) == W["continuation"]


def test_a_reason_clause_weighs_a_reading_down_when_it_becomes_evidence():
    s = sentence("I'm thinking about it because I moved to Denver.")
    moved = next(v for v in s.verbs if v.surface == "moved")
    reading = R.completed_change(R.Scope(s, moved))
    R.take(s, reading)
    assert s.out[-1].weight == reading.weight * W["reason_factor"]
    assert s.out[-1].rule == reading.rule + " (in a reason clause)"
    before = len(s.out)
    R.take(s, R.NOTHING)
    assert len(s.out) == before  # nothing counts: no evidence


def test_the_first_rule_with_a_reading_decides_a_verb():
    """A governed change verb with "you" as its subject: governed_by_you comes first, so the
    governed_change reading the verb would otherwise get never counts."""
    assert R.governed_change(verb("If you switch banks, tell me.")) is not None
    assert [e.rule for e in CLF.explain("If you switch banks, tell me.", DAY)] == [
        "non-revisionary cues"
    ]


def test_the_rule_table_follows_the_header_and_names_every_rule():
    raw = V2.read_text()
    header = "\n".join(line for line in raw.splitlines() if line.startswith("#"))
    steps = [int(step) for step, _, _ in R.RULES]
    assert steps == sorted(steps)
    for step in set(steps) | {1, 3, 7}:
        assert re.search(rf"^#\s+{step}\. ", header, re.M), step
    listed = [rule for _, _, rules in R.RULES for rule in rules]
    assert len(listed) == len(set(listed))
    defined = {
        name
        for name, f in vars(R).items()
        if callable(f)
        and getattr(f, "__module__", "") == R.__name__
        and list(getattr(f, "__annotations__", {}).values())[:1] == ["Scope"]
        and name not in ("continuation",)
    }
    assert {f.__name__ for f in listed} == defined
    units = {unit for _, unit, _ in R.RULES}
    cats = set(tomllib.loads(raw)["cues"])
    assert units - {"verb", "sentence"} <= cats


@pytest.mark.parametrize(
    "drop,text,word,cat,dropped",
    [
        (may_the_month, "We met in May.", "may", "hedge", True),
        (may_the_month, "We may meet.", "may", "hedge", False),
        (going_to_a_place, "I'm going to the gym.", "going", "modal", True),
        (going_to_a_place, "Going to Boston.", "going", "modal", True),
        (going_to_a_place, "I'm going to switch banks.", "going", "modal", False),
        (d_as_had, "I'd already moved.", "'d", "modal", True),
        (d_as_had, "I'd move there.", "'d", "modal", False),
        (get_a_without_acquiring, "I'm getting a bit tired.", "getting", "verb:ing", True),
        (get_a_without_acquiring, "I'm getting a dog.", "getting", "verb:ing", False),
        (past_form_as_adjective, "My left hand hurts.", "left", "verb:past", True),
        (past_form_as_adjective, "I left the club.", "left", "verb:past", False),
    ],
)
def test_each_step_1_drop_alone(drop, text, word, cat, dropped):
    toks = tokens(text)
    words = [w for _, w in toks]
    f = next(
        Found(CLF.lex, c, a, b, words, text, toks)
        for a, b, c, _ in CLF.lex.matcher.find(toks)
        if c == cat and words[a] == word
    )
    assert drop(f) is dropped
    assert drop in DROPS


def test_v2_is_unchanged_and_reads_the_words_it_leaves_out_from_its_words_file():
    raw = V2.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == V2_SHA256
    assert hashlib.sha256(SCOPED_WORDS_V2.read_bytes()).hexdigest() == SCOPED_WORDS_V2_SHA256
    data = tomllib.loads(raw.decode())
    assert not set(V2_SYNTAX) & set(data["syntax"])  # v2 names none of them: the defaults are v2's
    lex = Lexicon(data, V2.name)
    assert lex.negator_subjects == frozenset(V2_SYNTAX["negator_subjects"])
    later = {**data, "syntax": {**data["syntax"], "negator_subjects": ["nobody"]}}
    assert Lexicon(later, "evidence_cues.v9.toml").negator_subjects == {
        "nobody"
    }  # a file may list its own


def test_the_rules_name_only_the_words_the_module_docstring_names():
    """Every word list is data: a word in the rule modules' code is a category, a form, or one of
    the words the rules are about."""
    data = tomllib.loads(V2.read_text())
    named = {"may", "going", "to", "'d", "yet", "now", "since", "while", "'t"}
    kinds = {"verb", "sentence", "first", "second", "other", "iso", "md", "dm"}
    known = (
        set(data["cues"])
        | set(data["syntax"])
        | set(FORMS)
        | set(EVIDENCE_TYPES)
        | kinds
        | named
        | {"future_time", "past_time", "reason", "conditional", "abandon"}
    )
    found = set()
    for module in ("scoped_rules.py", "_scoped_sentence.py"):
        tree = ast.parse((CLASSIFY / module).read_text())
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and any(getattr(t, "id", "") == "__slots__" for t in node.targets)
            for n in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                found |= {
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
            elif isinstance(node, ast.Compare):
                found |= {
                    e.value
                    for e in [node.left, *node.comparators]
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
    words = {w for w in found if re.fullmatch(r"'?[a-z]+", w)}
    assert words <= known, sorted(words - known)
