"""The slot grammar of the phrase banks (``generate/phrases/*.toml``).

Frames must agree with their level (a firm decision is not "one of these days"), with tense (no
present perfect next to a finished time), and every assistant sentence must carry a slot that
differs between domains, so no reply sentence can repeat across the dataset.
"""

from __future__ import annotations

import re

import pytest

from agentmemgate.design import paper_design
from agentmemgate.generate.offline import level_phrasings, phrase_bank

PAPER = paper_design()
HEDGE_LEVELS = PAPER.factor("hedge_strength").drawn  # its plan levels (the control is not drawn)
CONFIRMATION_LEVELS = PAPER.levels("confirmation_wording")
BANK = phrase_bank()
PLAN_SLOTS = {"switch_plan", "switching_plan", "switched_plan", "plan", "Switching_plan"}
VALUE_SLOTS = {
    "plan",
    "current_plan",
    "doing_plan",
    "switch_plan",
    "switching_plan",
    "switched_plan",
    "you_plan",
    "you_current_plan",
    "you_switching_plan",
    "you_change_plan",
    "Switching_plan",
}
DOMAIN_SLOTS = {
    "noun",
    "weigh",
    "step",
    "Step",
    "settle",
    "Settle",
    "tip",
    "stay_tip",
    "Stay_tip",
    "gap",
    "Gap",
    "sched_abs",
    "you_initial",
    "you_plan",
    "you_current_initial",
    "you_current_plan",
    "you_switching_plan",
    "you_stay_initial",
    "you_change_plan",
}
KNOWN = {
    "initial",
    "plan",
    "noun",
    "change",
    "stay_initial",
    "switch_plan",
    "switching_plan",
    "switched_plan",
    "current_initial",
    "current_plan",
    "doing_plan",
    "oblique_thing",
    "reason",
    "reason_done",
    "on_date",
    "date_np",
    "done_when",
    "done_asof",
    "mentioned",
    "sched_abs",
    "gap",
    "q",
    "weekday",
} | DOMAIN_SLOTS
FIRM = r"\b(decided|decision|settled|definitely|certain|committed|made up my mind)\b"
VAGUE = r"\b(one of these days|someday|some day|at some point|eventually|sooner or later)\b"
FINISHED_TIME = ("{done_when}", "yesterday", "last week", "ago")


