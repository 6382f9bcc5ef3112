"""Open audits: one study link, assignment as people arrive (K per item, N per person, reclaim,
resume, full), gold, attention and qualification checks, completion and screen-out codes."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections import Counter

import pytest

from agentmemgate.annotate_app import create_audit, queues
from agentmemgate.annotate_app.study import FULL, SLOT_TAKEN, StudyOptions
from agentmemgate.errors import BadInput
from agentmemgate.workspace import Workspace

LABELS = ["speculation", "other", "completed_event"]


def source(tmp_path, n: int = 12):
    rows = [
        {"id": f"S{i:02d}", "text": f"Statement number {i}", "reference": LABELS[i % 3]}
        for i in range(n)
    ]
    p = tmp_path / "items.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p, {r["id"]: r["reference"] for r in rows}


def open_audit(tmp_path, n: int = 12, **opts):
    p, refs = source(tmp_path, n)
    ws = Workspace(tmp_path / "ws")
    sample = opts.pop("sample", None)
    made = create_audit(
        ws, "crowd", "evidence_type", str(p), study=StudyOptions(**opts), sample_n=sample
    )
    return ws, made, made.study_link.split("study=", 1)[1], refs


def expected(ws) -> dict[str, str]:
    """The label every item expects: the references, and the checks' labels."""
    out = dict(ws.db.execute("select item_id, label from audit_references").fetchall())
    out.update(ws.db.execute("select item_id, label from audit_checks").fetchall())
    return out


def work(ws, token, answer, limit: int = 1000) -> queues.StudyState:
    """Label the person's queue to the end, answering ``answer(item_id)``."""
    for _ in range(limit):
        items = queues.annotator_queue(ws, token)
        state = queues.study_state(ws, token)
        todo = [it for it in items if it.own_label is None]
        if state.status != "working" or not todo:
            return state
        queues.record_label(ws, token, todo[0].display.id, answer(todo[0].display.id))
    raise AssertionError("the queue did not end")


def counts(ws, people=None) -> Counter:
    """Distinct labelers per regular item, among people not screened out."""
    rows = ws.db.execute(
        "select l.item_id, count(distinct l.annotator) from audit_labels l join "
        "audit_participants p on p.audit = l.audit and p.name = l.annotator where "
        "p.status != 'screened_out' and l.item_id not in (select item_id from audit_checks) "
        "group by l.item_id"
    ).fetchall()
    return Counter(dict(rows))


def test_an_open_audit_prints_one_study_link_and_no_personal_links(tmp_path):
    ws, made, token, _ = open_audit(tmp_path, overlap=2, per_person=4)
    text = "\n".join(made.lines())
    assert made.links == {} and made.study_link.startswith("http://127.0.0.1:8501/?study=")
    assert "each item to 2 different people, 4 per person" in text
    assert "PROLIFIC_PID" in text
    assert ws.db.execute("select count(*) from audit_annotators").fetchone()[0] == 0


def test_an_arrival_without_an_id_gets_one_line_and_no_items(tmp_path):
    ws, _, token, _ = open_audit(tmp_path)
    a = queues.arrive(ws, token, {"STUDY_ID": "x"})
    assert a.token is None and "PROLIFIC_PID" in a.message and "\n" not in a.message
    with pytest.raises(BadInput, match="study link is not valid"):
        queues.arrive(ws, "not-the-token", {"PROLIFIC_PID": "a"})
    assert ws.db.execute("select count(*) from audit_participants").fetchone()[0] == 0


def test_another_id_parameter_and_the_platform_ids_are_recorded(tmp_path):
    ws, _, token, _ = open_audit(tmp_path, id_param="workerId")
    assert queues.arrive(ws, token, {"PROLIFIC_PID": "x"}).token is None
    a = queues.arrive(ws, token, {"workerId": "A1B2", "STUDY_ID": "st", "SESSION_ID": "se"})
    row = ws.db.execute(
        "select name, platform_id, study_id, session_id, status from audit_participants"
    ).fetchone()
    assert row == (a.name, "A1B2", "st", "se", "working")


