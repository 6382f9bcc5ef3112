"""``run_eval`` / ``run_answers`` on a real workspace: stored as each finishes, skipped on re-run,
re-scored for another judge, re-run for changed arcs or systems, failures retried."""

from __future__ import annotations

import json

import pytest

from agentmemgate.errors import BadInput, SameFamilyJudge
from agentmemgate.evaluate import (
    EvalOptions,
    compute_report,
    plan_answers,
    run_answers,
    run_eval,
    system_spec,
)
from agentmemgate.llm import CallFailed, get_model
from agentmemgate.schema import Turn

from .doubles import ScriptedSystem, factory, info
from .test_measures import ABANDONED, CAME_TRUE, CONTROL, HELDOUT, OPEN

ARCS = [ABANDONED, OPEN, CAME_TRUE, CONTROL, HELDOUT]
LITERAL = {0: [("commit", "Pandora")], 1: [("commit", "Deezer")]}


@pytest.fixture
def hand_ws(ws):
    ws.save_specs([a.spec for a in ARCS])
    for a in ARCS:
        ws.save_arc(a)
    return ws


def counting(script, system_info):
    made = []

    def make(**_):
        made.append(1)
        return ScriptedSystem(script, system_info)

    make.info = system_info
    return make, made


def specs():
    g = system_spec(factory({1: [("stage", "Deezer")]}, info("toy-gated", True, "toy-ungated")))
    u = system_spec(factory(LITERAL, info("toy-ungated", False)))
    return [g, u]


def test_run_then_rerun_skips_everything(hand_ws):
    s = run_eval(hand_ws, ["core", "heldout"], specs(), show_progress=False)
    assert (s.ran_now, s.already_done, s.failed) == (10, 0, 0)
    assert hand_ws.db["eval_traces"].count == 10 and hand_ws.db["eval_scores"].count == 10
    again = run_eval(hand_ws, ["core", "heldout"], specs(), show_progress=False)
    assert (again.ran_now, again.rescored, again.already_done) == (0, 0, 10)


def test_the_plan_says_what_will_run_and_a_dry_run_stores_nothing(hand_ws):
    from agentmemgate.evaluate import plan_eval
    from agentmemgate.run_context import run_context

    gated, ungated = specs()
    run_eval(hand_ws, ["core"], [ungated], show_progress=False)  # 4 core arcs stored
    tables = ("eval_runs", "eval_systems", "eval_judges", "eval_traces", "eval_scores")
    before = {t: hand_ws.db[t].count for t in tables}
    with run_context(dry_run=True):
        plan = plan_eval(hand_ws, ["core", "heldout"], [gated, ungated])
    assert [s.name for s in plan.systems] == ["toy-gated", "toy-ungated"]
    assert plan.components_done == 4 and len(plan.arcs) == 5
    assert sorted((it.system, it.arc_id) for it in plan.components) == sorted(
        [("toy-gated", a.id) for a in ARCS] + [("toy-ungated", HELDOUT.id)]
    )
    assert all(it.stored is None for it in plan.components)  # nothing to re-score
    counted = plan.dry_run()
    assert (counted.pairs, counted.rescore, counted.already_done) == (6, 0, 4)
    assert counted.lines()[0] == (
        "dry run: 6 (system, arc) pairs to run, 0 to re-score, 4 already stored"
    )
    assert {t: hand_ws.db[t].count for t in tables} == before


def test_another_judge_rescores_stored_traces_without_running_systems(hand_ws):
    make, made = counting(LITERAL, info("toy-ungated", False))
    run_eval(hand_ws, ["core"], [system_spec(make)], show_progress=False)
    n = len(made)
    get_model("scripted:eq-judge").respond_with(_equal_judge)
    s = run_eval(
        hand_ws,
        ["core"],
        [system_spec(make)],
        EvalOptions(judge="scripted:eq-judge"),
        show_progress=False,
    )
    assert (s.ran_now, s.rescored, s.already_done) == (0, 4, 0)
    assert len(made) == n  # no system was made again
    r = compute_report(hand_ws, ["core"], judge="scripted:eq-judge")
    assert r.meta.judge["spec"] == "scripted:eq-judge" and not r.meta.judge["heuristic"]
    offline = compute_report(hand_ws, ["core"], judge="offline")
    assert r.to_json()["systems"] == offline.to_json()["systems"]  # same verdicts here


