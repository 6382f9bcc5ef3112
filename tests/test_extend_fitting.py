"""Section 8 of "Extend the benchmark" (docs/how-to/extend.md): catalog keys of a design's own give
its phrase files slots that fit each domain, with data files only; the checks name what is
missing, and a new level never inherits a default that undoes it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from extend_design import (
    FIT_DOMAINS,
    FIT_ITEMS,
    FIT_KEYS,
    FIT_PLANS,
    FIT_REPLIES,
    IMPLICIT_LEVEL,
    IMPLICIT_OUTCOMES,
    IMPLICIT_REPLIES,
    IMPLICIT_RULE,
    PAPER,
    add_fitting,
    fit_items_toml,
)
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import load_design
from agentmemgate.design_checks import check_design

ROOT = Path(__file__).resolve().parents[1]
N = 3  # --n-per-cell


def amg(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output
    return res.output


@pytest.fixture
def fit(tmp_path) -> Path:
    d = tmp_path / "fit-design"
    shutil.copytree(PAPER, d)
    text = (d / "design.toml").read_text()
    (d / "design.toml").write_text(
        text.replace('name = "paper"', 'name = "fit_design"').replace(
            'ids = "sequential"', 'ids = "keyed"'
        )
    )
    return add_fitting(d)


def problems(folder: Path) -> list[str]:
    return [str(p) for p in check_design(folder)[1]]


def test_the_guide_shows_what_the_test_builds():
    guide = (ROOT / "docs" / "how-to" / "extend.md").read_text()
    for block in (FIT_DOMAINS, FIT_PLANS, FIT_REPLIES, IMPLICIT_LEVEL, IMPLICIT_OUTCOMES):
        assert block.strip() in guide, block[:60]
    assert IMPLICIT_REPLIES.strip() in guide and IMPLICIT_RULE.strip() in guide
    for line in FIT_KEYS.strip().splitlines():
        assert line in guide, line
    for d in ("home_city", "web_browser"):  # the two tables the guide shows
        assert fit_items_toml([d]).strip() in guide


def test_the_fitted_design_checks_clean_and_builds(fit, tmp_path):
    assert problems(fit) == []
    ws, out = tmp_path / "ws", tmp_path / "out"
    printed = amg(
        "build", "--design", str(fit), "--n-per-cell", str(N), "--workspace", str(ws),
        "--out", str(out), "--no-progress",
    )  # fmt: skip
    design = load_design(fit)
    total = sum(design.arcs_in(s, N) for s in design.splits)
    assert f"structural checks: {total}/{total} arcs pass" in printed
    arcs = [json.loads(x) for s in design.splits for x in (out / s / "data.jsonl").open()]
    domain_of = {a["field"]["attribute"]: a["field"]["attribute"] for a in arcs}
    assert set(domain_of) == set(FIT_ITEMS)
    change = re.compile(r"\b(switch\w*|mov(e|ed|ing)|chang\w*)\b", re.I)
    seen = {"conditional": 0, "implicit": 0}

    def turn(a: dict, ref: dict, after: int = 0) -> str:
        return a["sessions"][ref["session"]]["turns"][ref["turn"] + after]["text"]

    for a in arcs:
        conditions, signs = FIT_ITEMS[a["field"]["attribute"]]
        if a["level"] == "conditional":
            seen["conditional"] += 1
            said = turn(a, a["plan_turn"])
            assert any(c in said for c in conditions), said
        if a["level"] == "implicit":
            seen["implicit"] += 1
            said, answer = turn(a, a["outcome_turn"]), turn(a, a["outcome_turn"], 1)
            assert any(s[:1].upper() + s[1:] in said or s in said for s in signs), said
            for text in (said, answer):  # neither names the new value nor the change
                assert a["plan_value"] not in text and not change.search(text), text
    assert seen == {"conditional": N, "implicit": N}


def test_every_drawn_domain_must_supply_each_declared_key(fit):
    (fit / "catalog_keys.toml").write_text(fit_items_toml(set(FIT_ITEMS) - {"gym"}))
    found = problems(fit)
    assert any(
        "catalog_keys.toml: gym.conditions: missing: the design declares catalog key "
        "'conditions'" in p
        for p in found
    ), found
    assert any("gym.signs: missing" in p for p in found)
    refused = amg("design", "check", str(fit), code=1)
    assert "gym.conditions" in refused


def test_a_short_or_leaking_list_is_named_with_its_file_and_key(fit):
    text = fit_items_toml().replace(
        '"the lifetime deal comes back", ', ""
    )  # cloud_storage: two conditions left
    (fit / "catalog_keys.toml").write_text(text)
    found = problems(fit)
    assert any("cloud_storage.conditions: has 2 items; the design declares at least 3" in p
               for p in found), found  # fmt: skip


def test_a_slot_nothing_declares_is_refused_with_the_files_slots(fit):
    plan = fit / "phrases" / "plan.toml"
    plan.write_text(
        plan.read_text().replace(
            '"Provided {condition}, I\'ll {switch_plan}.",',
            '"Provided {condition}, I\'ll {switch_plan} near {implied_place}.",',
        )
    )
    found = problems(fit)
    bad = [p for p in found if "unknown slot {implied_place}" in p]
    assert bad and "plan.toml phrasings may use:" in bad[0]
    assert "condition" in bad[0] and "you_condition" in bad[0]  # the design's own slots too
    assert "[catalog_keys]" in bad[0]


def test_an_implicit_level_may_not_inherit_a_reply_that_names_the_change(tmp_path):
    d = tmp_path / "fit-design"
    shutil.copytree(PAPER, d)
    text = (d / "design.toml").read_text().replace('name = "paper"', 'name = "fit_design"')
    (d / "design.toml").write_text(text)
    add_fitting(d, implicit_reply=False)
    found = problems(d)
    assert len([p for p in found if "replies.toml: came_true:" in p]) == 1, found
    assert "reply = 'implicit' on the level in design.toml" in " ".join(found)


def test_catalog_check_reads_a_designs_keys(fit, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    gym = (ROOT / "agentmemgate" / "design" / "catalog" / "gym.toml").read_text()
    (mine / "gym.toml").write_text('conditions = ["my shifts settle down"]\n' + gym)
    plain = amg("catalog", "check", str(mine), code=1)
    assert "conditions" in plain and "unknown key: nothing reads it" in plain
    with_design = amg("catalog", "check", str(mine), "--design", str(fit), code=1)
    assert "unknown key" not in with_design
    assert "gym.toml: conditions" in with_design and "at least 3" in with_design
