"""Designs that extend the paper's, written as a user would: a copy of the paper's folder with
its design file, phrase banks and recovery rules edited (no Python)."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentmemgate.design import BUILTIN

PAPER = BUILTIN["paper"].parent

CONDITIONAL_LEVEL = '''[[factors.hedge_strength.levels]]
name = "conditional"
group = "conditional"
definition = "The user will change only if something else happens first (a price that holds, a trial that goes well, a raise)."

'''
# Plan turns: at least 8 phrasings, each naming the plan value and the condition, which any
# domain can have (phrases/plan.toml).
CONDITIONAL_PLANS = '''conditional = [
  "If the price stays where it is, I'll {switch_plan}, since {reason}.",
  "Assuming my budget allows it next month, I'm going to {switch_plan}.",
  "As long as the trial goes well, I'll {switch_plan}.",
  "If a friend's recommendation checks out, I'll {switch_plan}, because {reason}.",
  "If I get the raise I asked for, {switching_plan} is the plan.",
  "Provided nothing changes at work, I'll {switch_plan}, since {reason}.",
  "If my schedule frees up, I'm {switching_plan}. Otherwise I'll stay put.",
  "As long as the numbers still look right next month, I'm going to {switch_plan}.",
  "Only if the reviews hold up will I {switch_plan}, though {reason}.",
]

'''
# The assistant's replies (phrases/replies.toml): to the plan, and to the still-pending mention
# after it (``pending_{group}``). Every sentence of more than six words has a slot that differs
# between domains, so none repeats word for word across the dataset.
CONDITIONAL_REPLIES = '''conditional = [
  "Tying it to that makes sense. While you wait, compare {weigh} for your {noun}.",
  "A plan with a condition for your {noun} is still a plan. If it goes your way, a good first step: {step}.",
  "That's a sensible trigger for a new {noun}. In the meantime, {you_stay_initial} costs you nothing.",
  "Good to have your {noun} tied to something concrete. Once you know, {step}.",
  "Until then nothing about your {noun} has to change; it's worth comparing {weigh} now.",
  "Fair enough: your {noun} can wait on that. If it comes through, {step}.",
  "That keeps your {noun} simple: if it happens, {step}; if not, nothing changes.",
  "Waiting on that is reasonable for your {noun}. Meanwhile, {stay_tip}.",
]

pending_conditional = [
  "Makes sense to wait on that. Meanwhile, it's worth comparing {weigh} for your {noun}.",
  "Until you know, nothing about your {noun} has to change.",
  "That can take a while. When it comes through, a good first step: {step}.",
  "Fair enough. While you wait, {you_stay_initial} costs you nothing.",
  "No pressure on your {noun}; once you hear, {step}.",
  "Waiting is reasonable. If you want to be ready, compare {weigh}.",
  "Nothing to do until then. When the time comes, {step}.",
  "Good to keep your {noun} tied to that. Meanwhile, {stay_tip}.",
]

'''
# Outcome turns after a conditional plan (phrases/outcome.toml): each outcome's table gets a
# list for the group, so the later turn speaks of the condition, not of being undecided.
CONDITIONAL_OUTCOMES = {
    "verbatim": [
        "It came through, so I went ahead with {switching_plan} {done_when}.",
        "The thing I was waiting on worked out, and I {switched_plan} {done_when}.",
    ],
    "paraphrase": ["It all worked out in the end, so {current_plan} now."],
    "oblique": ["What I was waiting on came through, so I went ahead with it {done_when}."],
    "abandoned": [
        "It didn't work out, so {switching_plan} is off. I'm {stay_initial}.",
        "The condition never came through, so I'm not going to {switch_plan}.",
    ],
    "pending": [
        "Still waiting to hear about the thing {switching_plan} depends on.",
        "No word yet on what {switching_plan} hinges on, so nothing has changed.",
        "{Switching_plan} is still waiting on that condition I mentioned {mentioned}.",
        "Nothing has changed: {switching_plan} still depends on how things turn out.",
        "I'm still waiting to see if it works out before {switching_plan}.",
    ],
}
CONDITIONAL_CUES = '''[cues]
# A change that waits on something else happening first.
conditional = [
  "if i get", "only if", "assuming", "as long as", "provided( that)?",
  "if (the|my|a|this|that) [^,.]{1,40}?(works? out|comes? through|goes through|pans out|checks? out|goes well|stays|allows|frees? up|holds? up)",
]
'''
CONDITIONAL_RULE = '''[[hedge_strength.rules]]
level = "conditional"
any = ["conditional"]
say = "it has conditional cue '{cue}'"

'''


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _copy(dest: Path, name: str) -> Path:
    shutil.copytree(PAPER, dest)
    _edit(dest / "design.toml", 'name = "paper"', f'name = "{name}"')
    _edit(dest / "design.toml", 'ids = "sequential"', 'ids = "keyed"')
    return dest


def conditional_design(dest: Path, n: int = 20, rule: bool = True) -> Path:
    """The paper's design with a hedge-strength level ``conditional`` (group hedged) and a
    controlled cell of ``n`` open plans at it; ``rule``: with its recovery rule and cues."""
    return add_conditional(_copy(dest, "conditional"), n, rule)


def add_conditional(dest: Path, n: int = 20, rule: bool = True) -> Path:
    """The guide's first step, on a design folder: the level, its cell, its phrase lists and
    (``rule``) its recovery rule and cues."""
    design = dest / "design.toml"
    _edit(
        design,
        '[[factors.hedge_strength.levels]]\nname = "confident_no_date"',
        CONDITIONAL_LEVEL + '[[factors.hedge_strength.levels]]\nname = "confident_no_date"',
    )
    # appended at the end of the split's cells: the cells before it keep their arcs
    _edit(
        design,
        '  { factor = "confirmation_wording", level = "situational", n = 20 },\n]',
        '  { factor = "confirmation_wording", level = "situational", n = 20 },\n'
        f'  {{ factor = "hedge_strength", level = "conditional", outcome = "open", n = {n} }},\n]',
    )
    _edit(
        dest / "phrases" / "plan.toml", "weakly_hedged = [", CONDITIONAL_PLANS + "weakly_hedged = ["
    )
    _edit(
        dest / "phrases" / "replies.toml",
        "weakly_hedged = [",
        CONDITIONAL_REPLIES + "weakly_hedged = [",
    )
    for table, lines in CONDITIONAL_OUTCOMES.items():
        items = "".join(f'  "{t}",\n' for t in lines)
        _edit(
            dest / "phrases" / "outcome.toml",
            f"[{table}]\n",
            f"[{table}]\nconditional = [\n{items}]\n",
        )
    if rule:
        add_conditional_rule(dest)
    return dest


def add_conditional_rule(dest: Path) -> Path:
    """The offline judge's rule for ``conditional``, first among hedge strength's, and its cues."""
    recovery = dest / "recovery.toml"
    text = recovery.read_text(encoding="utf-8")
    start = text.index("\n[cues]\n") + 1
    end = text.index("\n[hedge_strength]\n") + 1
    recovery.write_text(text[:start] + CONDITIONAL_CUES + "\n" + text[end:], encoding="utf-8")
    _edit(
        recovery,
        '[[hedge_strength.rules]]\nlevel = "strongly_hedged"',
        CONDITIONAL_RULE + '[[hedge_strength.rules]]\nlevel = "strongly_hedged"',
    )
    return dest


DISTANCE_FACTOR = '''[factors.distance]
role = "structure"
ordered = true
description = "How many sessions lie between the plan and its outcome."

[[factors.distance.levels]]
name = "adjacent"
structure = { sessions = [2] }
definition = "The outcome comes in the session right after the plan's."

[[factors.distance.levels]]
name = "one_between"
structure = { sessions = [3] }
definition = "One session lies between the plan's session and the outcome's."

[[factors.distance.levels]]
name = "two_between"
structure = { sessions = [4] }
definition = "Two sessions lie between the plan's session and the outcome's."

'''
DISTANCE_RULES = '''
[distance]
reads = "structure"
default = { say = "no later session has a user turn that reports on the plan" }

[[distance.rules]]
level = "adjacent"
sessions_between = 0
say = "{where} reports on it, in the next session"

[[distance.rules]]
level = "one_between"
sessions_between = 1
say = "{where} reports on it, {between} session on"

[[distance.rules]]
level = "two_between"
sessions_between = 2
say = "{where} reports on it, {between} sessions on"
'''
DISTANCE_LEVELS = ("adjacent", "one_between", "two_between")


def distance_design(dest: Path, n: int = 20) -> Path:
    """The paper's design with a structure factor ``distance`` (0, 1 or 2 sessions between the
    plan and its outcome, with a pending window) and a split of ``n`` arcs per level and outcome."""
    return add_distance(_copy(dest, "distance"), n)


def add_distance(dest: Path, n: int = 20, outcomes=("came_true", "abandoned", "open")) -> Path:
    """The guide's second step, on a design folder: the factor, its split (``n`` arcs per level
    and outcome) and its recovery rules."""
    design = dest / "design.toml"
    _edit(design, "# -- splits ---", DISTANCE_FACTOR + "# -- splits ---")
    cells = "\n".join(
        f'  {{ factor = "distance", level = "{lv}", outcome = "{o}", n = {n} }},'
        for o in outcomes
        for lv in DISTANCE_LEVELS
    )
    with design.open("a", encoding="utf-8") as f:
        f.write(
            '\n[splits.distance]\ntitle = "plan-outcome distance"\n'
            'note = "the number of sessions between the plan and its outcome varies"\n'
            'structure = { sessions = [2, 3], pending_window = true, values = "short" }\n'
            f"cells = [\n{cells}\n]\n"
        )
    with (dest / "recovery.toml").open("a", encoding="utf-8") as f:
        f.write(DISTANCE_RULES)
    return dest


def extended_design(root: Path, conditional: bool = True, distance: bool = True):
    """The paper's design with both extensions (``distance``: open plans only), written under
    ``root`` and loaded: (folder, design)."""
    from agentmemgate.design import load_design

    folder = _copy(root / "extended-design", "extended")
    if conditional:
        add_conditional(folder)
    if distance:
        add_distance(folder, outcomes=("open",))
    return folder, load_design(folder)


# -- section 8: wording that fits each domain (catalog keys of the design's own) -----------------
FIT_DOMAINS = (
    'domains = ["cloud_storage", "gym", "home_city", "phone_carrier", "streaming_service", '
    '"web_browser"]'
)
FIT_KEYS = '''[catalog_keys.conditions]
slot = "condition"
description = "a condition the switch waits on, as a clause after 'if' ('I get the job I interviewed for')"

[catalog_keys.signs]
slot = "sign"
description = "something that only happens once the change is made, as a clause in the past ('my first bill with the new carrier came in')"

'''
FIT_ITEMS = {
    "cloud_storage": (
        [
            "my photos upload from my phone without fuss",
            "the lifetime deal comes back",
            "it works with the laptop from work",
        ],
        [
            "the last of my photos finished uploading to the new account",
            "I shared my first folder from the new account",
            "my old storage plan ran out and nothing was lost",
        ],
    ),
    "gym": (
        [
            "the trial week at the new place goes well",
            "my shifts at work settle down",
            "the student rate is still on offer next month",
        ],
        [
            "my new key fob worked at the front desk for the first time",
            "I did my first class with a trainer I had never met",
            "I cancelled the old direct debit",
        ],
    ),
    "home_city": (
        [
            "I get the job I interviewed for",
            "my landlord raises the rent again",
            "we find a flat near a good school",
        ],
        [
            "the movers dropped the last boxes at my new place",
            "my first piece of mail arrived at the new address",
            "I found a corner cafe I like on my new street",
        ],
    ),
    "phone_carrier": (
        [
            "the coverage at my place turns out fine",
            "they let me keep my number",
            "the family plan price holds",
        ],
        [
            "my number finished porting over",
            "the new SIM card arrived and worked",
            "my first bill with the new carrier came in",
        ],
    ),
    "streaming_service": (
        [
            "the shows I follow move over there",
            "the free trial lasts long enough to finish a season",
            "the price does not jump after the first month",
        ],
        [
            "I set up my watchlist on the new app",
            "the first monthly charge from the new service came through",
            "I finished a whole season on the new app",
        ],
    ),
    "web_browser": (
        [
            "my password manager works with it",
            "it syncs my tabs with my phone",
            "the extensions I need for work run on it",
        ],
        [
            "all my bookmarks came across to the new browser",
            "I set up my extensions again in the new one",
            "I made the new browser my default on every device",
        ],
    ),
}
FIT_PLANS = '''conditional = [
  "If {condition}, I'll {switch_plan}, since {reason}.",
  "Assuming {condition}, I'm going to {switch_plan}.",
  "As long as {condition}, {switching_plan} is the plan.",
  "Only if {condition} will I {switch_plan}, though {reason}.",
  "I'll {switch_plan} if {condition}. Otherwise I'll stay put.",
  "Provided {condition}, I'll {switch_plan}.",
  "It all depends on whether {condition}; if so, I'll {switch_plan}.",
  "If {condition}, then {switching_plan} is happening, because {reason}.",
]
'''
FIT_REPLIES = '''conditional = [
  "Makes sense to wait until you know whether {you_condition}. Meanwhile, compare {weigh} for your {noun}.",
  "If {you_condition}, a good first step for your {noun}: {step}.",
  "Tying your {noun} to whether {you_condition} is sensible. In the meantime, {stay_tip}.",
  "Until you know whether {you_condition}, nothing about your {noun} has to change.",
  "Fair enough: your {noun} can wait on that. If it comes through, {step}.",
  "Good to have your {noun} tied to something concrete. Once you know, {step}.",
  "That keeps your {noun} simple: if {you_condition}, {step}; if not, nothing changes.",
  "Waiting on that is reasonable for your {noun}. Meanwhile, {stay_tip}.",
]
'''
FIT_PENDING = '''  "Still waiting to see whether {condition} before {switching_plan}.",
  "No word yet on whether {condition}, so nothing has changed.",
'''
IMPLICIT_LEVEL = '''[[factors.confirmation_wording.levels]]
name = "implicit"
reply = "implicit"
drawn = false
definition = "The user mentions something that only follows from the change having happened, without saying a change happened or naming the new value."
'''
IMPLICIT_OUTCOMES = '''[implicit]
any = [
  "Long week, but {sign} {done_when}.",
  "Small milestone: {sign} {done_when}.",
  "Quick update: {sign} {done_when}, so that's that.",
  "Good news of a sort: {sign} {done_when}.",
  "Not much else to report, except that {sign} {done_when}.",
  "{Sign} {done_when}, which felt good.",
  "So, {sign} {done_when}.",
  "One nice thing this week: {sign} {done_when}.",
]
'''
IMPLICIT_REPLIES = '''implicit = [
  "Sounds like things are settling in for your {noun}. {Settle}.",
  "Good to hear your {noun} is all coming together. For the first weeks, {settle}.",
  "That's a nice milestone for your {noun}. One tip: {settle}.",
  "Glad that went smoothly with your {noun}. While it's fresh, {settle}.",
  "Nice to hear. If anything about your {noun} feels unfamiliar at first, {settle}.",
  "Sounds like a good week for your {noun}. One more thing: {settle}.",
  "Good news. To keep things easy with your {noun}, {settle}.",
  "That's a good sign for your {noun}. Give it a few weeks, and meanwhile {settle}.",
]
'''
IMPLICIT_CUES = (
    'implied = ["movers", "first (bill|piece of mail|class|charge|month)", '
    '"(came|came across|finished) (across|porting|uploading)", '
    '"new (address|sim|account|app|browser|carrier|street|place)"]'
)
IMPLICIT_RULE = '''[[confirmation_wording.rules]]
level = "implicit"
test = "value_unnamed"
any = ["implied"]
none = ["done"]
say = "{where} mentions something that follows from the change ('{cue}') without reporting it"
'''


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{x}"' for x in items) + "]"


def fit_items_toml(domains=None) -> str:
    """``catalog_keys.toml``: a table per domain with its conditions and signs."""
    out = []
    for d, (conditions, signs) in FIT_ITEMS.items():
        if domains is None or d in domains:
            out.append(
                f"[{d}]\nconditions = {_toml_list(conditions)}\nsigns = {_toml_list(signs)}\n"
            )
    return "\n".join(out)


def add_fitting(dest: Path, n: int = 20, implicit_reply: bool = True) -> Path:
    """Section 8 of the guide, on a copy of the paper's design: six domains, the catalog keys
    ``conditions`` and ``signs`` with their items, a conditional level whose plans name a
    condition that fits the domain, and an implicit confirmation level (``implicit_reply``: with
    its own reply list, as the guide ends)."""
    add_conditional(dest, n, rule=True)
    design = dest / "design.toml"
    text = design.read_text(encoding="utf-8")
    start = text.index("domains = [")
    end = text.index("]\n", start) + 2
    design.write_text(text[:start] + FIT_DOMAINS + "\n" + text[end:], encoding="utf-8")
    _edit(design, "[files]\n", FIT_KEYS + '[files]\ncatalog_keys = "catalog_keys.toml"\n')
    level = IMPLICIT_LEVEL if implicit_reply else IMPLICIT_LEVEL.replace('reply = "implicit"\n', "")
    _edit(design, "[factors.correction]", level + "\n[factors.correction]")
    _edit(
        design,
        f'  {{ factor = "hedge_strength", level = "conditional", outcome = "open", n = {n} }},\n]',
        f'  {{ factor = "hedge_strength", level = "conditional", outcome = "open", n = {n} }},\n'
        f'  {{ factor = "confirmation_wording", level = "implicit", n = {n} }},\n]',
    )
    (dest / "catalog_keys.toml").write_text(fit_items_toml(), encoding="utf-8")
    plan, replies = dest / "phrases" / "plan.toml", dest / "phrases" / "replies.toml"
    _replace_list(plan, "conditional", FIT_PLANS)
    _replace_list(replies, "conditional", FIT_REPLIES)
    _edit(replies, "weakly_hedged = [", IMPLICIT_REPLIES + "\nweakly_hedged = [")
    outcome = dest / "phrases" / "outcome.toml"
    _edit(outcome, "[pending]\nconditional = [\n", "[pending]\nconditional = [\n" + FIT_PENDING)
    outcome.write_text(outcome.read_text(encoding="utf-8") + "\n" + IMPLICIT_OUTCOMES)
    recovery = dest / "recovery.toml"
    _edit(recovery, "[cues]\n", "[cues]\n" + IMPLICIT_CUES + "\n")
    _edit(
        recovery,
        '[[confirmation_wording.rules]]\nlevel = "situational"',
        IMPLICIT_RULE + '\n[[confirmation_wording.rules]]\nlevel = "situational"',
    )
    return dest


def _replace_list(path: Path, key: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{key} = [\n") + 1
    end = text.index("\n]\n", start) + 3
    path.write_text(text[:start] + new + text[end:], encoding="utf-8")
