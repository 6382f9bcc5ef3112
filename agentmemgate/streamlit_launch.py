"""Serving a Streamlit app of the toolkit (the audit app, the viewer): the address checks, the
``streamlit run`` command line, and how the app learns which workspace to read.

``amg annotate`` and ``amg view`` check the address and the workspace with one-line errors, then
become ``streamlit run APP`` (exec on POSIX, so stopping the command stops the server), telling the
app its workspace through ``AMG_WORKSPACE``; the app reads it back with ``app_workspace``.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

from .defaults import DEFAULT_WORKSPACE
from .errors import BadInput, WorkspaceError

DEFAULT_HOST = "127.0.0.1"
WORKSPACE_ENV = "AMG_WORKSPACE"  # the workspace a launched app reads
# The viewer's name for it before both apps shared one; still read, after ``WORKSPACE_ENV``.
OLD_WORKSPACE_ENVS = ("AMG_VIEW_WORKSPACE",)


def app_workspace() -> str:
    """The workspace an app reads: ``AMG_WORKSPACE`` (set by the command that launched it), else
    ``-- --workspace DIR`` after the script (``streamlit run app.py -- --workspace DIR``), else
    the default workspace."""
    for name in (WORKSPACE_ENV, *OLD_WORKSPACE_ENVS):
        if os.environ.get(name):
            return os.environ[name]
    argv = sys.argv[1:]
    if "--workspace" in argv and argv.index("--workspace") + 1 < len(argv):
        return argv[argv.index("--workspace") + 1]
    return str(DEFAULT_WORKSPACE)


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


def is_wildcard(host: str) -> bool:
    """Whether ``host`` means every interface (0.0.0.0, ::)."""
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
    name = this_machine() if is_wildcard(host) else host
    return f"http://{f'[{name}]' if ':' in name else name}:{port}"


def streamlit_command(
    app: Path,
    workspace: str | Path,
    port: int,
    host: str = DEFAULT_HOST,
    *,
    options: tuple[str, ...] = (),
) -> list[str]:
    """``streamlit run APP`` as users' apps should run: no developer menu or Deploy button, no
    tracebacks in the browser, no file watching, no usage statistics; ``options``: the app's own
    Streamlit flags (``--runner.fastReruns false`` ...)."""
    if not 1 <= port <= 65535:
        raise BadInput(f"--port must be 1-65535, got {port}")
    host = normalize_host(host)
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        *options,
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
        *(["--browser.serverAddress", this_machine()] if is_wildcard(host) else []),
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


def require_workspace(workspace: str | Path, hint: str) -> None:
    """A one-line error when ``workspace`` holds no workspace (serving an empty folder would show
    nothing); ``hint`` says which folder to pass."""
    from .workspace import DB_NAME

    if not (Path(workspace) / DB_NAME).is_file():
        raise WorkspaceError(f"No workspace at {str(workspace)!r} (no {DB_NAME}); pass {hint}")


def say(*lines: str) -> None:
    """What the command prints before the server starts (stderr: stdout is the server's)."""
    for line in lines:
        print(line, file=sys.stderr, flush=True)


def serve(command: list[str], workspace: str | Path) -> int:
    """Run the server until interrupted; returns streamlit's exit code. On POSIX the process
    becomes streamlit (exec), so a SIGTERM or SIGKILL sent to the command stops the server
    instead of orphaning it."""
    env = {**os.environ, WORKSPACE_ENV: str(Path(workspace).resolve())}
    if os.name == "posix":
        sys.stdout.flush()
        os.execve(command[0], command, env)
    proc = subprocess.Popen(command, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
