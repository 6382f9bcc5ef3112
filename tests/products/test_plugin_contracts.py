"""How a plug-in's contract is told apart, what an answering plug-in that takes options is given,
and how a plug-in that meets neither contract is refused (one line naming its package)."""

from __future__ import annotations

import datetime as dt
import importlib.metadata

import pytest

from agentmemgate.errors import BadInput
from agentmemgate.llm import get_model
from agentmemgate.products import AnsweringOptions, get_answering, plugins

GROUP = plugins.GROUP


@pytest.fixture
def entry_points(monkeypatch):
    eps = [
        importlib.metadata.EntryPoint(name=n, value=v, group=GROUP)
        for n, v in (
            ("asks-the-model", "products.plugin_doubles:AsksTheModel"),
            ("quiet", "products.plugin_doubles:make_quiet"),
            ("forty-two", "products.plugin_doubles:not_a_system"),
            ("full-context", "products.plugin_doubles:make_quiet"),
        )
    ]
    monkeypatch.setattr(plugins, "entry_points", lambda: eps)
    return eps


def test_an_answering_plugin_with_options_gets_the_run_model(entry_points, ws):
    model = get_model("scripted:plug", workspace=ws).enqueue("You use Deezer.")
    a = get_answering("asks-the-model", AnsweringOptions(model="scripted:plug", workspace=ws))
    assert a.model == "scripted:plug" and a.info.name == "asks-the-model"
    s = a.factory()
    s.begin("amg-x")
    assert s.options.model == "scripted:plug"
    assert s.answer("Which app?", dt.date(2024, 1, 1)).answer == "You use Deezer."
    assert "Which app?" in model.history[0].prompt


def test_a_factory_function_is_told_apart_by_what_it_makes(entry_points):
    found = {p.name: p for p in plugins.plugins()}
    assert (
        found["quiet"].contract == "answering" and found["quiet"].info.description == "never knows"
    )
    assert found["asks-the-model"].contract == "answering"
    a = get_answering("quiet", AnsweringOptions())
    assert (
        a.model == "offline"
        and a.factory().answer("q", dt.date(2024, 1, 1)).answer == "I don't know."
    )


def test_neither_contract_is_one_line_and_lists_the_rest(entry_points):
    bad = {p.name: p for p in plugins.plugins()}["forty-two"]
    assert bad.error.startswith("plug-in 'forty-two' from package products is broken")
    assert "neither an AnsweringSystem nor a MemorySystem" in bad.error and "\n" not in bad.error
    with pytest.raises(BadInput, match="^Plug-in 'forty-two' from package products is broken"):
        get_answering("forty-two", AnsweringOptions())
    from agentmemgate.evaluate import available_systems

    lines = {x.name: x for x in available_systems() if x.kind == "plug-in"}
    assert not lines["forty-two"].available and lines["quiet"].available
    assert lines["full-context"].note.startswith("shadowed by the built-in full-context")
