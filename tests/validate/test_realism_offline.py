"""The offline realism judge: named checks it can really make, never a 'natural' verdict.

Each check must flag its planted bad arc and pass good arcs; hand-written conversations show the
checks read English, not the renderer's phrase bank.
"""

from __future__ import annotations

import pytest

from agentmemgate.validate.judges import get_judge, realism_question
from agentmemgate.validate.judges._realism import OFFLINE_REALISM_CHECKS
from agentmemgate.validate.judges.questions import ChatSession, ChatTurn, RealismQuestion

from .planted import good_arcs, planted

PLANTED = planted()


def _verdicts(arcs, corpus_arcs=None):
    judge = get_judge("offline")
    judge.prepare([realism_question(a) for a in (corpus_arcs or arcs)])
    return [judge.ask(realism_question(a)).criteria for a in arcs]


def test_the_offline_judge_gives_named_checks_and_no_natural_verdict():
    (criteria,) = _verdicts(good_arcs()[:1])
    assert set(criteria) == set(OFFLINE_REALISM_CHECKS)
    assert "natural" not in criteria
    assert get_judge("offline").realism_criteria == OFFLINE_REALISM_CHECKS


@pytest.mark.parametrize("name", list(PLANTED))
def test_each_planted_defect_is_flagged_by_its_check(name):
    arcs, check = PLANTED[name]
    corpus = arcs + good_arcs()
    for criteria in _verdicts(arcs, corpus):
        assert not criteria[check].passed, (name, criteria[check].rationale)


def test_good_arcs_pass_every_check():
    arcs = good_arcs()
    for arc, criteria in zip(arcs, _verdicts(arcs)):
        failed = {k: v.rationale for k, v in criteria.items() if not v.passed}
        assert not failed, (arc.id, failed)


def test_one_repeat_is_not_a_pattern_but_three_are():
    arcs = PLANTED["reply repeated across arcs"][0]
    two = _verdicts(arcs[:2], arcs[:2] + good_arcs())
    assert all(c["repetition"].passed for c in two)
    three = _verdicts(arcs, arcs + good_arcs())
    assert all(not c["repetition"].passed for c in three)
    assert "3 of the" in three[0]["repetition"].rationale


def _chat(*sessions, plan=(0, 2), dates=("2024-03-01", "2024-03-09")):
    out = []
    for date, turns in zip(dates, sessions):
        out.append(
            ChatSession(
                date=date,
                turns=tuple(
                    ChatTurn(role="user" if i % 2 == 0 else "assistant", text=t)
                    for i, t in enumerate(turns)
                ),
            )
        )
    return RealismQuestion(sessions=tuple(out), plan_session=plan[0], plan_turn=plan[1])


def _ask(q):
    return get_judge("offline").ask(q).criteria


GOOD = _chat(
    [
        "I shop at the co-op on Elm. How do I make spinach last longer?",
        "Spinach lasts longer wrapped loosely in a dry towel in the crisper drawer.",
        "I'm thinking of trying the market downtown instead, because the co-op keeps running out of things.",
        "Worth a look. Compare the prices on what you buy every week before you decide.",
    ],
    [
        "Remember the market I brought up last time? I tried it on Wednesday and I'm shopping there now.",
        "Glad it worked out. Keep an eye on the receipts for the first month.",
    ],
)


def test_a_hand_written_good_conversation_passes():
    failed = {k: v.rationale for k, v in _ask(GOOD).items() if not v.passed and k != "repetition"}
    assert not failed


