"""Output folders for reports: created if needed, or a one-line error."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import WorkspaceError


def writable(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WorkspaceError(f"Cannot create output folder {str(out)!r}: {e.strerror}") from None
    if not os.access(out, os.W_OK):
        raise WorkspaceError(f"Output folder {str(out)!r} is not writable")
    return out
