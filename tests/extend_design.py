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
