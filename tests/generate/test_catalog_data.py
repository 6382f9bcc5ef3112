"""The domain catalog is data the offline renderer trusts blindly; ``catalog_problems`` keeps it
honest, and these tests run the same code ``amg catalog check`` and ``amg build`` run.

The built-in catalog has no problem; each rule of ``catalog/README.md`` fires on a user's domain
file (``preferred_airline.toml``, a copy of a built-in file with its field and values replaced)
that breaks it, with the one-line message a user sees; ``amg catalog check`` prints them all at
once and exits 1, never with a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from airline_domain import LONG_VALUES, VALUES, airline_domain, replace_key
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import CATALOG_DIR, paper_design
from agentmemgate.generate.offline import phrase_bank
from agentmemgate.validate.catalog import (
    KNOWN_KEYS,
    LIST_MINIMUMS,
    catalog_files,
    catalog_problems,
    check_catalog,
    small_talk_problems,
)

runner = CliRunner()
BUILTIN = sorted(p.stem for p in CATALOG_DIR.glob("*.toml"))


def test_the_builtin_catalog_has_no_problem():
    assert catalog_problems(catalog_files()) == []


def test_the_paper_design_draws_only_on_builtin_domains():
    assert set(paper_design().domains) <= set(BUILTIN)


def test_off_topic_small_talk_follows_the_same_rules():
    """The design's own chat exchanges (not a catalog file) pass the catalog's small-talk rule."""
    talk = phrase_bank()["chat"]["exchanges"]
    assert len(talk) >= 20
    for ex in talk:
        assert 4 <= ex.fillings <= 8, ex.q
        for i in range(ex.fillings):
            assert small_talk_problems(*ex.fill(i)) == []


# -- a user's domain file and its variants ---------------------------------------------------
def check(tmp_path: Path, text: str, name: str = "preferred_airline") -> tuple[str, list[str]]:
    """Write ``text`` as the user's domain file, check it with the built-in catalog; (the file
    as messages name it, every problem as printed)."""
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.toml").write_text(text, encoding="utf-8")
    return f"{folder}/{name}.toml", [str(p) for p in check_catalog([folder])]


def line(text: str, needle: str, after: str = "") -> int:
    """The 1-based line of ``text`` holding ``needle`` (the first after the line holding ``after``)."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if after in x) if after else 0
    return next(i + 1 for i, x in enumerate(lines) if i >= start and needle in x)


def test_the_users_file_passes(tmp_path):
    assert check(tmp_path, airline_domain())[1] == []


def test_a_missing_key(tmp_path):
    text = re.sub(r"(?m)^switched = .*\n", "", airline_domain())
    f, problems = check(tmp_path, text)
    assert problems == [f"{f}: switched: missing key [shape]"]


def test_a_toml_syntax_error_names_its_line(tmp_path):
    text = airline_domain().replace('noun = "airline"', 'noun = "airline')
    f, problems = check(tmp_path, text)
    n = line(text, 'noun = "airline')
    assert problems == [
        f"{f}: TOML syntax error: Illegal character '\\n' (at line {n}, column 16) [syntax]"
    ]


def test_too_few_values(tmp_path):
    text = airline_domain(values=VALUES[:5])
    f, problems = check(tmp_path, text)
    at = line(text, "values = [")
    assert problems == [
        f"{f}: values (line {at}): has 5 items; at least "
        f"{LIST_MINIMUMS['values']} are needed [enough]"
    ]


def test_a_value_in_the_probe_question(tmp_path):
    probe = "Which airline does the user currently fly with, Delta or another one?"
    text = airline_domain(probe_question=probe)
    f, problems = check(tmp_path, text)
    at = line(text, '"Delta"', "values = [")
    assert problems == [
        f"{f}: values (line {at}): value 'Delta' "
        f"appears in the probe_question text {probe!r}: it could never be a clean "
        "label (remove it from one of them) [value-free]"
    ]


def test_a_value_shared_with_another_domain(tmp_path):
    text = airline_domain(values=[*VALUES[:7], "Frontier"])
    f, problems = check(tmp_path, text)
    theirs = (CATALOG_DIR / "internet_provider.toml").read_text(encoding="utf-8")
    mine_at = line(text, '"Frontier"', "values = [")
    theirs_at = line(theirs, '"Frontier"', "values = [")
    assert problems == [
        f"catalog (built in)/internet_provider.toml: values (line {theirs_at}): value 'Frontier' "
        "is also a value of preferred_airline: the offline extractor could not tell the fields "
        "apart [shared value]",
        f"{f}: values (line {mine_at}): value 'Frontier' is also a value of internet_provider: "
        "the offline extractor could not tell the fields apart [shared value]",
    ]


