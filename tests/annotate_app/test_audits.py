"""Creating audits from sources, sampling, assignment, tokens, import/export, the label log."""

from __future__ import annotations

import collections
import json
import sqlite3
import threading

import pandas as pd
import pytest

from agentmemgate.annotate_app import (
    ItemDisplay,
    SourceItem,
    adjudication_queue,
    annotator_queue,
    create_audit,
    export_audit,
    get_audit,
    import_labels,
    list_audits,
    record_label,
    register_source,
    relink,
    resolve_token,
)
from agentmemgate.errors import BadInput, UnknownLevel
from agentmemgate.workspace import Workspace

from .conftest import STATEMENTS, token_of


def refs(ws, audit):
    return dict(
        ws.db.execute("select item_id, label from audit_references where audit = ?", [audit])
    )


def payloads(ws, audit):
    return {
        i: ItemDisplay.model_validate_json(p)
        for i, p in ws.db.execute(
            "select item_id, payload from audit_items where audit = ?", [audit]
        )
    }


def test_evidence_type_items_from_arcs_follow_the_design(arcs_ws):
    made = create_audit(arcs_ws, "ev", "evidence_type", "arcs:core")
    assert refs(arcs_ws, "ev") == {
        "core-outcome-came_true-000:s0t0": "other",  # initial value
        "core-outcome-came_true-000:s0t2": "speculation",  # plan
        "core-outcome-came_true-000:s1t0": "completed_event",  # confirmation
        "core-outcome-abandoned-001:s0t0": "other",
        "core-outcome-abandoned-001:s0t2": "speculation",
        "core-outcome-abandoned-001:s1t0": "other",  # abandonment
        "core-outcome-open-002:s0t0": "other",
        "core-outcome-open-002:s0t2": "speculation",
        "core-outcome-open-002:s1t0": "speculation",  # still pending
        "core-outcome-completed_change-003:s0t0": "other",
        "core-outcome-completed_change-003:s0t2": "completed_event",  # control: change reported done
    }
    assert made.n_items == made.n_references == 11
    shown = payloads(arcs_ws, "ev")["core-outcome-came_true-000:s1t0"]
    # Up to two preceding turns, across the session boundary, each with its date; target last.
    assert [t.text for t in shown.turns] == [
        "I might switch to Gold's Gym.",
        "Tell me more.",
        "Switching to Gold's Gym happened this week.",
    ]
    assert shown.target == 2 and shown.turns[2].date == "2024-01-09"
    assert payloads(arcs_ws, "ev")["core-outcome-came_true-000:s0t0"].turns[0].role == "user"


def test_difficulty_and_realism_from_arcs(built_ws):
    with pytest.raises(BadInput, match="mixes factors"):
        create_audit(built_ws, "d", "difficulty", "arcs:controlled")
    made = create_audit(built_ws, "d", "difficulty:hedge_strength", "arcs:controlled")
    info = get_audit(built_ws, "d")
    assert info.label_set.ordered and info.label_set.labels[0] == "strongly_hedged"
    arcs = {a.id: a for a in built_ws.arcs("controlled") if a.spec.factor == "hedge_strength"}
    assert made.n_items == len(arcs) and refs(built_ws, "d") == {
        i: a.spec.level for i, a in arcs.items()
    }
    for item_id, d in payloads(built_ws, "d").items():
        a = arcs[item_id]
        assert d.kind == "conversation" and d.turns[d.target].text == a.turn(a.plan_turn).text

    made = create_audit(built_ws, "r", "realism", "arcs:core")
    core = list(built_ws.arcs("core"))
    assert made.n_items == 2 * len(core) and made.n_references == 0
    groups = collections.Counter(d.group for d in payloads(built_ws, "r").values())
    assert groups == {"natural": len(core), "motivated": len(core)}

    with pytest.raises(BadInput, match="no equivalence items"):
        create_audit(built_ws, "e", "equivalence", "arcs")


