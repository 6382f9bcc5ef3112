"""Statement sets: import from JSONL, stratified samples of mined corpora, audits of agreed items."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.corpora import (
    import_statements,
    list_sets,
    load_set,
    mine_hedges,
    sample_statements,
)
from agentmemgate.corpora.statements import update_reference
from agentmemgate.errors import BadInput

from .paths import LOCOMO, LONGMEMEVAL

runner = CliRunner()


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_import_normalizes_labels_and_keeps_two_context_turns(ws, tmp_path):
    f = _write(
        tmp_path / "s.jsonl",
        [
            {
                "id": "a",
                "text": "I might move to Seattle.",
                "reference": "Speculative",
                "context": [
                    {"speaker": "user", "text": "one"},
                    {"speaker": "assistant", "text": "two"},
                    {"speaker": "user", "text": "three"},
                ],
            },
            {"id": "b", "text": "I moved last week.", "label": "completed event", "extra": 1},
            {"id": "c", "text": "Actually it was Tuesday.", "reference": "correction"},
            {"id": "d", "text": "I love jazz."},
            "",
        ],
    )
    assert import_statements(ws, "mine", f, license="CC BY 4.0") == 4
    items = load_set(ws, "mine")
    assert [s.reference for s in items] == [
        "speculation",
        "completed_event",
        "explicit_correction",
        None,
    ]
    assert [s.reference_status for s in items] == ["imported"] * 3 + [None]
    assert [c.text for c in items[0].context] == ["two", "three"]
    assert items[0].license == "CC BY 4.0" and items[0].origin == "import:s.jsonl"
    info = list_sets(ws)[0]
    assert (info.name, info.n, info.with_reference) == ("mine", 4, 3)


@pytest.mark.parametrize(
    "rows, message",
    [
        (['{"id": "a", "text": "x"}', "{nope"], "s.jsonl:2: not JSON"),
        ([{"id": "a"}], "s.jsonl:1: text: Field required"),
        (
            [{"id": "a", "text": "x", "reference": "maybe"}],
            "s.jsonl:1: unknown evidence type 'maybe'",
        ),
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "Statement id 'a' occurs twice"),
        ([{"id": "a", "text": "  "}], "s.jsonl:1: empty text"),
    ],
)
def test_bad_import_lines_are_named_and_nothing_is_saved(ws, tmp_path, rows, message):
    f = _write(tmp_path / "s.jsonl", rows)
    with pytest.raises(BadInput, match=message.replace("(", r"\(")):
        import_statements(ws, "bad", f)
    assert list_sets(ws) == []


def test_existing_set_needs_replace(ws, tmp_path):
    f = _write(tmp_path / "s.jsonl", [{"id": "a", "text": "x"}])
    import_statements(ws, "s", f)
    with pytest.raises(BadInput, match="exists; pick another name or pass --replace"):
        import_statements(ws, "s", f)
    assert import_statements(ws, "s", f, replace=True) == 1


def test_stratified_sample_is_balanced_and_seeded(ws):
    mine_hedges(ws, LOCOMO)
    mine_hedges(ws, LONGMEMEVAL)
    n = sample_statements(ws, "nat", 12, seed=3)
    items = load_set(ws, "nat")
    assert n == len(items) == 12
    strata = {s.stratum for s in items}
    assert {"locomo/rejected", "longmemeval/rejected"} <= strata
    assert all(s.license for s in items) and all(s.text for s in items)
    assert {s.corpus for s in items} == {"locomo", "longmemeval"}
    again = sample_statements(ws, "nat2", 12, seed=3)
    assert again == 12 and [s.id for s in load_set(ws, "nat2")] == [s.id for s in items]
    by_corpus = sample_statements(ws, "c", 4, stratify_by=("corpus",), allocation="proportional")
    assert by_corpus == 4
    only = sample_statements(ws, "l", 3, sources=["locomo_sample.json"], stratify_by=("source",))
    assert only == 3 and {s.corpus for s in load_set(ws, "l")} == {"locomo"}
    with pytest.raises(BadInput, match="No mined source 'nope.json'"):
        sample_statements(ws, "x", 4, sources=["nope.json"])
    with pytest.raises(BadInput, match="Cannot stratify by color"):
        sample_statements(ws, "x", 4, stratify_by=("color",))


def test_sample_needs_mined_sources(ws):
    with pytest.raises(BadInput, match="run `amg mine hedges` first"):
        sample_statements(ws, "x", 4)


def test_audit_source_serves_agreed_items_without_their_labels(ws, tmp_path):
    from agentmemgate.annotate_app import create_audit, load_source

    f = _write(
        tmp_path / "s.jsonl",
        [
            {
                "id": f"s{i}",
                "text": f"I might move to town {i}.",
                "speaker": "Jon",
                "context": [{"speaker": "Gina", "text": "hi"}],
            }
            for i in range(4)
        ],
    )
    import_statements(ws, "set", f)
    update_reference(ws, "set", "s0", "speculation", "agreed", "speculation")
    update_reference(ws, "set", "s1", "other", "agreed", "other")
    update_reference(ws, "set", "s2", "speculation", "disputed", "other")
    items = load_source(ws, "statements:set", "evidence_type")
    assert [i.id for i in items] == ["s0", "s1"]
    shown = items[0].display
    assert [t.text for t in shown.turns] == ["hi", "I might move to town 0."] and shown.target == 1
    assert shown.turns[1].speaker == "Jon" and shown.turns[1].role == "other"
    assert "speculation" not in shown.model_dump_json()  # the label travels beside, not inside
    assert items[0].reference.label == "speculation" and items[0].reference.source == "model"
    assert [i.id for i in load_source(ws, "statements:set@disputed", "evidence_type")] == ["s2"]
    assert len(load_source(ws, "statements:set@all", "evidence_type")) == 4
    with pytest.raises(BadInput, match="Unknown selector @nope"):
        load_source(ws, "statements:set@nope", "evidence_type")
    created = create_audit(ws, "a1", "evidence_type", "statements:set")
    assert (created.n_items, created.n_references) == (2, 2)  # agreed items only, labels hidden
    disputed = create_audit(ws, "a2", "evidence_type", "statements:set@disputed")
    assert (disputed.n_items, disputed.n_references) == (1, 1)


def test_cli_import_and_list(tmp_path):
    ws = str(tmp_path / "ws")
    f = _write(
        tmp_path / "s.jsonl", [{"id": "a", "text": "I might move.", "reference": "speculation"}]
    )
    r = runner.invoke(app, ["statements", "import", "s", str(f), "--workspace", ws])
    assert r.exit_code == 0 and "1 statements imported" in r.output
    r = runner.invoke(app, ["statements", "list", "--workspace", ws])
    assert "s: 1 statements (imported 1)" in r.output
    r = runner.invoke(app, ["statements", "list", "s", "--workspace", ws])
    assert r.output.startswith("a\timported\tspeculation\t-\tI might move.")
    r = runner.invoke(app, ["statements", "list", "s", "--json", "--workspace", ws])
    assert json.loads(r.output)[0]["reference"] == "speculation"
    r = runner.invoke(
        app, ["statements", "import", "t", str(tmp_path / "missing.jsonl"), "--workspace", ws]
    )
    assert r.exit_code == 1 and r.output.startswith(
        f"Error: No such file: '{tmp_path / 'missing.jsonl'}'"
    )
    r = runner.invoke(app, ["statements", "sample", "x", "--size", "3", "--workspace", ws])
    assert r.exit_code == 1 and "run `amg mine hedges` first" in r.output
