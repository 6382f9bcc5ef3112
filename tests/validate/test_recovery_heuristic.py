"""The offline heuristic recovery judge on hand-written wordings the renderer never produces.

Every conversation here was written for this test. ``test_wordings_are_not_renderer_output``
renders all 386 planned arcs and checks none of these user turns occur in them, so passing here
says the lexicon generalizes beyond the renderer's phrase bank rather than echoing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentmemgate.design import paper_design
from agentmemgate.validate.judges import LevelOption, RecoveryQuestion, get_judge
from agentmemgate.validate.judges.questions import ChatSession, ChatTurn

FILLER = "Sounds good. Let me know if you want to compare options or talk through costs."


def question(factor: str, *sessions: list[str], order: list[str] | None = None) -> RecoveryQuestion:
    """User turns per session; assistant turns are neutral filler."""
    out = []
    for i, users in enumerate(sessions):
        turns = []
        for u in users:
            turns += [ChatTurn(role="user", text=u), ChatTurn(role="assistant", text=FILLER)]
        out.append(ChatSession(date=f"2024-0{i + 1}-1{i}", turns=tuple(turns)))
    levels = order or list(paper_design().levels(factor))
    return RecoveryQuestion(
        sessions=tuple(out),
        options=tuple(
            LevelOption(level=lv, definition=paper_design().definition(factor, lv)) for lv in levels
        ),
    )


CURRENT = "I do my weekday workouts at the Planet Fitness near the office."
CHAT = "Can you suggest a stretching routine for tight hamstrings?"

HEDGE = {
    "strongly_hedged": [
        "Honestly I keep going back and forth on whether to drop Planet Fitness for the climbing gym downtown.",
        "Part of me wants the climbing gym, part of me wants to stay put. Could go either way at this point.",
        "I can't decide if the climbing gym is worth it or if I should just stay where I am.",
    ],
    "weakly_hedged": [
        "I'm probably going to move my membership to the climbing gym, their classes look fun.",
        "I'm leaning towards the climbing gym downtown, though nothing's signed.",
        "Most likely I'll end up at the climbing gym, it's closer to my apartment.",
    ],
    "confident_no_date": [
        "I've made up my mind: my membership is going to the climbing gym downtown.",
        "I'm definitely joining the climbing gym, Planet Fitness is too crowded after work.",
        "Decision made, I'm going to sign up at the climbing gym instead.",
    ],
    "scheduled_with_date": [
        "My first session at the climbing gym is booked for March 14, so that's when I'm switching over.",
        "I'm going to start at the climbing gym on Monday the 3rd, the paperwork is all set for then.",
        "The climbing gym membership starts on 4/15, I'll be cancelling the old one that week.",
    ],
    "completed_change": [
        "Quick update: I switched my membership to the climbing gym downtown last week.",
        "I've moved over to the climbing gym, Planet Fitness is history.",
        "Small news, I joined the climbing gym and I'm no longer at Planet Fitness.",
    ],
}


@pytest.mark.parametrize("level,plan", [(lv, p) for lv, ps in HEDGE.items() for p in ps])
def test_hedge_strength_from_hand_written_plans(level, plan):
    q = question("hedge_strength", [CURRENT, CHAT, plan, CHAT], [CHAT])
    v = get_judge("offline").ask(q)
    assert v.level == level, v.rationale


PLAN = "I think I'll switch to Counter Culture beans, the Folgers tastes flat lately."
CONFIRMATION = {
    "verbatim": [
        "Update: I did switch to Counter Culture beans, finally ordered a big bag.",
        "Well, I went ahead and switched to Counter Culture beans like I said I would.",
    ],
    "paraphrase": [
        "Good news, the first bag of Counter Culture arrived and the Folgers is gone for good.",
        "I finally made the move to Counter Culture, ordered two pounds yesterday.",
    ],
    "oblique": [
        "I went ahead and did it, by the way, no regrets so far.",
        "So that coffee change I mentioned? Done deal.",
    ],
    "situational": [
        "This morning's pour-over with the Counter Culture beans was fantastic.",
        "Brewing a pot of Counter Culture for the guests today, any pastry ideas?",
    ],
}


@pytest.mark.parametrize("level,confirm", [(lv, c) for lv, cs in CONFIRMATION.items() for c in cs])
def test_confirmation_wording_from_hand_written_confirmations(level, confirm):
    q = question(
        "confirmation_wording",
        ["My usual is a can of Folgers from the grocery store.", PLAN, CHAT],
        [CHAT, confirm],
    )
    v = get_judge("offline").ask(q)
    assert v.level == level, v.rationale


CARRIER = "My phone plan is with T-Mobile right now."
CARRIER_PLAN = "I might switch to Verizon, the coverage at my parents' place is awful."
OUTCOME = {
    "came_true": [[CARRIER, CARRIER_PLAN], [CHAT, "I ended up signing with Verizon after all."]],
    "abandoned": [
        [CARRIER, CARRIER_PLAN],
        [CHAT, "I decided against Verizon, staying with T-Mobile for now."],
    ],
    "open": [
        [CARRIER, CARRIER_PLAN],
        [CHAT, "Still mulling over the Verizon thing, nothing decided."],
    ],
    "completed_change": [
        [CARRIER, CHAT],
        ["Heads up: I moved my phone plan over to Verizon two weeks ago.", CHAT],
    ],
}


@pytest.mark.parametrize("level", list(OUTCOME))
def test_outcome_from_hand_written_arcs(level):
    v = get_judge("offline").ask(question("outcome", *OUTCOME[level]))
    assert v.level == level, v.rationale


def test_no_cue_is_a_recorded_guess_of_the_first_option():
    order = [
        "weakly_hedged",
        "completed_change",
        "strongly_hedged",
        "scheduled_with_date",
        "confident_no_date",
    ]
    v = get_judge("offline").ask(
        question("hedge_strength", ["Nice weather today.", CHAT], order=order)
    )
    assert v.level == "weakly_hedged"
    assert "guess" in v.rationale


def test_wordings_are_not_renderer_output():
    from agentmemgate.generate import get_renderer, plan_split

    renderer = get_renderer("offline")
    rendered = {
        t.text
        for split in ("core", "heldout", "controlled")
        for spec in plan_split(split, 0)
        for s in renderer.render(spec).sessions
        for t in s.turns
    }
    mine = (
        [p for ps in HEDGE.values() for p in ps]
        + [c for cs in CONFIRMATION.values() for c in cs]
        + [CURRENT, PLAN, CARRIER, CARRIER_PLAN]
        + [t for arc in OUTCOME.values() for s in arc for t in s]
    )
    assert not [m for m in mine if any(m in r for r in rendered)]


def test_judge_code_does_not_read_the_renderer_phrase_bank_or_catalog():
    root = Path(__import__("agentmemgate.validate.judges", fromlist=["x"]).__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert "generate" not in (node.module or ""), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert "phrases" not in node.value and "catalog" not in node.value, path.name
    assert not (root / "lexicon.v1.toml").read_text().count("phrases/")
