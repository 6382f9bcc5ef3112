"""Launch the viewer: ``streamlit run app.py`` on 127.0.0.1 (or ``--host``), the workspace passed on
(the launch and its address checks are ``streamlit_launch``'s, shared with the audit app)."""

from __future__ import annotations

import os
from pathlib import Path

from ..streamlit_launch import (
    DEFAULT_HOST,
    check_listen,
    is_loopback,
    is_wildcard,
    normalize_host,
    require_workspace,
    say,
    serve,
)
from ..streamlit_launch import streamlit_command as _streamlit_command
from . import links
from .links import DEFAULT_PORT

APP = Path(__file__).with_name("app.py")


def remote_warning(host: str, port: int) -> str | None:
    """One line for a viewer served beyond this machine; None on a loopback address."""
    if is_loopback(host):
        return None
    where = "every interface" if is_wildcard(host) else host
    return (
        f"Warning: listening on {where} (port {port}): anyone who can reach this port can read "
        "the whole workspace (arcs, results, audit labels), over plain HTTP."
    )


def streamlit_command(workspace: str | Path, port: int, host: str = DEFAULT_HOST) -> list[str]:
    """The viewer's ``streamlit run`` (see ``streamlit_launch.streamlit_command``)."""
    return _streamlit_command(APP, workspace, port, host)


def launch(workspace: str | Path, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> int:
    """Serve until interrupted; returns streamlit's exit code."""
    host = normalize_host(host)
    cmd = streamlit_command(workspace, port, host)
    require_workspace(workspace, "the --workspace DIR that `amg build` made")
    check_listen(host, port)
    shown = "127.0.0.1" if is_wildcard(host) else (f"[{host}]" if ":" in host else host)
    local = f"http://{shown}:{port}"
    say(f"Serving {workspace} read-only at {local}/ (Ctrl+C to stop).")
    if warning := remote_warning(host, port):
        say(warning)
    links.register(workspace, local, os.getpid())
    return serve(cmd, workspace)
