"""Versioned data files (``NAME.vN.EXT``): the highest version unless one is pinned.

Lexicons and rule files version like the rubrics: a released version is never edited in place.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import BadInput


def versioned_file(
    folder: Path, name: str, ext: str, version: int | None = None, what: str = "file"
) -> tuple[int, Path]:
    """``(version, path)`` of ``folder/NAME.vN.EXT``; a one-line error for an unknown version."""
    pattern = re.compile(rf"{re.escape(name)}\.v(\d+)\.{re.escape(ext)}")
    found = sorted(
        int(m.group(1)) for p in folder.glob(f"{name}.v*.{ext}") if (m := pattern.fullmatch(p.name))
    )
    if not found:
        raise BadInput(f"No {what} named {name}.vN.{ext} in {folder}")
    v = version if version is not None else found[-1]
    if v not in found:
        raise BadInput(f"No {what} version {v}; known: {found}")
    return v, folder / f"{name}.v{v}.{ext}"