def _equal_judge(req):
    v1 = req.prompt.split("Value 1: ")[1].split("\n")[0].strip().lower()
    v2 = req.prompt.split("Value 2: ")[1].split("\n")[0].strip().lower()
    return {
        "verdict": "equivalent" if v1 == v2 else "not_equivalent",
        "confidence": 0.9,
        "rationale": "compared the values",
    }


def test_rebuilt_arc_is_run_again(hand_ws):
    run_eval(hand_ws, ["core"], specs(), show_progress=False)
    changed = OPEN.model_copy(deep=True)
    changed.sessions[0].turns.append(Turn(role="user", text="One more thing."))
    changed.sessions[0].turns.append(Turn(role="assistant", text="Sure."))
    hand_ws.save_arc(changed)
    s = run_eval(hand_ws, ["core"], specs(), show_progress=False)
    assert (s.ran_now, s.already_done) == (2, 6)  # the rebuilt arc, for both systems


def test_changed_system_gets_a_new_run_key(hand_ws):
    a = system_spec(factory(LITERAL, info("toy", False)))
    b = system_spec(factory(LITERAL, info("toy", False, components={"extractor": "v2"})))
    assert a.run_key != b.run_key
    run_eval(hand_ws, ["core"], [a], show_progress=False)
    assert run_eval(hand_ws, ["core"], [b], show_progress=False).ran_now == 4
    # The report uses the latest run of each name.
    r = compute_report(hand_ws, ["core"])
    assert r.meta.systems["toy"].components == {"extractor": "v2"}


def test_failed_calls_are_recorded_and_retried(hand_ws):
    class Flaky(ScriptedSystem):
        fail = True

        def process_turn(self, turn, context):
            if Flaky.fail and "Deezer" in turn.text:
                raise CallFailed("model gave no valid reply", kind="invalid_output")
            return super().process_turn(turn, context)

    system_info = info("flaky", False)

    def make(**_):
        return Flaky(LITERAL, system_info)

    make.info = system_info
    s = run_eval(hand_ws, ["core"], [system_spec(make)], show_progress=False)
    assert s.failed == 4 and s.ran_now == 0
    assert "model gave no valid reply" in s.failure_examples[0]
    assert hand_ws.db["eval_failures"].count == 4
    Flaky.fail = False
    s = run_eval(hand_ws, ["core"], [system_spec(make)], show_progress=False)
    assert s.failed == 0 and s.ran_now == 4 and hand_ws.db["eval_failures"].count == 0


def test_no_arcs_is_a_clear_error(ws):
    with pytest.raises(BadInput, match="No arcs in split"):
        run_eval(ws, ["core"], specs(), show_progress=False)


def test_same_family_judge_is_refused_unless_allowed(ws):
    arc = OPEN.model_copy(deep=True)
    arc.provenance.generator = "scripted:generator"  # the arcs' generator family: scripted
    ws.save_specs([arc.spec])
    ws.save_arc(arc)
    get_model("scripted:eq-judge").respond_with(_equal_judge)
    with pytest.raises(SameFamilyJudge, match="--allow-same-family"):
        run_eval(ws, ["core"], specs(), EvalOptions(judge="scripted:eq-judge"), show_progress=False)
    assert ws.db["eval_traces"].count == 0
    s = run_eval(
        ws,
        ["core"],
        specs(),
        EvalOptions(judge="scripted:eq-judge", allow_same_family=True),
        show_progress=False,
    )
    assert s.ran_now == 2


def test_report_layout_and_absent_measures(hand_ws):
    run_eval(hand_ws, ["core", "heldout"], specs(), show_progress=False)
    r = compute_report(hand_ws).to_json()
    assert set(r) == {"summary", "explanations", "systems", "differences", "meta"}
    # the summary: one row per system, pooled over both splits
    rows = {row["system"]: row for row in r["summary"]}
    assert set(rows) == {"toy-ungated", "toy-gated"}
    ungated = rows["toy-ungated"]
    assert ungated["splits"] == ["core", "heldout"] and ungated["pending_source"] == "store reads"
    assert (ungated["pending_contamination"]["k"], ungated["pending_contamination"]["n"]) == (2, 2)
    at_risk = sum(a.spec.outcome in ("abandoned", "open") for a in ARCS)
    assert ungated["end_contamination"]["n"] == at_risk
    assert ungated["task_accuracy"]["n"] == len(ARCS)
    core = r["systems"]["toy-ungated"]["core"]
    # Ungated: no gate measures; held-out: no pending contamination.
    assert "staged_at_plan_turn" not in core and "promoted" not in core
    assert "pending_contamination" not in r["systems"]["toy-ungated"]["heldout"]
    assert set(core["pending_contamination"]) == {"k", "n", "value", "ci_low", "ci_high"}
    # Two at-risk core arcs (abandoned, open), both read Deezer while pending.
    assert core["pending_contamination"]["k"] == 2 and core["pending_contamination"]["n"] == 2
    assert core["by_level"]["open"]["end_contamination"]["k"] == 1
    gated = r["systems"]["toy-gated"]["core"]
    assert gated["staged_at_plan_turn"]["n"] == 3  # came-true, abandoned, open
    assert gated["calls_per_user_message"]["n"] == 4 + 3 + 5 + 2  # user turns of the core arcs
    d = [
        x
        for x in r["differences"]
        if x["measure"] == "pending_contamination" and x["split"] == "core"
    ]
    assert d and d[0]["system"] == "toy-gated" and d[0]["baseline"] == "toy-ungated"
    assert d[0]["value"] == -1.0 and d[0]["n"] == 2 and d[0]["n_lost"] == 2
    json.dumps(r)  # JSON-native all the way down


