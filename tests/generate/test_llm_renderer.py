"""LLM generators: prompt -> structured draft -> checked Arc, re-asks, failures, resume after kill -9."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import runpy
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm.scripted import reset_scripts
from reference_drafts import reference_draft, reference_responder
from typer.testing import CliRunner

from agentmemgate import rubrics
from agentmemgate.cli import app
from agentmemgate.design import paper_design
from agentmemgate.errors import MissingApiKey, ModelSpecError
from agentmemgate.exports import export
from agentmemgate.generate import RenderFailure, get_renderer, plan_split, register_renderer
from agentmemgate.generate.llm_checks import asserted_change
from agentmemgate.generate.llm_prompts import build_prompt, spec_brief
from agentmemgate.generate.llm_renderer import LlmRenderer
from agentmemgate.llm import ModelRef, get_model
from agentmemgate.schema import Arc
from agentmemgate.validate import check_arc
from agentmemgate.workspace import Workspace

WORKER = Path(__file__).with_name("_llm_resume_worker.py")
TESTS = WORKER.parents[1]  # the worker imports the reference drafts from there


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    reset_scripts()
    yield
    reset_scripts()


def specs_all_splits(n=1):
    return plan_split("core", 0, n) + plan_split("heldout", 0, n) + plan_split("controlled", 0, n)


def renderer(ws, name="gen", **kw) -> LlmRenderer:
    r = get_renderer(f"scripted:{name}", workspace=ws, **kw)
    assert isinstance(r, LlmRenderer)
    return r


def test_renders_every_kind_of_arc_with_provenance(ws):
    r = renderer(ws)
    r.model.respond_with(reference_responder)
    specs = specs_all_splits()
    results = list(r.render_many(specs))
    assert all(isinstance(a, Arc) for a in results), results
    assert len(results) == len(specs)
    for arc in results:
        assert all(c.passed for c in check_arc(arc)), arc.id
        p = arc.provenance
        assert (p.generator, p.prompt_sha256) == (
            "scripted:gen",
            rubrics.load("generator_arc").sha256,
        )
    assert r.family == "scripted" and r.name == "scripted:gen"
    assert r.usage() == {
        "calls": len(specs),
        "in_flight": 0,
        "cache_hits": 0,
        "failures": 0,
        "input_tokens": r.model.usage.input_tokens,
        "output_tokens": r.model.usage.output_tokens,
    }


def test_prompt_carries_the_spec_and_level_definitions():
    spec = plan_split("controlled", 0, 1)[0]
    prompt = build_prompt(spec)
    assert spec.plan_value in prompt and spec.initial_value in prompt
    wording = paper_design().by_role("plan_wording").level(spec.plan_wording)
    assert f"PLAN WORDING: {spec.plan_wording} -- {wording.definition}\n" in prompt
    assert all(d.isoformat() in prompt for d in spec.session_dates)
    assert spec.id not in prompt  # ids carry level names; nothing to copy into the text


def test_the_paper_prompts_stay_byte_identical():
    """Cached generator calls are keyed on their prompts: every prompt of the paper's design at
    seed 0 is what it was before the prompt read the design (a changed digest re-asks them all)."""
    h = hashlib.sha256()
    design = paper_design()
    for split in design.splits:
        for spec in plan_split(split, 0):
            h.update(build_prompt(spec).encode())
    assert h.hexdigest() == "7452cce4ce481122eed803bd599d1e33f09d8ad1cc82922fa5fd1b45838dd399"


def _draft(spec, **edits):
    d = reference_draft(spec_brief(spec))
    for (s, t), text in edits.items():
        d["sessions"][s]["turns"][t]["text"] = text
    return d


def test_failed_checks_are_asked_again_with_the_problems(ws):
    spec = plan_split("core", 0, 1)[0]
    good = _draft(spec)
    ps, pt = good["plan_turn"]["session"], good["plan_turn"]["turn"]
    leaky = copy.deepcopy(good)
    leaky["sessions"][ps]["turns"][pt]["text"] = f"[PLAN] maybe {spec.plan_value} (strongly_hedged)"
    r = renderer(ws)
    r.model.enqueue(leaky, good)
    arc = r.render(spec)
    assert isinstance(arc, Arc)
    first, second = r.model.history
    assert "REJECTED" not in first.prompt
    assert "REJECTED" in second.prompt
    assert "label name" in second.prompt or "bracketed tag" in second.prompt


def test_invalid_json_from_the_model_is_asked_again(ws):
    spec = plan_split("core", 0, 1)[0]
    r = renderer(ws)
    r.model.enqueue("sure! here it is", "{broken", '{"sessions": []}', _draft(spec))
    assert isinstance(r.render(spec), Arc)
    assert (
        "not valid JSON" in r.model.history[3].prompt
        or "does not match" in r.model.history[3].prompt
    )


def test_an_arc_that_keeps_failing_is_a_failure_and_the_run_goes_on(ws):
    specs = plan_split("core", 0, 1)
    bad = specs[1]  # an abandoned arc whose plan turn claims the change already happened

    def respond(req):
        draft = reference_responder(req)
        if bad.plan_value in req.prompt:
            p = draft["plan_turn"]
            draft["sessions"][p["session"]]["turns"][p["turn"]]["text"] = (
                f"I already switched to {bad.plan_value} last week."
            )
        return draft

    r = renderer(ws, max_attempts=3)
    r.model.respond_with(respond)
    results = {x.spec_id if isinstance(x, RenderFailure) else x.id: x for x in r.render_many(specs)}
    failure = results[bad.id]
    assert isinstance(failure, RenderFailure) and failure.attempts == 3
    assert "already says the change happened" in failure.reason
    assert sum(isinstance(x, Arc) for x in results.values()) == len(specs) - 1
    # every attempt reached the model, though attempts 2 and 3 carry the same feedback
    asked = [q for q in r.model.history if bad.plan_value in q.prompt]
    assert len(asked) == 3 and asked[1].prompt == asked[2].prompt
    assert len({q.seed_key for q in asked}) == 3 and r.usage()["cache_hits"] == 0
    # a re-run replays the finished attempts from the cache: no call repeated
    again = renderer(ws, max_attempts=3)
    assert isinstance(again.render_one(bad), RenderFailure)
    assert len(r.model.history) == len(specs) + 2 and again.usage()["cache_hits"] == 3


@pytest.mark.parametrize(
    "text, value, flagged",
    [
        ("I already switched to Pegasus 39 last week.", "Pegasus 39", True),
        ("I've moved to Seattle, finally!", "Seattle", True),
        ("We made the switch over the weekend.", "Pegasus 39", True),
        ("I'm now using Pegasus 39 for every run.", "Pegasus 39", True),
        (
            "I'm torn between staying with Ghost 14 and switching to Pegasus 39.",
            "Pegasus 39",
            False,
        ),
        ("What if I switched to Pegasus 39 next month?", "Pegasus 39", False),
        ("I've decided I'm going to switch to Pegasus 39.", "Pegasus 39", False),
        ("I moved to Boston two years ago and might try Seattle next.", "Seattle", False),
    ],
)
def test_premature_change_detector(text, value, flagged):
    assert (asserted_change(text, value) is not None) is flagged


def test_plan_value_match_tolerates_case_and_punctuation_not_paraphrase(ws):
    spec = next(s for s in plan_split("heldout", 0, 1) if s.outcome == "open")
    draft = _draft(spec)
    p = draft["plan_turn"]
    sloppy = spec.plan_value.upper().replace(",", "").replace("'", "") + "!"
    draft["sessions"][p["session"]]["turns"][p["turn"]]["text"] = f"I'm leaning toward {sloppy}"
    r = renderer(ws, name="tolerant")
    r.model.enqueue(draft)
    assert isinstance(r.render(spec), Arc)
    paraphrased = copy.deepcopy(draft)
    paraphrased["sessions"][p["session"]]["turns"][p["turn"]]["text"] = (
        "I'm leaning toward the other one."
    )
    r2 = renderer(ws, name="strict", max_attempts=1)
    r2.model.enqueue(paraphrased)
    [failure] = list(r2.render_many([spec]))
    assert isinstance(failure, RenderFailure) and "plan value" in failure.reason


def test_planned_calls_skips_what_the_cache_already_answered(ws):
    specs = plan_split("core", 0, 2)
    r = renderer(ws)
    r.model.respond_with(reference_responder)
    assert r.planned_calls(specs) == 6
    list(r.render_many(specs[:2]))
    fresh = renderer(ws)
    assert fresh.planned_calls(specs) == 4


def test_stopping_midway_and_rerunning_repeats_no_call(ws):
    specs = plan_split("core", 0, 3)
    first = get_renderer("scripted:slow", workspace=ws, concurrency=2, delay=0.05)
    first.model.respond_with(reference_responder)
    it = first.render_many(specs)
    got = [next(it), next(it)]
    it.close()
    second = get_renderer("scripted:slow", workspace=ws, concurrency=2, delay=0.05)
    rest = list(second.render_many(specs))
    assert all(isinstance(a, Arc) for a in got + rest)
    prompts = [r.prompt for r in first.model.history]  # the shared script saw both runs
    assert len(prompts) == len(set(prompts)) == len(specs)
    assert second.usage()["cache_hits"] >= 2


def _db_rows(path: Path, sql: str) -> list:
    if not (path / "workspace.db").exists():
        return []
    with sqlite3.connect(f"file:{path / 'workspace.db'}?mode=ro", uri=True, timeout=30) as conn:
        try:
            return conn.execute(sql).fetchall()
        except sqlite3.OperationalError:
            return []


def test_killed_run_resumes_with_nothing_lost_and_no_call_repeated(tmp_path, capsys):
    ws = tmp_path / "ws"
    log1, log2 = tmp_path / "run1.log", tmp_path / "run2.log"
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(ws), str(log1), "0.25"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(WORKER.parents[1]), os.environ.get("PYTHONPATH", "")]
            ),
        },
    )
    deadline = time.monotonic() + 60
    while len(_db_rows(ws, "select id from arcs")) < 3:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = dict(_db_rows(ws, "select id, json from arcs"))
    answered = {
        hashlib.sha256(p.encode()).hexdigest()
        for (p,) in _db_rows(ws, "select prompt from llm_cache")
    }
    assert 3 <= len(before) < 9

    worker = runpy.run_path(str(WORKER))  # the re-run, in this process: same code, no kill
    worker["main"](str(ws), str(log2), 0.0)
    summary = json.loads(capsys.readouterr().out)
    asked_again = log2.read_text().split() if log2.exists() else []
    assert not set(asked_again) & answered  # no answered call repeated
    assert len(asked_again) == len(set(asked_again)) == 9 - len(answered)
    after = dict(_db_rows(ws, "select id, json from arcs"))
    assert len(after) == 9 and summary["failed"] == 0
    assert all(after[k] == v for k, v in before.items())  # nothing lost or rewritten
    export(Workspace(ws), tmp_path / "out", ["core"])
    stored = [p for d in (ws, tmp_path / "out") for p in d.rglob("*") if p.is_file()]  # WAL too
    assert not [p for p in stored if b"DONOTLEAK" in p.read_bytes()]  # the key is nowhere


def test_factory_binds_workspace_base_url_and_family(ws):
    r = get_renderer("openai:llama3", workspace=ws, base_url="http://localhost:8080/v1")
    assert r.family == "openai-compatible:localhost:8080" and r.kind == "LLM"
    assert get_model("scripted:x").family == "scripted"
    ref = ModelRef.parse("openai:llama3", "http://localhost:8080/v1", {"timeout": 7})
    by_ref = get_renderer(ref, workspace=ws)
    assert by_ref.family == r.family and by_ref.model.options.timeout == 7


def test_missing_key_and_bad_spec_from_get_renderer(ws):
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        get_renderer("openai:gpt-4o-mini", workspace=ws)
    with pytest.raises(ModelSpecError, match="provider:model"):
        get_renderer("mistral:large", workspace=ws)


@pytest.mark.parametrize(
    "generator, needle",
    [
        ("openai:gpt-4o-mini", "No API key: set OPENAI_API_KEY or pass --generator offline"),
        (
            "anthropic:claude-sonnet-4-5",
            "No API key: set ANTHROPIC_API_KEY or pass --generator offline",
        ),
        ("nope:model", "provider:model"),
    ],
)
def test_cli_gives_one_line_errors(tmp_path, generator, needle):
    result = CliRunner().invoke(
        app,
        [
            "build",
            "--generator",
            generator,
            "--split",
            "core",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 1
    assert needle in result.output and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


# -- correction arcs -------------------------------------------------------------------------
def test_correction_arcs_render_with_their_own_prompt_and_checks(ws):
    from agentmemgate.generate.llm_drafts import CorrectionDraft, draft_schema

    r = renderer(ws)
    r.model.respond_with(reference_responder)
    specs = plan_split("corrections", 0, 1)
    arcs = list(r.render_many(specs))
    assert len(arcs) == 8 and all(isinstance(a, Arc) for a in arcs), arcs
    for arc in arcs:
        assert all(c.passed for c in check_arc(arc)), [c for c in check_arc(arc) if not c.passed]
        assert arc.correction_turn == arc.outcome_turn
        assert arc.provenance.prompt_sha256 == rubrics.load("generator_correction_arc").sha256
    prompts = [q.prompt for q in r.model.history]
    assert all("WRONG VALUE" in p for p in prompts)
    for spec in specs:  # rendered concurrently: the prompts come in any order
        c = spec.correction
        assert any(
            f"RIGHT VALUE: {c.value}\n" in p and f"WRONG VALUE: {c.wrong_value}\n" in p
            for p in prompts
        ), spec.level
    assert draft_schema(specs[0]) is CorrectionDraft
    # the paper splits keep generator_arc v2: their prompts and cache keys did not move
    assert build_prompt(plan_split("core", 0, 1)[0]).startswith(
        rubrics.load("generator_arc", 2).text[:200]
    )
    assert rubrics.load("generator_arc").version == 2


def test_a_reply_that_fails_the_correction_checks_is_asked_again(ws):
    spec = next(s for s in plan_split("corrections", 0, 1) if s.correction.marker == "unmarked")
    good = reference_draft(spec_brief(spec))
    ref = good["correction_turn"]
    bad = copy.deepcopy(good)
    bad["sessions"][ref["session"]]["turns"][ref["turn"]]["text"] = (
        f"Sorry, I said {spec.correction.wrong_value}. I switched to {spec.correction.value} "
        "since then, anyway."
    )
    r = renderer(ws)
    r.model.enqueue(bad, good)
    arc = r.render(spec)
    assert isinstance(arc, Arc) and arc.correction_turn is not None
    first, second = r.model.history
    assert "REJECTED" in second.prompt and "correction_wording" in second.prompt
    assert "'sorry'" in second.prompt


def test_a_correction_reply_without_the_change_turn_is_refused(ws):
    spec = next(s for s in plan_split("corrections", 0, 1) if s.correction.target == "change")
    d = reference_draft(spec_brief(spec))
    d["change_turn"] = None
    r = renderer(ws, max_attempts=1)
    r.model.enqueue(d)
    out = r.render_one(spec)
    assert isinstance(out, RenderFailure) and "change_turn is null" in out.reason


def test_a_registered_factory_gets_the_reference_and_the_renderers_options(ws):
    from agentmemgate.generate.renderer import RENDERERS

    got = {}

    def factory(ref, **options):
        got.update(ref=ref, options=options)
        return get_renderer("offline")

    register_renderer("mine", factory, user_pickable=False)
    try:
        get_renderer("mine:m1", workspace=ws, concurrency=2, base_url="http://h/v1", timeout=7)
    finally:
        del RENDERERS["mine"]
    ref = got["ref"]
    assert (ref.spec, ref.base_url, dict(ref.options)) == ("mine:m1", "http://h/v1", {"timeout": 7})
    assert got["options"] == {"workspace": ws, "concurrency": 2}
