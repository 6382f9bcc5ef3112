"""Defaults more than one room reads, in a module that imports nothing of the toolkit (the CLI
declares its options with them while it starts, before any room loads)."""

from __future__ import annotations

from pathlib import Path

DEFAULT_WORKSPACE = Path(
    "amg-workspace"
)  # where commands and apps work when no --workspace is given
