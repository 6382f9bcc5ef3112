"""Launch the labeling app: ``streamlit run app.py`` bound to 127.0.0.1 with the workspace passed on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..errors import BadInput
from ..workspace import Workspace

APP = Path(__file__).with_name("app.py")


def streamlit_command(workspace: str | Path, port: int, host: str = "127.0.0.1") -> list[str]:
    if not 1 <= port <= 65535:
        raise BadInput(f"--port must be 1-65535, got {port}")
    return [sys.executable, "-m", "streamlit", "run", str(APP),
            "--server.address", host, "--server.port", str(port), "--server.headless", "true",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
            "--", "--workspace", str(Path(workspace).resolve())]


def launch(workspace: str | Path, port: int = 8501, host: str = "127.0.0.1") -> int:
    """Serve until interrupted; returns streamlit's exit code. Opening the workspace first applies
    migrations and fails early with a one-line error if the folder cannot be used."""
    cmd = streamlit_command(workspace, port, host)
    ws = Workspace(workspace)
    ws.db.conn.close()
    print(f"Serving audits from {workspace} at http://{host}:{port}/ (Ctrl+C to stop); "
          "annotators open their personal links.", file=sys.stderr, flush=True)
    env = {**os.environ, "AMG_WORKSPACE": str(Path(workspace).resolve())}
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
