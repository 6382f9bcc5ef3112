"""The turns before a statement, as prompts show them (the LLM miner's and the LLM classifier's)."""

from __future__ import annotations

from .model import ContextTurn

CONTEXT_CHARS = 1500  # per preceding turn; LongMemEval assistant turns run to many thousands


def format_context(context: list[ContextTurn], limit: int = CONTEXT_CHARS) -> str:
    if not context:
        return "(none)"
    out = []
    for t in context:
        text = t.text if len(t.text) <= limit else t.text[:limit].rstrip() + " [...]"
        out.append(f"[{t.speaker}]: {text}")
    return "\n".join(out)