def test_a_key_nothing_reads(tmp_path):
    text = airline_domain().replace('change = "switch"', 'change = "switch"\nloyalty = ["miles"]')
    f, problems = check(tmp_path, text)
    at = line(text, "loyalty")
    assert problems == [
        f"{f}: loyalty (line {at}): unknown key: nothing reads "
        f"it (known keys: {', '.join(KNOWN_KEYS)}; a design may declare keys of its own under "
        "[catalog_keys]) [shape]"
    ]


def test_every_problem_at_once(tmp_path):
    """A file with a missing key still gets the other rules: all its problems in one run."""
    text = re.sub(r"(?m)^switched = .*\n", "", airline_domain(values=VALUES[:5], change="upgrade"))
    f, problems = check(tmp_path, text)
    assert [p.rsplit("[", 1)[1] for p in problems] == ["shape]", "enough]", "article]"]


# One rule each: the change to the user's file, the key and item the message points at, the
# message and the rule.
RULES = [
    (
        {"change": "upgrade"},
        "change",
        None,
        "'upgrade' must be one word starting with a consonant ('a {change}'), e.g. switch or move",
        "article",
    ),
    (
        {"switch": "switch to {airline}"},
        "switch",
        None,
        "'switch to {airline}' must have exactly one {value} slot and no other braces",
        "slots",
    ),
    (
        {"probe_question": "Which airline does the user fly with?"},
        "probe_question",
        None,
        "'Which airline does the user fly with?' must read What/Which/Where/How ... currently ...?",
        "probe",
    ),
    ({"noun": "Airline"}, "noun", None, "'Airline' must be lower case", "frame"),
    (
        {"switched": "flew with {value}"},
        "switched",
        None,
        "'flew with {value}' must start with a regular past verb ('...ed': its past tense is its "
        "participle)",
        "frame",
    ),
    (
        {"oblique_thing": "a new airline"},
        "oblique_thing",
        None,
        "'a new airline' must start with 'the' or 'my'",
        "frame",
    ),
    (
        {"values": [*VALUES[:7], "Sun Country Airlines Economy Plus"]},
        "values",
        "Sun Country",
        "value 'Sun Country Airlines Economy Plus': short values have at most 4 words and no leading 'the'",
        "short",
    ),
    ({"values": [*VALUES[:7], "Delta"]}, "values", "Delta", "'Delta' is listed twice", "distinct"),
    (
        {"values": [*VALUES[:7], "New Frontier Air"]},
        "values",
        "New Frontier Air",
        "value 'New Frontier Air' holds a hedge, plan or time word",
        "unambiguous",
    ),
    (
        {
            "long_values": [
                *LONG_VALUES[:7],
                "the Hawaiian Airlines flights I have taken since college",
            ]
        },
        "long_values",
        "since college",
        "value 'the Hawaiian Airlines flights I have taken since college' carries its own history "
        "(since): it may become the new value",
        "unambiguous",
    ),
    (
        {"long_values": [*LONG_VALUES[:7], "Hawaiian Airlines island hopper passes"]},
        "long_values",
        "island hopper passes",
        "value 'Hawaiian Airlines island hopper passes': long values start with 'the' and have 6 to "
        "14 words",
        "long",
    ),
]


@pytest.mark.parametrize(
    "changes, key, item, message, rule", RULES, ids=[f"{r[4]}-{r[1]}" for r in RULES]
)
def test_each_rule_fires_with_its_message(tmp_path, changes, key, item, message, rule):
    text = airline_domain(**changes)
    f, problems = check(tmp_path, text)
    at = line(text, item, f"{key} = ") if item else line(text, f"{key} = ")
    assert problems == [f"{f}: {key} (line {at}): {message} [{rule}]"]


def test_a_clause_rule(tmp_path):
    text = airline_domain()
    first = re.search(r'(?m)^reasons = \[\n  "(.*)",', text).group(1)
    text = text.replace(f'"{first}",', f'"{first}.",', 1)
    f, problems = check(tmp_path, text)
    at, bad = line(text, first + "."), first + "."
    assert problems == [
        f"{f}: reasons (line {at}): {bad!r} must be a lower-case clause with no final stop [clause]"
    ]


def test_the_article_rule_of_the_frames(tmp_path):
    """'staying with the {value}' reads 'the the' with every long value."""
    text = airline_domain(stay="staying with the {value}")
    f, problems = check(tmp_path, text)
    at = line(text, "stay = ")
    assert problems == [
        f"{f}: stay (line {at}): 'staying with the {{value}}' with {v!r} reads 'the the' [article]"
        for v in LONG_VALUES
    ]


