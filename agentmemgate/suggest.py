"""'Did you mean' hints for mistyped names (splits, factors, levels, systems, domains)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """'' or "; did you mean 'core'?" for the closest of ``choices`` to ``name``."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