def test_every_item_gets_k_different_people_and_no_one_more_than_n(tmp_path):
    k, n_items, per = 3, 12, 5
    ws, _, token, refs = open_audit(tmp_path, n=n_items, overlap=k, per_person=per)
    people = []
    for i in range(20):
        a = queues.arrive(ws, token, {"PROLIFIC_PID": f"W{i}"})
        if a.token is None:
            assert a.message == FULL
            continue
        people.append(a.name)
        work(ws, a.token, lambda item: refs[item])
    assert counts(ws) == Counter({i: k for i in refs})
    per_person = Counter(
        a for (a,) in ws.db.execute("select annotator from audit_labels").fetchall()
    )
    assert max(per_person.values()) <= per
    # no one labeled an item twice (the log has one row per person and item)
    rows = ws.db.execute("select annotator, item_id from audit_labels").fetchall()
    assert len(rows) == len(set(rows)) == k * n_items
    # the study filled up: enough people came, and the rest were told so
    assert len(people) == -(-k * n_items // per) and len(people) < 20
    assert queues.arrive(ws, token, {"PROLIFIC_PID": "late"}).message == FULL


def test_a_returning_person_resumes_their_own_queue(tmp_path):
    ws, _, token, refs = open_audit(tmp_path, overlap=2, per_person=4)
    first = queues.arrive(ws, token, {"PROLIFIC_PID": "ann"})
    items = queues.annotator_queue(ws, first.token)
    queues.record_label(ws, first.token, items[0].display.id, "other")
    held = [it.display.id for it in queues.annotator_queue(ws, first.token)]
    again = queues.arrive(ws, token, {"PROLIFIC_PID": "ann"})
    assert again.returning and again.name == first.name and again.token != first.token
    back = queues.annotator_queue(ws, again.token)
    assert [it.display.id for it in back] == held
    assert back[0].own_label == "other" and back[1].own_label is None
    assert queues.study_state(ws, again.token).planned == 4


def _idle(ws, name: str, minutes: float) -> None:
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=minutes)
    ws.db.execute(
        "update audit_participants set last_seen_at = ? where name = ?",
        [past.isoformat(timespec="milliseconds"), name],
    )
    ws.db.conn.commit()


def test_an_idle_hold_goes_back_to_the_pool_and_a_late_label_is_refused(tmp_path):
    ws, _, token, refs = open_audit(tmp_path, n=1, overlap=1, reclaim_after_minutes=30)
    a = queues.arrive(ws, token, {"PROLIFIC_PID": "slow"})
    (item,) = queues.annotator_queue(ws, a.token)
    assert queues.arrive(ws, token, {"PROLIFIC_PID": "other"}).message == FULL  # held
    _idle(ws, a.name, 31)
    b = queues.arrive(ws, token, {"PROLIFIC_PID": "quick"})
    assert b.token and [it.display.id for it in queues.annotator_queue(ws, b.token)] == [
        item.display.id
    ]
    with pytest.raises(BadInput) as e:
        queues.record_label(ws, a.token, item.display.id, "other")
    assert str(e.value) == SLOT_TAKEN
    # the slow person's queue no longer has it; the study has nothing more for them
    assert queues.annotator_queue(ws, a.token) == []
    assert queues.study_state(ws, a.token).status == "full"
    queues.record_label(ws, b.token, item.display.id, "other")
    assert counts(ws) == Counter({item.display.id: 1})


def test_a_hold_idle_but_not_taken_is_kept_when_its_person_returns(tmp_path):
    ws, _, token, _ = open_audit(tmp_path, n=3, overlap=1)
    a = queues.arrive(ws, token, {"PROLIFIC_PID": "slow"})
    (item,) = queues.annotator_queue(ws, a.token)
    _idle(ws, a.name, 90)
    queues.record_label(ws, a.token, item.display.id, "other")  # nobody took the slot
    assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 1


def test_arrivals_at_once_never_give_an_item_more_than_k_people(tmp_path):
    """Eight people arriving and labeling in parallel threads, each with its own connection."""
    ws, _, token, refs = open_audit(tmp_path, n=10, overlap=2, per_person=3)
    errors = []

    def person(i: int) -> None:
        try:
            mine = Workspace(ws.path)
            a = queues.arrive(mine, token, {"PROLIFIC_PID": f"T{i}"})
            if a.token:
                work(mine, a.token, lambda item: refs[item])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=person, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert max(counts(ws).values()) <= 2
    assert sum(counts(ws).values()) == min(8 * 3, 2 * 10)


