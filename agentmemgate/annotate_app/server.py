"""Launch the labeling app: ``streamlit run app.py`` on 127.0.0.1 (or ``--host``), workspace passed on."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

from ..errors import BadInput, WorkspaceError
from ..workspace import Workspace

APP = Path(__file__).with_name("app.py")
DEFAULT_HOST = "127.0.0.1"


def normalize_host(host: str) -> str:
    """``[::1]`` -> ``::1`` (the form a socket binds); refuses an empty value."""
    h = host.strip()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if not h:
        raise BadInput("--host is empty; pass an address such as 127.0.0.1 or 0.0.0.0")
    return h


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def this_machine() -> str:
    """A name or address other machines may reach this one by (a best guess): its fully
    qualified name if that resolves beyond loopback, else the address of the interface that
    outgoing traffic uses (a UDP connect sends nothing)."""
    name = socket.getfqdn()
    try:
        if name and not is_loopback(name) and not is_loopback(socket.gethostbyname(name)):
            return name
    except OSError:
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
            address = s.getsockname()[0]
            if not is_loopback(address):
                return address
        except OSError:
            pass
    return "THIS-SERVER"


def server_url(host: str, port: int) -> str:
    """Where a browser reaches the server: for a wildcard address, this machine's name."""
    name = this_machine() if _is_wildcard(host) else host
    return f"http://{f'[{name}]' if ':' in name else name}:{port}"


def remote_warning(host: str, port: int) -> str | None:
    """What someone serving beyond this machine must know; None on a loopback address."""
    if is_loopback(host):
        return None
    where = "all interfaces" if _is_wildcard(host) else host
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
    """The annotators' view: no developer menu or Deploy button, no tracebacks in the browser.

    ``runner.fastReruns`` off: with it on, a key press that arrives while the previous press's
    rerun is starting stops that rerun before its callback runs (the first press is lost), and two
    script threads of one session can use its database connection at once. Off, presses that
    arrive during a run are folded into the next one, which the app applies in order."""
    if not 1 <= port <= 65535:
        raise BadInput(f"--port must be 1-65535, got {port}")
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address",
        normalize_host(host),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--runner.fastReruns",
        "false",
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
        # A wildcard address: name this machine, or Streamlit asks checkip.amazonaws.com.
        *(
            ["--browser.serverAddress", this_machine()]
            if _is_wildcard(normalize_host(host))
            else []
        ),
        "--",
        "--workspace",
        str(Path(workspace).resolve()),
    ]


def check_listen(host: str, port: int) -> None:
    """Bind once the way Streamlit will (IPv6 if the address has a colon; SO_REUSEADDR, so a port
    left in TIME_WAIT by a server stopped a moment ago is not mistaken for a busy one)."""
    host = normalize_host(host)
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        if os.name != "nt":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except socket.gaierror:
            raise BadInput(
                f"--host {host!r} is not an address, or a name that resolves, on this "
                "machine; pass one of its addresses, or 0.0.0.0 for all"
            ) from None
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise BadInput(
                    f"Port {port} on {host} is in use; choose another with --port"
                ) from None
            if e.errno == errno.EADDRNOTAVAIL:
                raise BadInput(
                    f"--host {host} is not an address of this machine; pass one of its "
                    "addresses, or 0.0.0.0 for all"
                ) from None
            if e.errno == errno.EACCES:
                raise BadInput(
                    f"Port {port} needs administrator rights; choose one above 1023 with --port"
                ) from None
            raise BadInput(f"Cannot listen on {host} port {port}: {e.strerror}") from None


def launch(workspace: str | Path, port: int = 8501, host: str = DEFAULT_HOST) -> int:
    """Serve until interrupted; returns streamlit's exit code.

    Fails early with one line if the workspace does not exist (serving an empty folder would turn
    every link away), the address is not this machine's or the port is taken. On POSIX the process
    becomes streamlit (exec), so a SIGTERM or SIGKILL sent to ``amg annotate`` stops the server
    instead of orphaning it."""
    host = normalize_host(host)
    cmd = streamlit_command(workspace, port, host)
    if not (Path(workspace) / "workspace.db").is_file():
        raise WorkspaceError(
            f"No workspace at {str(workspace)!r} (no workspace.db); pass the "
            "--workspace DIR where you ran `amg audit create`"
        )
    ws = Workspace(workspace)
    n_audits = ws.db.execute("select count(*) from audits").fetchone()[0]
    ws.db.conn.close()
    check_listen(host, port)
    print(
        f"Serving audits from {workspace} at {server_url(host, port)}/ (Ctrl+C to stop); "
        "annotators open their personal links.",
        file=sys.stderr,
        flush=True,
    )
    if warning := remote_warning(host, port):
        print(warning, file=sys.stderr, flush=True)
    if not n_audits:
        print(
            "No audits yet: create one with `amg audit create` (no restart needed).",
            file=sys.stderr,
            flush=True,
        )
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
