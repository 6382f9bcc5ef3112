"""Explicit corrections in the evaluation: the truth's correction, ``corrections_applied``, the
gate-on/gate-off control count and the never-valid mark, on hand-built arcs whose answers are
worked out by hand, and the real offline gate on one correction."""

from __future__ import annotations

import datetime as dt

from agentmemgate.evaluate import compute_report, report_markdown, run_eval, system_spec
from agentmemgate.evaluate.show import show_arc
from agentmemgate.evaluate.truth import truth_of
from agentmemgate.schema import Arc, ArcSpec, CorrectionSpec, Provenance, Session, Turn, TurnRef
from agentmemgate.stats import wilson

from .doubles import FIELD, factory, info


def correction_arc(arc_id: str, text: str, wrong="Pandora", right="Deezer") -> Arc:
    """t0 'I use Pandora.' | t2 small talk | t4 the correction | session 1: t6 small talk."""
    dates = [dt.date(2024, 1, 1), dt.date(2024, 1, 8)]
    spec = ArcSpec(
        id=arc_id,
        split="corrections",
        factor="correction",
        level="initial_same_marked",
        outcome="correction",
        field=FIELD,
        domain="music_app",
        initial_value=wrong,
        plan_value=right,
        plan_wording="correction",
        session_dates=dates,
        pending_window=False,
        seed=0,
        plan_seed=0,
        correction=CorrectionSpec(
            target="initial", timing="same", marker="marked", wrong_value=wrong, value=right
        ),
    )
    texts = [
        [f"I use {wrong}.", "Noted.", "Any podcast tips?", "Try one.", text, "Got it."],
        ["What about audiobooks?", "Try the library."],
    ]
    corr = TurnRef(session=0, turn=4)
    return Arc(
        spec=spec,
        sessions=[
            Session(
                date=d,
                turns=[
                    Turn(role="user" if i % 2 == 0 else "assistant", text=t)
                    for i, t in enumerate(ts)
                ],
            )
            for d, ts in zip(dates, texts)
        ],
        initial_turn=TurnRef(session=0, turn=0),
        plan_turn=corr,
        outcome_turn=corr,
        correction_turn=corr,
        expected_value_after_session=[right, right],
        provenance=Provenance(
            generator="hand",
            generator_kind="hand-built test arc",
            prompt_sha256="",
            seed=0,
            toolkit_version="test",
        ),
    )


ARCS = [
    correction_arc(f"x{i}", "Sorry, I said Pandora earlier, but I meant Deezer.") for i in range(3)
]


def _ws(ws, arcs=ARCS):
    ws.save_specs([a.spec for a in arcs])
    for a in arcs:
        ws.save_arc(a)
    return ws


def test_the_truth_of_a_correction_arc_carries_its_correction():
    t = truth_of(ARCS[0])
    assert (t.correction.t, t.correction.value, t.correction.wrong_value) == (
        4,
        "Deezer",
        "Pandora",
    )
    assert not t.is_plan and not t.at_risk and t.final_value == "Deezer"


