import datetime as dt
import re
from collections import Counter, defaultdict
from functools import cache

import pytest

from agentmemgate.design import paper_design
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.generate.offline import _ahead, _back, level_phrasings
from agentmemgate.schema import contains_value
from agentmemgate.validate import check_arc
from agentmemgate.validate.diversity import (
    ASSISTANT_DISTINCT_GOAL,
    SMALL_TALK_DISTINCT_GOAL,
    measure,
)
from agentmemgate.validate.judges import get_judge, realism_question

PAPER = paper_design()
HEDGE_LEVELS = PAPER.factor("hedge_strength").drawn  # its plan levels (the control is not drawn)
CONFIRMATION_LEVELS = PAPER.levels("confirmation_wording")
PAPER_SPLITS = PAPER.resolve_splits("paper")


def _render(split, seed=0, n=None):
    r = get_renderer("offline")
    return [r.render(s) for s in plan_split(split, seed=seed, n_per_cell=n)]


@cache
def _full_build(seed: int = 0):
    """The paper's three splits (the corrections split has its own tests, tests/generate/
    test_corrections.py)."""
    return tuple(a for split in PAPER_SPLITS for a in _render(split, seed))


def test_every_level_has_eight_phrasings():
    for level in HEDGE_LEVELS + ("completed_change",):
        assert len(set(level_phrasings(level))) >= 8, level
    for level in CONFIRMATION_LEVELS + ("abandoned", "pending"):
        for group in ("hedged", "committed"):
            assert len(set(level_phrasings(level, group))) >= 8, (level, group)


def test_all_arcs_pass_structural_checks():
    for arc in _full_build():
        failed = [r for r in check_arc(arc) if not r.passed]
        assert not failed, (arc.id, failed)


def test_plan_turn_variety_per_level():
    texts = defaultdict(set)
    for arc in _full_build():
        if arc.spec.factor == "hedge_strength":
            t = arc.turn(arc.plan_turn).text
            t = t.replace(arc.spec.plan_value, "X").replace(arc.spec.initial_value, "Y")
            texts[arc.spec.level].add(re.sub(r"\s+", " ", t)[:25])
    for level, variants in texts.items():
        assert len(variants) >= 5, (level, variants)


def test_confirmation_levels_differ_as_described():
    for arc in _full_build():
        if arc.spec.factor != "confirmation_wording":
            continue
        text = arc.turn(arc.outcome_turn).text
        reply = arc.sessions[arc.outcome_turn.session].turns[arc.outcome_turn.turn + 1].text
        level = arc.spec.level
        if level in ("verbatim", "paraphrase", "situational"):
            assert contains_value(text, arc.spec.plan_value), (level, text)
        if level == "oblique":
            assert not contains_value(text, arc.spec.plan_value), text
            assert not contains_value(reply, arc.spec.plan_value), (
                reply
            )  # the reply keeps it oblique
        if level in ("paraphrase", "situational"):
            assert "switch" not in text.lower(), text
        if level == "situational":  # the reply does not turn it into a reported change
            assert not re.search(r"\b(switch|move|change|congrat)", reply.lower()), reply


def test_open_arcs_stay_open_and_plans_do_not_assert_change():
    for arc in _render("core"):
        if arc.spec.outcome == "open":
            assert arc.outcome_turn is None and arc.pending_turn is not None
            assert set(arc.expected_value_after_session) == {arc.spec.initial_value}
        if arc.spec.outcome == "came_true":
            assert arc.expected_value_after_session[-1] == arc.spec.plan_value
            assert arc.expected_value_after_session[0] == arc.spec.initial_value


def test_initial_value_first_appears_in_the_initial_turn_and_plan_value_in_the_plan_turn():
    for arc in _full_build():
        flat = [(si, ti, t) for si, s in enumerate(arc.sessions) for ti, t in enumerate(s.turns)]
        first = next(
            (si, ti) for si, ti, t in flat if contains_value(t.text, arc.spec.initial_value)
        )
        assert first == (arc.initial_turn.session, arc.initial_turn.turn), arc.id
        before_plan = [
            t for si, ti, t in flat if (si, ti) < (arc.plan_turn.session, arc.plan_turn.turn)
        ]
        assert not any(contains_value(t.text, arc.spec.plan_value) for t in before_plan), arc.id
        assert contains_value(arc.turn(arc.plan_turn).text, arc.spec.plan_value), arc.id


