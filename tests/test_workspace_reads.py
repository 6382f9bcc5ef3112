"""``Workspace.read_cache``: repeated reads inside one step parse once and read the same rows."""

from __future__ import annotations

from agentmemgate.validate.store import load_verdicts
from agentmemgate.workspace import Workspace


def test_arcs_and_verdicts_read_inside_the_cache_equal_fresh_reads(small_build):
    root, _ = small_build
    ws = Workspace(root / "ws", create=False)
    splits = ["core", "controlled"]
    fresh_core = list(ws.arcs("core"))
    fresh = load_verdicts(ws, ["recovery", "realism"], splits=splits)
    assert fresh and {r.split for r in fresh} == set(splits)
    with ws.read_cache():
        first = list(ws.arcs("core"))
        again = list(ws.arcs("core"))
        assert [a is b for a, b in zip(first, again)] == [True] * len(first)  # parsed once
        assert [a.model_dump() for a in first] == [a.model_dump() for a in fresh_core]
        some = {first[0].id}
        assert [a.id for a in ws.arcs("core", ids=some)] == [first[0].id]
        assert load_verdicts(ws, ["recovery", "realism"], splits=splits) == fresh
        assert load_verdicts(ws, ["recovery"], splits=["core"]) == [
            r for r in fresh if r.task == "recovery" and r.split == "core"
        ]
    assert ws._reads is None
    assert list(ws.arcs("core"))[0] is not first[0]  # outside the block: parsed again


def test_nested_read_cache_keeps_the_outer_one(small_build):
    root, _ = small_build
    ws = Workspace(root / "ws", create=False)
    with ws.read_cache():
        a = next(ws.arcs("core"))
        with ws.read_cache():
            assert next(ws.arcs("core")) is a
        assert next(ws.arcs("core")) is a  # the inner exit did not drop it
