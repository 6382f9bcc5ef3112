"""Every ``{slot}`` the offline renderer fills, by the phrase file that may use it.

One table, read by the renderer's checks (``phrase_check``: a slot a file may not use is refused,
naming the ones it may) and by the docs (the reference page of phrase-file slots is generated
from it, so it cannot fall behind). A design adds slots of its own by declaring catalog keys
(``[catalog_keys]`` in ``design.toml``): each gives ``{slot}`` (one of the domain's items, drawn
per arc) and ``{you_slot}`` (the same in the second person) to every phrase file but the session
openers.
``{Slot}`` with a capital first letter is the same value capitalized.
"""

from __future__ import annotations

from dataclasses import dataclass

# The phrase files, as the checks and the docs name them.
FILES = {
    "plan": "phrases/plan.toml: plan turns (one list per plan-wording level) and motivations",
    "outcome": "phrases/outcome.toml: confirmations, abandonments and still-pending mentions",
    "replies": "phrases/replies.toml: the assistant's replies to the key turns",
    "chat": "phrases/chat.toml, `initial`: the first turn's frame (small-talk exchanges declare "
    "their own slots)",
    "opener": "phrases/chat.toml, `session_opener` and `question_opener`: greetings that open a "
    "later session",
    "correction": "correction_phrases.toml: explicit corrections and their replies",
}
_TEXT = ("plan", "outcome", "replies", "correction")  # every file but chat
_ALL = (*_TEXT, "chat")


@dataclass(frozen=True)
class Slot:
    name: str
    means: str
    files: tuple[str, ...]
    domain: bool = False  # its text differs between domains (a reply sentence needs one)


SLOTS: tuple[Slot, ...] = (
    # the values and the catalog's frames
    Slot("initial", "the current value", _ALL),
    Slot("plan", "the plan value", _ALL),
    Slot("noun", "the field's noun ('web browser')", _ALL, domain=True),
    Slot("change", "the switch as a noun ('switch', 'move')", _ALL),
    Slot("stay_initial", "staying with the current value ('sticking with Ghost 14')", _ALL),
    Slot("switch_plan", "the switch, base form ('switch to Pegasus 39')", _ALL),
    Slot("switching_plan", "the switch, gerund ('switching to Pegasus 39')", _ALL),
    Slot("switched_plan", "the switch, past ('switched to Pegasus 39')", _ALL),
    Slot("current_initial", "the current value as a present statement ('I run in Ghost 14')", _ALL),
    Slot("current_plan", "the new value as a present statement ('I run in Pegasus 39')", _ALL),
    Slot("doing_plan", "using the new value, past, no time word ('ran in Pegasus 39')", _ALL),
    Slot("oblique_thing", "the new value without naming it ('the new pair')", _ALL),
    Slot("reason", "why change, present tense, about the current situation", _ALL),
    Slot("reason_done", "why the change was made, past tense", _ALL),
    # the assistant quoting the user, in the second person
    Slot("you_initial", "the current value in the second person", _ALL, domain=True),
    Slot("you_plan", "the plan value in the second person", _ALL, domain=True),
    Slot("you_current_initial", "'you run in Ghost 14'", _ALL, domain=True),
    Slot("you_current_plan", "'you run in Pegasus 39'", _ALL, domain=True),
    Slot("you_stay_initial", "'sticking with Ghost 14' said to the user", _ALL, domain=True),
    Slot("you_switching_plan", "'switching to Pegasus 39' said to the user", _ALL, domain=True),
    Slot(
        "you_change_plan", "the change with its value ('switch to Pegasus 39')", _ALL, domain=True
    ),
    # what the assistant says, from the domain's catalog file
    Slot("weigh", "what to compare ('fit, cushioning and how long they last')", _ALL, domain=True),
    Slot("step", "a practical step of the switch, imperative", _ALL, domain=True),
    Slot("settle", "settling in after the change, imperative", _ALL, domain=True),
    Slot("tip", "using the thing well, imperative", _ALL, domain=True),
    Slot("stay_tip", "getting more out of the current value, imperative", _ALL, domain=True),
    # dates, true to the session dates
    Slot(
        "on_date",
        "a plan's scheduled day as an adverbial ('tomorrow', 'this Friday', 'on Friday, March 3'); "
        "a plan phrasing that uses it (or date_np) names a day, and only then do later turns cite it",
        ("plan", "outcome", "replies"),
    ),
    Slot(
        "date_np",
        "the scheduled day as a noun phrase ('Friday, March 3')",
        ("plan", "outcome", "replies"),
    ),
    Slot(
        "sched_abs",
        "the scheduled day, month and day ('March 3')",
        ("plan", "outcome", "replies"),
        domain=True,
    ),
    Slot(
        "gap",
        "how long until the scheduled day ('about two weeks')",
        ("plan", "outcome", "replies"),
        domain=True,
    ),
    Slot(
        "done_when",
        "when a change happened, true to the dates ('yesterday', 'on Tuesday', 'last week')",
        _TEXT,
    ),
    Slot("done_asof", "the same after 'as of' ('yesterday', 'Tuesday')", _TEXT),
    Slot(
        "mentioned",
        "when the plan was brought up ('last time', 'on Sunday', 'a couple of weeks ago')",
        ("outcome", "replies"),
    ),
    # corrections
    Slot("wrong", "the value the corrected statement gave", ("correction",)),
    Slot("right", "the corrected value", ("correction",)),
    Slot("current_right", "the corrected value as a present statement", ("correction",)),
    Slot("you_current_right", "the same in the second person", ("correction",), domain=True),
    Slot("switched_wrong", "the wrong completed change ('moved to Denver')", ("correction",)),
    Slot("switched_right", "the corrected completed change", ("correction",)),
    Slot(
        "said_when",
        "when the corrected statement was made ('earlier', 'last time', 'when we talked on Tuesday')",
        ("correction",),
    ),
    # chat frames
    Slot("q", "the question of the arc's first exchange (the first turn's frame)", ("chat",)),
    Slot("weekday", "the session's own weekday", ("opener",)),
)

BY_NAME = {s.name: s for s in SLOTS}
KNOWN_SLOTS = frozenset(BY_NAME)
DOMAIN_SLOTS = frozenset(s.name for s in SLOTS if s.domain)


def declared_slots(design) -> dict[str, str]:
    """The slots a design's own catalog keys add: ``{slot}`` and ``{you_slot}``, with what they
    mean."""
    out: dict[str, str] = {}
    for key, ck in (getattr(design, "catalog_keys", None) or {}).items():
        slot = ck.slot or key
        out[slot] = f"one of the domain's `{key}` (declared by the design: {ck.description})"
        out[f"you_{slot}"] = "the same, in the second person"
    return out


def domain_slots(design=None) -> frozenset[str]:
    """Slots whose text differs between domains, a design's own among them."""
    return DOMAIN_SLOTS | frozenset(declared_slots(design)) if design is not None else DOMAIN_SLOTS


def slots_for(file: str, design=None) -> dict[str, str]:
    """Every slot phrase file ``file`` may use, with what it means (the design's own included)."""
    out = {s.name: s.means for s in SLOTS if file in s.files}
    if file != "opener" and design is not None:
        out |= declared_slots(design)
    return out
