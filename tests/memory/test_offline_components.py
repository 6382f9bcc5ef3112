"""Each offline component on hand-written sentences and on real offline arcs."""

from __future__ import annotations

import datetime as dt

import pytest

from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.memory import (
    CueChecker,
    ExtractedTuple,
    FieldKey,
    OfflineExtractor,
    PermissiveMatcher,
    StagedState,
    TemplatePredicateWriter,
    UserTurn,
    WordOverlapMatcher,
    retry_tuple,
    strip_attribute,
    strip_value,
)
from agentmemgate.memory.conversation import user_turns
from agentmemgate.memory.resolve import mentions, value_core
from agentmemgate.schema import FieldSpec, contains_value

from .conftest import FIELD


def turn(text: str, t: int = 0) -> UserTurn:
    return UserTurn(text=text, session=0, turn=t, date=dt.date(2024, 4, 2), t=t)


def pairs(style: str, text: str) -> list[tuple[str, str]]:
    return [(x.attribute, x.value) for x in OfflineExtractor(style).extract(turn(text), [])]


@pytest.mark.parametrize(
    "text,literal,cautious",
    [
        (
            "I buy my groceries at Safeway.",
            [("grocery_store", "Safeway")],
            [("grocery_store", "Safeway")],
        ),
        (
            "I might switch to Trader Joe's next month.",
            [("grocery_store", "Trader Joe's")],
            [("grocery_plan", "considering Trader Joe's")],
        ),
        (
            "I'm definitely going to switch to Aldi.",
            [("grocery_store", "Aldi")],
            [("grocery_plan", "planning to switch to Aldi")],
        ),
        (
            "Torn between staying with Safeway and switching to Aldi.",
            [("grocery_store", "Aldi")],
            [("grocery_plan", "considering Aldi")],
        ),
        (
            "Last week I switched from Safeway to Aldi.",
            [("grocery_store", "Aldi")],
            [("grocery_store", "Aldi")],
        ),
        ("I decided against switching to Aldi.", [], []),
        ("I haven't moved to Denver yet.", [], []),
        (
            "I'm not sure whether to move to Denver.",
            [("home_city", "Denver")],
            [("home_plan", "considering Denver")],
        ),
        (
            "Nope, I'm sticking with Safeway.",
            [("grocery_store", "Safeway")],
            [("grocery_store", "Safeway")],
        ),
        ("What's a good recipe for soup?", [], []),
        (
            "I get my prescriptions from Walgreens.",
            [("pharmacy", "Walgreens")],
            [("pharmacy", "Walgreens")],
        ),
    ],
)
def test_extractor_styles_on_hand_written_sentences(text, literal, cautious):
    assert pairs("literal", text) == literal
    assert pairs("cautious", text) == cautious


def test_extractor_finds_values_the_catalog_does_not_know_after_change_verbs():
    got = OfflineExtractor("literal").extract(
        turn("I switched to Helix Editor for my code editor work."), []
    )
    assert [(x.attribute, x.value) for x in got] == [("code_editor", "Helix Editor")]
    assert (
        OfflineExtractor("literal").extract(turn("I switched to Fooble."), []) == []
    )  # no attribute


def test_common_word_values_need_their_capital_letter():
    assert pairs("literal", "That is a big factor for me.") == []
    assert pairs("literal", "I order from Factor now.") == [("meal_kit_service", "Factor")]


def test_span_is_the_sentence_the_value_came_from():
    (x,) = OfflineExtractor("cautious").extract(
        turn("Hi there! I might switch to Aldi. Any soup ideas?"), []
    )
    assert x.span == "I might switch to Aldi."


def test_matcher_accepts_by_word_overlap_and_declines_plan_slots():
    m = WordOverlapMatcher()
    assert m.match(ExtractedTuple(attribute="grocery_store", value="Aldi"), [FIELD]) == FIELD
    assert m.match(ExtractedTuple(attribute="groceries", value="Aldi"), [FIELD]) == FIELD
    assert (
        m.match(ExtractedTuple(attribute="grocery_plan", value="considering Aldi"), [FIELD]) is None
    )
    assert m.match(ExtractedTuple(attribute="home_city", value="Denver"), [FIELD]) is None
    assert (
        m.match(ExtractedTuple(entity="mom", attribute="grocery_store", value="Aldi"), [FIELD])
        is None
    )


