"""The LLM generator reads the design it is given: level definitions, split notes, structure, and
the label names its leak check refuses."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
from reference_drafts import reference_draft, reference_responder

from agentmemgate.design import load_design, paper_design
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.generate.llm_checks import label_leak
from agentmemgate.generate.llm_prompts import build_prompt, spec_brief
from agentmemgate.generate.llm_renderer import LlmRenderer
from agentmemgate.schema import Arc
from agentmemgate.validate import check_arc

CONDITIONAL = "The user will change only if something else happens first, and says what."
PHRASES = {
    "plan.toml": 'conditional = ["If things work out, I will {switch_plan}."]\n',
    "replies.toml": 'conditional = ["Makes sense to wait and see how it works out."]\n',
}


def paper_copy(tmp_path: Path) -> Path:
    import agentmemgate.design as design_pkg

    dest = tmp_path / "design"
    shutil.copytree(Path(design_pkg.__file__).parent / "paper", dest)
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def conditional_design(tmp_path: Path):
    """The paper's design plus a hedge level ``conditional`` (group hedged) with its own
    controlled cell, a factor ``distance`` (sessions between plan and outcome) with its split,
    and a note of its own for the core split."""
    d = paper_copy(tmp_path)
    toml = d / "design.toml"
    edit(toml, 'name = "paper"', 'name = "extended"')
    edit(
        toml,
        "[factors.confirmation_wording]",
        f'''[[factors.hedge_strength.levels]]
name = "conditional"
group = "hedged"
definition = "{CONDITIONAL}"

[factors.distance]
role = "structure"
description = "Sessions between the plan and its outcome."

[[factors.distance.levels]]
name = "next_one"
structure = {{ sessions = [2] }}
definition = "The outcome comes in the session right after the plan."

[[factors.distance.levels]]
name = "two_between"
structure = {{ sessions = [4] }}
definition = "Two whole sessions pass between the plan and its outcome."

[factors.confirmation_wording]''',
    )
    edit(
        toml,
        '  { factor = "hedge_strength", level = "completed_change", n = 19 },',
        '  { factor = "hedge_strength", level = "conditional", outcome = "open", n = 20 },\n'
        '  { factor = "hedge_strength", level = "completed_change", n = 19 },',
    )
    edit(
        toml,
        'note = "balanced plan outcomes; the plan stays pending across sessions"',
        'note = "our own note for the core split"',
    )
    toml.write_text(
        toml.read_text()
        + '''
[splits.distance]
title = "distance"
note = "the outcome comes right after the plan or two sessions later"
structure = { sessions = [2, 3], pending_window = true, values = "short" }
cells = [
  { factor = "distance", level = "next_one", outcome = "open", n = 2 },
  { factor = "distance", level = "two_between", outcome = "came_true", n = 2 },
]
'''
    )
    for name, lines in PHRASES.items():
        path = d / "phrases" / name
        path.write_text(path.read_text() + "\n" + lines)
    return load_design(d)


@pytest.fixture
def extended(tmp_path):
    return conditional_design(tmp_path)


def renderer(ws, design, name="gen", **kw) -> LlmRenderer:
    r = get_renderer(f"scripted:{name}", workspace=ws, design=design, **kw)
    assert isinstance(r, LlmRenderer)
    return r


def test_prompt_shows_the_design_definition_of_a_new_level(extended):
    spec = next(
        s for s in plan_split("controlled", 0, 1, design=extended) if s.level == "conditional"
    )
    prompt = build_prompt(spec, design=extended)
    assert f"PLAN WORDING: conditional -- {CONDITIONAL}\n" in prompt
    with pytest.raises(Exception, match="conditional"):
        build_prompt(spec)  # the paper's design has no such level: one-line UnknownLevel


def test_prompt_shows_the_design_split_note_and_definitions(extended):
    spec = plan_split("core", 0, 1, design=extended)[0]
    prompt = build_prompt(spec, design=extended)
    assert "Split: core (our own note for the core split)\n" in prompt
    wording = extended.by_role("plan_wording").level(spec.plan_wording)
    assert f"PLAN WORDING: {spec.plan_wording} -- {wording.definition}\n" in prompt
    # the paper's design renders the same spec with the paper's note
    assert f"Split: core ({paper_design().split('core').note})\n" in build_prompt(spec)


def test_a_structure_level_says_where_the_plan_and_its_outcome_fall(extended):
    specs = plan_split("distance", 0, 1, design=extended)
    for spec in specs:
        lv = extended.factor("distance").level(spec.level)
        n = len(spec.session_dates)
        assert n in lv.structure.sessions
        prompt = build_prompt(spec, design=extended)
        line = next(x for x in prompt.splitlines() if x.startswith("STRUCTURE: "))
        assert line.startswith(f"STRUCTURE: pending_window -- {lv.definition} ")
        assert f"in session {n - 1}, the last" in line
        assert ("no session lies" if n == 2 else f"{n - 2} sessions lie") in line
    # the paper's arcs keep the one-word structure line
    paper_prompt = build_prompt(plan_split("core", 0, 1)[0])
    assert "STRUCTURE: pending_window\n" in paper_prompt


def test_structure_level_arcs_render_and_a_misplaced_outcome_is_asked_again(ws, extended):
    r = renderer(ws, extended)
    r.model.respond_with(reference_responder)
    specs = plan_split("distance", 0, 1, design=extended)
    arcs = list(r.render_many(specs))
    assert all(isinstance(a, Arc) for a in arcs), arcs
    for arc in arcs:
        checks = check_arc(arc, extended)
        assert "structure.cell_structure" in {c.check for c in checks}
        assert all(c.passed for c in checks)

    far = next(s for s in specs if s.level == "two_between")
    good = reference_draft(spec_brief(far))
    early = copy.deepcopy(good)  # the outcome one session early: only one session between
    s2, s3 = early["sessions"][2], early["sessions"][3]
    s2["turns"], s3["turns"] = s3["turns"], s2["turns"]
    early["outcome_turn"] = {"session": 2, "turn": 0}
    again = renderer(ws, extended, name="again")
    again.model.enqueue(early, good)
    assert isinstance(again.render(far), Arc)
    assert "structure.cell_structure" in again.model.history[1].prompt


@pytest.mark.parametrize(
    "text",
    [
        "If I get the job, it's conditional on the offer, but I'd move to Denver.",
        "The offer is still open and the hint was oblique.",
        "Whatever happens, my plan came true in the end.",
    ],
)
def test_leak_check_lets_english_words_that_are_level_names_through(extended, text):
    assert extended.factor("hedge_strength").has("conditional")
    assert label_leak(text, extended) is None
    assert label_leak(text) is None


@pytest.mark.parametrize(
    "text, found",
    [
        ("I'm strongly_hedged about it.", "strongly_hedged"),
        ("Honestly I'm weakly hedged on this.", "weakly hedged"),
        ("This is the plan_turn, I guess.", "plan_turn"),
        ("I'd call it two_between.", "two_between"),
        ("the hedge_strength here is low", "hedge_strength"),
    ],
)
def test_leak_check_refuses_the_design_identifiers(extended, text, found):
    assert label_leak(text, extended) == f"a label name ({found!r})"


def test_leak_check_follows_the_design(extended):
    # a level identifier of this design only, and refused only under it
    assert label_leak("I'd call it two_between.", extended) is not None
    assert label_leak("I'd call it two_between.") is None
    # the structure level's spaced form is English ("two between"), not a label
    assert label_leak("Somewhere two between the lines.", extended) is None


def test_a_reply_that_uses_the_new_level_as_a_word_is_accepted(ws, extended):
    spec = next(
        s for s in plan_split("controlled", 0, 1, design=extended) if s.level == "conditional"
    )
    draft = reference_draft(spec_brief(spec))
    p = draft["plan_turn"]
    draft["sessions"][p["session"]]["turns"][p["turn"]]["text"] = (
        f"It's conditional on the price: if it drops, I'll probably switch to {spec.plan_value}."
    )
    r = renderer(ws, extended, max_attempts=1)
    r.model.enqueue(draft)
    assert isinstance(r.render_one(spec), Arc)
