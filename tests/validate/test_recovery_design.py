"""Blind recovery, its options and its report follow the design: a new level or factor needs
only data (a phrase bank, recovery rules and cues), and the design check names what is missing."""

from __future__ import annotations

from collections import Counter

import pytest
from extend_design import DISTANCE_LEVELS, conditional_design, distance_design

from agentmemgate.design import DesignError, load_design, paper_design
from agentmemgate.generate import generate, get_renderer
from agentmemgate.stats import wilson
from agentmemgate.validate import compute_report, report_markdown, validation_report
from agentmemgate.validate.judges import (
    JudgeInfo,
    LevelOption,
    RecoveryQuestion,
    blind_recovery,
    get_judge,
    option_seed,
    shuffled_levels,
)
from agentmemgate.validate.judges.heuristic import design_problems
from agentmemgate.validate.judges.questions import ChatSession, ChatTurn
from agentmemgate.validate.judging import judge_arcs
from agentmemgate.validate.store import VerdictRow
from agentmemgate.workspace import Workspace


def _cell_n(design, split: str, level: str) -> int:
    return sum(n for c, n in design.cell_counts(split) if c.level == level)


def _build_and_judge(tmp_path, design, split: str) -> list[tuple[str, str, str]]:
    """Render ``split`` offline and judge recovery; (intended, verdict, rationale) per arc."""
    ws = Workspace(tmp_path / "ws")
    summary = generate(
        ws, get_renderer("offline", design=design), [split], design=design, show_progress=False
    )
    assert summary.failed == 0
    judge_arcs(ws, [split], ["offline"], ["recovery"], show_progress=False)
    rows = ws.db.execute(
        "select intended, verdict, rationale from judge_verdicts where task = 'recovery'"
    ).fetchall()
    ws.db.conn.close()
    return rows


@pytest.fixture(scope="module")
def conditional(tmp_path_factory):
    return load_design(conditional_design(tmp_path_factory.mktemp("design") / "conditional"))


def test_paper_design_has_no_recovery_problems():
    assert design_problems(paper_design()) == []


def test_a_new_hedge_level_is_recovered_from_its_rule_and_cues(tmp_path, conditional):
    assert design_problems(conditional) == []
    rows = _build_and_judge(tmp_path, conditional, "controlled")
    n = _cell_n(conditional, "controlled", "conditional")
    got = Counter(v for i, v, _ in rows if i == "conditional")
    assert sum(got.values()) == n
    k = got["conditional"]
    assert k >= 0.8 * n, (wilson(k, n).fmt(), got)
    assert any("conditional cue" in r for i, v, r in rows if i == v == "conditional")


def test_blind_options_are_the_design_levels_with_its_definitions(tmp_path, conditional):
    ws = Workspace(tmp_path / "ws")
    generate(
        ws,
        get_renderer("offline", design=conditional),
        ["controlled"],
        design=conditional,
        n_per_cell=1,
        show_progress=False,
    )
    arc = next(a for a in ws.arcs("controlled") if a.spec.level == "conditional")
    seed = option_seed(arc.id)
    q = blind_recovery(arc, seed, design=conditional)
    factor = conditional.factor("hedge_strength")
    assert [o.level for o in q.options] == shuffled_levels("hedge_strength", seed, conditional)
    assert sorted(o.level for o in q.options) == sorted(factor.level_names)
    assert {o.level: o.definition for o in q.options} == {
        lv.name: lv.definition for lv in factor.levels
    }
    # the paper's options are the paper's levels
    assert set(shuffled_levels("hedge_strength", seed)) == set(
        paper_design().levels("hedge_strength")
    )


def _question(design, factor: str, *sessions: list[str]) -> RecoveryQuestion:
    filler = "Sounds good. Let me know if you want to compare options."
    out = []
    for i, users in enumerate(sessions):
        turns = [
            t
            for u in users
            for t in (ChatTurn(role="user", text=u), ChatTurn(role="assistant", text=filler))
        ]
        out.append(ChatSession(date=f"2024-0{i + 1}-1{i}", turns=tuple(turns)))
    return RecoveryQuestion(
        sessions=tuple(out),
        options=tuple(
            LevelOption(level=lv, definition=design.definition(factor, lv))
            for lv in design.levels(factor)
        ),
    )


@pytest.mark.parametrize(
    "plan",
    [
        "If the offer from the Denver office pans out, I'm moving my membership to the climbing gym.",
        "Assuming the lease renewal goes fine, I'll join the climbing gym downtown.",
        "As long as my knee holds up this spring, I'm signing up at the climbing gym.",
    ],
)
def test_hand_written_conditional_plans(conditional, plan):
    q = _question(
        conditional,
        "hedge_strength",
        ["I work out at the Planet Fitness near the office.", plan],
        ["Any stretches for tight hips?"],
    )
    v = get_judge("offline", design=conditional).ask(q)
    assert v.level == "conditional", v.rationale


