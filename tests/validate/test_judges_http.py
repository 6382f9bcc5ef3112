"""LLM judges through the real OpenAI and Anthropic SDK clients over httpx MockTransport.

The blindness test reads the request bodies that actually left the client.
"""

from __future__ import annotations

import json
import re

import pytest
from llm.llm_fakes import ANTHROPIC_KEY, OPENAI_KEY, FakeApi, all_text, anthropic_ok, openai_ok

from agentmemgate.design import paper_design
from agentmemgate.validate import judge_arcs, validation_report
from agentmemgate.validate.judges import get_judge, option_seed, shuffled_levels, transcript
from agentmemgate.validate.judges.questions import chat_sessions
from agentmemgate.validate.pairs import build_pairs, judge_pairs, sample_pairs, save_pairs
from agentmemgate.validate.store import load_verdicts


def _prompt(request) -> str:
    body = json.loads(request.content)
    return body["messages"][-1]["content"]


def _listed(prompt: str) -> list[str]:
    return re.findall(r"^- (\w+): ", prompt.split("Options (in no particular order):")[1], re.M)


@pytest.fixture
def openai_judge(tiny, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def make(api, **options):
        options.setdefault("max_retries", 0)
        return get_judge("openai:gpt-test", workspace=tiny, http_client=api.client(), **options)

    return make


def test_recovery_request_bodies_are_blind(tiny, openai_judge):
    api = FakeApi(
        lambda req: openai_ok({"level": _listed(_prompt(req))[0], "rationale": "First listed."})
    )
    summary = judge_arcs(
        tiny, ["controlled"], [openai_judge(api)], ["recovery"], show_progress=False
    )
    arcs = list(tiny.arcs("controlled"))
    assert summary.judged_now == len(arcs) == len(api.requests) == 9
    rows = {r.item_id: r for r in load_verdicts(tiny, ["recovery"])}
    orders = set()
    for arc in arcs:
        (body,) = [
            b
            for b in api.bodies()
            if transcript(chat_sessions(arc)) in b["messages"][-1]["content"]
        ]
        raw, prompt = json.dumps(body), body["messages"][-1]["content"]
        s = arc.spec
        hidden = [
            arc.id,
            s.split,
            s.factor,
            s.field.description,
            s.field.probe_question,
            "plan_turn",
            "outcome_turn",
            "pending_turn",
            "came_true",
            "abandoned",
            "expected_value",
            "hedge_strength",
            "confirmation_wording",
            "controlled",
            "heldout",
            '"intended"',
            '"split"',
            '"factor"',
            '"outcome"',
            '"field"',
            "plan_value",
            "initial_value",
        ]
        if "_" in s.field.attribute:  # a one-word attribute ("gym") is ordinary conversation text
            hidden.append(s.field.attribute)
        assert not [h for h in hidden if h in raw], arc.id
        assert ">>" not in prompt and not re.search(r"\bturn \d", prompt, re.I)
        assert [m["role"] for m in body["messages"]] == ["user"]  # no system prompt carrying more
        listed = _listed(prompt)
        assert sorted(listed) == sorted(
            paper_design().levels(s.factor)
        )  # every level once: none singled out
        if s.factor == "hedge_strength":
            assert "completed_change" in listed
        assert listed == rows[arc.id].options == shuffled_levels(s.factor, option_seed(arc.id))
        assert rows[arc.id].option_seed == option_seed(arc.id)
        assert (
            body["response_format"]["json_schema"]["schema"]["properties"]["level"]["enum"]
            == listed
        )
        orders.add(tuple(listed))
    assert len(orders) > 2  # shuffled per arc
    assert OPENAI_KEY not in all_text(tiny)


def test_invalid_json_and_unknown_levels_are_retried_then_stored_as_failures(tiny, openai_judge):
    api = FakeApi(
        openai_ok('{"level": "came_tr'),  # arc 1: invalid JSON,
        openai_ok({"level": "very_hedged", "rationale": "x"}),  # then a level that does not exist,
        openai_ok({"level": "CAME TRUE", "rationale": "x"}),  # and again: a judge failure
        openai_ok({"level": "nonsense", "rationale": "x"}),  # arc 2: bad once,
        lambda req: openai_ok({"level": _listed(_prompt(req))[0], "rationale": "First listed."}),
    )
    judge = openai_judge(api, concurrency=1)
    s = judge_arcs(tiny, ["core"], [judge], ["recovery"], show_progress=False)
    assert (s.judged_now, s.failures) == (3, 1)
    rows = load_verdicts(tiny, ["recovery"])
    failed = [r for r in rows if r.status == "failed"]
    assert len(failed) == 1 and failed[0].verdict == "" and "RecoveryAnswer" in failed[0].error
    assert all(r.verdict in r.options for r in rows if r.ok)
    rep = validation_report(tiny, ["core"])
    assert rep.recovery.overall.n == 2  # the failure is not a verdict
    assert rep.by_judge["openai:gpt-test"].judge_failures["recovery"] == 1
    assert [f.arc_id for f in rep.judge_failures] == [failed[0].item_id]
    statuses = [r["status"] for r in tiny.db["llm_calls"].rows]
    assert statuses.count("invalid_output") == 4
    # a re-run retries only the failure; the answered arcs come from the stored verdicts
    s2 = judge_arcs(tiny, ["core"], [judge], ["recovery"], show_progress=False)
    assert (s2.already_done, s2.judged_now) == (2, 1)


def test_realism_and_equivalence_through_anthropic(tiny, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)

    def reply(req):
        body = json.loads(req.content)
        tool = body["tool_choice"]["name"]
        if tool == "record_RealismAnswer":
            return anthropic_ok(
                {
                    "natural": {"verdict": "pass", "rationale": "Reads like chat."},
                    "motivated": {"verdict": "fail", "rationale": "No reason given."},
                    "consistent": {
                        "verdict": "fail",
                        "rationale": "The reply congratulates a switch still pending.",
                        "turns": ["Session 2, assistant 'Congrats on'"],
                    },
                },
                tool=tool,
            )
        return anthropic_ok(
            {"verdict": "equivalent", "confidence": 0.7, "rationale": "Same value."}, tool=tool
        )

    api = FakeApi(reply)
    judge = get_judge(
        "anthropic:claude-test", workspace=tiny, http_client=api.client(), max_retries=0
    )
    assert judge.family == "anthropic"
    judge_arcs(tiny, ["core"], [judge], ["realism"], show_progress=False)
    for b in api.bodies():
        prompt = b["messages"][0]["content"]
        assert prompt.count(">> User:") == 1  # the plan statement is pointed out, nothing else
        assert "came_true" not in prompt and "core-" not in prompt
    rep = validation_report(tiny, ["core"])
    assert rep.realism["natural"].value == 1.0 and rep.realism["motivated"].value == 0.0
    assert rep.realism["consistent"].value == 0.0
    assert {f.rationale for f in rep.failing_arcs} == {
        "No reason given.",
        # a failing consistency verdict keeps the turns it names
        "The reply congratulates a switch still pending. (turns: Session 2, assistant 'Congrats on')",
    }

    arcs = list(tiny.arcs("core"))
    pairs = sample_pairs(build_pairs(arcs), 6, 0.5, seed=0)
    save_pairs(tiny, "t", pairs)
    now, done, failed = judge_pairs(tiny, "t", pairs, judge, show_progress=False)
    assert (now, done, failed) == (6, 0, 0)
    eq_bodies = [b for b in api.bodies() if b["tool_choice"]["name"] == "record_EquivalenceAnswer"]
    assert len(eq_bodies) == 6
    rows = load_verdicts(tiny, ["equivalence"])
    assert {r.confidence for r in rows} == {0.7} and {r.verdict for r in rows} == {"equivalent"}
    assert {tuple(r.options) for r in rows} == {
        ("reference", "candidate"),
        ("candidate", "reference"),
    }
    prompts = [b["messages"][0]["content"] for b in eq_bodies]
    for r in rows:  # the stored order is the order the judge saw
        p = next(p for p in pairs if p.id == r.item_id)
        first, second = (getattr(p, k) for k in r.options)
        assert any(f"Value 1: {first}\nValue 2: {second}\n" in x for x in prompts)


def test_out_of_range_confidence_is_not_a_verdict(tiny, openai_judge):
    api = FakeApi(openai_ok({"verdict": "equivalent", "confidence": 7, "rationale": "Same value."}))
    judge = openai_judge(api, concurrency=1)
    pairs = sample_pairs(build_pairs(tiny.arcs("core")), 1, 0.0, seed=0)
    save_pairs(tiny, "t", pairs)
    assert judge_pairs(tiny, "t", pairs, judge, show_progress=False) == (1, 0, 1)
    (row,) = load_verdicts(tiny, ["equivalence"])
    assert row.status == "failed" and row.verdict == ""


# -- the cross-family rule with OpenAI-compatible servers ------------------------------------
GEN_URL, OTHER_URL = "http://gen.local:8000/v1", "http://judge.local:9000/v1"


def _generated_at(ws, base_url: str) -> None:
    """Core arcs from ``openai:gen`` served by an OpenAI-compatible server at ``base_url``."""
    from reference_drafts import reference_responder

    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.llm import Request

    api = FakeApi(lambda req: openai_ok(reference_responder(Request(prompt=_prompt(req)))))
    renderer = get_renderer("openai:gen", workspace=ws, base_url=base_url, http_client=api.client())
    assert generate(ws, renderer, ["core"], n_per_cell=1, show_progress=False).failed == 0


def _first_listed_judge(ws, base_url: str):
    def reply(req):
        prompt = _prompt(req)
        if "Options (in no particular order):" in prompt:
            return openai_ok({"level": _listed(prompt)[0], "rationale": "First listed."})
        ok = {"verdict": "pass", "rationale": "Reads fine."}
        return openai_ok(
            {
                "natural": ok,
                "motivated": ok,
                "consistent": {"verdict": "pass", "rationale": "Every turn fits the timeline."},
            }
        )

    api = FakeApi(reply)
    return get_judge(
        "openai:judge", workspace=ws, base_url=base_url, http_client=api.client(), max_retries=0
    ), api


def test_a_judge_on_the_generators_own_server_is_the_same_family(ws):
    from agentmemgate.errors import SameFamilyJudge
    from agentmemgate.validate.report import generator_families

    _generated_at(ws, GEN_URL)  # provenance says only "openai:gen": the family is in the call log
    assert generator_families(ws, ["core"]) == {"openai-compatible:gen.local:8000"}
    same, same_api = _first_listed_judge(ws, GEN_URL)
    with pytest.raises(SameFamilyJudge, match="openai-compatible:gen.local:8000"):
        judge_arcs(ws, ["core"], [same], ["recovery"], show_progress=False)
    assert not same_api.requests

    other, api = _first_listed_judge(ws, OTHER_URL)
    s = judge_arcs(ws, ["core"], [other], ["recovery"], show_progress=False)
    assert s.generator_families == ["openai-compatible:gen.local:8000"] and not s.same_family_judges
    assert len(api.requests) == 3
    rep = validation_report(ws, ["core"])
    assert (
        rep.generator_families == ["openai-compatible:gen.local:8000"]
        and not rep.same_family_judges
    )

    # the same model name at another server is another judge: asked again, not "already stored"
    s = judge_arcs(ws, ["core"], [same], ["recovery"], allow_same_family=True, show_progress=False)
    assert (s.same_family_judges, s.judged_now, len(same_api.requests)) == (["openai:judge"], 3, 3)
    rep = validation_report(ws, ["core"], ["openai:judge"])
    assert rep.same_family_judges == ["openai:judge"]
    assert any("--allow-same-family" in n for n in rep.notes)


def test_base_url_goes_to_openai_judges_only_and_a_missing_key_names_the_judge_fix(ws, monkeypatch):
    from agentmemgate.errors import BadInput, MissingApiKey
    from agentmemgate.validate.judging import judge_refs, resolve_judges

    with pytest.raises(BadInput, match="--judge-base-url .* is for openai: judges"):
        resolve_judges(ws, judge_refs(["anthropic:claude-x", "offline"], OTHER_URL))
    with pytest.raises(BadInput, match="--judge-base-url .* is for openai: judges"):
        resolve_judges(ws, judge_refs(None, OTHER_URL))  # the default judge is offline
    with pytest.raises(MissingApiKey) as e:
        resolve_judges(ws, ["anthropic:claude-x"])
    assert (
        str(e.value)
        == "No API key for judge anthropic:claude-x: set ANTHROPIC_API_KEY or pass --judge offline"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    claude, local = resolve_judges(
        ws, judge_refs(["anthropic:claude-x", "openai:local"], OTHER_URL)
    )
    assert claude.model.base_url is None and claude.family == "anthropic"
    assert local.family == "openai-compatible:judge.local:9000"
