"""Answering systems (products, baselines, plug-ins) by the A.7 protocol: a fresh, isolated memory
per arc, a probe after every session, answers + retrieved memories + verdicts + score stored per
arc, re-runs that redo only unfinished arcs, and blindness."""

from __future__ import annotations

import json

import pytest

from agentmemgate.errors import BadInput
from agentmemgate.evaluate import (
    EvalOptions,
    answering_spec,
    compute_report,
    report_markdown,
    run_eval,
    show_arc,
)
from agentmemgate.generate import generate, get_renderer
from agentmemgate.llm import get_model

from .answering_doubles import Backend, toy_factory
from .test_measures import ABANDONED, CAME_TRUE, CONTROL, HELDOUT, OPEN

ARCS = [ABANDONED, OPEN, CAME_TRUE, CONTROL, HELDOUT]


@pytest.fixture
def hand_ws(ws):
    ws.save_specs([a.spec for a in ARCS])
    for a in ARCS:
        ws.save_arc(a)
    return ws


def toy(backend):
    return answering_spec(toy_factory(backend))


def test_probe_after_every_session_answers_scored_and_stored(hand_ws):
    b = Backend()
    s = run_eval(hand_ws, ["core", "heldout"], [toy(b)], show_progress=False)
    assert (s.ran_now, s.already_done, s.failed) == (5, 0, 0)
    questions = [r for r in b.received if "question" in r]
    assert len(questions) == sum(len(a.sessions) for a in ARCS)  # one probe per session
    for a in ARCS:  # each probe asked on its session's date, in order
        ns = hand_ws.db.execute(
            "select namespace from eval_product_answers where arc_id = ?", [a.id]
        ).fetchone()[0]
        assert [q["date"] for q in questions if q["ns"] == ns] == [
            x.date.isoformat() for x in a.sessions
        ]
    rows = list(hand_ws.db["eval_answers"].rows_where("name = ?", ["toy-keyword"]))
    assert len(rows) == 11 and all(r["verdict"] for r in rows)
    stored = list(
        hand_ws.db["eval_product_answers"].rows_where(
            "arc_id = ?", ["a1"], order_by="after_session"
        )
    )
    assert [r["answer"] for r in stored] == ["You use Deezer.", "You use Deezer."]
    assert json.loads(stored[0]["retrieved"])[0] == {
        "text": "I use Pandora for music.",
        "valid_at": "2024-01-01",
    }
    r = compute_report(hand_ws, ["core", "heldout"])
    meta = r.meta.systems["toy-keyword"]
    assert meta.kind == "product" and meta.arcs_scored == 5
    core = r.to_json()["systems"]["toy-keyword"]["core"]
    assert (core["exposure"]["k"], core["exposure"]["n"]) == (2, 2)  # a1 and o1 assert Deezer
    assert (core["task_accuracy"]["k"], core["task_accuracy"]["n"]) == (2, 4)  # c1 and k1
    assert core["task_accuracy"]["ci_low"] is not None  # a Wilson interval
    assert set(core["by_level"]) == {"abandoned", "open", "came_true", "completed_change"}
    md = report_markdown(r)
    assert "## Products: final accuracy and exposure of at-risk plans" in md
    assert "| toy-keyword | plug-in | core benchmark | 2/4 50.0%" in md


def test_rerun_runs_nothing_and_another_judge_rescores_without_running(hand_ws):
    b = Backend()
    run_eval(hand_ws, ["core"], [toy(b)], show_progress=False)
    begun = len(b.begun)
    again = run_eval(hand_ws, ["core"], [toy(b)], show_progress=False)
    assert (again.ran_now, again.rescored, again.already_done) == (0, 0, 4)
    assert len(b.begun) == begun
    judge = get_model("scripted:ans-judge")
    judge.respond_with(
        lambda req: (
            {"asserted": [], "rationale": "reads nothing"}
            if "assistant's answer" in req.prompt
            else {"verdict": "not_equivalent", "confidence": 0.9, "rationale": "x"}
        )
    )
    s = run_eval(
        hand_ws, ["core"], [toy(b)], EvalOptions(judge="scripted:ans-judge"), show_progress=False
    )
    assert (s.ran_now, s.rescored) == (0, 4) and len(b.begun) == begun
    r = compute_report(hand_ws, ["core"], judge="scripted:ans-judge")
    assert r.to_json()["systems"]["toy-keyword"]["core"]["task_accuracy"]["k"] == 0


