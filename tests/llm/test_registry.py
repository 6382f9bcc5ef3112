"""Model specs, the provider registry, options and lazy SDK imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentmemgate.errors import BadInput, MissingApiKey, ModelSpecError
from agentmemgate.llm import Model, RawReply, get_model, providers, register_provider


@pytest.mark.parametrize("spec", ["gpt-4o", "nope:model", "openai:", "", ":x"])
def test_unknown_spec_shows_the_format(spec):
    with pytest.raises(ModelSpecError) as e:
        get_model(spec)
    msg = str(e.value)
    assert "provider:model" in msg and "openai:gpt-4o-mini" in msg and "\n" not in msg


@pytest.mark.parametrize(
    "spec, var",
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_key_is_one_line_naming_the_variable(spec, var):
    with pytest.raises(MissingApiKey) as e:
        get_model(spec)
    assert str(e.value) == f"No API key for {spec}: set {var} or use the offline backend"
    assert e.value.env_var == var


def test_options_are_validated_with_extra_forbidden():
    with pytest.raises(BadInput, match="Bad option 'max_retry' for scripted:x"):
        get_model("scripted:x", max_retry=3)
    with pytest.raises(BadInput, match="delay"):
        get_model("scripted:x", delay=-1)


def test_a_plugin_provider_registers_like_the_built_ins(ws):
    class Echo(Model):
        provider = "echo"

        def execute(self, request):
            return RawReply(text=request.prompt.upper(), resolved_model="echo-1")

    register_provider(
        "echo", lambda name, workspace=None, base_url=None, **o: Echo(name, workspace=workspace)
    )
    assert {"openai", "anthropic", "scripted", "echo"} <= set(providers())
    m = get_model("echo:loud", workspace=ws)
    assert (m.complete("hi").text, m.family, m.spec) == ("HI", "echo", "echo:loud")
    assert m.complete("hi").cached


def test_provider_sdks_are_imported_only_when_used():
    code = (
        "import sys; from llm.scripted import register; register(); "
        "from agentmemgate.llm import get_model; "
        "from agentmemgate.generate import get_renderer; get_renderer('scripted:x'); "
        "get_model('scripted:x').enqueue('a').complete('p'); "
        "print('openai' in sys.modules, 'anthropic' in sys.modules)"
    )
    tests = Path(__file__).resolve().parents[1]  # where the scripted model is
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["False", "False"]
