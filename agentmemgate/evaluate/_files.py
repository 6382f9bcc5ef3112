"""Atomic report files: written to a temporary file beside the target, then renamed over it, so a
reader (or a kill -9) never sees half a report."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` fills a temporary file in ``path``'s folder, which then replaces ``path``."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