def test_a_first_person_left_when_the_assistant_quotes_a_frame(tmp_path):
    text = airline_domain(stay="staying with Me and {value}")
    f, problems = check(tmp_path, text)
    at = line(text, "stay = ")
    assert problems == [
        f"{f}: stay (line {at}): 'staying with Me and {v}' keeps a first person "
        "when the assistant quotes it [second person]"
        for v in VALUES + LONG_VALUES
    ]


def test_small_talk_with_too_few_fillings(tmp_path):
    text = airline_domain()
    first = text.index("[[exchanges]]")
    head, rest = text[:first], text[first:]
    q = re.search(r'(?m)^q = "(.*)"$', rest).group(1)
    # keep the first three fillings of every slot list of the first exchange
    block, tail = rest.split("\n\n", 1)
    block = re.sub(r'(?m)^(slots\.\w+ = \[)("[^"]*", "[^"]*", "[^"]*"), .*\]$', r"\1\2]", block)
    text = head + block + "\n\n" + tail
    f, problems = check(tmp_path, text)
    at = line(text, "[[exchanges]]")
    assert problems == [
        f"{f}: exchanges#1 (line {at}): {q!r} needs slots with 4 to 8 fillings (has 3) [small talk]"
    ]


def test_small_talk_slot_lists_of_different_lengths(tmp_path):
    text = airline_domain()
    text = re.sub(r'(?m)^(slots\.\w+ = \[)"[^"]*", ', r"\1", text, count=1)  # drop one filling
    f, problems = check(tmp_path, text)
    q = re.search(r'(?m)^q = "(.*)"$', text).group(1)
    assert len(problems) == 1
    at = line(text, "[[exchanges]]")
    assert problems[0].startswith(
        f"{f}: exchanges#1 (line {at}): slot lists of {q!r} differ in length: ["
    )
    assert problems[0].endswith("[shape]")


@pytest.mark.parametrize(
    "q, a, message",
    [
        (
            "Is it worth it to fly {x}?",
            "Flying {x} is fine.",
            "must be a question with every slot filled",
        ),
        (
            "Should I maybe fly red-eye?",
            "A red-eye flight saves a hotel night.",
            "holds maybe (a hedge, plan or outcome word)",
        ),
        (
            "Am I going to like red-eye flights?",
            "Red-eye flights suit some people.",
            "holds going to (a hedge, plan or outcome phrase)",
        ),
        (
            "What do I pack for a overnight flight?",
            "For an overnight flight, pack socks.",
            "'a overnight' in",
        ),
        (
            "How early should I get to the airport?",
            "Two hours is enough for most trips.",
            "the answer shares no content word with its question",
        ),
        (
            "How early should I get to the airport?",
            "get to the airport early. Check the line. Eat. Relax.",
            "must have one to three sentences",
        ),
    ],
)
def test_small_talk_rules(q, a, message):
    assert any(message in p for p in small_talk_problems(q, a)), small_talk_problems(q, a)


def test_a_file_name_that_is_no_attribute(tmp_path):
    f, problems = check(tmp_path, airline_domain(), name="PreferredAirline")
    assert problems == [
        f"{f}: the file name 'PreferredAirline' must be a snake_case attribute "
        "(e.g. preferred_airline.toml) [name]"
    ]


def test_a_user_file_replaces_the_builtin_one_of_its_name(tmp_path):
    text = (CATALOG_DIR / "internet_provider.toml").read_text(encoding="utf-8")
    f, problems = check(tmp_path, replace_key(text, "change", "upgrade"), name="internet_provider")
    assert [p.split(": ")[0] for p in problems] == [f]


# -- the command ---------------------------------------------------------------------------------
def test_catalog_check_of_the_builtin_catalog():
    r = runner.invoke(app, ["catalog", "check"])
    assert r.exit_code == 0, r.output
    assert r.output == f"{len(BUILTIN)} domain files, no problems\n"


def test_catalog_check_prints_every_problem_and_exits_1(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "preferred_airline.toml").write_text(airline_domain(values=VALUES[:5]))
    (folder / "broken.toml").write_text("noun = \n")
    r = runner.invoke(app, ["catalog", "check", str(folder)])
    assert r.exit_code == 1
    assert "Traceback" not in r.output
    lines = r.output.splitlines()
    assert lines[0].startswith(f"{folder}/broken.toml: TOML syntax error: ")
    assert lines[1].startswith(f"{folder}/preferred_airline.toml: values (line ")
    assert lines[2] == f"Error: 2 problems in {len(BUILTIN) + 2} domain files"


def test_catalog_check_of_a_folder_with_no_domain_file(tmp_path):
    r = runner.invoke(app, ["catalog", "check", str(tmp_path)])
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"Error: No domain file in {str(tmp_path)!r} (expected "
        "DOMAIN.toml files, e.g. preferred_airline.toml)"
    ]
