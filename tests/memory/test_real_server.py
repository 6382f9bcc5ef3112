"""Opt-in: two short memory-component calls against a real OpenAI-compatible server.

Set AMG_TEST_BASE_URL (e.g. http://127.0.0.1:8080/v1 for the llama-cpp-python server) to run it.
A small model may well answer wrongly; what is checked is that the components either return an
answer of the right type or fail with one clean line (never a traceback or a silent guess).
"""

from __future__ import annotations

import os

import pytest

from agentmemgate.llm import CallFailed, get_model
from agentmemgate.memory import ExtractedTuple, FieldKey, LLMChecker, LLMMatcher, StagedState

from .conftest import FIELD, conversation

URL = os.environ.get("AMG_TEST_BASE_URL")
pytestmark = pytest.mark.skipif(
    not URL, reason="set AMG_TEST_BASE_URL to run against a real server"
)


def test_matcher_and_checker_on_a_real_server(ws):
    model = get_model("openai:local", base_url=URL, workspace=ws, timeout=600, max_retries=0)
    try:
        field = LLMMatcher(model).match(
            ExtractedTuple(attribute="grocery_store", value="Aldi"), [FIELD]
        )
        assert field in (FIELD, None)
        item = StagedState(
            key=FieldKey.of(FIELD),
            value="Aldi",
            staged_at=0,
            confirm_when="the user reports that they now shop at Aldi",
            abandon_when="the user reports keeping their current store",
        )
        ((turn, context),) = conversation("Update: I switched to Aldi last week.")
        assert LLMChecker(model).check(item, FIELD, turn, context) in (
            "confirm",
            "abandon",
            "neither",
        )
    except CallFailed as e:
        assert "\n" not in str(e)