def test_ids_and_samples_do_not_depend_on_row_order(ws, tmp_path):
    rows = [dict(x, meta={"kind": x["reference"]}) for x in STATEMENTS]
    fwd, rev = tmp_path / "f.jsonl", tmp_path / "r.jsonl"
    fwd.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rev.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    a = create_audit(ws, "a", "evidence_type", str(fwd), sample_n=3, seed=7)
    b = create_audit(ws, "b", "evidence_type", str(rev), sample_n=3, seed=7)
    assert a.n_items == b.n_items == 3
    assert set(payloads(ws, "a")) == set(payloads(ws, "b"))


def test_a_sample_larger_than_the_source_freezes_all_and_says_so(ws, tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in STATEMENTS))
    made = create_audit(ws, "all", "evidence_type", str(src), sample_n=len(STATEMENTS) + 5)
    assert made.n_items == len(STATEMENTS)
    said = [line for line in made.lines() if "--sample" in line]
    assert said == [
        f"--sample {len(STATEMENTS) + 5} asks for more items than the source has: all "
        f"{len(STATEMENTS)} are frozen"
    ]
    exact = create_audit(ws, "exact", "evidence_type", str(src), sample_n=len(STATEMENTS))
    assert not any("--sample" in line for line in exact.lines())


def test_stratified_sample_is_even_across_strata(ws, tmp_path):
    rows = [{"id": f"s{i}", "text": "maybe", "reference": "speculation"} for i in range(20)] + [
        {"id": f"c{i}", "text": "done", "reference": "explicit_correction"} for i in range(3)
    ]
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    create_audit(ws, "st", "evidence_type", str(src), sample_n=8, stratify_by="reference")
    assert collections.Counter(refs(ws, "st").values()) == {
        "speculation": 5,
        "explicit_correction": 3,
    }
    with pytest.raises(BadInput, match="Cannot stratify by 'colour'"):
        create_audit(ws, "st2", "evidence_type", str(src), stratify_by="colour")


def test_overlap_assigns_each_item_to_k_annotators(ws, statements_file):
    made = create_audit(
        ws,
        "o",
        "evidence_type",
        str(statements_file),
        annotators=["a", "b", "c"],
        overlap=2,
        seed=1,
    )
    per_item = collections.Counter(
        i for (i,) in ws.db.execute("select item_id from audit_assignments where audit = 'o'")
    )
    assert set(per_item.values()) == {2} and len(per_item) == 4
    assert sorted(made.assignments.values()) == [2, 3, 3]
    orders = {
        p: [q.display.id for q in annotator_queue(ws, token_of(u))] for p, u in made.links.items()
    }
    assert all(len(v) == made.assignments[p] for p, v in orders.items())
    with pytest.raises(BadInput, match="--overlap 4 is more than the 3"):
        create_audit(
            ws, "o2", "evidence_type", str(statements_file), annotators=["a", "b", "c"], overlap=4
        )


def test_tokens_are_secret_and_per_person(ws, statements_file):
    made = create_audit(
        ws, "t", "evidence_type", str(statements_file), annotators=["ana", "ben"], adjudicator="dee"
    )
    dump = "\n".join(ws.db.conn.iterdump())
    for url in list(made.links.values()) + [made.adjudicator_link]:
        assert url.startswith("http://127.0.0.1:8501/?token=")
        assert token_of(url) not in dump  # only hashes are stored
    assert resolve_token(ws, token_of(made.links["ben"])).name == "ben"
    assert resolve_token(ws, token_of(made.adjudicator_link)).role == "adjudicator"
    new = relink(ws, "t", "ben")
    with pytest.raises(BadInput, match="not valid"):
        resolve_token(ws, token_of(made.links["ben"]))
    assert resolve_token(ws, token_of(new)).name == "ben"
    with pytest.raises(BadInput, match="also an annotator"):
        create_audit(
            ws, "t2", "evidence_type", str(statements_file), annotators=["ana"], adjudicator="ana"
        )