def test_a_structure_factor_is_recovered_from_the_sessions_between(tmp_path):
    design = load_design(distance_design(tmp_path / "distance"))
    assert design_problems(design) == []
    rows = _build_and_judge(tmp_path, design, "distance")
    assert len(rows) == design.arcs_in("distance")
    by_level = {lv: [v for i, v, _ in rows if i == lv] for lv in DISTANCE_LEVELS}
    for lv, verdicts in by_level.items():
        assert len(verdicts) == _cell_n(design, "distance", lv)
        assert verdicts.count(lv) >= 0.75 * len(verdicts), (lv, Counter(verdicts))
    assert sum(i == v for i, v, _ in rows) >= 0.85 * len(rows)
    assert any("1 session on" in r for i, v, r in rows if i == v == "one_between")


def test_a_level_with_no_rule_is_a_design_problem(tmp_path):
    design = load_design(conditional_design(tmp_path / "d", rule=False))
    problems = [str(p) for p in design_problems(design)]
    assert len(problems) == 1
    assert "recovery.toml: hedge_strength.rules: no rule gives level 'conditional'" in problems[0]
    # the judge still runs: such arcs get a recorded guess, never a crash
    get_judge("offline", design=design)


def _recovery(tmp_path, old: str, new: str):
    folder = conditional_design(tmp_path / "d")
    path = folder / "recovery.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return load_design(folder)


@pytest.mark.parametrize(
    "old,new,key,says",
    [
        (
            'any = ["conditional"]',
            'any = ["conditionl"]',
            "hedge_strength.rules#1",
            "unknown cue category 'conditionl'",
        ),
        (
            'test = "value_unnamed"',
            'test = "value_missing"',
            "confirmation_wording.rules#3.test",
            "unknown test 'value_missing'",
        ),
        ('"assuming",', '"assuming(",', "cues.conditional#3", "not a regular expression"),
        (
            'say = "it has conditional cue',
            'colour = "red"\nsay = "it has conditional cue',
            "hedge_strength.rules#1.colour",
            "unknown key",
        ),
        (
            "{cue}' with a future plan",
            "{cue}' and {where}",
            "hedge_strength.rules#",
            "unknown slot {where}",
        ),
        ("[cues]\n", "[cues\n", "", "TOML syntax error"),
    ],
)
def test_recovery_file_problems_name_file_and_key(tmp_path, old, new, key, says):
    design = _recovery(tmp_path, old, new)
    problems = design_problems(design)
    hit = [p for p in problems if says in p.message]
    assert hit, problems
    assert hit[0].file.endswith("recovery.toml") and hit[0].key.startswith(key)
    assert "\n" not in str(hit[0])
    if says == "TOML syntax error":
        assert "line" in hit[0].message
    with pytest.raises(DesignError, match="recovery.toml"):
        get_judge("offline", design=design)


def _row(i, factor, intended, verdict):
    return VerdictRow(
        task="recovery",
        item_id=f"arc-{i:03d}",
        judge="offline",
        family="offline-heuristic",
        heuristic=True,
        split="x",
        factor=factor,
        intended=intended,
        verdict=verdict,
        rationale="r",
    )


def test_report_has_an_ordinal_view_for_every_ordered_factor_of_a_design(tmp_path):
    design = load_design(distance_design(tmp_path / "distance"))
    judge = JudgeInfo(spec="offline", family="offline-heuristic", heuristic=True)
    rows = [
        _row(0, "distance", "adjacent", "adjacent"),
        _row(1, "distance", "adjacent", "one_between"),
        _row(2, "distance", "two_between", "adjacent"),
        _row(3, "confirmation_wording", "verbatim", "paraphrase"),
    ]
    r = compute_report(rows, [judge], ["distance"], design=design)
    for name in design.ordered_factors:
        f = r.recovery.by_factor.get(name)
        if f is not None:
            assert f.ordinal is not None and f.ordinal.order == list(design.levels(name))
    d = r.recovery.by_factor["distance"]
    assert d.levels == list(DISTANCE_LEVELS)
    assert (d.ordinal.exact.k, d.ordinal.off_by_one.k, d.ordinal.off_by_one.n) == (1, 2, 3)
    assert "Ordered distance levels (adjacent < one_between < two_between)" in report_markdown(r)
    # the paper's design: both its ordered factors (hedge strength, confirmation wording)
    paper = compute_report(
        rows[3:] + [_row(4, "hedge_strength", "weakly_hedged", "weakly_hedged")],
        [judge],
        ["controlled"],
    )
    assert paper.recovery.by_factor["confirmation_wording"].ordinal is not None
    assert paper.recovery.by_factor["hedge_strength"].ordinal is not None


def test_report_confusion_levels_come_from_the_workspace_design(tmp_path, conditional):
    ws = Workspace(tmp_path / "ws")
    generate(
        ws,
        get_renderer("offline", design=conditional),
        ["controlled"],
        design=conditional,
        n_per_cell=1,
        show_progress=False,
    )
    judge_arcs(ws, ["controlled"], ["offline"], ["recovery"], show_progress=False)
    f = validation_report(ws, ["controlled"]).recovery.by_factor["hedge_strength"]
    assert f.levels[: len(conditional.levels("hedge_strength"))] == list(
        conditional.levels("hedge_strength")
    )
    assert f.ordinal.order == list(conditional.levels("hedge_strength"))
    assert sum(f.confusion["conditional"].values()) == sum(
        n for c, n in conditional.cell_counts("controlled", 1) if c.level == "conditional"
    )
