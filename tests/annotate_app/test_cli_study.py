"""`amg audit create --open` and `amg audit add` through typer's CliRunner."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.annotate_app import annotator_queue, queues
from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args: str):
    return runner.invoke(app, list(args))


def _src(tmp_path, n=9):
    p = tmp_path / "s.jsonl"
    labels = ["speculation", "other", "completed_event"]
    p.write_text(
        "".join(
            json.dumps({"id": f"S{i}", "text": f"t {i}", "reference": labels[i % 3]}) + "\n"
            for i in range(n)
        )
    )
    return str(p)


def test_create_open_prints_one_study_link(tmp_path):
    w = str(tmp_path / "ws")
    res = amg(
        "audit", "create", "crowd", "--task", "evidence_type", "--from", _src(tmp_path),
        "--open", "--overlap", "2", "--per-person", "4", "--gold", "1", "--attention", "1",
        "--completion-code", "DONE7", "--id-param", "workerId", "--workspace", w,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    links = [line.strip() for line in res.output.splitlines() if "?study=" in line]
    assert len(links) == 2 and links[1].endswith("&workerId=TEST1 to try it yourself")
    assert "?token=" not in res.output
    assert (
        "each item to 2 different people, 4 per person; checks: 1 gold, 1 attention" in res.output
    )
    token = links[0].split("study=")[1]
    ws = Workspace(w)
    a = queues.arrive(ws, token, {"workerId": "W1"})
    assert len(annotator_queue(ws, a.token)) == 1


def test_open_options_without_open_and_open_with_a_roster_are_refused(tmp_path):
    w = str(tmp_path / "ws")
    base = ["audit", "create", "c", "--task", "evidence_type", "--from", _src(tmp_path)]
    res = amg(*base, "--gold", "2", "--workspace", w)
    assert res.exit_code == 1 and "--gold applies to open audits: add --open" in res.output
    res = amg(*base, "--open", "--annotators", "a,b", "--workspace", w)
    assert res.exit_code == 1 and "drop --annotators" in res.output
    res = amg(*base, "--open", "--redirect", "https://x.org/", "--workspace", w)
    assert res.exit_code == 1 and "{code}" in res.output
    assert len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "options, message",
    [
        (["--redirect", "https://x.org/?cc={code}"], "--redirect needs --completion-code"),
        (
            ["--gold", "1", "--min-gold-accuracy", "0.5", "--completion-code", "C1"],
            "give --screenout-code too",
        ),
        (["--per-person", "2", "--attention", "3"], "--attention 3 is more attention items"),
    ],
)
def test_a_study_that_would_leave_people_without_a_code_is_refused(tmp_path, options, message):
    w = str(tmp_path / "ws")
    base = ["audit", "create", "c", "--task", "evidence_type", "--from", _src(tmp_path)]
    res = amg(*base, "--open", *options, "--workspace", w)
    assert res.exit_code == 1 and message in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_add_people_to_a_fixed_audit(tmp_path):
    w = str(tmp_path / "ws")
    src = _src(tmp_path, n=6)
    res = amg(
        "audit", "create", "lab", "--task", "evidence_type", "--from", src,
        "--annotators", "ann,bob", "--overlap", "1", "--workspace", w,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    res = amg("audit", "add", "lab", "dan", "eve", "--items", "2", "--workspace", w)
    assert res.exit_code == 0, res.output
    links = dict(
        line.strip().split(": ", 1) for line in res.output.splitlines() if "?token=" in line
    )
    assert set(links) == {"dan (2 items)", "eve (2 items)"}
    ws = Workspace(w)
    dan = annotator_queue(ws, links["dan (2 items)"].split("token=")[1])
    eve = annotator_queue(ws, links["eve (2 items)"].split("token=")[1])
    assert not {q.display.id for q in dan} & {q.display.id for q in eve}  # least covered first
    res = amg("audit", "add", "lab", "dan", "--workspace", w)
    assert res.exit_code == 1 and "already has 'dan'" in res.output
    res = amg("audit", "relink", "lab", "dan", "--workspace", w)
    assert res.exit_code == 0 and "?token=" in res.output
    res = amg("audit", "add", "lab", "fay", "--workspace", w)  # default: every item
    assert "fay (6 items)" in res.output


def test_add_refuses_an_open_audit(tmp_path):
    w = str(tmp_path / "ws")
    amg("audit", "create", "o", "--task", "evidence_type", "--from", _src(tmp_path), "--open",
        "--workspace", w)  # fmt: skip
    res = amg("audit", "add", "o", "dan", "--workspace", w)
    assert res.exit_code == 1 and "study link" in res.output
