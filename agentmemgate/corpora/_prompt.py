"""Filling rubric slots with corpus text, which may itself contain ``{{...}}`` (code in LongMemEval)."""

from __future__ import annotations

import re

from ..errors import BadInput
from ..rubrics import Rubric
from .model import ContextTurn

CONTEXT_CHARS = 1500  # per preceding turn; LongMemEval assistant turns run to many thousands


def fill(rubric: Rubric, **values: str) -> str:
    """One pass over the rubric's slots, so inserted text is never scanned for slots itself."""
    missing = sorted(set(re.findall(r"\{\{(\w+)\}\}", rubric.text)) - set(values))
    if missing:
        raise BadInput(f"Rubric {rubric.ref} needs values for: {', '.join(missing)}")
    return re.sub(r"\{\{(\w+)\}\}", lambda m: str(values[m.group(1)]), rubric.text)


def format_context(context: list[ContextTurn], limit: int = CONTEXT_CHARS) -> str:
    if not context:
        return "(none)"
    out = []
    for t in context:
        text = t.text if len(t.text) <= limit else t.text[:limit].rstrip() + " [...]"
        out.append(f"[{t.speaker}]: {text}")
    return "\n".join(out)
