"""The launch both Streamlit apps share: which workspace an app reads, and its command line."""

from __future__ import annotations

import sys

import pytest

from agentmemgate.annotate_app import server as audit_server
from agentmemgate.defaults import DEFAULT_WORKSPACE
from agentmemgate.streamlit_launch import WORKSPACE_ENV, app_workspace
from agentmemgate.view import server as view_server


@pytest.fixture
def clean(monkeypatch):
    for name in ("AMG_WORKSPACE", "AMG_VIEW_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "argv", ["app.py"])
    return monkeypatch


def test_the_launcher_variable_comes_first(clean):
    clean.setattr(sys, "argv", ["app.py", "--workspace", "from-argv"])
    assert app_workspace() == "from-argv"
    clean.setenv("AMG_VIEW_WORKSPACE", "old-name")  # the viewer's variable: still read
    assert app_workspace() == "old-name"
    clean.setenv(WORKSPACE_ENV, "new-name")
    assert WORKSPACE_ENV == "AMG_WORKSPACE" and app_workspace() == "new-name"


def test_empty_variables_and_no_argument_give_the_default(clean):
    clean.setenv("AMG_WORKSPACE", "")
    assert app_workspace() == str(DEFAULT_WORKSPACE)


@pytest.mark.parametrize("server", [audit_server, view_server])
def test_both_apps_run_headless_with_their_workspace(server, tmp_path):
    cmd = server.streamlit_command(tmp_path, 8765, "[::1]")
    assert cmd[1:5] == ["-m", "streamlit", "run", str(server.APP)]
    assert cmd[cmd.index("--server.address") + 1] == "::1"
    assert cmd[cmd.index("--client.showErrorDetails") + 1] == "none"
    assert cmd[-3:] == ["--", "--workspace", str(tmp_path.resolve())]
    # Only the audit app turns fast reruns off (key presses are applied in order).
    assert ("--runner.fastReruns" in cmd) == (server is audit_server)


@pytest.mark.parametrize("server", [audit_server, view_server])
def test_a_missing_workspace_is_one_line(server, tmp_path):
    from agentmemgate.errors import WorkspaceError

    with pytest.raises(WorkspaceError, match=r"^No workspace at .* \(no workspace.db\); pass the"):
        server.launch(tmp_path / "none", port=8765)
