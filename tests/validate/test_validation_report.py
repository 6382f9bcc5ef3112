"""Report numbers against values computed by hand."""

from __future__ import annotations

import json

import pytest

from agentmemgate.validate import compute_report, report_markdown, write_report
from agentmemgate.validate.judges import JudgeInfo
from agentmemgate.validate.store import VerdictRow

A = JudgeInfo(spec="anthropic:judge-a", family="anthropic", heuristic=False)
B = JudgeInfo(spec="offline", family="offline-heuristic", heuristic=True)


def rec(i, intended, verdict, judge=A, factor="hedge_strength", status="ok"):
    return VerdictRow(
        task="recovery",
        item_id=f"arc-{i:03d}",
        judge=judge.spec,
        family=judge.family,
        heuristic=judge.heuristic,
        split="controlled",
        factor=factor,
        intended=intended,
        verdict=verdict if status == "ok" else "",
        status=status,
        rationale=f"why {i}",
        error="bad JSON" if status != "ok" else "",
    )


def real(i, criterion, passed, judge=A):
    return VerdictRow(
        task="realism",
        item_id=f"arc-{i:03d}",
        criterion=criterion,
        judge=judge.spec,
        family=judge.family,
        heuristic=judge.heuristic,
        split="core",
        verdict="pass" if passed else "fail",
        rationale=f"r{i}",
    )


def rows_47_of_54():
    """54 hedge arcs: 47 recovered exactly; 4 one level off, 3 two or more levels off."""
    rows = [rec(i, "weakly_hedged", "weakly_hedged") for i in range(47)]
    rows += [
        rec(47, "weakly_hedged", "strongly_hedged"),
        rec(48, "weakly_hedged", "confident_no_date"),
        rec(49, "scheduled_with_date", "completed_change"),
        rec(50, "strongly_hedged", "weakly_hedged"),
        rec(51, "strongly_hedged", "scheduled_with_date"),
        rec(52, "strongly_hedged", "completed_change"),
        rec(53, "completed_change", "weakly_hedged"),
    ]
    return rows


def test_recovery_overall_factor_ci_confusion_and_off_by_one():
    rows = rows_47_of_54() + [rec(99, "weakly_hedged", "", status="failed")]
    r = compute_report(rows, [A], ["controlled"])
    o = r.recovery.overall
    assert (o.k, o.n) == (47, 54)  # the judge failure is not a verdict
    assert (round(100 * o.value, 1), round(100 * o.ci_low, 1), round(100 * o.ci_high, 1)) == (
        87.0,
        75.6,
        93.6,
    )
    f = r.recovery.by_factor["hedge_strength"]
    assert (f.k, f.n, f.value) == (47, 54, o.value)
    assert f.confusion["weakly_hedged"] == {
        "strongly_hedged": 1,
        "weakly_hedged": 47,
        "confident_no_date": 1,
        "scheduled_with_date": 0,
        "completed_change": 0,
    }
    assert f.confusion["strongly_hedged"]["completed_change"] == 1
    assert sum(sum(v.values()) for v in f.confusion.values()) == 54
    assert (f.ordinal.exact.k, f.ordinal.off_by_one.k, f.ordinal.off_by_one.n) == (47, 51, 54)
    assert r.by_judge[A.spec].judge_failures == {"recovery": 1, "realism": 0}
    assert [x.arc_id for x in r.judge_failures] == ["arc-099"]
    assert len([x for x in r.failing_arcs if x.check == "recovery"]) == 7
    md = report_markdown(r)
    assert "47/54 = 87.0% [75.6, 93.6]" in md
    assert "within one level 51/54 = 94.4%" in md


def test_realism_per_criterion_and_undefined_when_empty():
    rows = [real(i, "natural", i < 9) for i in range(10)] + [
        real(i, "motivated", True) for i in range(4)
    ]
    r = compute_report(rows, [A], ["core"])
    nat, mot = r.realism["natural"], r.realism["motivated"]
    assert (nat.k, nat.n, nat.value) == (9, 10, 0.9)
    assert (round(nat.ci_low, 3), round(nat.ci_high, 3)) == (0.596, 0.982)
    assert (mot.k, mot.n, mot.value) == (4, 4, 1.0)
    assert r.recovery.overall.n == 0 and r.recovery.overall.value is None  # undefined, not 0
    assert [(f.arc_id, f.rationale) for f in r.failing_arcs] == [("arc-009", "r9")]


