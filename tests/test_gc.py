"""``fewer_collections`` (``amg build``): fewer garbage collections, the same objects freed."""

import gc
import weakref

from agentmemgate._gc import fewer_collections


class _Node:
    pass


def test_restores_thresholds_and_unfreezes():
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with fewer_collections(threshold=5000):
        assert gc.get_threshold()[0] >= 5000
        assert gc.get_freeze_count() > 0  # what was alive before is not scanned
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_restores_after_an_error():
    before = gc.get_threshold()
    try:
        with fewer_collections():
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.get_threshold() == before


def test_cycles_made_inside_are_still_collected():
    with fewer_collections():
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: only the cyclic collector frees it
        ref = weakref.ref(a)
        del a, b
        gc.collect()
        assert ref() is None


def _young_collections(work) -> int:
    """How many young-generation collections ``work()`` set off."""
    before = gc.get_stats()[0]["collections"]
    work()
    return gc.get_stats()[0]["collections"] - before


def _allocate() -> int:
    kept = [[] for _ in range(50_000)]  # containers: each allocation counts towards a collection
    return len(kept)


def test_as_a_decorator_the_same_work_runs_with_fewer_collections():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's defaults, whatever ran before
    try:
        plain = _young_collections(_allocate)
        fewer = _young_collections(fewer_collections()(_allocate))
        assert fewer_collections()(_allocate)() == 50_000  # the result passes through
        assert gc.get_threshold() == (700, 10, 10)  # restored after each call
    finally:
        gc.set_threshold(*before)
    assert plain >= 50  # every 700 allocations
    assert fewer < plain / 5


def test_paused_restores_the_collector_and_frees_cycles_after():
    from agentmemgate._gc import paused

    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        a = _Node()
        a.me = a
        ref = weakref.ref(a)
        del a
    assert gc.isenabled()
    gc.collect()
    assert ref() is None
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()


def test_an_offline_build_pauses_the_collector_and_restores_it(tmp_path, monkeypatch):
    import agentmemgate._gc as G
    from agentmemgate.pipeline import build

    seen = []
    real = G.gc.disable

    def disable():
        seen.append("disabled")
        real()

    monkeypatch.setattr(G.gc, "disable", disable)
    before = gc.get_threshold()
    build(tmp_path / "ws", tmp_path / "out", split="core", n_per_cell=1, show_progress=False)
    assert seen == ["disabled"] and gc.isenabled() and gc.get_threshold() == before