def test_the_matcher_sees_only_name_and_description():
    blind = FIELD.model_copy(
        update={"probe_question": "Where does the user buy groceries at Aldi?"}
    )
    assert WordOverlapMatcher().match(ExtractedTuple(attribute="aldi", value="x"), [blind]) is None


def test_permissive_matcher_files_plans_and_known_values_under_the_same_quantity():
    p = PermissiveMatcher()
    assert (
        p.match(ExtractedTuple(attribute="grocery_plan", value="considering Aldi"), [FIELD])
        == FIELD
    )
    assert (
        p.match(ExtractedTuple(attribute="shopping_interest", value="maybe Aldi"), [FIELD]) == FIELD
    )
    assert (
        p.match(ExtractedTuple(attribute="bag_interest", value="a black messenger"), [FIELD])
        is None
    )


@pytest.mark.parametrize(
    "attribute,stripped",
    [
        ("grocery_plan", "grocery"),
        ("planned_home_city", "home_city"),
        ("possible_gym_switch", "gym"),
        ("grocery_store", "grocery_store"),
        ("plan", "plan"),
    ],
)
def test_retry_strips_plan_words_from_the_attribute(attribute, stripped):
    assert strip_attribute(attribute) == stripped


@pytest.mark.parametrize(
    "value,stripped",
    [
        ("considering Trader Joe's", "Trader Joe's"),
        ("planning to switch to Aldi", "Aldi"),
        ("thinking about moving to Denver", "Denver"),
        ("might switch to Aldi", "Aldi"),
        ("Aldi (planned)", "Aldi"),
        ("a possible move to Denver", "Denver"),
        ("Aldi", "Aldi"),
    ],
)
def test_retry_strips_plan_framing_from_the_value(value, stripped):
    assert strip_value(value) == stripped


def test_retry_resubmits_only_when_the_attribute_changes():
    again = retry_tuple(
        ExtractedTuple(attribute="grocery_plan", value="considering Aldi", span="s")
    )
    assert (again.attribute, again.value, again.span) == ("grocery", "Aldi", "s")
    assert WordOverlapMatcher().match(again, [FIELD]) == FIELD
    assert retry_tuple(ExtractedTuple(attribute="grocery_store", value="considering Aldi")) is None


def staged(value="Aldi"):
    p = TemplatePredicateWriter().write(
        FIELD, ExtractedTuple(attribute="grocery_store", value=value), value, "Safeway", []
    )
    return StagedState(key=FieldKey.of(FIELD), value=value, staged_at=2, **p.model_dump())


def test_template_predicates_name_the_value_the_field_and_the_kept_value():
    item = staged()
    assert "grocery store is now Aldi" in item.confirm_when and "not enough" in item.confirm_when
    assert "keeping Safeway" in item.abandon_when


@pytest.mark.parametrize(
    "text,verdict",
    [
        ("Update: I switched to Aldi last week.", "confirm"),
        ("Picked up the week's groceries at Aldi on Sunday.", "confirm"),  # situational
        ("Things changed. I shop at Aldi now.", "confirm"),
        ("I went ahead with the switch I mentioned. No regrets!", "confirm"),  # oblique
        ("I decided against Aldi, staying with Safeway.", "abandon"),
        ("Forget what I said about Aldi, not happening.", "abandon"),
        ("Never mind the switch, I'm sticking with Safeway.", "abandon"),
        ("Still haven't made up my mind about Aldi.", "neither"),
        ("I'm still thinking about switching to Aldi.", "neither"),
        ("Decided to skip switching to Aldi.", "abandon"),
        ("What's a good soup recipe?", "neither"),
        ("I did my long run yesterday and it went great.", "neither"),
    ],
)
def test_checker_rules(text, verdict):
    assert CueChecker().check(staged(), FIELD, turn(text, 8), []) == verdict


def test_long_values_are_recognized_by_their_capitalized_core():
    v = "the US Bank location next to the grocery store on Elm"
    assert value_core(v) == "US Bank"
    assert mentions("Moved my account to US Bank last week.", v)
    assert not mentions("I bank online.", v)