def _slots(template: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", template))


def _sentences(template: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", template) if s]


def _all_templates():
    for name, data in BANK.items():
        for key, value in data.items():
            if key == "exchanges":
                continue
            lists = value.values() if isinstance(value, dict) else [value]
            for items in lists:
                for t in items:
                    yield name, key, t


def test_every_slot_is_one_the_renderer_fills():
    for name, key, t in _all_templates():
        unknown = {s[:1].lower() + s[1:] for s in _slots(t)} - {
            k[:1].lower() + k[1:] for k in KNOWN
        }
        assert not unknown, (name, key, t, unknown)


@pytest.mark.parametrize("level", HEDGE_LEVELS)
def test_plan_frames_name_the_value_and_fit_their_level(level):
    for t in level_phrasings(level):
        assert _slots(t) & PLAN_SLOTS, f"plan turn without the plan value: {t!r}"
        low = t.lower()
        if paper_design().factor("hedge_strength").level(level).group == "hedged":
            assert not re.search(
                FIRM,
                low.replace("haven't decided", "")
                .replace("nothing is decided", "")
                .replace("haven't committed", "")
                .replace("ready to commit", ""),
            ), t
        if level == "confident_no_date":
            assert not re.search(VAGUE, low), f"a firm decision is not 'one of these days': {t!r}"
            assert not _slots(t) & {"on_date", "date_np", "On_date"}, t
        if level == "scheduled_with_date":
            assert _slots(t) & {"on_date", "date_np", "On_date"}, f"no date: {t!r}"
        if level == "strongly_hedged":
            assert not re.search(r"\b(probably|leaning|likely)\b", low), t


def test_completed_changes_say_done_with_tense_that_fits():
    for t in level_phrasings("completed_change"):
        assert "{switched_plan}" in t, t
        for sentence in _sentences(t):
            if re.search(r"\bI've\b|\bI have\b", sentence):
                assert not any(w in sentence for w in FINISHED_TIME), (
                    f"present perfect with a finished time: {sentence!r}"
                )


def test_no_outcome_frame_puts_the_present_perfect_next_to_a_finished_time():
    for _, key, t in _all_templates():
        for sentence in _sentences(t):
            if re.search(r"\b(I've|I have) (switched|moved|changed|joined)", sentence):
                assert not any(w in sentence for w in FINISHED_TIME), (key, sentence)
            assert not re.search(r"\{current_\w+\}[^.]*\bsince\b", sentence), (
                f"'since' needs the perfect, not the simple present: {sentence!r}"
            )


def test_outcome_frames_fit_the_confirmation_level():
    for level in CONFIRMATION_LEVELS:
        for group in ("hedged", "committed"):
            for t in level_phrasings(level, group):
                slots = _slots(t)
                if level == "oblique":
                    assert not slots & VALUE_SLOTS, f"oblique names the value: {t!r}"
                else:
                    assert slots & VALUE_SLOTS, f"{level} must name the value: {t!r}"
                if level in ("paraphrase", "situational"):
                    assert "switch" not in t.lower().replace("{", " ").replace("}", " ").replace(
                        "switched_plan", ""
                    ), t
                if level == "situational":
                    assert not re.search(
                        r"\b(did it|went ahead|done|change|new|finally)\b", t.lower()
                    ), t


def test_outcome_frames_remember_the_plan_rightly():
    """After a firm plan the user never says they were 'debating'; after a hedged one never 'as planned'."""
    for key, table in BANK["outcome"].items():
        for t in table.get("committed", []):
            assert not re.search(
                r"debating|weighing|going back and forth|thinking about|maybe", t.lower()
            ), t
        for t in table.get("hedged", []):
            assert not re.search(
                r"as planned|like i said i would|had planned|was going to", t.lower()
            ), t
        for t in table.get("any", []):
            assert not re.search(
                r"debating|weighing|back and forth|as planned|said i would", t.lower()
            ), t
    pending_hedged = BANK["outcome"]["pending"]["hedged"]
    pending_any = BANK["outcome"]["pending"]["any"]
    assert all(
        not re.search(r"gotten around|slipping|busy|meaning to", t.lower())
        for t in pending_hedged + pending_any
    )


# Short acknowledgements before a domain sentence, in a bank used by few arcs (situational
# confirmations: about 36 of 386), may be slot-free: with 8 of them dealt in turn, none reaches
# 8 uses.
SLOT_FREE_OK = {"situational"}


def test_every_assistant_sentence_carries_a_slot_that_differs_between_domains():
    for key, items in BANK["replies"].items():
        for t in items:
            sentences = _sentences(t)
            assert _slots(t) & DOMAIN_SLOTS, f"{key}: {t!r} has no domain slot"
            for sentence in sentences:
                if key in SLOT_FREE_OK and len(sentence.split()) <= 8:
                    continue
                assert _slots(sentence) & DOMAIN_SLOTS, (
                    f"{key}: {sentence!r} would repeat across domains"
                )


def test_reply_banks_fit_their_situation():
    r = BANK["replies"]
    for key in (
        "strongly_hedged",
        "weakly_hedged",
        "pending_hedged",
        "pending_committed",
        "abandoned",
    ):
        for t in r[key]:
            assert not re.search(r"congrat|glad (it|you)|so far|settl(e|ing) in", t.lower()), (
                key,
                t,
            )
    for key in ("confident_no_date", "scheduled_with_date"):
        for t in r[key]:
            assert not re.search(
                r"holding you back|pros and cons|trade-?offs|no need to rush|if you decide",
                t.lower(),
            ), (key, t)
    for key in ("completed_change", "came_true", "came_true_unnamed", "situational"):
        for t in r[key]:
            assert not re.search(
                r"if you decide|when you (switch|move)|before you (switch|move)", t.lower()
            ), (key, t)
    for key in ("came_true_unnamed", "situational"):
        for t in r[key]:
            assert not _slots(t) & VALUE_SLOTS, f"{key} must not name the value: {t!r}"
    for t in r["situational"]:
        assert not re.search(r"\{change\}|switch|congrat|settle", t.lower()), t
    for key, items in r.items():
        assert len(items) >= 8, key


def test_openers_never_refer_back_from_the_first_session():
    for t in BANK["chat"]["initial"]:
        assert not re.search(r"again|last time|like i said|back with", t.lower()), t
        assert "{current_initial}" in t and "{q}" in t, t