def test_answers_are_checked_before_anything_is_stored(hand_ws, tmp_path):
    bad = tmp_path / "a.jsonl"
    bad.write_text(json.dumps({"arc_id": "o1", "after_session": 0, "answer": "Pandora"}) + "\n")
    with pytest.raises(BadInput, match="a.jsonl:1: arc o1 has no line with after_session"):
        run_answers(hand_ws, bad, "product")
    assert hand_ws.db["eval_answer_sets"].count == 0 and hand_ws.db["eval_answers"].count == 0


def test_answers_scored_and_reported(hand_ws, tmp_path):
    lines = []
    for arc, answers in (
        (OPEN, ["Pandora", "Still Pandora, thinking about Deezer"]),
        (HELDOUT, ["Deezer", "Pandora"]),
    ):
        lines += [
            {"arc_id": arc.id, "after_session": i, "answer": a} for i, a in enumerate(answers)
        ]
    p = tmp_path / "answers.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    # the plan counts every answer and stores nothing
    assert plan_answers(hand_ws, p, "product") == len(lines)
    with pytest.raises(BadInput, match="No evaluation results"):
        compute_report(hand_ws)
    s = run_answers(hand_ws, p, "product", show_progress=False)
    assert (s.arcs, s.answers, s.scored_now) == (2, 4, 2)
    assert run_answers(hand_ws, p, "product").already_done == 2
    assert plan_answers(hand_ws, p, "product") == 0  # nothing left to judge
    r = compute_report(hand_ws).to_json()["systems"]["product"]
    assert r["heldout"]["exposure"]["k"] == 1 and r["core"]["exposure"]["k"] == 0
    assert r["core"]["task_accuracy"]["k"] == 1
    with pytest.raises(BadInput, match="already the name of a component system"):
        run_answers(hand_ws, p, "literal-gated")


def test_answers_with_an_llm_answer_judge(hand_ws, tmp_path):
    """The LLM answer judge sees the field, the question and the answer -- never the labelled
    values -- and its asserted values go through the equivalence judge."""
    from agentmemgate.answer_judge import AnswerQuestion, LLMAnswerJudge

    def respond(req):
        if "Value 1:" in req.prompt:
            return _equal_judge(req)
        answer = req.prompt.split("<<<\n")[1].split("\n>>>")[0]
        return {
            "asserted": [] if "know" in answer else [answer.rstrip(".")],
            "rationale": "read the answer",
        }

    get_model("scripted:answers").respond_with(respond)
    j = LLMAnswerJudge("scripted:answers")
    prompt = j.prompt(
        AnswerQuestion(
            field="music_app",
            description="d",
            probe_question="Which?",
            answer="Deezer",
            candidates=("Pandora", "Deezer"),
        )
    )
    assert "Pandora" not in prompt and "Deezer" in prompt  # candidates are never rendered
    p = tmp_path / "a.jsonl"
    p.write_text(
        "\n".join(
            json.dumps({"arc_id": "h1", "after_session": i, "answer": a})
            for i, a in enumerate(["Deezer.", "I don't know."])
        )
        + "\n"
    )
    s = run_answers(hand_ws, p, "product", judge="scripted:answers", show_progress=False)
    assert s.scored_now == 1 and s.failed == 0
    r = compute_report(hand_ws, judge="scripted:answers").to_json()["systems"]["product"]["heldout"]
    assert r["exposure"]["k"] == 1 and r["task_accuracy"]["k"] == 0


