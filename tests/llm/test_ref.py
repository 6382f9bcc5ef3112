"""A model reference: spec, base URL and options parsed once, with .offline and .family."""

from __future__ import annotations

import pytest

from agentmemgate.errors import BadInput, ModelSpecError
from agentmemgate.llm import ModelRef, get_model
from agentmemgate.validate.judges.base import generator_family


@pytest.mark.parametrize(
    "spec",
    ["offline", "", None, "offline:answer_cues.v1", "offline:lexicon", "offline-rules"],
)
def test_offline_specs_are_offline(spec):
    ref = ModelRef.parse(spec)
    assert ref.offline and not ref.is_model
    assert ref.model_options() == {}


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"])
def test_model_specs_name_provider_and_model(spec):
    ref = ModelRef.parse(spec, options={"timeout": 30})
    assert not ref.offline and ref.is_model
    assert f"{ref.provider}:{ref.name}" == spec == str(ref)
    assert ref.family == ref.provider
    assert ref.model_options() == {"timeout": 30}


def test_a_spec_without_a_colon_is_no_model():
    ref = ModelRef.parse("gpt-4o")
    assert not ref.offline and not ref.is_model and ref.name is None
    assert ref.family == "gpt-4o"


@pytest.mark.parametrize(
    "url", ["http://localhost:8000/v1", "http://127.0.0.1:8000", "http://[::1]:8000/v1/"]
)
def test_an_openai_model_at_a_base_url_is_of_that_servers_family(url):
    ref = ModelRef.parse("openai:qwen", base_url=url)
    assert ref.family == "openai-compatible:localhost:8000"
    assert ModelRef.parse("anthropic:claude", base_url=url).family == "anthropic"


def test_the_family_is_the_one_the_model_reports(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for url in (None, "http://127.0.0.1:8000/v1"):
        ref = ModelRef.parse("openai:gpt-4o-mini", base_url=url)
        assert get_model(ref).family == ref.family


def test_the_generator_family_of_a_provenance_spec():
    assert generator_family("offline") == "offline-template"
    assert generator_family("openai:gpt-4o-mini") == "openai"


def test_a_reference_is_frozen_and_parsed_once():
    ref = ModelRef.parse("openai:m", base_url="http://h:1", options={"timeout": 5})
    assert ModelRef.parse(ref) is ref
    assert ModelRef.parse(ref, options={"max_tokens": 9}).options == {"max_tokens": 9}
    with pytest.raises(AttributeError):
        ref.spec = "openai:other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ref.options["timeout"] = 9  # type: ignore[index]
    assert ref == ModelRef("openai:m", "http://h:1", {"timeout": 5})
    assert hash(ref) == hash(ModelRef("openai:m", "http://h:1"))


@pytest.mark.parametrize("spec", ["gpt-4o", "nope:model", "openai:", ""])
def test_get_model_gives_the_same_error_for_a_bad_reference(spec):
    with pytest.raises(ModelSpecError) as by_string:
        get_model(spec)
    with pytest.raises(ModelSpecError) as by_ref:
        get_model(ModelRef.parse(spec))
    assert str(by_ref.value) == str(by_string.value)


def test_get_model_takes_the_references_options():
    with pytest.raises(BadInput, match="Bad option 'max_retry' for scripted:x"):
        get_model(ModelRef.parse("scripted:x", options={"max_retry": 3}))
    m = get_model(ModelRef.parse("scripted:x", options={"delay": 0}))
    assert m.spec == "scripted:x"
