"""Launch the viewer: ``streamlit run app.py`` on 127.0.0.1 (or ``--host``), the workspace passed on.

The address checks are the audit app's (``annotate_app.server``): the same one-line errors for a
busy port or an address that is not this machine's."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from pathlib import Path

from ..annotate_app.server import check_listen, is_loopback, normalize_host, this_machine
from ..errors import BadInput, WorkspaceError
from ..workspace import DB_NAME
from . import links
from .links import DEFAULT_PORT, WORKSPACE_ENV

APP = Path(__file__).with_name("app.py")
DEFAULT_HOST = "127.0.0.1"


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def remote_warning(host: str, port: int) -> str | None:
    """One line for a viewer served beyond this machine; None on a loopback address."""
    if is_loopback(host):
        return None
    where = "every interface" if _wildcard(host) else host
    return (
        f"Warning: listening on {where} (port {port}): anyone who can reach this port can read "
        "the whole workspace (arcs, results, audit labels), over plain HTTP."
    )


def streamlit_command(workspace: str | Path, port: int, host: str = DEFAULT_HOST) -> list[str]:
    """No developer menu, no tracebacks in the browser, no file watching, no usage statistics."""
    if not 1 <= port <= 65535:
        raise BadInput(f"--port must be 1-65535, got {port}")
    host = normalize_host(host)
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--browser.gatherUsageStats",
        "false",
        "--global.developmentMode",
        "false",
        "--client.toolbarMode",
        "minimal",
        "--client.showErrorDetails",
        "none",
        *(["--browser.serverAddress", this_machine()] if _wildcard(host) else []),
        "--",
        "--workspace",
        str(Path(workspace).resolve()),
    ]


def launch(workspace: str | Path, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> int:
    """Serve until interrupted; returns streamlit's exit code. On POSIX the process becomes
    streamlit (exec), so stopping ``amg view`` stops the server."""
    host = normalize_host(host)
    cmd = streamlit_command(workspace, port, host)
    if not (Path(workspace) / DB_NAME).is_file():
        raise WorkspaceError(
            f"No workspace at {str(workspace)!r} (no {DB_NAME}); pass the "
            "--workspace DIR that `amg build` made"
        )
    check_listen(host, port)
    local = f"http://{'127.0.0.1' if _wildcard(host) else (f'[{host}]' if ':' in host else host)}:{port}"
    print(
        f"Serving {workspace} read-only at {local}/ (Ctrl+C to stop).", file=sys.stderr, flush=True
    )
    if warning := remote_warning(host, port):
        print(warning, file=sys.stderr, flush=True)
    links.register(workspace, local, os.getpid())
    env = {**os.environ, WORKSPACE_ENV: str(Path(workspace).resolve())}
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
