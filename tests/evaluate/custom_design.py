"""A design that extends the paper's, written to a temp dir as a user would: a copy of the
paper's folder with a new hedge level (``conditional``) in the controlled split and a new split
varying a structure factor (``distance``: sessions between the plan and its outcome)."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentmemgate.design import load_design
from agentmemgate.design.bundle import BUILTIN

NAME = "extended"
DISTANCE_LEVELS = ("adjacent", "one_between", "two_between")

CONDITIONAL = '''
[[factors.hedge_strength.levels]]
name = "conditional"
group = "hedged"
definition = "The user will change only if something else happens first."
'''

DISTANCE = '''
[factors.distance]
role = "structure"
ordered = true
description = "How many sessions lie between the plan and its outcome."

[[factors.distance.levels]]
name = "adjacent"
structure = { sessions = [2] }
definition = "The outcome comes in the session right after the plan."

[[factors.distance.levels]]
name = "one_between"
structure = { sessions = [3] }
definition = "One session lies between the plan and its outcome."

[[factors.distance.levels]]
name = "two_between"
structure = { sessions = [4] }
definition = "Two sessions lie between the plan and its outcome."

'''

DISTANCE_SPLIT = '''
[splits.distance]
title = "session distance"
note = "the number of sessions between the plan and its outcome varies"
structure = { sessions = [2, 3], pending_window = true, values = "short" }
cells = [
  { factor = "distance", level = "adjacent", outcome = "open", n = 20 },
  { factor = "distance", level = "one_between", outcome = "open", n = 20 },
  { factor = "distance", level = "two_between", outcome = "open", n = 20 },
]
'''

PLAN = '''
conditional = [
  "If {reason} keeps up, I'll {switch_plan}. Otherwise I'll stay put.",
  "I'll {switch_plan} if things line up, but only then.",
  "Assuming it works out, I'm going to {switch_plan}.",
  "Should the timing work, I'll {switch_plan}; if not, {stay_initial} is fine.",
  "I'd {switch_plan}, provided it doesn't get complicated.",
  "If I can sort out the details, I'll {switch_plan}.",
  "Depending on how things go, I might {switch_plan}.",
  "I'll only {switch_plan} if it makes sense once things settle.",
]
'''

REPLIES = '''
conditional = [
  "That sounds sensible. Let me know how it works out.",
  "Makes sense to wait and see. Keep me posted.",
  "A reasonable plan. Tell me if things change.",
  "Good to have a condition in mind. Let me know.",
  "Sounds like a plan, if it works out. Keep me posted.",
  "That seems wise. Let me know what you decide.",
  "Fair enough. Tell me how it goes.",
  "Worth waiting for, then. Keep me posted.",
]
'''


def extended_design(root: Path, conditional: bool = True, distance: bool = True):
    """Write the extended design under ``root`` and load it: (folder, design)."""
    folder = root / "extended-design"
    shutil.copytree(BUILTIN["paper"].parent, folder)
    toml = (folder / "design.toml").read_text(encoding="utf-8")
    toml = toml.replace('name = "paper"', f'name = "{NAME}"').replace('ids = "sequential"',
                                                                      'ids = "keyed"')
    if conditional:
        anchor = '[[factors.hedge_strength.levels]]\nname = "confident_no_date"'
        toml = toml.replace(anchor, CONDITIONAL.lstrip() + "\n" + anchor)
        cell = '  { factor = "hedge_strength", level = "confident_no_date", outcome = "open", n = 20 },'
        toml = toml.replace(cell, '  { factor = "hedge_strength", level = "conditional", outcome = '
                                  '"open", n = 20 },\n' + cell)
        for name, text in (("plan.toml", PLAN), ("replies.toml", REPLIES)):
            p = folder / "phrases" / name
            p.write_text(p.read_text(encoding="utf-8") + text, encoding="utf-8")
    if distance:
        toml = toml.replace("# -- splits", DISTANCE + "# -- splits") + DISTANCE_SPLIT
    (folder / "design.toml").write_text(toml, encoding="utf-8")
    return folder, load_design(folder)
