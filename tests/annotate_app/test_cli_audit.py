"""The audit commands through typer's CliRunner: output users see, one-line errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.annotate_app import annotator_queue, record_label
from agentmemgate.annotate_app.server import streamlit_command
from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args: str):
    return runner.invoke(app, list(args))


def test_create_list_label_report_export(tmp_path, statements_file):
    w = str(tmp_path / "ws")
    res = amg(
        "audit",
        "create",
        "a1",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--annotators",
        "ana,ben",
        "--adjudicator",
        "dee",
        "--seed",
        "3",
        "--workspace",
        w,
    )
    assert res.exit_code == 0, res.output
    links = dict(
        line.strip().split(": ", 1) for line in res.output.splitlines() if "?token=" in line
    )
    assert set(links) == {"ana (4 items)", "ben (4 items)", "dee (adjudicator)"}
    assert "4 evidence_type items, 4 with a reference label" in res.output

    ws = Workspace(w)
    for url in (links["ana (4 items)"], links["ben (4 items)"]):
        tok = url.split("token=")[1]
        for q in annotator_queue(ws, tok):
            record_label(ws, tok, q.display.id, "speculation", active_seconds=5)

    res = amg("audit", "list", "--workspace", w)
    assert res.exit_code == 0 and "a1\tevidence_type\t4 items" in res.output
    assert "ana 4/4" in res.output

    res = amg("report", "agreement", "a1", "--workspace", w)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("# Agreement report: a1\n")  # the report itself, as markdown
    assert "## Human-human agreement" in res.stdout and "Cohen's kappa" in res.stdout
    folder = tmp_path / "ws" / "reports" / "agreement-a1"
    assert res.stderr.strip() == (
        f"wrote {folder / 'report.md'}, {folder / 'report.json'} and 2 PNG(s)"
    )
    assert (folder / "report.md").read_text() + "\n" == res.stdout
    res = amg("report", "agreement", "a1", "--html", "--workspace", w)
    assert res.exit_code == 0, res.output
    assert res.stderr.strip() == (
        f"wrote {folder / 'report.md'}, {folder / 'report.json'}, "
        f"{folder / 'report.html'} and 2 PNG(s)"
    )
    assert "<h1>Agreement report: a1</h1>" in (folder / "report.html").read_text()

    res = amg("report", "agreement", "a1", "--json", "--workspace", w)
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output)
    assert obj["n_items"] == 4 and obj["n_annotators"] == 2
    assert set(obj["percent_agreement"]) >= {"value", "ci_low", "ci_high", "n"}
    assert set(obj["krippendorff_alpha"]) >= {"value", "level"}
    assert set(obj["cohen_kappa_pairs"][0]) >= {"a", "b", "kappa", "n"}
    v = obj["vs_reference"]
    assert set(v) >= {"agreement", "kappa", "per_class", "macro_f1", "confusion"}
    assert set(v["agreement"]) >= {"value", "ci_low", "ci_high", "n"}
    assert set(v["per_class"]["speculation"]) >= {
        "precision",
        "precision_ci_low",
        "precision_ci_high",
        "recall",
        "recall_ci_low",
        "recall_ci_high",
        "support",
    }
    assert 0 <= v["agreement"]["value"] <= 1

    res = amg("audit", "export", "a1", "--out", str(tmp_path / "x"), "--workspace", w)
    assert res.exit_code == 0
    assert [p.rsplit("/", 1)[1] for p in res.output.split()] == [
        "labels.csv",
        "labels.jsonl",
        "items.csv",
        "references.csv",
    ]

    res = amg("audit", "relink", "a1", "ben", "--base-url", "http://h:9/", "--workspace", w)
    assert res.exit_code == 0 and res.output.startswith("http://h:9/?token=")
    res = amg("audit", "relink", "a1", "ana", "--workspace", w)  # the audit's address, kept
    assert res.exit_code == 0 and res.output.startswith("http://h:9/?token=")
    res = amg(
        "audit",
        "create",
        "a2",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--base-url",
        "http://127.0.0.1:9000",
        "--workspace",
        w,
    )
    assert (
        res.output.splitlines()[-1] == f"Serve them with: amg annotate --workspace {w} --port 9000"
    )
    res = amg("audit", "relink", "a2", "annotator", "--workspace", w)
    assert res.exit_code == 0 and res.output.startswith("http://127.0.0.1:9000/?token=")


def test_import_command(tmp_path):
    w = str(tmp_path / "ws")
    f = tmp_path / "l.csv"
    f.write_text("item_id,annotator,label\nx,ana,yes\nx,ben,no\n")
    res = amg("audit", "import", "r1", str(f), "--workspace", w)
    assert res.exit_code == 0, res.output
    assert "Created realism audit 'r1': 2 labels by ana, ben for 1 item." in res.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["audit", "create", "x", "--task", "vibes", "--from", "arcs"], "Unknown task 'vibes'"),
        (
            ["audit", "create", "x", "--task", "evidence_type", "--from", "nowhere:1"],
            "Unknown source",
        ),
        (
            [
                "audit",
                "create",
                "x",
                "--task",
                "evidence_type",
                "--from",
                "STATEMENTS",
                "--annotators",
                "a,b",
                "--overlap",
                "3",
            ],
            "--overlap 3 is more than the 2",
        ),
        (["audit", "create", "bad name", "--task", "realism", "--from", "arcs"], "Audit name"),
        (["audit", "export", "nope"], "No audit named 'nope'"),
        (["report", "agreement", "nope"], "No audit named 'nope'"),
        (["audit", "import", "x", "MALFORMED"], "missing column(s) annotator"),
        (["audit", "import", "x", "missing.csv"], "No such file"),
        (["annotate", "--port", "0"], "--port must be 1-65535"),
        (
            [
                "audit",
                "create",
                "x",
                "--task",
                "evidence_type",
                "--from",
                "STATEMENTS",
                "--base-url",
                "http://h:notaport",
            ],
            "--base-url 'http://h:notaport' is not a usable URL",
        ),
        (
            [
                "audit",
                "create",
                "x",
                "--task",
                "evidence_type",
                "--from",
                "STATEMENTS",
                "--base-url",
                "127.0.0.1:8501",
            ],
            "must look like http://HOST[:PORT]",
        ),
    ],
)
def test_bad_input_is_one_line(tmp_path, statements_file, args, needle):
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,label\nx,yes\n")
    args = [{"STATEMENTS": str(statements_file), "MALFORMED": str(bad)}.get(a, a) for a in args]
    Workspace(tmp_path / "ws")
    res = runner.invoke(app, args + ["--workspace", str(tmp_path / "ws")])
    assert res.exit_code == 1
    assert needle in res.output
    assert "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.startswith("Error:")]) == 1


def test_annotate_serves_on_localhost(tmp_path):
    cmd = streamlit_command(tmp_path / "ws", 8765)
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.port") + 1] == "8765"
    assert cmd[-2:] == ["--workspace", str((tmp_path / "ws").resolve())]
    # Annotators get the viewer's page: no Deploy button or developer menu, no tracebacks.
    assert cmd[cmd.index("--client.toolbarMode") + 1] == "minimal"
    assert cmd[cmd.index("--client.showErrorDetails") + 1] == "none"
    # Presses arriving during a run are folded into the next one, not lost (see keys.Presses).
    assert cmd[cmd.index("--runner.fastReruns") + 1] == "false"
    v6 = streamlit_command(tmp_path, 8765, "[::1]")
    assert v6[v6.index("--server.address") + 1] == "::1"


def test_annotate_refuses_a_missing_workspace_and_a_busy_port(tmp_path, statements_file):
    import socket

    res = amg("annotate", "--workspace", str(tmp_path / "nowhere"), "--port", "8765")
    assert res.exit_code == 1 and "No workspace at" in res.output
    assert not (tmp_path / "nowhere").exists()  # not silently created
    w = str(tmp_path / "ws")
    amg(
        "audit",
        "create",
        "a1",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--workspace",
        w,
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = amg("annotate", "--workspace", w, "--port", str(port))
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[-1] == (
        f"Error: Port {port} on 127.0.0.1 is in use; choose another with --port"
    )


def test_annotate_host_warns_that_links_are_secrets(tmp_path, statements_file, monkeypatch):
    """--host 0.0.0.0 serves a lab; the warning says links are secrets on plain HTTP and which
    --base-url the links need. (os.execve is where amg annotate becomes streamlit.)"""
    import os

    w = str(tmp_path / "ws")
    amg(
        "audit",
        "create",
        "a1",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--workspace",
        w,
    )
    seen = {}

    def fake_exec(path, cmd, env):
        seen["cmd"], seen["env"] = cmd, env
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", fake_exec)
    res = amg("annotate", "--workspace", w, "--host", "0.0.0.0", "--port", "8765")
    assert res.exit_code == 0, res.output
    cmd = seen["cmd"]
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    assert "Warning: listening on all interfaces (port 8765): other machines" in res.stderr
    assert "Personal links are secrets" in res.stderr and "plain HTTP" in res.stderr
    assert "--base-url http://" in res.stderr and ":8765" in res.stderr

    res = amg("annotate", "--workspace", w, "--port", "8765")  # the default: this machine only
    assert res.exit_code == 0
    assert "Warning" not in res.stderr
    assert "at http://127.0.0.1:8765/" in res.stderr


def test_remote_warning_only_beyond_this_machine():
    from agentmemgate.annotate_app.server import remote_warning

    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"):
        assert remote_warning(host, 8501) is None, host
    text = remote_warning("10.1.2.3", 8501)
    assert text.startswith("Warning: listening on 10.1.2.3 (port 8501):")
    assert text.endswith("--base-url http://10.1.2.3:8501")


def test_annotate_names_a_host_that_is_not_this_machine(tmp_path, statements_file):
    w = str(tmp_path / "ws")
    amg(
        "audit",
        "create",
        "a1",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--workspace",
        w,
    )
    for host, needle in [
        ("nosuch.invalid", "--host 'nosuch.invalid' is not an address"),
        ("192.0.2.1", "--host 192.0.2.1 is not an address of this machine"),
        ("", "--host is empty"),
    ]:
        res = amg("annotate", "--workspace", w, "--host", host)
        assert res.exit_code == 1, host
        assert res.output.strip().splitlines()[-1].startswith(f"Error: {needle}"), res.output


def test_a_port_just_released_is_not_busy():
    """A server stopped a moment ago leaves its port in TIME_WAIT; restarting must work."""
    import socket

    from agentmemgate.annotate_app.server import check_listen

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = server.accept()
    conn.close()  # the server side closes first: its end of the connection waits in TIME_WAIT
    server.close()
    client.close()
    check_listen("127.0.0.1", port)


def test_links_for_another_machine_get_a_serve_hint_with_host(tmp_path, statements_file):
    w = str(tmp_path / "ws")
    res = amg(
        "audit",
        "create",
        "a1",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--base-url",
        "http://10.1.2.3:8790",
        "--workspace",
        w,
    )
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1] == (
        f"Serve them with: amg annotate --workspace {w} --host 0.0.0.0 --port 8790"
    )
    res = amg(
        "audit",
        "create",
        "a2",
        "--task",
        "evidence_type",
        "--from",
        str(statements_file),
        "--base-url",
        "https://audit.example.org",
        "--workspace",
        w,
    )  # behind a TLS proxy
    assert res.output.strip().splitlines()[-1] == f"Serve them with: amg annotate --workspace {w}"


def test_a_workspace_made_by_audit_create_is_named(tmp_path, statements_file):
    """A mistyped --workspace makes a new workspace; the command says so, once."""
    w = str(tmp_path / "typo")
    args = ["--task", "evidence_type", "--from", str(statements_file), "--annotators", "ana"]
    first = amg("audit", "create", "a1", *args, "--workspace", w)
    assert first.exit_code == 0, first.output
    assert f"Made a new workspace at {w!r} (there was none there)." in first.output
    again = amg("audit", "create", "a2", *args, "--workspace", w)
    assert again.exit_code == 0, again.output
    assert "Made a new workspace" not in again.output


def test_import_and_export_mistakes_get_one_line(tmp_path, statements_file):
    w = str(tmp_path / "ws")
    amg("audit", "create", "a1", "--task", "evidence_type", "--from", str(statements_file),
        "--annotators", "ana", "--workspace", w)  # fmt: skip
    empty, js, afile = tmp_path / "empty.csv", tmp_path / "ls.json", tmp_path / "out.csv"
    empty.write_text("")
    js.write_text("[]")
    afile.write_text("x")
    for args, words in [
        (("audit", "import", "a1", str(empty)), "the file is empty"),
        (("audit", "import", "a1", str(js)), "imports with --format label-studio"),
        (("audit", "export", "a1", "--out", str(afile)), "is a file: give a folder"),
    ]:
        res = amg(*args, "--workspace", w)
        assert res.exit_code == 1 and words in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1
    res = amg("audit", "export", "a1", "--format", "csv", "--out", str(tmp_path / "x"),
              "--workspace", w)  # fmt: skip
    assert res.exit_code == 0 and "labels.csv" in res.output


def test_a_folder_given_as_source_is_named_a_folder(tmp_path):
    res = amg("audit", "create", "a", "--task", "evidence_type", "--from", str(tmp_path),
              "--annotators", "ana", "--workspace", str(tmp_path / "ws"))  # fmt: skip
    assert res.exit_code == 1
    assert res.output.strip() == f"Error: {str(tmp_path)!r} is a folder, not a file"
