"""EvalOptions: what a run is made with, spec strings parsed into model references once."""

from __future__ import annotations

import pytest

from agentmemgate.evaluate import EvalOptions
from agentmemgate.llm import ModelRef


def test_defaults_are_offline_rules_and_the_offline_judge():
    o = EvalOptions()
    assert o.model.offline and o.judge.offline and o.embedder is None
    assert o.params() == {
        "model": "offline",
        "judge": "offline",
        "concurrency": 4,
        "variants": [],
        "base_url": False,
        "embedder": None,
        "embedder_base_url": False,
        "graph_url": False,
    }


def test_spec_strings_become_references_and_params_say_which_urls_are_set():
    o = EvalOptions(
        model=ModelRef.parse("openai:m", base_url="http://localhost:8000/v1"),
        judge="anthropic:claude-sonnet-4-5",
        embedder="openai:embed",
        variants=["no-retry"],
        repeat=3,
    )
    assert isinstance(o.judge, ModelRef) and o.judge.family == "anthropic"
    assert o.model.family == "openai-compatible:localhost:8000"
    p = o.params()
    assert (p["model"], p["base_url"], p["embedder"], p["embedder_base_url"]) == (
        "openai:m",
        True,
        "openai:embed",
        False,
    )
    assert p["variants"] == ["no-retry"] and p["repeat"] == 3


def test_options_are_frozen_and_replaced_by_copy():
    o = EvalOptions(concurrency=2)
    with pytest.raises(AttributeError):
        o.concurrency = 8  # type: ignore[misc]
    assert o.replace(concurrency=8).concurrency == 8 and o.concurrency == 2
