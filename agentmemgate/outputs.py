"""Output folders for reports: created if needed, or a one-line error."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import WorkspaceError


def writable(out: Path) -> Path:
    if out.is_file():
        raise WorkspaceError(f"Output folder {str(out)!r} is a file: give a folder to write in")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WorkspaceError(f"Cannot create output folder {str(out)!r}: {e.strerror}") from None
    if not os.access(out, os.W_OK):
        raise WorkspaceError(f"Output folder {str(out)!r} is not writable")
    return out


def can_create(out: Path) -> Path:
    """Refuse an output folder that could not be made or written, without making anything.

    Lets a long command (``amg build``) fail before its work instead of after it.
    """
    p = out
    while not p.exists() and p != p.parent:
        p = p.parent
    if not p.is_dir():
        raise WorkspaceError(
            f"Cannot create output folder {str(out)!r}: {str(p)!r} is not a folder"
        )
    if not os.access(p, os.W_OK):
        try:
            why = (
                "is on a read-only file system"
                if os.statvfs(p).f_flag & os.ST_RDONLY
                else "is not writable"
            )
        except (OSError, AttributeError):  # no statvfs (Windows)
            why = "is not writable"
        where = "" if p == out else f" in {str(p)!r}, which {why}"
        raise WorkspaceError(f"Cannot write output folder {str(out)!r}" + (where or f": it {why}"))
    return out
