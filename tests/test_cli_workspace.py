"""A mistyped --workspace is refused, and a refused command leaves nothing on disk."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import paper_design

runner = CliRunner()

# Commands that may create a workspace;
# every other command needs an existing one.
CREATING = {
    "build",
    "generate",
    "audit create",
    "audit import",
    "statements import",
    "mine hedges",
    "import",
    "natural build",
    "catalog propose",
}
# Commands that read no workspace (what is installed, the corpus files).
NO_WORKSPACE = {
    "eval systems",
    "design show",
    "design check",
    "design init",
    "catalog check",
    "corpora fetch",
    "corpora list",
}
# Every other command, with the arguments it needs to get as far as opening the workspace.
REFUSING = {
    "export": [],
    "validate": [],
    "validate equivalence-pairs": [],
    "annotate": [],
    "report validation": [],
    "report equivalence": [],
    "report agreement": ["a1"],
    "report classifier": ["set1"],
    "classify": ["--statements", "set1"],
    "audit export": ["a1"],
    "audit list": [],
    "audit relink": ["a1", "ana"],
    "audit add": ["a1", "dan"],
    "audit items": ["a1"],
    "audit labels": ["a1"],
    "audit people": ["a1"],
    "view": [],
    "statements sample": ["set1", "--size", "2"],
    "statements label": ["set1", "--voters", "offline"],
    "statements list": [],
    "usage": [],
    "eval run": [],
    "eval answers": ["answers.jsonl", "--name", "mem0"],
    "eval show": ["arc-000000000000", "--system", "literal-gated"],
    "eval check": ["--system", "literal-gated", "--min-task-accuracy", "0.5"],
    "report eval": [],
    "natural list": [],
    "natural show": ["set1"],
}


def _leaf_commands(cmd, path=()):
    subs = getattr(cmd, "commands", None)
    if not subs:
        yield " ".join(path)
        return
    if path and getattr(cmd, "invoke_without_command", False):
        yield " ".join(path)
    for name, sub in subs.items():
        yield from _leaf_commands(sub, path + (name,))


def test_every_command_is_classified():
    leaves = set(_leaf_commands(get_command(app)))
    unknown = leaves - CREATING - set(REFUSING) - NO_WORKSPACE
    assert not unknown, (
        f"classify {sorted(unknown)}: may they create a workspace (CREATING) or "
        "must they refuse a folder without workspace.db (REFUSING)?"
    )


@pytest.mark.parametrize("command", sorted(REFUSING))
def test_mistyped_workspace_is_refused_and_nothing_created(tmp_path, command):
    typo = tmp_path / "amg-wrkspace"
    res = runner.invoke(app, command.split() + REFUSING[command] + ["--workspace", str(typo)])
    assert res.exit_code == 1, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("Error: No workspace at ") and str(typo) in lines[0]
    assert "--workspace" in lines[0]
    assert not typo.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def empty_locomo(tmp_path):
    path = tmp_path / "locomo-empty.json"
    path.write_text(
        json.dumps(
            [
                {
                    "sample_id": "conv-x",
                    "conversation": {
                        "speaker_a": "Ann",
                        "speaker_b": "Bo",
                        "session_1_date_time": "1:56 pm on 8 May, 2023",
                        "session_1": [],
                    },
                }
            ]
        )
    )
    return path


def _rejected(tmp_path, empty_locomo):
    csv = tmp_path / "labels.csv"
    csv.write_text("item_id,label\nx,yes\n")  # no annotator column
    return {
        "unknown split": (["build", "--split", "nope"], "Unknown split 'nope'"),
        "unknown generator": (["build", "--generator", "bogus"], "Unknown generator 'bogus'"),
        "n-per-cell too big": (
            ["build", "--split", "core", "--n-per-cell", "100000"],
            "--n-per-cell 100000",
        ),
        "same-family judge": (
            [
                "build",
                "--split",
                "core",
                "--n-per-cell",
                "1",
                "--generator",
                "scripted:a",
                "--judge",
                "scripted:b",
            ],
            "same family",
        ),
        "generate, missing key": (
            ["generate", "--generator", "openai:gpt-4o-mini"],
            "OPENAI_API_KEY",
        ),
        "audit from nowhere": (
            ["audit", "create", "a1", "--task", "evidence_type", "--from", "nowhere:1"],
            "Unknown source",
        ),
        "audit import, bad csv": (["audit", "import", "a1", str(csv)], "missing column"),
        "statements import, no file": (
            ["statements", "import", "s", str(tmp_path / "no.jsonl")],
            "no.jsonl",
        ),
        "mine an empty corpus": (
            ["mine", "hedges", str(empty_locomo), "--no-progress"],
            "locomo-empty.json: 1 LoCoMo sample but no turns to mine",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown split",
        "unknown generator",
        "n-per-cell too big",
        "same-family judge",
        "generate, missing key",
        "audit from nowhere",
        "audit import, bad csv",
        "statements import, no file",
        "mine an empty corpus",
    ],
)
def test_rejected_arguments_leave_nothing_on_disk(tmp_path, empty_locomo, case):
    args, needle = _rejected(tmp_path, empty_locomo)[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    ws = tmp_path / "new" / "ws"
    res = runner.invoke(app, args + ["--workspace", str(ws)])
    assert res.exit_code == 1, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert not (tmp_path / "new").exists(), "a refused command left a workspace behind"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_dry_run_leaves_no_workspace(tmp_path):
    res = runner.invoke(app, ["build", "--dry-run", "--workspace", str(tmp_path / "ws")])
    assert res.exit_code == 0, res.output
    n = sum(paper_design().arcs_in(s) for s in paper_design().splits)
    assert f"{n} arcs planned, {n} to render, 0 model calls" in res.output
    assert not (tmp_path / "ws").exists()


def test_refused_command_keeps_an_existing_workspace(tmp_path):
    ws = tmp_path / "ws"
    assert (
        runner.invoke(
            app,
            [
                "build",
                "--split",
                "core",
                "--n-per-cell",
                "1",
                "--no-progress",
                "--workspace",
                str(ws),
                "--out",
                str(tmp_path / "out"),
            ],
        ).exit_code
        == 0
    )
    res = runner.invoke(app, ["build", "--generator", "bogus", "--workspace", str(ws)])
    assert res.exit_code == 1
    assert (ws / "workspace.db").is_file()
    assert (
        runner.invoke(
            app, ["export", "--workspace", str(ws), "--out", str(tmp_path / "out")]
        ).exit_code
        == 0
    )


def test_empty_corpus_is_an_error_naming_file_and_expectation(tmp_path, empty_locomo):
    res = runner.invoke(
        app,
        ["mine", "hedges", str(empty_locomo), "--no-progress", "--workspace", str(tmp_path / "ws")],
    )
    assert res.exit_code == 1
    assert res.output.strip() == (
        "Error: locomo-empty.json: 1 LoCoMo sample but no turns to mine "
        "(expected 'conversation': session_N lists of {speaker, text} "
        "turns)"
    )
    lme = tmp_path / "lme.json"
    lme.write_text(
        json.dumps(
            [
                {
                    "question_id": "q1",
                    "haystack_sessions": [[{"role": "assistant", "content": "Hello!"}]],
                    "haystack_dates": ["2023/05/20 (Sat) 02:21"],
                    "haystack_session_ids": ["s1"],
                }
            ]
        )
    )
    res = runner.invoke(
        app, ["mine", "hedges", str(lme), "--no-progress", "--workspace", str(tmp_path / "ws")]
    )
    assert res.exit_code == 1
    assert "lme.json: 1 LongMemEval instance but no user turns to mine" in res.output


def _can_mount_read_only() -> bool:
    if not shutil.which("unshare") or sys.platform != "linux":
        return False
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(
    not _can_mount_read_only(), reason="needs unshare -m (a private mount namespace)"
)
@pytest.mark.slow
def test_read_only_workspace_is_said_plainly(tmp_path):
    """A real read-only file system (a bind mount in a private mount namespace), not a chmod."""
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    amg = Path(sys.executable).with_name("amg")
    subprocess.run(
        [
            str(amg),
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--no-progress",
            "--workspace",
            str(src / "ws"),
            "--out",
            str(src / "out"),
        ],
        check=True,
        capture_output=True,
    )
    script = (
        f"mount --bind {src} {ro} && mount -o remount,bind,ro {ro} && "
        f"for args in 'audit list --workspace {ro}/ws' 'export --workspace {ro}/ws' "
        f"'build --split core --workspace {ro}/new --out {tmp_path}/out' "
        f"'build --split core --workspace {tmp_path}/ws2 --out {ro}/out2'; "
        f"do {amg} $args; echo \"exit=$?\"; done"
    )
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    assert [line for line in lines if line.startswith("exit=")] == ["exit=1"] * 4, lines
    assert len(errors) == 4, lines
    for line in errors[:3]:
        assert "is read-only: it is on a read-only file system" in line, line
    assert errors[3] == (
        f"Error: Cannot write output folder '{ro}/out2' in '{ro}', which is on a "
        "read-only file system"
    )
    assert not any("Errno" in line or "unable to open database file" in line for line in errors)
    assert not (tmp_path / "ws2").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "command", [["validate", "--no-progress"], ["export"], ["export", "--split", "heldout"]]
)
def test_nothing_to_check_or_export_is_an_error(tmp_path, command):
    from agentmemgate.workspace import Workspace

    Workspace(tmp_path / "ws")  # a workspace with no arcs (e.g. made by `amg audit import`)
    res = runner.invoke(
        app,
        command
        + [
            "--workspace",
            str(tmp_path / "ws"),
            *(["--out", str(tmp_path / "out")] if "export" in command else []),
        ],
    )
    assert res.exit_code == 1
    assert res.output.startswith("Error: No arcs ") and "run `amg build`" in res.output
    assert not (tmp_path / "out").exists()


def test_out_defaults_to_the_workspaces_own_folder_unless_it_is_the_default_one(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(
        app, ["build", "--split", "core", "--n-per-cell", "1", "--workspace", "ws1"]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ws1" / "exports" / "core" / "data.jsonl").is_file()
    assert not (tmp_path / "exports").exists()
    res = runner.invoke(
        app, ["export", "--split", "core", "--workspace", "ws1", "--out", "elsewhere"]
    )
    assert res.exit_code == 0 and (tmp_path / "elsewhere" / "core" / "data.jsonl").is_file()


def test_a_file_given_as_workspace_is_named_a_file(tmp_path):
    """A command that may make its workspace, pointed at a file (one meant for --from, say)."""
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "I might move", "reference": "other"}) + "\n")
    res = runner.invoke(
        app,
        ["audit", "create", "a", "--task", "evidence_type", "--from", str(items),
         "--annotators", "ana", "--workspace", str(items)],
    )  # fmt: skip
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"Error: Workspace {str(items)!r} is a file; a workspace is a folder (pass the folder "
        "that holds workspace.db as --workspace)"
    ]
