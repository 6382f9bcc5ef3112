"""amg import: arcs in the data.jsonl export format, all or nothing, ids and provenance kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from validate.planted import planted

from agentmemgate.cli import app
from agentmemgate.errors import AmgError
from agentmemgate.exports import export
from agentmemgate.generate import generate, get_renderer
from agentmemgate.generate.importer import import_arcs
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args):
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A small offline build exported once: OUT/<split>/data.jsonl."""
    root = tmp_path_factory.mktemp("exp")
    ws = Workspace(root / "ws")
    generate(
        ws,
        get_renderer("offline"),
        ["core", "heldout", "controlled", "corrections"],
        seed=3,
        n_per_cell=1,
        show_progress=False,
    )
    export(ws, root / "out", ["core", "heldout", "controlled", "corrections"])
    return root / "out"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_round_trip_keeps_ids_provenance_and_bytes(exported, tmp_path):
    splits = ("core", "heldout", "controlled", "corrections")
    for split in splits:
        res = amg(
            "import", str(exported / split / "data.jsonl"), "--workspace", str(tmp_path / "ws")
        )
        assert res.exit_code == 0, res.output
        assert "structural checks:" in res.output and "new" in res.output
        n = len(_lines(exported / split / "data.jsonl"))
        assert f"structural checks: {n}/{n} arcs pass" in res.output
    ws = Workspace(tmp_path / "ws", create=False)
    export(ws, tmp_path / "again", list(splits))
    for split in splits:
        assert (tmp_path / "again" / split / "data.jsonl").read_bytes() == (
            exported / split / "data.jsonl"
        ).read_bytes(), split
    # available to validation and audits like generated arcs
    assert amg("validate", "--workspace", str(tmp_path / "ws"), "--no-progress").exit_code == 0
    res = amg(
        "audit",
        "create",
        "imp",
        "--task",
        "realism",
        "--from",
        "arcs:heldout",
        "--workspace",
        str(tmp_path / "ws"),
    )
    assert res.exit_code == 0, res.output


def test_a_malformed_line_is_refused_with_its_number_and_nothing_is_imported(exported, tmp_path):
    lines = (exported / "core" / "data.jsonl").read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:2] + ['{"id": "x", "split": '] + lines[2:]) + "\n")
    res = amg("import", str(bad), "--workspace", str(tmp_path / "ws"))
    assert res.exit_code == 1 and "bad.jsonl line 3: not valid JSON" in res.output
    assert "nothing was imported" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "ws").exists()  # the file is checked before a workspace is made

    record = _lines(exported / "core" / "data.jsonl")[0]
    del record["plan_turn"]
    res = amg(
        "import",
        str(
            _write(
                tmp_path / "missing.jsonl", [_lines(exported / "core" / "data.jsonl")[1], record]
            )
        ),
        "--workspace",
        str(tmp_path / "ws"),
    )
    assert (
        res.exit_code == 1
        and (f"missing.jsonl line 2 (arc {record['id']!r}): plan_turn: Field required")
        in res.output
    )

    record = _lines(exported / "core" / "data.jsonl")[0]
    record["plan_value"] = record["initial_value"]
    res = amg(
        "import",
        str(_write(tmp_path / "same.jsonl", [record])),
        "--workspace",
        str(tmp_path / "ws"),
    )
    assert res.exit_code == 1 and res.output.count("\n") == 1
    assert (
        f"same.jsonl line 1 (arc {record['id']!r}): initial_value and plan_value must differ "
        f"(both are {record['initial_value']!r})"
    ) in res.output
    assert "Value error" not in res.output

    record = _lines(exported / "core" / "data.jsonl")[0]
    record["plan_turn"] = {"session": 9, "turn": 0}
    res = amg(
        "import", str(_write(tmp_path / "ref.jsonl", [record])), "--workspace", str(tmp_path / "ws")
    )
    assert (
        res.exit_code == 1
        and "plan_turn points to session 9 turn 0, which does not exist" in res.output
    )

    first = _lines(exported / "core" / "data.jsonl")[0]
    res = amg(
        "import",
        str(_write(tmp_path / "dup.jsonl", [first, first])),
        "--workspace",
        str(tmp_path / "ws"),
    )
    assert res.exit_code == 1 and "already appears on line 1" in res.output

    ws = Workspace(tmp_path / "ws2")
    with pytest.raises(AmgError):
        import_arcs(ws, bad)
    assert ws.arc_ids() == set()