def test_a_crash_mid_arc_loses_only_that_arc_and_the_rerun_redoes_only_it(hand_ws):
    b = Backend()
    b.fail_when = ("Thinking of Deezer", 1)  # c1 dies after its first session's answer
    s = run_eval(hand_ws, ["core"], [toy(b)], show_progress=False)
    assert (s.ran_now, s.failed) == (3, 1) and "toy backend went away" in s.failure_examples[0]
    assert hand_ws.db["eval_product_answers"].count_where("arc_id = 'c1'") == 0
    assert hand_ws.db["eval_failures"].count == 1
    b.fail_when = None
    before = list(b.begun)
    s = run_eval(hand_ws, ["core"], [toy(b)], show_progress=False)
    assert (s.ran_now, s.already_done, s.failed) == (1, 3, 0)
    new = b.begun[len(before) :]
    assert len(new) == 1 and new[0] not in before  # a fresh namespace for the new attempt
    assert hand_ws.db["eval_failures"].count == 0
    assert hand_ws.db["eval_product_answers"].count_where("arc_id = 'c1'") == 3


def test_each_arc_gets_its_own_namespace_and_sees_only_its_own_sessions(ws):
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=2, show_progress=False)
    b = Backend()
    run_eval(ws, ["core"], [toy(b)], EvalOptions(concurrency=4), show_progress=False)
    from agentmemgate.evaluate.arcs import workspace_arcs

    arcs = {a.id: a for a, _ in workspace_arcs(ws, ["core"])}
    assert len(b.begun) == len(arcs) == len(set(b.begun))
    stored = {r["arc_id"]: r["namespace"] for r in ws.db["eval_product_answers"].rows}
    assert set(stored.values()) == set(b.begun)
    for arc_id, ns in stored.items():
        assert arc_id not in ns and arc_id.split("-")[-1] not in ns
        texts = [(role, text) for _, role, text in b.rows[ns]]
        # exactly this arc's turns, in order, with their roles: nothing of another arc
        assert texts == [(t.role, t.text) for s in arcs[arc_id].sessions for t in s.turns]


def test_the_system_receives_no_label(ws):
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=2, show_progress=False)
    b = Backend()
    model = get_model("scripted:blind", workspace=ws)
    model.respond_with(lambda req: "I don't know.")
    run_eval(
        ws,
        ["core"],
        [toy(b), "full-context", "no-memory"],
        EvalOptions(model="scripted:blind"),
        show_progress=False,
    )
    from agentmemgate.evaluate.arcs import workspace_arcs

    arcs = [a for a, _ in workspace_arcs(ws, ["core"])]
    sent = json.dumps(b.received) + "\n".join(r.prompt + (r.system or "") for r in model.history)
    assert {k for r in b.received for k in r.get("ingest", {})} == {"index", "date", "turns"}
    assert {k for r in b.received for t in r.get("ingest", {}).get("turns", []) for k in t} == {
        "role",
        "text",
    }
    for a in arcs:
        s = a.spec
        assert a.id not in sent and s.id.split("-")[-1] not in sent
        for label in (s.level, s.outcome, s.split, s.factor, s.plan_wording, s.domain):
            if "_" in label or label in ("core", "heldout", "controlled"):
                assert f'"{label}"' not in sent and f" {label} " not in sent, label
    assert len(model.history) == 2 * sum(len(a.sessions) for a in arcs)  # one call per probe


def test_full_context_sees_the_whole_conversation_and_no_memory_sees_nothing(hand_ws):
    model = get_model("scripted:fc", workspace=hand_ws)
    model.respond_with(lambda req: "You use Deezer." if "Deezer" in req.prompt else "I don't know.")
    s = run_eval(
        hand_ws,
        ["core"],
        ["full-context", "no-memory"],
        EvalOptions(model="scripted:fc"),
        show_progress=False,
    )
    assert s.names == ["full-context@scripted:fc", "no-memory@scripted:fc"] and s.failed == 0
    prompts = [r.prompt for r in model.history]
    fc = [p for p in prompts if "whole of your conversation" in p]
    nm = [p for p in prompts if "whole of your conversation" not in p]
    assert len(fc) == 9  # one per session of the 4 core arcs
    # The same question on 3 dates: identical prompts come from the cache (two arcs in flight at
    # once may both miss it, so count distinct prompts).
    assert len(set(nm)) == 3 and len(nm) <= 9
    assert (
        hand_ws.db["eval_product_answers"].count_where("system = ?", ["no-memory@scripted:fc"]) == 9
    )
    last = next(p for p in fc if "I switched to Deezer!" in p)
    assert "Session 1 (2024-01-01)\nuser: I use Pandora.\nassistant: Noted." in last
    assert "Session 3 (2024-01-15)" in last and "Today is 2024-01-15." in last
    assert all("(no memories were retrieved)" in p and "Pandora" not in p for p in nm)
    rows = {r["name"]: r for r in hand_ws.db["eval_systems"].rows}
    prov = json.loads(rows["full-context@scripted:fc"]["options"])
    assert prov["model"] == "scripted:fc" and prov["answer_prompt"] == "answer_full_context.v1"
    assert len(prov["answer_prompt_sha256"]) == 64 and prov["library"] == "agentmemgate"
    calls = len(model.history)  # 9 + len(nm): 12, or more when two arcs missed the cache at once
    again = run_eval(
        hand_ws,
        ["core"],
        ["full-context", "no-memory"],
        EvalOptions(model="scripted:fc"),
        show_progress=False,
    )
    assert again.ran_now == 0 and len(model.history) == calls  # 0 model calls on a re-run
    r = compute_report(hand_ws, ["core"]).to_json()
    assert r["meta"]["systems"]["no-memory@scripted:fc"]["kind"] == "product"
    assert r["systems"]["no-memory@scripted:fc"]["core"]["task_accuracy"]["k"] == 0


