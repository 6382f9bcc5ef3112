"""Every LLM test starts with no API keys in the environment and no scripted replies left over."""

from __future__ import annotations

import pytest

from agentmemgate.llm import reset_scripts


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    reset_scripts()
    yield
    reset_scripts()