def test_hand_written_defects_are_flagged():
    # "like I said" in the very first session
    q = _chat(
        [
            "Like I said, I shop at the co-op. Any tips for storing herbs?",
            "Stand herbs in a glass of water in the fridge door.",
            "I might try the market downtown.",
            "Sure, compare a few prices first.",
        ],
        ["Hi again.", "Hello!"],
    )
    assert not _ask(q)["time_references"].passed
    # an answer about something else
    q = _chat(
        [
            "How do I make spinach last longer?",
            "Your car tires need rotating every 5,000 miles.",
            "I might try the market downtown.",
            "Compare a few prices first.",
        ],
        ["Hi.", "Hello!"],
    )
    assert not _ask(q)["qa_relevance"].passed
    # a past change with a future time; present perfect with a finished time
    for text in ("I switched to the market tomorrow.", "I've switched to the market yesterday."):
        q = _chat(
            ["I shop at the co-op.", "Okay.", "I might try the market downtown.", "Sure."],
            [text, "Nice."],
        )
        assert not _ask(q)["tense_agreement"].passed, text
    # torn and decided at once; a congratulation for an undecided plan
    q = _chat(
        [
            "I shop at the co-op.",
            "Okay.",
            "I've decided to go to the market, but honestly I can't decide.",
            "Sure.",
        ],
        ["Hi.", "Hello!"],
    )
    assert not _ask(q)["frame_consistency"].passed
    q = _chat(
        [
            "I shop at the co-op.",
            "Okay.",
            "I'm torn between the co-op and the market.",
            "Congrats on the new store!",
        ],
        ["Hi.", "Hello!"],
    )
    assert not _ask(q)["frame_consistency"].passed
    # placeholder text
    q = _chat(
        ["I shop at {store}.", "Okay.", "I might try the market.", "Sure."], ["Hi.", "Hello!"]
    )
    assert not _ask(q)["chat_form"].passed


def test_weekdays_are_checked_against_the_calendar():
    # 2024-03-15 is a Friday; 2024-03-14 a Thursday.
    ok = _chat(
        [
            "I shop at the co-op.",
            "Okay.",
            "I'm going to try the market on Friday, March 15.",
            "Good.",
        ],
        ["Hi.", "Hello!"],
    )
    bad = _chat(
        [
            "I shop at the co-op.",
            "Okay.",
            "I'm going to try the market on Thursday, March 15.",
            "Good.",
        ],
        ["Hi.", "Hello!"],
    )
    past = _chat(
        ["I shop at the co-op.", "Okay.", "I'm going to try the market on February 20.", "Good."],
        ["Hi.", "Hello!"],
    )
    assert _ask(ok)["time_references"].passed
    assert "is a Friday" in _ask(bad)["time_references"].rationale
    assert "before this session" in _ask(past)["time_references"].rationale


def _all_texts():
    """Every turn and sentence of the good and planted arcs, and hand-written edge cases."""
    from agentmemgate.validate.judges._realism import sentences

    arcs = good_arcs() + [a for bad, _ in PLANTED.values() for a in bad]
    texts = [t.text for a in arcs for s in a.sessions for t in s.turns]
    texts += [x for t in texts for x in sentences(t)]
    return texts + [
        "I've switched yesterday, since Monday, it's been great.",
        "Last time I said I'd maybe move; that's still up in the air.",
        "We'll see. Ill, will; shell'll? {name} [todo] lorem ipsum",
        "",
        "'last time'",
        "Monday, March 3rd or march 33 or May 1, tomorrow, Tuesday tomorrow",
    ]


def test_has_any_is_any_has_for_every_cue_group_the_checks_use():
    """The one-scan union finds a cue exactly when one of its categories does (the checks skip a
    turn on it, so a miss would change verdicts)."""
    from agentmemgate.validate.judges import _realism as R
    from agentmemgate.validate.judges._lexicon import load_lexicon
    from agentmemgate.validate.judges.heuristic import _PLAN_CUES

    realism, recovery = R.realism_lexicon(), load_lexicon()
    groups = [
        (realism, R._REFERENCE_CUES),
        (realism, R._FRAME_CUES),
        (realism, R._TENSE_CUES),
        (recovery, _PLAN_CUES),
        (realism, tuple(realism.categories)),
        (recovery, tuple(recovery.categories)),
    ]
    texts = _all_texts()
    for lex, cats in groups:
        found = [lex.has_any(cats, t) for t in texts]
        assert found == [any(lex.has(c, t) for c in cats) for t in texts], cats
        assert any(found)  # the texts exercise the group


def test_the_month_first_date_scan_agrees_with_the_date_pattern():
    from agentmemgate.validate.judges._lexicon import normalize
    from agentmemgate.validate.judges._realism import _DATE, _HAS_DATE

    texts = [normalize(t) for t in _all_texts()]
    assert [bool(_HAS_DATE.search(t)) for t in texts] == [bool(_DATE.search(t)) for t in texts]
    assert any(_DATE.search(t) for t in texts)