def test_show_session_by_session(hand_ws):
    run_eval(hand_ws, ["core"], [toy(Backend())], show_progress=False)
    out = show_arc(hand_ws, "c1", "toy-keyword")
    assert "Namespace amg-" in out
    s2 = out.split("Session 1 (2024-01-08)")[1].split("Session 2")[0]
    assert "s1 t0 user" in s2  # sessions and turns counted from 0, as the exports count them
    assert "Retrieved for the probe after session 1: 3 memories" in s2
    assert "1. 'I use Pandora.' (valid 2024-01-01 to now)" in s2
    assert "Answer after session 1: 'You use Deezer.'" in s2
    assert "asserts: 'Deezer'" in s2
    assert "task_accuracy: yes" in out


def test_a_run_never_takes_an_uploaded_answer_sets_name(hand_ws, tmp_path):
    from agentmemgate.errors import BadInput
    from agentmemgate.evaluate import run_answers

    f = tmp_path / "a.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"arc_id": "a1", "after_session": i, "answer": "Pandora."}) for i in range(2)
        )
        + "\n"
    )
    run_answers(hand_ws, f, "toy-keyword", show_progress=False)
    with pytest.raises(BadInput, match="already the name of an uploaded answer set"):
        run_eval(hand_ws, ["core"], [toy(Backend())], show_progress=False)
    assert hand_ws.db["eval_systems"].count == 0


def test_repeated_runs_ask_anew_and_the_report_gives_the_spread(hand_ws):
    """--repeat 3: runs 2 and 3 of a model-backed system have cache entries of their own (every
    call asked again), a system of offline rules runs once, the tables keep the first run and the
    report gives each measure's mean, min and max over the runs."""
    model = get_model("scripted:rep", workspace=hand_ws)
    calls = {"n": 0}

    def answer(req):  # the model changes its mind from one call to the next
        calls["n"] += 1
        return "You use Deezer." if calls["n"] % 2 else "You use Pandora."

    model.respond_with(answer)
    probes = sum(len(a.sessions) for a in ARCS if a.spec.split == "core")
    s = run_eval(
        hand_ws,
        ["core"],
        ["full-context", toy(Backend())],
        EvalOptions(model="scripted:rep", repeat=3),
        show_progress=False,
    )
    name = "full-context@scripted:rep"
    assert s.names == [name, "toy-keyword", f"{name}#2", f"{name}#3"] and s.failed == 0
    assert len(model.history) == 3 * probes  # no run read another's answers from the cache
    again = run_eval(
        hand_ws,
        ["core"],
        ["full-context"],
        EvalOptions(model="scripted:rep", repeat=3),
        show_progress=False,
    )
    assert again.ran_now == 0 and len(model.history) == 3 * probes  # each run stored apart

    r = compute_report(hand_ws, ["core"])
    assert name in r.meta.systems and f"{name}#2" not in r.meta.systems
    assert list(r.repeats) == [name]
    runs = r.repeats[name]
    assert runs["runs"] == [name, f"{name}#2", f"{name}#3"]
    acc = runs["spread"]["core"]["task_accuracy"]
    assert len(acc["values"]) == 3 and acc["min"] <= acc["mean"] <= acc["max"]
    assert acc["n"] == [r.stat(name, "core", "task_accuracy").n] * 3
    assert acc["mean"] == pytest.approx(sum(acc["values"]) / 3)
    md = report_markdown(r)
    assert "## Run-to-run spread" in md and f"| {name} | core benchmark | Task probes" in md
    assert f"{name}#2 |" not in md.split("## Run-to-run spread")[0]  # the tables: run 1 only
    assert r.to_json()["repeats"][name]["runs"][1] == f"{name}#2"
    with pytest.raises(BadInput, match="--repeat must be 1 or more"):
        run_eval(hand_ws, ["core"], ["full-context"], EvalOptions(model="scripted:rep", repeat=0))