def test_heldout_plan_ends_its_session_and_the_outcome_opens_the_next():
    for arc in _render("heldout"):
        if arc.spec.outcome == "control":
            assert arc.outcome_turn == arc.plan_turn and arc.plan_turn.session >= 1
            continue
        later = arc.outcome_turn or arc.pending_turn
        plan_session = arc.sessions[arc.plan_turn.session]
        assert arc.plan_turn.turn == len(plan_session.turns) - 2, arc.id  # only the reply follows
        assert (later.session, later.turn) == (arc.plan_turn.session + 1, 0), arc.id
        # A probe after the plan's session sees the plan before its outcome.
        assert arc.expected_value_after_session[arc.plan_turn.session] == arc.spec.initial_value


def test_same_seed_same_bytes_other_seed_other_arcs():
    a = [x.model_dump_json() for x in _render("heldout", seed=5, n=2)]
    b = [x.model_dump_json() for x in _render("heldout", seed=5, n=2)]
    c = [x.model_dump_json() for x in _render("heldout", seed=6, n=2)]
    assert a == b and a != c


def test_turns_read_as_sentences():
    for arc in _full_build():
        for s in arc.sessions:
            for t in s.turns:
                assert t.text[0].isupper() or t.text[0].isdigit(), t.text
                assert "{" not in t.text and "}" not in t.text
                assert "_" not in t.text, t.text
                assert not re.search(r"\b[Aa] (?!one|uni|use|usu)[aeio]\w", t.text), (
                    t.text
                )  # "a espresso"
                assert "  " not in t.text and " ." not in t.text and "..." not in t.text, t.text


@pytest.mark.parametrize("seed", [0, 1])
def test_a_full_build_meets_the_diversity_goals(seed):
    d = measure(_full_build(seed))
    assert d.arcs == sum(paper_design().arcs_in(s) for s in paper_design().resolve_splits("paper"))
    assert d.assistant_distinct.value >= ASSISTANT_DISTINCT_GOAL
    assert d.small_talk_distinct.value >= SMALL_TALK_DISTINCT_GOAL
    assert d.sentences_over_limit == 0, d.top_sentences[:3]
    assert d.qa_no_overlap.k == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_a_full_build_passes_every_offline_realism_check(seed):
    """Relevance, true references and dates, no repeats, no contradictory frames, tense."""
    arcs = _full_build(seed)
    judge = get_judge("offline")
    questions = [realism_question(a) for a in arcs]
    judge.prepare(questions)
    failed = Counter()
    examples = []
    for arc, q in zip(arcs, questions):
        for name, v in judge.ask(q).criteria.items():
            if not v.passed and name != "motivated":
                failed[name] += 1
                examples.append(f"{arc.id} {name}: {v.rationale}")
    assert not failed, examples[:5]


def test_dates_in_words_agree_with_the_calendar():
    fri = dt.date(2024, 3, 1)  # a Friday
    assert _ahead(fri, fri + dt.timedelta(days=1)) == ("tomorrow", "tomorrow")
    assert _ahead(fri, dt.date(2024, 3, 3)) == ("this Sunday", "Sunday")
    assert _ahead(fri, dt.date(2024, 3, 5)) == ("on Tuesday", "Tuesday")
    assert _ahead(fri, dt.date(2024, 3, 12)) == ("on Tuesday, March 12", "Tuesday, March 12")
    assert _back(dt.date(2024, 3, 1), fri) == "today"
    assert _back(dt.date(2024, 2, 29), fri) == "yesterday"
    assert _back(dt.date(2024, 2, 27), fri) == "on Tuesday"
    assert _back(dt.date(2024, 2, 21), fri) == "last week"  # Wednesday of the week before
    assert _back(dt.date(2024, 2, 18), fri) == "twelve days ago"  # a Sunday two weeks back
    assert _back(dt.date(2024, 2, 14), fri) == "a couple of weeks ago"
    assert _back(dt.date(2024, 1, 31), fri) == "a few weeks ago"


def test_scheduled_dates_lie_after_the_plan_and_before_a_confirmed_change():
    for arc in _full_build():
        if arc.spec.plan_wording != "scheduled_with_date":
            continue
        text = arc.turn(arc.plan_turn).text
        said = arc.sessions[arc.plan_turn.session].date
        m = re.search(
            r"(January|February|March|April|May|June|July|August|September|October|"
            r"November|December) (\d{1,2})",
            text,
        )
        if m:
            day = dt.date(said.year, dt.datetime.strptime(m.group(1), "%B").month, int(m.group(2)))
            if day < said:
                day = day.replace(year=day.year + 1)
            assert 1 <= (day - said).days <= 31, (arc.id, text)
            if arc.spec.outcome == "came_true":
                assert day <= arc.sessions[arc.outcome_turn.session].date, (arc.id, text)