def test_imported_arcs_without_a_plan_are_evaluated(ws):
    """Arcs in the workspace with no spec row (as an import may leave them) are still run."""
    ws.save_arc(OPEN)  # no save_specs
    s = run_eval(ws, ["core"], specs(), show_progress=False)
    assert s.arcs == 1 and s.ran_now == 2


def test_default_splits_give_the_designs_n(ws):
    """Each measure's n is the number of arcs it applies to, by the design's cells: at-risk
    plans (abandoned and open) for contamination, every plan for staging, came-true plans for
    promotion, abandoned ones for discarding, controls for the control measures, every arc for
    task accuracy; per level in the controlled split."""
    from agentmemgate.design import paper_design
    from agentmemgate.generate import generate, get_renderer

    design = paper_design()
    splits = design.resolve_splits("paper")
    generate(ws, get_renderer("offline"), splits, show_progress=False)
    run_eval(ws, splits, specs(), show_progress=False)
    r = compute_report(ws, with_differences=False).to_json()["systems"]["toy-gated"]
    n = {sp: {m: v["n"] for m, v in b.items() if m != "by_level"} for sp, b in r.items()}

    def arcs(split: str, *outcomes: str) -> int:
        return sum(k for c, k in design.cell_counts(split) if design.outcome_of(c) in outcomes)

    plans = ("came_true", "abandoned", "open")
    assert (
        n["core"]["pending_contamination"]
        == n["core"]["end_contamination"]
        == arcs("core", "abandoned", "open")
    )
    assert n["core"]["task_accuracy"] == design.arcs_in("core")
    h = n["heldout"]
    assert "pending_contamination" not in h
    assert (
        h["end_contamination"],
        h["staged_at_plan_turn"],
        h["promoted"],
        h["discarded"],
        h["controls_committed"],
        h["over_holding"],
        h["task_accuracy"],
    ) == (
        arcs("heldout", "abandoned", "open"),
        arcs("heldout", *plans),
        arcs("heldout", "came_true"),
        arcs("heldout", "abandoned"),
        arcs("heldout", "control"),
        arcs("heldout", "control"),
        design.arcs_in("heldout"),
    )
    levels = r["controlled"]["by_level"]
    for cell, k in design.cell_counts("controlled"):
        measure = {
            "open": "end_contamination",
            "came_true": "promoted",
            "control": "controls_committed",
        }[design.outcome_of(cell)]
        assert levels[cell.level][measure]["n"] == k, cell.key


def test_a_judge_failure_keeps_the_trace_and_a_rerun_only_rescores(hand_ws):
    make, made = counting(LITERAL, info("toy-ungated", False))
    broken = {"on": True}

    def judge(req):
        if broken["on"]:
            raise CallFailed("judge said nothing useful", kind="invalid_output")
        return _equal_judge(req)

    get_model("scripted:flaky-judge").respond_with(judge)
    s = run_eval(
        hand_ws,
        ["core"],
        [system_spec(make)],
        EvalOptions(judge="scripted:flaky-judge"),
        show_progress=False,
    )
    assert s.failed == 4 and "(scoring)" in s.failure_examples[0]
    assert hand_ws.db["eval_traces"].count == 4 and hand_ws.db["eval_scores"].count == 0
    runs = len(made)
    broken["on"] = False
    s = run_eval(
        hand_ws,
        ["core"],
        [system_spec(make)],
        EvalOptions(judge="scripted:flaky-judge"),
        show_progress=False,
    )
    assert (s.failed, s.ran_now, s.rescored) == (0, 0, 4) and len(made) == runs


def test_a_system_that_crashes_is_recorded_per_arc(hand_ws):
    class Buggy(ScriptedSystem):
        def process_turn(self, turn, context):
            if "Deezer" in turn.text:
                raise ValueError("index out of range in my extractor")
            return super().process_turn(turn, context)

    system_info = info("buggy", False)

    def make(**_):
        return Buggy({}, system_info)

    make.info = system_info
    s = run_eval(hand_ws, ["core"], [system_spec(make)], show_progress=False)
    assert s.failed == 4
    assert "buggy raised ValueError: index out of range" in s.failure_examples[0]


def test_the_offline_drive_restores_the_garbage_collector():
    import gc

    from agentmemgate._gc import fewer_collections

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with fewer_collections(50_000, older=10):
        assert gc.get_threshold()[0] >= 50_000
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    try:
        with fewer_collections():
            raise KeyError("a failing run")
    except KeyError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
