"""Audit fixtures: a tiny JSONL source with hostile text, and arcs built by hand or offline."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest

from agentmemgate.schema import Arc, ArcSpec, FieldSpec, Provenance, Session, Turn, TurnRef

APP = Path(__file__).resolve().parents[2] / "agentmemgate" / "annotate_app" / "app.py"

# Item ids that would give the level away if they ever reached a page.
STATEMENTS = [
    {
        "id": "ID-spec-1",
        "text": "I might move to <b>Seattle</b> **soon**, [link](http://x.example)",
        "date": "2024-03-01",
        "context": [
            {"speaker": "user", "text": "I live in Boston now", "date": "2024-03-01"},
            {
                "speaker": "assistant",
                "text": "<script>alert(1)</script> Nice!",
                "date": "2024-03-01",
            },
        ],
        "reference": "speculation",
    },
    {"id": "ID-done-2", "text": "I moved to Denver last week", "reference": "completed_event"},
    {"id": "ID-other-3", "text": "I like green tea", "reference": "other"},
    {"id": "ID-spec-4", "text": "Thinking of switching gyms next year", "reference": "speculation"},
]


@pytest.fixture
def statements_file(tmp_path) -> Path:
    p = tmp_path / "items.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in STATEMENTS))
    return p


def make_arc(
    i: int,
    outcome: str = "came_true",
    split: str = "core",
    factor: str = "outcome",
    level: str | None = None,
) -> Arc:
    level = level or ("completed_change" if outcome == "control" else outcome)
    spec = ArcSpec(
        id=f"{split}-{factor}-{level}-{i:03d}",
        split=split,
        factor=factor,
        level=level,
        outcome=outcome,
        field=FieldSpec(
            attribute="gym",
            description="The gym the user trains at",
            probe_question="Which gym does the user go to?",
        ),
        domain="gym",
        initial_value="Equinox",
        plan_value="Gold's Gym",
        plan_wording="completed_change" if outcome == "control" else "weakly_hedged",
        session_dates=[dt.date(2024, 1, 1), dt.date(2024, 1, 9)],
        pending_window=True,
        seed=i,
        plan_seed=0,
    )
    plan = (
        "I switched to Gold's Gym last week."
        if outcome == "control"
        else "I might switch to Gold's Gym."
    )
    later = {
        "came_true": "Switching to Gold's Gym happened this week.",
        "abandoned": "I decided to stay at Equinox after all.",
        "open": "Gold's Gym is still on the maybe list.",
        "control": "Any tips for leg day?",
    }[outcome]
    sessions = [
        Session(
            date=dt.date(2024, 1, 1),
            turns=[
                Turn(role="user", text="I train at Equinox."),
                Turn(role="assistant", text="Great."),
                Turn(role="user", text=plan),
                Turn(role="assistant", text="Tell me more."),
            ],
        ),
        Session(
            date=dt.date(2024, 1, 9),
            turns=[Turn(role="user", text=later), Turn(role="assistant", text="Noted.")],
        ),
    ]
    return Arc(
        spec=spec,
        sessions=sessions,
        initial_turn=TurnRef(session=0, turn=0),
        plan_turn=TurnRef(session=0, turn=2),
        outcome_turn=TurnRef(session=1, turn=0) if outcome in ("came_true", "abandoned") else None,
        pending_turn=TurnRef(session=1, turn=0) if outcome == "open" else None,
        expected_value_after_session=["Equinox", "Equinox"],
        provenance=Provenance(
            generator="test",
            generator_kind="hand-written",
            prompt_sha256="0",
            seed=i,
            toolkit_version="0",
        ),
    )


_CHAT = [  # ordinary small talk, long enough that a conversation runs over several screens
    (
        "user",
        "Morning! Can you help me plan meals for the week? I want something quick on "
        "weekdays, nothing that needs more than twenty minutes.",
    ),
    (
        "assistant",
        "Sure. A simple pattern is one batch-cooked grain, one roasted tray of "
        "vegetables and two proteins you can mix through the week.",
    ),
    (
        "user",
        "That sounds doable. I usually get home around seven, so anything I can reheat is a plus.",
    ),
    (
        "assistant",
        "Then cook rice and lentils on Sunday, roast peppers and courgettes, and keep "
        "eggs and tofu for quick protein.",
    ),
    ("user", "Also, I keep forgetting to water my plants. Any trick for that?"),
    (
        "assistant",
        "Tie it to something you already do daily, like the first coffee on Monday and "
        "Thursday, and keep the can next to the kettle.",
    ),
]


def make_long_arc(i: int = 0, level: str = "weakly_hedged") -> Arc:
    """A hedge-strength arc of three sessions and 36 turns; the plan is turn 23 (in session 2)."""
    dates = [dt.date(2024, 1, 1), dt.date(2024, 1, 9), dt.date(2024, 2, 2)]
    spec = ArcSpec(
        id=f"controlled-hedge_strength-{level}-{i:03d}",
        split="controlled",
        factor="hedge_strength",
        level=level,
        outcome="came_true",
        field=FieldSpec(
            attribute="gym",
            description="The gym the user trains at",
            probe_question="Which gym does the user go to?",
        ),
        domain="gym",
        initial_value="Equinox",
        plan_value="Gold's Gym",
        plan_wording=level,
        session_dates=dates,
        pending_window=True,
        seed=i,
        plan_seed=0,
    )

    def chat(n: int, first: str | None = None) -> list[Turn]:
        turns = [Turn(role=r, text=t) for r, t in (_CHAT * 3)[:n]]
        if first:
            turns[0] = Turn(role="user", text=first)
        return turns

    s1 = chat(12, "I train at Equinox three times a week.")
    s2 = chat(14)
    s2[10] = Turn(role="user", text="I might switch to Gold's Gym at some point, not sure yet.")
    s3 = chat(10, "I switched to Gold's Gym on Monday.")
    return Arc(
        spec=spec,
        sessions=[Session(date=d, turns=t) for d, t in zip(dates, [s1, s2, s3])],
        initial_turn=TurnRef(session=0, turn=0),
        plan_turn=TurnRef(session=1, turn=10),
        outcome_turn=TurnRef(session=2, turn=0),
        expected_value_after_session=["Equinox", "Equinox", "Gold's Gym"],
        provenance=Provenance(
            generator="test",
            generator_kind="hand-written",
            prompt_sha256="0",
            seed=i,
            toolkit_version="0",
        ),
    )


@pytest.fixture
def arcs_ws(ws):
    """A workspace with one arc of each outcome, saved the way the build room saves them."""
    arcs = [
        make_arc(0, "came_true"),
        make_arc(1, "abandoned"),
        make_arc(2, "open"),
        make_arc(3, "control"),
    ]
    ws.save_specs([a.spec for a in arcs])
    for a in arcs:
        ws.save_arc(a)
    return ws


@pytest.fixture
def built_ws(small_build, tmp_path):
    """A private copy of the shared offline build's workspace (audits write to it)."""
    from agentmemgate.workspace import Workspace

    root, _ = small_build
    (tmp_path / "bws").mkdir()
    src = sqlite3.connect(root / "ws" / "workspace.db")
    dst = sqlite3.connect(tmp_path / "bws" / "workspace.db")
    src.backup(dst)
    src.close()
    dst.close()
    return Workspace(tmp_path / "bws")


def token_of(url: str) -> str:
    return url.split("token=", 1)[1]
