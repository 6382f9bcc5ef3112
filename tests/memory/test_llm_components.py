"""The LLM components through the scripted provider, and one run over the real OpenAI SDK."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from llm.llm_fakes import OPENAI_KEY, FakeApi, all_text, openai_ok
from scripted_memory import scripted_responder

from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.llm import CallFailed, get_model
from agentmemgate.memory import (
    FieldKey,
    LLMChecker,
    LLMExtractor,
    LLMMatcher,
    LLMPredicateWriter,
    StagedState,
    UserTurn,
    get_system,
)
from agentmemgate.memory._prompts import RUBRICS, memory_rubric
from agentmemgate.memory.conversation import user_turns

from .conftest import FIELD, conversation

TURN = UserTurn(
    text="Honestly I might switch to Aldi. Prices keep going up.",
    session=0,
    turn=2,
    date=dt.date(2024, 5, 1),
    t=2,
)


@pytest.fixture
def model(ws):
    return get_model("scripted:mem", workspace=ws)


def test_rubric_headers_say_where_the_prompts_come_from_and_are_not_sent():
    for name in RUBRICS:
        r = memory_rubric(name)
        assert not r.text.startswith("#") and "{{" in r.text
    from agentmemgate import rubrics

    assert "getzep/graphiti" in rubrics.load("memory_extract_literal").text
    assert "mem0ai/mem0" in rubrics.load("memory_extract_cautious").text
    assert "getzep" not in memory_rubric("memory_extract_literal").text


def test_extractor_keeps_verbatim_spans_and_replaces_invented_ones(model):
    model.enqueue(
        {
            "tuples": [
                {
                    "entity": "User",
                    "attribute": "Grocery Store",
                    "value": " Aldi ",
                    "span": "i might switch to aldi.",
                },
                {
                    "entity": "user",
                    "attribute": "grocery_store",
                    "value": "Aldi",
                    "span": "I said Aldi, didn't I",
                },
                {"entity": "user", "attribute": "", "value": "x", "span": ""},
            ]
        }
    )
    a, b = LLMExtractor(model, "literal").extract(TURN, [])
    assert (a.entity, a.attribute, a.value, a.span) == (
        "user",
        "grocery_store",
        "Aldi",
        "I might switch to Aldi.",
    )
    assert b.span == TURN.text  # not found in the message: the whole message, never invented
    (req,) = model.history
    assert "<CURRENT_MESSAGE>\n" + TURN.text in req.prompt and "2024-05-01" in req.prompt
    assert req.purpose == "memory.extract.literal" and "getzep" not in req.prompt


def test_invalid_output_is_asked_again_then_fails_cleanly(model):
    model.enqueue("not json", {"tuples": "nope"}, {"tuples": []})
    assert LLMExtractor(model, "cautious").extract(TURN, []) == []
    model.enqueue("x", "y", "z")
    with pytest.raises(CallFailed):
        LLMExtractor(model, "cautious").extract(TURN.model_copy(update={"text": "other"}), [])


def test_matcher_accepts_only_a_listed_field(model):
    from agentmemgate.memory import ExtractedTuple

    tup = ExtractedTuple(attribute="grocery_plan", value="considering Aldi")
    model.enqueue({"field": "grocery_store"}, {"field": "gym"}, {"field": None})
    m = LLMMatcher(model)
    assert m.match(tup, [FIELD]) == FIELD
    assert m.match(tup.model_copy(update={"value": "b"}), [FIELD]) is None
    assert m.match(tup.model_copy(update={"value": "c"}), [FIELD]) is None
    prompt = model.history[0].prompt
    assert "- grocery_store: The user's current grocery store." in prompt
    assert FIELD.probe_question not in prompt  # the matcher sees name and description only


def test_predicates_and_checker(model):
    model.enqueue(
        {
            "confirm_when": "the user reports shopping at Aldi now",
            "abandon_when": "the user keeps Safeway",
        },
        {"verdict": "abandon"},
    )
    from agentmemgate.memory import ExtractedTuple

    p = LLMPredicateWriter(model).write(
        FIELD,
        ExtractedTuple(attribute="grocery_store", value="Aldi", span="I might switch to Aldi."),
        "Aldi",
        "Safeway",
        [],
    )
    assert p.confirm_when.startswith("the user reports")
    item = StagedState(key=FieldKey.of(FIELD), value="Aldi", staged_at=2, **p.model_dump())
    later = TURN.model_copy(update={"text": "Nah, staying with Safeway.", "t": 8})
    assert LLMChecker(model).check(item, FIELD, later, []) == "abandon"
    check_prompt = model.history[1].prompt
    assert p.abandon_when in check_prompt and "Nah, staying with Safeway." in check_prompt


def test_scripted_responder_answers_every_component_prompt(model):
    model.respond_with(scripted_responder)
    assert LLMExtractor(model, "cautious").extract(TURN, [])[0].attribute == "grocery_plan"
    with pytest.raises(ValueError):
        scripted_responder(type("R", (), {"prompt": "What is the capital of France?"})())


def _trace(factory, arc):
    system = factory()
    system.begin([arc.spec.field])
    events = []
    for turn, context in user_turns(arc.sessions):
        events += [
            (e.kind, e.t, e.value, e.evidence_type) for e in system.process_turn(turn, context)
        ]
    return events, system.calls, system.snapshot(99)


@pytest.mark.parametrize(
    "name", ["literal-gated", "cautious-gated", "plan-typed-cautious", "cautious-gated[permissive]"]
)
def test_llm_path_on_the_scripted_model_gives_the_offline_traces(ws, name):
    get_model("scripted:mem").respond_with(scripted_responder)
    arcs = [get_renderer("offline").render(s) for s in plan_split("controlled", 0, n_per_cell=1)]
    info, llm = get_system(name, model="scripted:mem", workspace=ws)
    _, offline = get_system(name)
    assert not info.offline and info.components["extractor"].startswith(
        "scripted:mem|memory_extract_"
    )
    for arc in arcs:
        a, b = _trace(llm, arc), _trace(offline, arc)
        assert a[0] == b[0] and a[1] == b[1]


def test_a_rerun_makes_no_model_call(ws):
    get_model("scripted:mem").respond_with(scripted_responder)
    arc = get_renderer("offline").render(plan_split("core", 0, n_per_cell=1)[0])
    _, first = get_system("literal-gated", model="scripted:mem", workspace=ws)
    _trace(first, arc)
    assert first.usage["calls"] > 0
    _, second = get_system("literal-gated", model="scripted:mem", workspace=ws)
    _trace(second, arc)
    assert second.usage["calls"] == 0 and second.usage["cache_hits"] > 0


def test_strict_and_refresh_readings_share_every_call(ws):
    get_model("scripted:mem").respond_with(scripted_responder)
    arc = get_renderer("offline").render(plan_split("core", 0, n_per_cell=1)[0])
    _, refresh = get_system("plan-typed-literal", model="scripted:mem", workspace=ws)
    _trace(refresh, arc)
    _, strict = get_system("plan-typed-literal-strict", model="scripted:mem", workspace=ws)
    _trace(strict, arc)
    assert strict.usage["calls"] == 0


def test_classifier_option_picks_another_classifier(ws):
    info, _ = get_system("literal-gated", model="scripted:mem", workspace=ws, classifier="offline")
    assert info.components["classifier"] == "offline:lexicon.v2"
    assert info.components["extractor"].startswith("scripted:mem")


def test_through_the_real_openai_sdk(ws, monkeypatch):
    """Adapter level: every component's request goes through the OpenAI client over MockTransport."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def reply(request):
        body = json.loads(request.content)
        prompt = body["messages"][-1]["content"]
        answer = scripted_responder(type("R", (), {"prompt": prompt})())
        return openai_ok(answer if isinstance(answer, str) else json.dumps(answer))

    api = FakeApi(reply)
    info, factory = get_system(
        "literal-gated",
        model="openai:gpt-test",
        workspace=ws,
        http_client=api.client(),
        max_retries=0,
    )
    system = factory()
    system.begin([FIELD])
    events = []
    for turn, context in conversation(
        "I buy my groceries at Safeway.",
        "I might switch to Aldi.",
        "What's good for lunch?",
        "Update: I switched to Aldi last week.",
    ):
        events += system.process_turn(turn, context)
    kinds = [e.kind for e in events]
    assert "staged" in kinds and "promoted" in kinds and system.read(FieldKey.of(FIELD)) == "Aldi"
    bodies = api.bodies()
    schemas = {
        b["response_format"]["json_schema"]["name"] for b in bodies if "response_format" in b
    }
    assert {"ExtractionAnswer", "MatchAnswer", "PredicatesAnswer", "CheckAnswer"} <= schemas
    assert OPENAI_KEY not in all_text(ws)
    purposes = {r["purpose"] for r in ws.db["llm_calls"].rows}
    assert {
        "memory.extract.literal",
        "memory.match",
        "memory.predicates",
        "memory.check",
        "classify.evidence_type",
    } <= purposes
