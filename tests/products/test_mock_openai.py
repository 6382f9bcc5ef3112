"""The product tests' mock OpenAI-compatible server, driven through the real OpenAI SDK."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
from typing import Literal

import openai
import pytest
from pydantic import BaseModel, Field, TypeAdapter

from .mock_openai import (
    ChatRequest,
    MockHTTPError,
    MockOpenAI,
    Reply,
    embed,
    instance_of,
    names_in,
    refuses_json_schema,
)


class Colour(str, enum.Enum):
    red = "red"
    blue = "blue"


class Address(BaseModel):
    city: str = Field(min_length=3)
    moved_in: dt.date
    kind: Literal["home", "work"]


class Pet(BaseModel):
    species: Colour
    age: int = Field(ge=1, le=30)


class Person(BaseModel):
    name: str
    weight: float = Field(gt=0)
    seen_at: dt.datetime
    addresses: list[Address] = Field(min_length=2)
    previous: Address | None = None  # anyOf [$ref, null], not required
    best: Address | Pet  # anyOf of two $refs, required
    favourite: Colour
    tags: list[str] = Field(max_length=1)  # required, capped
    scores: dict[str, int] = {}
    nickname: str | None  # required and nullable


@pytest.mark.parametrize("array_items", [0, 3])
def test_a_schema_with_defs_anyof_enums_and_bounds_gets_a_valid_instance(array_items):
    schema = Person.model_json_schema()
    assert "$defs" in schema and "anyOf" in json.dumps(schema) and "enum" in json.dumps(schema)
    value = instance_of(schema, array_items=array_items)
    person = Person.model_validate(value)  # raises if the instance does not meet the schema
    assert len(person.addresses) == max(2, array_items)
    assert len(person.tags) == min(array_items, 1)
    assert "previous" not in value  # optional fields are left to their defaults
    assert instance_of(schema, array_items=array_items) == value  # deterministic


def test_lists_of_models_top_level_arrays_and_overrides():
    adapter = TypeAdapter(list[Pet])
    assert adapter.validate_python(instance_of(adapter.json_schema(), array_items=2))
    value = instance_of(Person.model_json_schema(), overrides={"city": "Seattle"})
    assert {a["city"] for a in value["addresses"]} == {"Seattle"}


def test_embeddings_are_deterministic_unit_vectors_near_for_shared_words():
    a, b, c = embed("I live in Seattle now"), embed("Seattle is where I live"), embed("purple cats")
    cos = lambda x, y: sum(i * j for i, j in zip(x, y))
    assert math.isclose(cos(a, a), 1.0) and embed("I live in Seattle now") == a
    assert cos(a, b) > 0.5 > abs(cos(a, c))
    assert len(embed("", 16)) == 16 and math.isclose(cos(embed(""), embed("")), 1.0)


def test_names_in_finds_speakers_and_places():
    assert names_in("user: Maybe I will move to Seattle.\nassistant: Seattle is lovely, Dana.") == [
        "Seattle",
        "Dana",
    ]
    assert names_in("What's good at Gold's Gym? I'm at Equinox New York.") == [
        "Gold's Gym",
        "Equinox New York",
    ]
    assert names_in("Quick question. Equinox Gym is near. Glad you asked, Ana.") == [
        "Equinox Gym",
        "Ana",
    ]


def test_the_real_sdk_gets_schema_valid_json_text_tools_and_embeddings():
    with MockOpenAI(dim=32) as server:
        client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
        out = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "who?"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "Person", "schema": Person.model_json_schema()},
            },
        )
        Person.model_validate_json(out.choices[0].message.content)

        text = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert text.choices[0].message.content == "OK"

        obj = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            response_format={"type": "json_object"},
        )
        assert json.loads(obj.choices[0].message.content) == {}

        tool = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            tools=[
                {"type": "function", "function": {"name": "other", "parameters": {}}},
                {
                    "type": "function",
                    "function": {"name": "save_pet", "parameters": Pet.model_json_schema()},
                },
            ],
            tool_choice={"type": "function", "function": {"name": "save_pet"}},
        )
        call = tool.choices[0].message.tool_calls[0]
        assert call.function.name == "save_pet"
        Pet.model_validate_json(call.function.arguments)

        # The SDK asks for base64 by default and decodes it; floats on request.
        emb = client.embeddings.create(model="e", input=["Seattle", "I live in Seattle"])
        assert [len(d.embedding) for d in emb.data] == [32, 32]
        assert emb.data[0].embedding == pytest.approx(embed("Seattle", 32), abs=1e-6)
        floats = client.embeddings.create(
            model="e", input="Seattle", encoding_format="float", dimensions=8
        )
        assert floats.data[0].embedding == pytest.approx(embed("Seattle", 8))

        assert [m.id for m in client.models.list()] == ["mock-model", "mock-embedder"]
        assert server.calls("/chat/completions") == 4 and server.calls("/embeddings") == 2
        assert server.requests[0].body["response_format"]["json_schema"]["name"] == "Person"
        assert server.chats()[1].last_user == "hi"


def test_responders_pick_on_the_prompt_pass_on_none_and_can_fail_or_give_logprobs():
    seen: list[str] = []

    def entities(req: ChatRequest):
        seen.append(req.mode)
        if req.schema_name == "Entities":
            return {"names": names_in(req.last_user)}
        return None

    def rerank(req: ChatRequest):
        if "relevant" in req.last_user:
            return Reply("True", logprob=-0.5)
        if "boom" in req.last_user:
            raise MockHTTPError(429, "slow down")
        return None

    schema = {
        "type": "object",
        "required": ["names"],
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
    }
    with MockOpenAI([entities, rerank], latency=0.01) as server:
        client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
        out = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": "extract"},
                {"role": "user", "content": "user: I met Ana in Lisbon."},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "Entities", "schema": schema},
            },
        )
        assert json.loads(out.choices[0].message.content) == {"names": ["Ana", "Lisbon"]}

        ranked = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "is this relevant?"}],
            logprobs=True,
            top_logprobs=2,
        )
        top = ranked.choices[0].logprobs.content[0].top_logprobs[0]
        assert (top.token, top.logprob) == ("True", -0.5)

        with pytest.raises(openai.RateLimitError, match="slow down"):
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "boom"}]
            )
        assert [r.status for r in server.requests] == [200, 200, 429]
        assert seen == ["json_schema", "text", "text"]


def test_bad_requests_get_api_errors_not_hangs():
    with MockOpenAI() as server:
        client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.NotFoundError):
            client.completions.create(model="m", prompt="x")
        server.reset()
        assert server.calls() == 0


def test_json_object_requests_with_a_schema_in_the_prompt_and_llama_cpp_refusals():
    prompt = (
        "Extract the pet.\n\nRespond with a JSON object in the following format:\n\n"
        + json.dumps(Pet.model_json_schema())
    )
    with MockOpenAI([refuses_json_schema]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="dummy", max_retries=0)
        out = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": prompt}],
            response_format={"type": "json_object"},
        )
        Pet.model_validate_json(out.choices[0].message.content)
        assert server.chats()[0].schema_name == "Pet"
        with pytest.raises(openai.InternalServerError, match="Input should be 'text' or"):
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "x"}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "Pet", "schema": Pet.model_json_schema()},
                },
            )
