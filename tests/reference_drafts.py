"""A known-good reply to an arc-generation prompt: the scripted model's answers in the generator's
tests and the throughput benchmark (``get_model("scripted:x").respond_with(reference_responder)``,
or a mock server's responder). A fixture, not a generator: plain text that passes every check."""

from __future__ import annotations

import json
import re
from typing import Any

from agentmemgate.llm import Request

_BRIEF_LINE = re.compile(r"^Specification as data: (\{.*\})\s*$", re.M)


def reference_responder(request: Request) -> dict[str, Any]:
    """Answer a generation prompt with ``reference_draft`` of the spec it carries."""
    m = _BRIEF_LINE.search(request.prompt)
    if not m:
        raise ValueError("not an arc-generation prompt")
    return reference_draft(json.loads(m.group(1)))


def reference_draft(brief: dict[str, Any]) -> dict[str, Any]:
    """A plain, check-passing ``ArcDraft`` for a ``spec_brief``: a fixture, not a generator."""
    if brief["structure"] == "correction":
        return reference_correction_draft(brief)
    cur, new = brief["current_value"], brief["new_value"]
    noun = re.sub(r"^the user's current |\.$", "", brief["field"], flags=re.I) or "setup"
    dates = brief["session_dates"]
    plan_text = {
        "strongly_hedged": f"Honestly I'm torn between staying with {cur} and trying {new}.",
        "weakly_hedged": f"I'm leaning toward {new}, though nothing is decided yet.",
        "confident_no_date": f"I've decided I'm going to switch to {new}.",
        "scheduled_with_date": f"I'm set to switch to {new} on the first of next month.",
    }.get(brief["plan_wording"], f"I'm thinking about {new}.")
    outcome_text = {
        "came_true": {
            "verbatim": f"Update: the switch to {new} went through.",
            "paraphrase": f"Good news, {new} is what I use now, it's official.",
            "oblique": "I went ahead with that change I mentioned, no regrets so far.",
            "situational": "Spent the whole weekend getting used to the new routine.",
        }.get(
            brief.get("confirmation_wording") or "verbatim", f"The switch to {new} went through."
        ),
        "abandoned": f"About {new}: I dropped that idea, I'm staying with {cur}.",
        "open": f"Still haven't made up my mind about {new}, it's on the maybe list.",
    }.get(brief["outcome"], "")
    ok = "Got it, thanks for telling me."
    chat = (
        "Can you suggest a quick dinner idea for tonight?",
        "Sure: a vegetable stir-fry with rice takes about twenty minutes.",
    )
    initial = (f"Some context first: my {noun} right now is {cur}.", "Thanks, that helps.")
    sessions: list[list[str]] = [[] for _ in dates]
    if brief["structure"] == "completed_change":
        sessions[0] += initial
        sessions[1] += (
            f"Small update: I changed from {cur} to {new} the other day, and it's going well.",
            ok,
        )
        plan = outcome = {"session": 1, "turn": 0}
        later = None
    elif brief["structure"] == "pending_window":
        sessions[0] += (*initial, plan_text, ok, *chat)
        plan = {"session": 0, "turn": 2}
        later = {"session": len(dates) - 1, "turn": 0}
        sessions[-1] += (outcome_text, ok)
    else:  # next_session_outcome: the plan ends session 0, the outcome opens session 1
        sessions[0] += (*initial, plan_text, ok)
        sessions[1] += (outcome_text, ok)
        plan = {"session": 0, "turn": 2}
        later = {"session": 1, "turn": 0}
    if brief["structure"] != "completed_change":
        outcome = None if brief["outcome"] == "open" else later
    for turns in sessions:
        if not turns:
            turns += chat
    return {
        "sessions": [
            {
                "date": d,
                "turns": [
                    {"role": "user" if i % 2 == 0 else "assistant", "text": t}
                    for i, t in enumerate(turns)
                ],
            }
            for d, turns in zip(dates, sessions)
        ],
        "initial_turn": {"session": 0, "turn": 0},
        "plan_turn": plan,
        "outcome_turn": outcome,
        "pending_turn": later if brief["outcome"] == "open" else None,
    }


def reference_correction_draft(brief: dict[str, Any]) -> dict[str, Any]:
    """A plain, check-passing ``CorrectionDraft`` for a correction ``spec_brief`` (a fixture)."""
    first, wrong, right = brief["first_value"], brief["wrong_value"], brief["right_value"]
    noun = re.sub(r"^the user's current |\.$", "", brief["field"], flags=re.I) or "setup"
    dates, change = brief["session_dates"], brief["corrected_statement"] == "change"
    ok = "Got it, thanks for telling me."
    chat = (
        "Can you suggest a quick dinner idea for tonight?",
        "Sure: a vegetable stir-fry with rice takes about twenty minutes.",
    )
    said = 1 if change else 0
    where = said if brief["timing"] == "same" else said + 1
    when = "earlier" if where == said else "last time"
    if brief["marker"] == "marked":
        fix = f"Sorry, I said {wrong} {when}, but I meant {right}. My {noun} is {right}."
    else:
        fix = f"I told you {wrong} {when}, and that was wrong. My {noun} is {right}."
    sessions: list[list[str]] = [[] for _ in dates]
    sessions[0] += (f"Some context first: my {noun} is {first}.", "Thanks, that helps.")
    if change:
        sessions[1] += (f"Small update: I changed from {first} to {wrong} the other day.", ok)
    if where == said:
        sessions[where] += chat
    sessions[where] += (fix, f"Thanks for correcting that: {right}, not {wrong}.")
    for turns in sessions:
        if not turns:
            turns += chat
    return {
        "sessions": [
            {
                "date": d,
                "turns": [
                    {"role": "user" if i % 2 == 0 else "assistant", "text": t}
                    for i, t in enumerate(turns)
                ],
            }
            for d, turns in zip(dates, sessions)
        ],
        "initial_turn": {"session": 0, "turn": 0},
        "change_turn": {"session": 1, "turn": 0} if change else None,
        "correction_turn": {"session": where, "turn": len(sessions[where]) - 2},
    }
