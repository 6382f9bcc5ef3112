"""The profile store and the staging area, by hand: intervals, corrections, plans, snapshots."""

from __future__ import annotations

from agentmemgate.memory import FieldKey, ProfileStore, StagingArea
from agentmemgate.memory.profile_store import snapshot

K = FieldKey(attribute="grocery_store")
OTHER = FieldKey(attribute="gym")


def test_commits_make_half_open_intervals_and_reads_return_the_current_value():
    s = ProfileStore()
    assert s.read(K) is None
    assert s.commit(K, "Safeway", 2)
    assert s.commit(K, "Trader Joe's", 7)
    assert s.read(K) == "Trader Joe's"
    h = s.history(K)
    assert [(iv.value, iv.t_begin, iv.t_end, iv.never_valid, iv.via) for iv in h] == [
        ("Safeway", 2, 7, False, "commit"),
        ("Trader Joe's", 7, None, False, "commit"),
    ]


def test_restating_the_current_value_writes_nothing():
    s = ProfileStore()
    s.commit(K, "Trader Joe's", 1)
    assert not s.commit(K, "trader joe's", 5)
    assert len(s.history(K)) == 1


def test_a_correction_marks_the_old_interval_never_valid():
    s = ProfileStore()
    s.commit(K, "Safeway", 0)
    assert s.correct(K, "Kroger", 4)
    first, second = s.history(K)
    assert (first.t_end, first.never_valid) == (4, True)
    assert (second.value, second.via, second.never_valid) == ("Kroger", "correction", False)
    assert s.read(K) == "Kroger"


def test_no_cross_field_inference():
    s = ProfileStore()
    s.commit(K, "Safeway", 0)
    s.commit(OTHER, "Equinox", 1)
    s.correct(OTHER, "Crunch Fitness", 2)
    assert s.read(K) == "Safeway" and len(s.history(K)) == 1


def test_plan_entries_are_masked_and_refresh_turns_them_into_facts():
    s = ProfileStore()
    s.commit(K, "Safeway", 0)
    assert s.commit_plan(K, "Aldi", 3)
    assert not s.commit_plan(K, "aldi", 5)  # the same open plan is not written twice
    assert s.read(K) == "Safeway"  # reads skip plan-typed entries
    assert [iv.value for iv in s.open_plans(K)] == ["Aldi"]
    assert s.refresh(K, "Aldi", 9)
    assert s.read(K) == "Aldi" and s.open_plans(K) == []
    h = s.history(K)
    assert [(iv.value, iv.plan, iv.t_begin, iv.t_end, iv.via) for iv in h] == [
        ("Safeway", False, 0, 9, "commit"),
        ("Aldi", True, 3, 9, "commit"),
        ("Aldi", False, 9, None, "refresh"),
    ]
    assert not s.refresh(K, "Kroger", 10)


def test_a_plan_with_no_fact_before_it_reads_as_abstention():
    s = ProfileStore()
    s.commit_plan(K, "Aldi", 0)
    assert s.read(K) is None


def test_staged_items_end_promoted_discarded_or_pending_and_snapshots_serialize():
    s, h = ProfileStore(), StagingArea()
    s.commit(K, "Safeway", 0)
    a = h.stage(K, "Aldi", "confirm if ...", "abandon if ...", 2)
    b = h.stage(OTHER, "Equinox", "c", "a", 3)
    h.stage(K, "Kroger", "c", "a", 4)
    assert h.find_pending(K, "aldi") is a
    assert [i.value for i in h.pending(before=4)] == ["Aldi", "Equinox"]
    h.resolve(a, "promoted", 6)
    h.resolve(b, "discarded", 7)
    snap = snapshot(s, h, 7, [K])
    assert [(x.value, x.status, x.resolved_at) for x in snap.staged] == [
        ("Aldi", "promoted", 6),
        ("Equinox", "discarded", 7),
        ("Kroger", "pending", None),
    ]
    assert snap.fields[0].current == "Safeway"  # staged items never show in reads
    again = type(snap).model_validate_json(snap.model_dump_json())
    assert again == snap


def test_snapshots_list_registered_fields_even_when_empty():
    snap = snapshot(ProfileStore(), StagingArea(), -1, [K])
    assert [(f.key, f.current, f.history) for f in snap.fields] == [(K, None, [])]