@pytest.fixture(scope="module")
def arcs():
    r = get_renderer("offline")
    return [
        r.render(s)
        for split in ("core", "controlled", "heldout")
        for s in plan_split(split, 0, n_per_cell=2)
    ]


def test_on_real_arcs_the_literal_extractor_reads_the_initial_statement(arcs):
    ex = OfflineExtractor("literal")
    for arc in arcs:
        ref = arc.initial_turn
        turns = dict(((t.session, t.turn), (t, c)) for t, c in user_turns(arc.sessions))
        t, c = turns[(ref.session, ref.turn)]
        got = ex.extract(t, c)
        assert (arc.spec.field.attribute, arc.spec.initial_value) in [
            (x.attribute, x.value) for x in got
        ], arc.id


def test_on_real_arcs_each_plan_value_is_extracted_in_both_styles(arcs):
    """The literal style names the plan value; the cautious style frames it unless reported done."""
    for arc in arcs:
        if arc.spec.outcome == "control":
            continue
        ref = arc.plan_turn
        t, c = next(
            (t, c)
            for t, c in user_turns(arc.sessions)
            if (t.session, t.turn) == (ref.session, ref.turn)
        )
        lit = OfflineExtractor("literal").extract(t, c)
        assert any(contains_value(x.value, arc.spec.plan_value) for x in lit), arc.id
        cau = OfflineExtractor("cautious").extract(t, c)
        assert any(contains_value(x.value, arc.spec.plan_value) for x in cau), arc.id


def test_on_real_arcs_the_checker_never_promotes_on_an_abandonment(arcs):
    checker = CueChecker()
    for arc in arcs:
        if arc.spec.outcome != "abandoned":
            continue
        field = arc.spec.field
        item = StagedState(
            key=FieldKey.of(field),
            value=arc.spec.plan_value,
            confirm_when="",
            abandon_when="",
            staged_at=0,
        )
        t, c = next(
            (t, c)
            for t, c in user_turns(arc.sessions)
            if (t.session, t.turn) == (arc.outcome_turn.session, arc.outcome_turn.turn)
        )
        assert checker.check(item, field, t, c) != "confirm", arc.id


def test_fields_in_tests_are_value_free(arcs):
    for arc in arcs:
        assert arc.spec.field.leaked_values(arc.spec.label_values) == []
    assert isinstance(FIELD, FieldSpec)


def test_on_real_arcs_the_shared_memo_answers_as_a_fresh_reading(arcs):
    """Extractors share their answers by style (nine systems read each turn); a memoized answer is
    the one an unmemoized extractor (a gazetteer passed in: never memoized) gives, and the two
    styles never answer for each other whichever reads a turn first."""
    from agentmemgate.memory.gazetteer import gazetteer

    fresh = {s: OfflineExtractor(s, values=gazetteer()) for s in ("literal", "cautious")}
    assert all(e._memo is None for e in fresh.values())
    for i, arc in enumerate(arcs):
        order = ("cautious", "literal") if i % 2 else ("literal", "cautious")
        for t, c in user_turns(arc.sessions):
            for style in order + order:  # the second round is answered from the memo
                got = OfflineExtractor(style).extract(t, c)
                assert got == fresh[style].extract(t, c), (arc.id, style, t.text)
    first = OfflineExtractor("literal").extract(turn("I might switch to Aldi."), [])
    first.clear()  # a caller's list is its own
    assert OfflineExtractor("literal").extract(turn("I might switch to Aldi."), []) != []


def test_on_real_arcs_the_checker_memo_answers_as_a_fresh_reading(arcs):
    import agentmemgate.memory.resolve as resolve

    checker = CueChecker()
    for arc in arcs:
        if arc.outcome_turn is None:
            continue
        field = arc.spec.field
        turns = list(user_turns(arc.sessions))
        for value in (arc.spec.plan_value, arc.spec.initial_value):
            item = StagedState(
                key=FieldKey.of(field), value=value, confirm_when="", abandon_when="", staged_at=0
            )
            for t, c in turns:
                resolve._UNITS.clear()
                mentions.cache_clear()
                fresh = checker.check(item, field, t, c)
                assert checker.check(item, field, t, c) == fresh, (arc.id, t.text)