def test_relink_points_where_the_audits_links_point(ws, statements_file):
    made = create_audit(
        ws,
        "lab",
        "evidence_type",
        str(statements_file),
        annotators=["ana"],
        base_url="http://lab.example:8600/amg",
    )
    assert made.links["ana"].startswith("http://lab.example:8600/amg/?token=")
    assert relink(ws, "lab", "ana").startswith("http://lab.example:8600/amg/?token=")
    moved = relink(ws, "lab", "ana", "https://audit.example")  # the app has moved: kept from now on
    assert moved.startswith("https://audit.example/?token=")
    assert relink(ws, "lab", "ana").startswith("https://audit.example/?token=")
    assert get_audit(ws, "lab").base_url == "https://audit.example"
    with pytest.raises(BadInput, match="must look like"):
        relink(ws, "lab", "ana", "ftp://x")
    assert get_audit(ws, "lab").base_url == "https://audit.example"
    # an audit that recorded none (made before links were recorded): the default address
    ws.db.execute("update audits set base_url = null where name = 'lab'")
    ws.db.conn.commit()
    assert relink(ws, "lab", "ana").startswith("http://127.0.0.1:8501/?token=")


def test_record_label_checks_the_queue_and_the_label(ws, statements_file):
    made = create_audit(
        ws, "q", "evidence_type", str(statements_file), annotators=["a", "b"], overlap=1
    )
    a = token_of(made.links["a"])
    mine = {q.display.id for q in annotator_queue(ws, a)}
    other = next(x["id"] for x in STATEMENTS if x["id"] not in mine)
    with pytest.raises(BadInput, match="not in this person's queue"):
        record_label(ws, a, other, "other")
    with pytest.raises(BadInput, match="not in the evidence_type label set"):
        record_label(ws, a, next(iter(mine)), "maybe")
    with pytest.raises(BadInput, match="not an adjudicator"):
        adjudication_queue(ws, a)
    record_label(ws, a, next(iter(mine)), "can't tell")
    assert ws.db.execute("select label from audit_labels").fetchone()[0] == "cant_tell"


