"""The miner and the workspace's design: the LLM miner lists and accepts the design's hedge levels;
the offline rules label by name, whatever order or extra levels a design has."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import agentmemgate.design as design_pkg
from agentmemgate.corpora import mine_hedges, mined_statements, source_key
from agentmemgate.corpora._rules import load_rules
from agentmemgate.corpora.extract import hedge_level
from agentmemgate.design import load_design, paper_design
from agentmemgate.design.stored import store_design
from agentmemgate.llm import get_model
from agentmemgate.workspace import Workspace

from .paths import LOCOMO, LONGMEMEVAL

CONDITIONAL = "The user will change only if something else happens first."
HEDGE_BLOCK = "[[factors.hedge_strength.levels]]"
SPAN = "I wanna start a dance studio"


def paper_copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(Path(design_pkg.__file__).parent / "paper", dest)
    toml = dest / "design.toml"
    toml.write_text(toml.read_text().replace('name = "paper"', f'name = "{name}"', 1))
    return dest


def with_hedge_levels(tmp_path: Path, name: str, reorder=lambda blocks: blocks, extra: str = ""):
    """A copy of the paper's design whose hedge-strength levels are ``reorder``ed, plus ``extra``
    level blocks (the level's phrase lists added too)."""
    d = paper_copy(tmp_path, name)
    toml = d / "design.toml"
    text = toml.read_text()
    start = text.index(HEDGE_BLOCK)
    end = text.index("[factors.confirmation_wording]")
    blocks = [HEDGE_BLOCK + b for b in text[start:end].split(HEDGE_BLOCK)[1:]]
    blocks = [b.rstrip() + "\n\n" for b in reorder(blocks)] + ([extra] if extra else [])
    toml.write_text(text[:start] + "".join(blocks) + text[end:])
    for level in re.findall(r'name = "(\w+)"', extra):
        for bank in ("plan.toml", "replies.toml"):
            path = d / "phrases" / bank
            path.write_text(
                path.read_text() + f'\n{level} = ["If it works out, I will {{switch_plan}}."]\n'
            )
    return load_design(d)


CONDITIONAL_LEVEL = f'''{HEDGE_BLOCK}
name = "conditional"
group = "hedged"
definition = "{CONDITIONAL}"

'''


@pytest.fixture
def conditional(tmp_path):
    return with_hedge_levels(tmp_path, "conditional", extra=CONDITIONAL_LEVEL)


def workspace(tmp_path: Path, design=None) -> Workspace:
    ws = Workspace(tmp_path / f"ws-{design.name if design else 'paper'}")
    if design is not None:
        store_design(ws, design)
    return ws


def answer_studio(level: str):
    def answer(request):
        turn = request.prompt.split("The turn (", 1)[1]  # not the turns before it
        if "dance studio so I can teach" in turn:
            return {
                "keep": True,
                "span": SPAN,
                "attribute": "business",
                "plan_value": "dance studio",
                "hedge_level": level,
                "reason": "a business plan",
            }
        return {
            "keep": False,
            "span": None,
            "attribute": None,
            "plan_value": None,
            "hedge_level": None,
            "reason": "no plan here",
        }

    return answer


def test_llm_miner_rubric_lists_the_design_levels_and_definitions(tmp_path, conditional):
    model = get_model("scripted:lister")
    model.respond_with(answer_studio("conditional"))
    ws = workspace(tmp_path, conditional)
    s = mine_hedges(ws, LOCOMO, miner="scripted:lister")
    prompt = model.history[0].prompt
    factor = conditional.by_role("plan_wording")
    listed = [lv for lv in factor.levels if not lv.control]
    for lv in listed:
        assert f"  {lv.name}: {lv.definition}\n" in prompt
    assert f"  conditional: {CONDITIONAL}\n" in prompt
    assert factor.control_level not in prompt  # the control is no hedge level
    # in the design's order
    assert [prompt.index(f"  {lv.name}: ") for lv in listed] == sorted(
        prompt.index(f"  {lv.name}: ") for lv in listed
    )
    studio = next(m for m in mined_statements(ws, source_key(LOCOMO), s.miner) if m.text == SPAN)
    assert studio.kept and studio.hedge_level == "conditional"
    assert s.errors == 0


def test_llm_miner_level_outside_the_design_is_a_recorded_failure(tmp_path):
    model = get_model("scripted:outside")
    model.respond_with(answer_studio("conditional"))  # the paper's design has no such level
    ws = workspace(tmp_path)
    s = mine_hedges(ws, LOCOMO, miner="scripted:outside")
    assert s.errors == 1
    [failed] = [m for m in mined_statements(ws, source_key(LOCOMO), s.miner) if m.kept is None]
    assert failed.reject_reason.startswith("stage 2 failed: ")
    assert "hedge_level" in failed.reject_reason and "'conditional'" in failed.reject_reason
    assert all(lv in failed.reject_reason for lv in paper_design().by_role("plan_wording").drawn)
    # the re-ask named the problem too
    assert any("hedge_level" in q.prompt and "NOT ACCEPTED" in q.prompt for q in model.history)


def test_llm_miner_refuses_a_design_without_a_plan_wording_factor(tmp_path):
    from agentmemgate.corpora.llm_extract import LLMExtractor
    from agentmemgate.errors import BadInput

    paper = paper_design()
    bare = paper.model_copy(
        update={"factors": {k: f for k, f in paper.factors.items() if f.role != "plan_wording"}}
    )
    with pytest.raises(BadInput, match="no plan-wording factor"):
        LLMExtractor("scripted:bare", workspace=workspace(tmp_path), design=bare)


def _offline(tmp_path, design) -> list[tuple]:
    ws = workspace(tmp_path, design)
    out = []
    for path in (LOCOMO, LONGMEMEVAL):
        s = mine_hedges(ws, path)
        out += [
            (m.id, m.kept, m.text, m.attribute, m.plan_value, m.hedge_level, m.outcome)
            for m in mined_statements(ws, source_key(path), s.miner)
        ]
    return out


def test_offline_miner_labels_by_name_whatever_the_design_order_or_extra_levels(tmp_path):
    paper = _offline(tmp_path, None)
    assert {r[5] for r in paper if r[1]} >= {"weakly_hedged", "confident_no_date"}
    reversed_levels = with_hedge_levels(tmp_path, "reversed", reorder=lambda b: list(reversed(b)))
    factor = reversed_levels.by_role("plan_wording")
    assert factor.level_names != paper_design().by_role("plan_wording").level_names
    assert _offline(tmp_path, reversed_levels) == paper
    first = with_hedge_levels(tmp_path, "first", reorder=lambda b: b, extra=CONDITIONAL_LEVEL)
    assert "conditional" in first.by_role("plan_wording").level_names
    assert _offline(tmp_path, first) == paper


@pytest.mark.parametrize(
    "sentence, level",
    [
        ("I'm torn between staying and moving to Denver.", "strongly_hedged"),
        ("I'm thinking about moving to Denver.", "weakly_hedged"),
        ("I'm moving to Denver next month.", "scheduled_with_date"),
        ("I'm going to move to Denver.", "confident_no_date"),
    ],
)
def test_rules_name_the_paper_levels(sentence, level):
    assert hedge_level(sentence, load_rules()) == level
    assert level in paper_design().by_role("plan_wording").level_names
