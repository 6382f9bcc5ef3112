"""Launch the labeling app: ``streamlit run app.py`` on 127.0.0.1 (or ``--host``), workspace passed
on (the launch itself is ``streamlit_launch``'s, shared with the viewer)."""

from __future__ import annotations

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
    server_url,
)
from ..streamlit_launch import streamlit_command as _streamlit_command
from ..workspace import Workspace

APP = Path(__file__).with_name("app.py")
# ``runner.fastReruns`` off: with it on, a key press that arrives while the previous press's rerun
# is starting stops that rerun before its callback runs (the first press is lost), and two script
# threads of one session can use its database connection at once. Off, presses that arrive during
# a run are folded into the next one, which the app applies in order.
OPTIONS = ("--runner.fastReruns", "false")


def remote_warning(host: str, port: int) -> str | None:
    """What someone serving beyond this machine must know; None on a loopback address."""
    if is_loopback(host):
        return None
    where = "all interfaces" if is_wildcard(host) else host
    return "\n".join(
        [
            f"Warning: listening on {where} (port {port}): other machines can open the app.",
            "  Personal links are secrets: whoever has one labels as that person",
            "  (`amg audit relink NAME PERSON` replaces a leaked one).",
            "  The traffic, links included, is plain HTTP that anyone on the network path can read,",
            "  unless the app sits behind TLS (an HTTPS reverse proxy) or annotators come in through",
            "  an SSH tunnel or VPN.",
            f"Links must name this server: create audits (or relink) with --base-url "
            f"{server_url(host, port)}",
        ]
    )


def streamlit_command(workspace: str | Path, port: int, host: str = DEFAULT_HOST) -> list[str]:
    """The annotators' view of the app (see ``streamlit_launch.streamlit_command``)."""
    return _streamlit_command(APP, workspace, port, host, options=OPTIONS)


def launch(workspace: str | Path, port: int = 8501, host: str = DEFAULT_HOST) -> int:
    """Serve until interrupted; returns streamlit's exit code.

    Fails early with one line if the workspace does not exist (serving an empty folder would turn
    every link away), the address is not this machine's or the port is taken."""
    host = normalize_host(host)
    cmd = streamlit_command(workspace, port, host)
    require_workspace(workspace, "the --workspace DIR where you ran `amg audit create`")
    ws = Workspace(workspace)
    n_audits = ws.db.execute("select count(*) from audits").fetchone()[0]
    ws.db.conn.close()
    check_listen(host, port)
    say(
        f"Serving audits from {workspace} at {server_url(host, port)}/ (Ctrl+C to stop); "
        "annotators open their personal links."
    )
    if warning := remote_warning(host, port):
        say(warning)
    if not n_audits:
        say("No audits yet: create one with `amg audit create` (no restart needed).")
    return serve(cmd, workspace)