# -- checks ------------------------------------------------------------------------------------
def test_gold_and_attention_items_are_mixed_in_and_never_audited(tmp_path):
    ws, made, token, refs = open_audit(tmp_path, n=12, overlap=1, per_person=3, gold=2, attention=2)
    kinds = dict(ws.db.execute("select item_id, kind from audit_checks").fetchall())
    assert Counter(kinds.values()) == Counter({"gold": 2, "attention": 2})
    assert made.n_items == 10  # the two gold items come out of the audited items
    audited = {i for (i,) in ws.db.execute("select item_id from audit_references")}
    assert not audited & set(kinds)
    a = queues.arrive(ws, token, {"PROLIFIC_PID": "x"})
    want = expected(ws)
    state = work(ws, a.token, lambda item: want[item])
    assert state.status == "done" and state.planned == 3 + 2 + 2
    seen = [i for (i,) in ws.db.execute("select item_id from audit_labels order by id")]
    assert set(kinds) <= set(seen)
    # attention items read like any item and say which label to choose
    payloads = [
        json.loads(p)
        for (p,) in ws.db.execute(
            "select payload from audit_items where item_id like 'attention-%'"
        ).fetchall()
    ]
    assert all(set(p) == set(json.loads(made_payload(ws))) for p in payloads)
    assert all("choose" in p["turns"][p["target"]]["text"] for p in payloads)


def made_payload(ws) -> str:
    return ws.db.execute(
        "select payload from audit_items where item_id = (select min(item_id) from "
        "audit_references)"
    ).fetchone()[0]


def test_checks_sit_at_other_places_for_each_person(tmp_path):
    ws, _, token, refs = open_audit(tmp_path, n=30, overlap=5, per_person=6, gold=2, attention=2)
    want = expected(ws)
    kinds = dict(ws.db.execute("select item_id, kind from audit_checks").fetchall())
    orders = set()
    for i in range(5):
        a = queues.arrive(ws, token, {"PROLIFIC_PID": f"P{i}"})
        work(ws, a.token, lambda item: want[item])
        rows = ws.db.execute(
            "select item_id from audit_assignments where annotator = ? order by position",
            [a.name],
        ).fetchall()
        orders.add(tuple(kinds.get(r[0], "item") for r in rows))
    assert len(orders) > 1


def test_a_person_below_the_gold_mark_is_screened_out_and_their_items_reopen(tmp_path):
    ws, _, token, refs = open_audit(
        tmp_path,
        n=12,
        overlap=1,
        per_person=4,
        gold=2,
        min_gold_accuracy=0.5,
        completion_code="C-DONE",
        screenout_code="C-OUT",
        redirect="https://example.org/done?cc={code}",
    )
    want = expected(ws)
    bad = queues.arrive(ws, token, {"PROLIFIC_PID": "bad"})
    state = work(ws, bad.token, lambda item: "explicit_correction")  # every gold item wrong
    assert state.status == "screened_out" and state.code == "C-OUT"
    assert state.redirect == "https://example.org/done?cc=C-OUT"
    reason = ws.db.execute("select reason from audit_participants").fetchone()[0]
    assert reason.startswith("gold: 0 of")
    assert sum(counts(ws).values()) == 0  # their labels count for nothing: items reopen
    good = queues.arrive(ws, token, {"PROLIFIC_PID": "good"})
    state = work(ws, good.token, lambda item: want[item])
    assert (state.status, state.code) == ("done", "C-DONE")
    assert state.redirect == "https://example.org/done?cc=C-DONE"
    assert sum(counts(ws).values()) == 4


def test_too_many_attention_failures_screen_a_person_out(tmp_path):
    ws, _, token, _ = open_audit(
        tmp_path, n=12, overlap=1, per_person=3, attention=3, max_attention_failures=1
    )
    want = expected(ws)
    a = queues.arrive(ws, token, {"PROLIFIC_PID": "x"})
    fails = []

    def answer(item):
        if item.startswith("attention"):
            fails.append(item)
            return "cant_tell"  # never what an attention check asks for
        return want[item]

    state = work(ws, a.token, answer)
    assert state.status == "screened_out" and len(fails) == 2