def test_same_content_is_left_alone_other_content_needs_replace(exported, tmp_path):
    path = exported / "heldout" / "data.jsonl"
    ws = tmp_path / "ws"
    assert amg("import", str(path), "--workspace", str(ws)).exit_code == 0
    again = amg("import", str(path), "--workspace", str(ws))
    assert again.exit_code == 0 and "new 0, replaced 0, unchanged" in again.output

    records = _lines(path)
    records[1]["sessions"][0]["turns"][0]["text"] += " Edited by hand."
    edited = _write(tmp_path / "edited.jsonl", records)
    res = amg("import", str(edited), "--workspace", str(ws))
    assert (
        res.exit_code == 1
        and f"id '{records[1]['id']}' is already in the workspace with other content" in res.output
    )
    assert "--replace" in res.output
    res = amg("import", str(edited), "--workspace", str(ws), "--replace")
    assert res.exit_code == 0 and "replaced 1" in res.output
    stored = next(Workspace(ws, create=False).arcs(ids=[records[1]["id"]]))
    assert stored.sessions[0].turns[0].text.endswith("Edited by hand.")


def test_split_option_and_lines_without_a_split(exported, tmp_path):
    records = _lines(exported / "core" / "data.jsonl")
    for r in records:
        r.pop("split")
    path = _write(tmp_path / "nosplit.jsonl", records)
    res = amg("import", str(path), "--workspace", str(tmp_path / "ws"))
    assert res.exit_code == 1 and "no 'split'; pass --split" in res.output
    res = amg("import", str(path), "--workspace", str(tmp_path / "ws"), "--split", "core")
    assert res.exit_code == 0, res.output
    assert {a.spec.split for a in Workspace(tmp_path / "ws", create=False).arcs()} == {"core"}
    res = amg("import", str(path), "--workspace", str(tmp_path / "w2"), "--split", "nope")
    assert res.exit_code == 1 and "Unknown split 'nope'" in res.output


def test_a_build_will_not_replace_imported_arcs(exported, tmp_path):
    assert (
        amg(
            "import", str(exported / "core" / "data.jsonl"), "--workspace", str(tmp_path / "ws")
        ).exit_code
        == 0
    )
    res = amg(
        "build",
        "--split",
        "core",
        "--workspace",
        str(tmp_path / "ws"),
        "--out",
        str(tmp_path / "o"),
        "--no-progress",
    )
    n = len(_lines(exported / "core" / "data.jsonl"))
    assert res.exit_code == 1 and f"holds {n} imported arc(s)" in res.output
    assert len(list(Workspace(tmp_path / "ws", create=False).arcs("core"))) == n


def test_planted_bad_arcs_import_and_their_checks_flag_them(tmp_path):
    cases = planted()
    records = [a.export_record() for arcs, _ in cases.values() for a in arcs]
    path = _write(tmp_path / "planted.jsonl", records)
    res = amg("import", str(path), "--workspace", str(tmp_path / "ws"))
    assert res.exit_code in (0, 2), res.output
    res = amg(
        "validate", "--checks", "realism", "--workspace", str(tmp_path / "ws"), "--no-progress"
    )
    assert res.exit_code == 0, res.output
    data = json.loads(
        amg("report", "validation", "--json", "--workspace", str(tmp_path / "ws")).stdout
    )
    flagged = {(f["arc_id"], f["check"]) for f in data["failing_arcs"]}
    for name, (arcs, check) in cases.items():
        for arc in arcs:
            assert (arc.id, f"realism.{check}") in flagged, name
