"""The one registry mechanism every kind of named plug-in uses."""

from __future__ import annotations

import pytest

from agentmemgate.errors import BadInput, ModelSpecError
from agentmemgate.registry import Registry, offline_version, split_spec


def test_register_lookup_and_a_close_name_suggested():
    r: Registry[int] = Registry("widget")
    r.register("alpha", 1)

    @r.register("beta", help="the second")
    def beta() -> int:
        return 2

    assert r.lookup("alpha") == 1 and r.lookup("beta") is beta
    assert list(r) == ["alpha", "beta"] and r.entry("beta").info == {"help": "the second"}
    with pytest.raises(BadInput) as e:
        r.lookup("alpah")
    assert (
        str(e.value) == "Unknown widget 'alpah'; did you mean 'alpha'?; choose one of: alpha, beta"
    )
    assert r.get("nothing") is None  # the mapping's get: no error


def test_hidden_entries_resolve_but_are_never_offered():
    r: Registry[str] = Registry("generator", error=ModelSpecError)
    r.register("offline", "o")
    r.register("scripted", "s", hidden=True)
    assert r.lookup("scripted") == "s" and r.is_hidden("scripted")
    assert r.names() == ["offline"] and r.names(hidden=True) == ["offline", "scripted"]
    with pytest.raises(ModelSpecError, match="choose one of: offline$"):
        r.lookup("scriptd")


def test_built_ins_load_on_first_use_and_never_replace_a_user_registration():
    loads = []
    r: Registry[str] = Registry(
        "thing", load=lambda: (loads.append(1), r.register("x", "builtin", replace=False))
    )
    r.register("x", "mine")
    assert loads == []
    assert r.lookup("x") == "mine" and loads == [1]
    assert len(r) == 1 and loads == [1]  # loaded once


def test_specs_and_pinned_offline_versions():
    assert split_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert split_spec("offline") == ("offline", None) and split_spec("openai:") == ("openai", "")
    assert offline_version("offline", "lexicon") is None
    assert offline_version("offline:lexicon", "lexicon", also=("offline:lexicon",)) is None
    assert offline_version("offline:lexicon.v2", "lexicon") == 2
    assert offline_version("offline:answer_cues.v1", "lexicon") is False
    assert offline_version("openai:gpt-4o-mini", "lexicon") is False