def test_the_qualification_round_shows_each_answer_and_has_a_pass_mark(tmp_path):
    ws, _, token, _ = open_audit(tmp_path, n=12, overlap=1, per_person=2, qualify=2, qualify_pass=1)
    want = expected(ws)
    quals = [i for (i,) in ws.db.execute("select item_id from audit_checks where kind='qualify'")]
    a = queues.arrive(ws, token, {"PROLIFIC_PID": "x"})
    first = queues.annotator_queue(ws, a.token)[0].display.id
    assert first in quals  # the round comes first
    fb = queues.record_label(ws, a.token, first, want[first])
    assert fb.startswith("Practice item: right, the answer is")
    second = [it for it in queues.annotator_queue(ws, a.token) if it.own_label is None][0]
    fb = queues.record_label(ws, a.token, second.display.id, "cant_tell")
    assert fb.startswith("Practice item: the answer is")
    assert queues.study_state(ws, a.token).status == "screened_out"


def test_open_options_are_refused_in_one_line(tmp_path):
    p, _ = source(tmp_path)
    ws = Workspace(tmp_path / "w")
    cases = [
        (dict(overlap=0), "--overlap"),
        (dict(min_gold_accuracy=0.5), "--gold N"),
        (dict(redirect="https://x.org/done"), "{code}"),
        (dict(gold=20), "needs 20 items with a reference label"),
        (dict(completion_code="a b"), "--completion-code"),
    ]
    for opts, words in cases:
        with pytest.raises(BadInput) as e:
            create_audit(ws, "o", "evidence_type", str(p), study=StudyOptions(**opts))
        assert words in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(BadInput, match="drop --annotators"):
        create_audit(ws, "o", "evidence_type", str(p), annotators=["a"], study=StudyOptions())


def test_gold_from_a_file_of_its_own(tmp_path):
    p, _ = source(tmp_path, n=6)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"id": f"G{i}", "text": f"gold {i}", "reference": "other"}) + "\n"
            for i in range(3)
        )
    )
    ws = Workspace(tmp_path / "w")
    made = create_audit(
        ws, "g", "evidence_type", str(p), study=StudyOptions(gold=3), gold_from=str(gold)
    )
    assert made.n_items == 6
    assert {i for (i,) in ws.db.execute("select item_id from audit_checks")} == {"G0", "G1", "G2"}

    gold.write_text(json.dumps({"id": "G9", "text": "gold", "reference": "bogus"}) + "\n")
    with pytest.raises(BadInput, match=f"^{re.escape(str(gold))}: item 'G9' has reference label"):
        create_audit(
            ws, "g2", "evidence_type", str(p), study=StudyOptions(gold=1), gold_from=str(gold)
        )


def two_careful_one_screened(tmp_path, **options) -> Workspace:
    """An open audit of 12 statements (``options`` to ``StudyOptions``, overlap 3 and 10 per
    person by default): two careful people, then one who answers everything wrong and fails."""
    p, _ = source(tmp_path, n=12)
    ws = Workspace(tmp_path / "ws")
    made = create_audit(
        ws, "crowd", "evidence_type", str(p),
        study=StudyOptions(**{"overlap": 3, "per_person": 10, **options}),
    )  # fmt: skip
    study = made.study_link.split("study=")[1]
    want = expected(ws)
    for pid in ("a", "b"):
        work(ws, queues.arrive(ws, study, {"PROLIFIC_PID": pid}).token, lambda i: want[i])
    bad = queues.arrive(ws, study, {"PROLIFIC_PID": "bad"})
    work(ws, bad.token, lambda i: "explicit_correction")
    return ws


def test_disagreements_leave_out_checks_and_screened_out_people(tmp_path):
    """The viewer's list of disagreements reads the labels agreement reads: the screened-out
    person's wrong answers and the check items are not disagreements."""
    from agentmemgate.annotate_app.disagreements import audit_disagreements

    ws = two_careful_one_screened(tmp_path, gold=2, attention=1, max_attention_failures=0)
    screened = ws.db.execute(
        "select count(*) from audit_participants where status = 'screened_out'"
    ).fetchone()[0]
    assert screened == 1
    assert audit_disagreements(ws, "crowd") == []