def test_corrections_applied_and_the_control_count_by_hand(ws):
    _ws(ws)
    # user turns: 0 'I use Pandora', 1 small talk, 2 the correction, 3 small talk
    ungated = system_spec(
        factory({0: [("commit", "Pandora")], 2: [("commit", "Deezer")]}, info("toy-ungated", False))
    )
    gated = system_spec(
        factory(
            {0: [("commit", "Pandora")], 2: [("correct", "Deezer")]},
            info("toy-gated", True, "toy-ungated"),
        )
    )
    # a gate that holds the correction as if it were a plan: ends with the wrong value
    holding = system_spec(
        factory(
            {0: [("commit", "Pandora")], 2: [("stage", "Deezer")]},
            info("hold-gated", True, "toy-ungated"),
        )
    )
    run_eval(ws, ["corrections"], [ungated, gated, holding], show_progress=False)
    r = compute_report(ws, ["corrections"])
    applied = {
        n: r.stat(n, "corrections", "corrections_applied")
        for n in ("toy-ungated", "toy-gated", "hold-gated")
    }
    assert {n: (s.k, s.n) for n, s in applied.items()} == {
        "toy-ungated": (3, 3),
        "toy-gated": (3, 3),
        "hold-gated": (0, 3),
    }
    pairs = {p.system: p for p in r.corrections_control.pairs}
    assert set(pairs) == {"toy-gated", "hold-gated"}
    assert (
        pairs["toy-gated"].same_end.k,
        pairs["toy-gated"].same_end.n,
        pairs["toy-gated"].runs,
    ) == (3, 3, 6)
    assert (pairs["hold-gated"].same_end.k, pairs["hold-gated"].same_end.n) == (0, 3)
    assert pairs["hold-gated"].differing_arcs == ["x0", "x1", "x2"]
    w = wilson(3, 6)
    pooled = r.corrections_control.pooled
    assert (pooled.k, pooled.n) == (3, 6)
    assert (pooled.ci_low, pooled.ci_high) == (w.ci_low, w.ci_high)
    nv = r.corrections_control.never_valid
    assert {n: (s.k, s.n) for n, s in nv.items()} == {
        "toy-ungated": (0, 3),
        "toy-gated": (3, 3),
        "hold-gated": (0, 3),
    }
    js = r.to_json()["corrections_control"]
    assert js["pairs"][0]["same_end"]["k"] in (0, 3) and js["pooled"]["n"] == 6
    md = report_markdown(r)
    assert "## Explicit corrections" in md
    assert "| toy-gated | toy-ungated | 3/3 100.0%" in md and "| 6 |" in md
    assert "| hold-gated | toy-ungated | 0/3 0.0%" in md and "x0, x1, x2" in md


def test_no_correction_arcs_no_corrections_section(ws):
    from .test_run import ARCS as PAPER_ARCS
    from .test_run import specs

    _ws(ws, PAPER_ARCS)
    run_eval(ws, ["core", "heldout"], specs(), show_progress=False)
    r = compute_report(ws, ["core", "heldout"])
    assert "corrections_control" not in r.to_json()
    assert "Explicit corrections" not in report_markdown(r)


def test_the_offline_gate_marks_the_corrected_value_never_valid_and_show_says_so(ws):
    arc = correction_arc("g1", "I meant to say Deezer a minute ago, not Pandora.")
    _ws(ws, [arc])
    run_eval(ws, ["corrections"], ["literal-gated", "literal-ungated"], show_progress=False)
    r = compute_report(ws, ["corrections"])
    assert r.corrections_control.never_valid["literal-gated"].k == 1
    assert r.corrections_control.never_valid["literal-ungated"].k == 0
    assert r.corrections_control.pairs[0].same_end.k == 1
    gated = show_arc(ws, "g1", "literal-gated")
    assert "classified explicit_correction" in gated
    assert "'Pandora' [s0 t0, s0 t4) never valid, 'Deezer' [s0 t4, now) via correction" in gated
    assert "[explicit correction: 'Pandora' -> 'Deezer']" in gated
    assert "corrections_applied: yes" in gated
    assert ") never valid" not in show_arc(ws, "g1", "literal-ungated")  # no interval is


def test_the_dataset_card_gives_the_control(ws):
    from agentmemgate.evaluate.card import card_section

    _ws(ws)
    ungated = system_spec(
        factory({0: [("commit", "Pandora")], 2: [("commit", "Deezer")]}, info("toy-ungated", False))
    )
    gated = system_spec(
        factory(
            {0: [("commit", "Pandora")], 2: [("correct", "Deezer")]},
            info("toy-gated", True, "toy-ungated"),
        )
    )
    run_eval(ws, ["corrections"], [ungated, gated], show_progress=False)
    text = card_section(ws, ["corrections"])
    assert "| corrections applied (explicit corrections) | " in text
    assert "- toy-gated vs toy-ungated: 3/3 100.0%" in text and "(6 runs)" in text