def test_inter_judge_percent_agreement_and_kappa():
    # realism 'natural' on 10 arcs: both pass 6, both fail 2, A pass/B fail 1, A fail/B pass 1
    a = [True] * 6 + [False] * 2 + [True, False]
    b = [True] * 6 + [False] * 2 + [False, True]
    rows = [real(i, "natural", x, A) for i, x in enumerate(a)] + [
        real(i, "natural", x, B) for i, x in enumerate(b)
    ]
    r = compute_report(rows, [A, B], ["core"])
    (ag,) = [x for x in r.agreement if x.task == "realism" and x.scope == "natural"]
    assert (ag.agreement.k, ag.agreement.n) == (8, 10)
    # p_o = 0.8; p_e = 0.7*0.7 + 0.3*0.3 = 0.58; kappa = 0.22 / 0.42
    assert ag.kappa == pytest.approx(0.22 / 0.42)
    assert list(r.by_judge) == [A.spec, B.spec] and r.primary_judge == A.spec


def test_kappa_is_undefined_with_one_label_only():
    rows = [real(i, "natural", True, A) for i in range(5)] + [
        real(i, "natural", True, B) for i in range(5)
    ]
    (ag,) = compute_report(rows, [A, B], ["core"]).agreement
    assert ag.agreement.value == 1.0 and ag.kappa is None


def test_json_has_the_documented_keys_and_a_block_per_judge(tmp_path):
    rows = rows_47_of_54() + [rec(i, "weakly_hedged", "strongly_hedged", B) for i in range(54)]
    rows += [real(i, "natural", True) for i in range(3)]
    r = compute_report(rows, [A, B], ["controlled"], {"offline-template"})
    paths = write_report(r, tmp_path / "rep")
    data = json.loads((tmp_path / "rep" / "validation.json").read_text())
    assert set(data["recovery"]["overall"]) >= {"value", "ci_low", "ci_high", "n"}
    hs = data["recovery"]["by_factor"]["hedge_strength"]
    assert set(hs) >= {"value", "ci_low", "ci_high", "n", "confusion"}
    assert hs["confusion"]["weakly_hedged"]["weakly_hedged"] == 47
    assert set(data["realism"]["natural"]) >= {"value", "ci_low", "ci_high", "n"}
    assert data["judges"] == [
        {"spec": A.spec, "family": "anthropic", "heuristic": False},
        {"spec": "offline", "family": "offline-heuristic", "heuristic": True},
    ]
    assert 0 <= data["recovery"]["overall"]["value"] <= 1
    assert data["by_judge"]["offline"]["recovery"]["overall"]["k"] == 0  # always "strongly_hedged"
    assert data["by_judge"]["offline"]["recovery"]["overall"]["n"] == 54
    assert any("heuristic" in n for n in data["notes"])
    pngs = [p for p in paths if p.suffix == ".png"]
    assert len(pngs) == 2 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    md = (tmp_path / "rep" / "validation.md").read_text()
    assert "## Judge `offline` (family offline-heuristic, heuristic)" in md
    assert "| weakly_hedged |" in md and "Cohen's kappa" in md


def test_html_page_has_the_markdowns_tables_heatmaps_and_shows_rationales_as_text(tmp_path):
    import base64

    from report_pages import HOSTILE, assert_same_tables, assert_shown_as_text

    rows = rows_47_of_54() + [real(i, "natural", i < 2) for i in range(3)]
    rows[47] = rows[47].model_copy(update={"rationale": HOSTILE})  # a failing arc's rationale
    rows[48] = rows[48].model_copy(update={"item_id": "<script>alert(1)</script>"})
    r = compute_report(rows, [A, B], ["controlled"], {"offline-template"})
    paths = write_report(r, tmp_path / "rep", html=True)
    assert [p.name for p in paths[:3]] == ["validation.md", "validation.json", "validation.html"]
    page = paths[2].read_text(encoding="utf-8")
    md = paths[0].read_text(encoding="utf-8")
    assert "47/54 = 87.0% [75.6, 93.6]" in page
    assert_same_tables(md, page)
    assert_shown_as_text(page)
    for png in paths[3:]:
        assert base64.b64encode(png.read_bytes()).decode() in page
