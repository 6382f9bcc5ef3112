"""Deep links into the viewer, and where a running viewer is.

Every view has a URL built from query parameters only (``page_url``). ``amg view`` notes the
workspace it serves and its address in a file of this user's temporary folder (never in the
workspace); other commands (``amg eval show``, ``amg report eval``) read it to print a link to what
they show, or, when no viewer of that workspace is running, the command that starts one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlencode, urlsplit

DEFAULT_PORT = 8502  # beside the audit app's 8501, so both can run
PAGES = ("overview", "arcs", "results", "trace", "audits", "mining")


def page_url(page: str, **params) -> str:
    """``trace?arc=ID&system=NAME``: a page and its query parameters (None, "" and False left
    out, True written as ``true``), relative to the viewer's address."""
    if page not in PAGES:
        raise ValueError(f"no viewer page {page!r}")
    q = {
        k: ("true" if v is True else str(v))
        for k, v in params.items()
        if v not in (None, "", False)
    }
    return page + (f"?{urlencode(q)}" if q else "")


def _folder() -> Path:
    import tempfile  # here, not at the top: `amg --help` imports this module

    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"amg-view-{uid}"


def register(workspace: str | Path, url: str, pid: int) -> None:
    """Note that process ``pid`` serves ``workspace`` at ``url`` (replaced by the next viewer
    on the same port; ignored once the process is gone)."""
    folder = _folder()
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        for f in folder.glob("*.json"):  # notes of viewers that have stopped
            try:
                if not _alive(int(json.loads(f.read_text()).get("pid", 0))):
                    f.unlink()
            except (OSError, ValueError):
                pass
        port = urlsplit(url).port
        tmp = folder / f".{port}.{pid}.tmp"
        tmp.write_text(
            json.dumps({"workspace": str(Path(workspace).resolve()), "url": url, "pid": pid})
        )
        os.replace(tmp, folder / f"{port}.json")
    except OSError:
        pass  # links are a convenience: a viewer that cannot note itself still serves


def _alive(pid: int) -> bool:
    if pid <= 0:  # 0 and negatives name process groups, not a viewer
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _listening(url: str) -> bool:
    parts = urlsplit(url)
    try:
        import socket

        with socket.create_connection((parts.hostname, parts.port), timeout=0.3):
            return True
    except OSError:
        return False


def running_viewer(workspace: str | Path) -> str | None:
    """The address of a running viewer of ``workspace``, or None."""
    want = str(Path(workspace).resolve())
    try:
        files = sorted(_folder().glob("*.json"))
    except OSError:
        return None
    for f in files:
        try:
            note = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if (
            note.get("workspace") == want
            and _alive(int(note.get("pid", 0)))
            and _listening(note.get("url", ""))
        ):
            return note["url"]
    return None


def viewer_hint(workspace: str | Path, page: str, **params) -> str:
    """One line: the link to this view in a running viewer of ``workspace``, or the command that
    starts one and the link it will then answer."""
    import shlex

    target = page_url(page, **params)
    url = running_viewer(workspace)
    if url:
        return f"In the viewer: {url}/{target}"
    return (
        f"To browse it: amg view --workspace {shlex.quote(str(workspace))}, then open "
        f"http://127.0.0.1:{DEFAULT_PORT}/{target}"
    )
