"""Launch the labeling app: ``streamlit run app.py`` bound to 127.0.0.1 with the workspace passed on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from ..errors import BadInput, WorkspaceError
from ..workspace import Workspace

APP = Path(__file__).with_name("app.py")


def streamlit_command(workspace: str | Path, port: int, host: str = "127.0.0.1") -> list[str]:
    """The annotators' view: no developer menu or Deploy button, no tracebacks in the browser."""
    if not 1 <= port <= 65535:
        raise BadInput(f"--port must be 1-65535, got {port}")
    return [sys.executable, "-m", "streamlit", "run", str(APP),
            "--server.address", host, "--server.port", str(port), "--server.headless", "true",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
            "--client.toolbarMode", "minimal", "--client.showErrorDetails", "none",
            "--", "--workspace", str(Path(workspace).resolve())]


def _check_port(host: str, port: int) -> None:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            raise BadInput(f"Port {port} on {host} is in use; choose another with --port") from None


def launch(workspace: str | Path, port: int = 8501, host: str = "127.0.0.1") -> int:
    """Serve until interrupted; returns streamlit's exit code.

    Fails early with one line if the workspace does not exist (serving an empty folder would turn
    every link away) or the port is taken. On POSIX the process becomes streamlit (exec), so a
    SIGTERM or SIGKILL sent to ``amg annotate`` stops the server instead of orphaning it."""
    cmd = streamlit_command(workspace, port, host)
    if not (Path(workspace) / "workspace.db").is_file():
        raise WorkspaceError(f"No workspace at {str(workspace)!r} (no workspace.db); pass the "
                             "--workspace DIR where you ran `amg audit create`")
    ws = Workspace(workspace)
    n_audits = ws.db.execute("select count(*) from audits").fetchone()[0]
    ws.db.conn.close()
    _check_port(host, port)
    print(f"Serving audits from {workspace} at http://{host}:{port}/ (Ctrl+C to stop); "
          "annotators open their personal links.", file=sys.stderr, flush=True)
    if not n_audits:
        print("No audits yet: create one with `amg audit create` (no restart needed).",
              file=sys.stderr, flush=True)
    env = {**os.environ, "AMG_WORKSPACE": str(Path(workspace).resolve())}
    if os.name == "posix":
        sys.stdout.flush()
        os.execve(cmd[0], cmd, env)
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