def test_label_log_is_append_only(ws, statements_file):
    made = create_audit(ws, "ap", "evidence_type", str(statements_file))
    tok = token_of(made.links["annotator"])
    record_label(ws, tok, "ID-done-2", "other")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        ws.db.execute("update audit_labels set label = 'speculation'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        ws.db.execute("delete from audit_labels")


def test_two_annotators_writing_at_once_lose_nothing(ws, tmp_path):
    rows = [{"id": f"i{i}", "text": f"statement {i}"} for i in range(60)]
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    made = create_audit(ws, "c", "evidence_type", str(src), annotators=["ana", "ben"])
    errors = []

    def work(who: str) -> None:
        try:
            mine = Workspace(ws.path)  # each annotator's session has its own connection
            tok = token_of(made.links[who])
            for _ in range(3):
                for q in annotator_queue(mine, tok):
                    record_label(mine, tok, q.display.id, "other", active_seconds=1.0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in ("ana", "ben")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ws.db.execute("select count(*) from audit_labels").fetchone()[0] == 2 * 3 * 60


def test_bad_sources_and_tasks(ws, tmp_path, statements_file):
    with pytest.raises(UnknownLevel, match="Unknown task 'vibes'"):
        create_audit(ws, "x", "vibes", str(statements_file))
    with pytest.raises(BadInput, match="Unknown source 'nowhere:1'"):
        create_audit(ws, "x", "evidence_type", "nowhere:1")
    with pytest.raises(BadInput, match="No arcs"):
        create_audit(ws, "x", "evidence_type", "arcs")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "ok"}\n{"id": "b", "txt": "typo"}\n')
    with pytest.raises(BadInput, match="bad.jsonl:2: txt"):
        create_audit(ws, "x", "evidence_type", str(bad))
    bad.write_text('{"id": "a", "text": "ok"}\n{"id": "a", "text": "twice"}\n')
    with pytest.raises(BadInput, match="item id 'a' twice"):
        create_audit(ws, "x", "evidence_type", str(bad))
    bad.write_text('{"id": "a", "turns": [{"text": "hi"}], "target": 3}\n')
    with pytest.raises(BadInput) as e:  # an ItemDisplay rule: one readable line, not pydantic's
        create_audit(ws, "x", "evidence_type", str(bad))
    assert str(e.value) == "bad.jsonl:1: target 3 is not a turn index (0..0)"
    bad.write_text('{"id": "a", "text": "ok", "reference": "maybe"}\n')
    with pytest.raises(BadInput, match="reference label 'maybe'"):
        create_audit(ws, "x", "evidence_type", str(bad))
    create_audit(ws, "x", "evidence_type", str(statements_file))
    with pytest.raises(BadInput, match="already exists"):
        create_audit(ws, "x", "evidence_type", str(statements_file))
    with pytest.raises(BadInput, match="No audit named 'y'"):
        get_audit(ws, "y")


def test_other_rooms_register_sources(ws, monkeypatch):
    from agentmemgate.annotate_app import sources

    def pairs(req):
        assert req.arg == "judge-v1" and req.task == "equivalence"
        for i, (a, b, verdict) in enumerate(
            [("NYC", "New York City", "equivalent"), ("Boston", "Seattle", "not_equivalent")]
        ):
            yield SourceItem(
                display=ItemDisplay(
                    id=f"{req.arg}:{i}", kind="pair", pair={"field": "home_city", "a": a, "b": b}
                ),
                reference={"label": verdict, "source": "judge"},
            )

    monkeypatch.setitem(sources.SOURCES, "testpairs", pairs)  # removed after the test
    register_source("testpairs", pairs, tasks=("equivalence",), help="testpairs:NAME")
    made = create_audit(ws, "eq", "equivalence", "testpairs:judge-v1")
    assert made.n_references == 2
    q = annotator_queue(ws, token_of(made.links["annotator"]))
    assert {x.display.pair.b for x in q} == {"New York City", "Seattle"}
    assert dict(ws.db.execute("select item_id, source from audit_references")) == {
        "judge-v1:0": "judge",
        "judge-v1:1": "judge",
    }
    with pytest.raises(BadInput, match="has no evidence_type items"):
        create_audit(ws, "eq2", "evidence_type", "testpairs:judge-v1")


def test_import_creates_an_audit_and_export_writes_the_log(ws, tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,annotator,label\nx1,ana,equivalent\nx2,ana,Not_Equivalent\n"
        "x1,ben,can't tell\nx2,ben,not_equivalent\n"
    )
    res = import_labels(ws, "imp", labels)
    assert res.created and res.task == "equivalence" and res.n_items == 2
    reference = tmp_path / "ref.csv"
    reference.write_text("item_id,label,source\nx1,equivalent,judge\nx2,not_equivalent,judge\n")
    assert import_labels(ws, "imp", reference, reference=True).reference
    assert refs(ws, "imp") == {"x1": "equivalent", "x2": "not_equivalent"}

    labels.write_text("item_id,annotator,label\nx1,ana,not_equivalent\n")
    import_labels(ws, "imp", labels)  # appended: the latest label counts
    paths = export_audit(ws, "imp", tmp_path / "out")
    assert [p.name for p in paths] == ["labels.csv", "labels.jsonl", "items.csv", "references.csv"]
    assert pd.read_csv(paths[2])["item_id"].tolist() == ["x1", "x2"]
    df = pd.read_csv(paths[0])
    assert len(df) == 5 and df["is_latest"].sum() == 4
    assert (
        df.loc[df["is_latest"] & (df.annotator == "ana") & (df.item_id == "x1"), "label"].item()
        == "not_equivalent"
    )
    assert len(pd.read_json(paths[1], lines=True)) == 5
    summary = {s.name: s for s in list_audits(ws)}["imp"]
    assert summary.n_labels == 5 and summary.annotators == {"ana": "2/2", "ben": "2/2"}


def test_import_keeps_each_person_to_one_role(ws, tmp_path, statements_file):
    """An adjudicator's name in an annotator CSV would count their resolutions as annotator labels
    and inflate human-human agreement; an exported log (with its role column) imports back whole."""
    made = create_audit(
        ws, "a", "evidence_type", str(statements_file), annotators=["ana", "ben"], adjudicator="dee"
    )
    for who in ("ana", "ben"):
        tok = token_of(made.links[who])
        for q in annotator_queue(ws, tok):
            record_label(ws, tok, q.display.id, "speculation" if who == "ana" else "other")
    record_label(ws, token_of(made.adjudicator_link), "ID-spec-1", "speculation")
    f = tmp_path / "l.csv"
    f.write_text("item_id,annotator,label\nID-spec-1,dee,other\n")
    with pytest.raises(BadInput, match="'dee' is the adjudicator of audit 'a'"):
        import_labels(ws, "a", f)
    f.write_text("item_id,annotator,label,role\nID-spec-1,ana,other,adjudicator\n")
    with pytest.raises(BadInput, match="'ana' is an annotator of audit 'a'"):
        import_labels(ws, "a", f)
    f.write_text("item_id,annotator,label,role\nID-spec-1,zed,other,boss\n")
    with pytest.raises(BadInput, match="role 'boss'"):
        import_labels(ws, "a", f)

    paths = export_audit(ws, "a", tmp_path / "out")
    res = import_labels(ws, "copy", paths[0])
    assert (res.annotators, res.adjudicators) == (["ana", "ben"], ["dee"])
    from agentmemgate.annotate_app import agreement_report

    before, after = agreement_report(ws, "a"), agreement_report(ws, "copy")
    assert after.percent_agreement == before.percent_agreement
    assert after.n_labels == before.n_labels == 8
    assert after.adjudication.n_resolved == 1


@pytest.mark.parametrize(
    "content, needle",
    [
        ("item_id,label\nx1,equivalent\n", "missing column(s) annotator"),
        ("item_id,annotator,label\nx1,ana,\n", "row 2: empty label"),
        ("item_id,annotator,label\nx1,ana,bogus\n", "row 2: Label 'bogus'"),
        ("item_id,annotator,label\nzzz,ana,equivalent\n", "not in audit 'base'"),
        ("", "the file is empty"),
        ('item_id,annotator,label\n"x1,ana\n', "not a readable CSV"),
    ],
)
def test_import_refuses_bad_files(ws, tmp_path, content, needle):
    ok = tmp_path / "ok.csv"
    ok.write_text("item_id,annotator,label\nx1,ana,equivalent\n")
    import_labels(ws, "base", ok)
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    with pytest.raises(BadInput) as e:
        import_labels(ws, "base", bad)
    assert needle in str(e.value)


def test_queue_carries_no_reference_and_no_colleague_label(ws, statements_file):
    made = create_audit(ws, "b", "evidence_type", str(statements_file), annotators=["ana", "ben"])
    ana, ben = token_of(made.links["ana"]), token_of(made.links["ben"])
    for q in annotator_queue(ws, ben):
        record_label(ws, ben, q.display.id, "explicit_correction")
    queue = annotator_queue(ws, ana)
    assert len(queue) == 4 and all(q.own_label is None for q in queue)
    dumped = json.dumps([q.model_dump() for q in queue])
    for hidden in (
        "speculation",
        "completed_event",
        "explicit_correction",
        "ben",
        "design",
        "import",
    ):
        assert hidden not in dumped
