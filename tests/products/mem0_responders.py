"""Mem0's side of the mock server: answers Mem0 2.2's own prompts the way a model would.

- ``extraction``: Mem0's additive extraction call (system prompt "You are a Memory Extractor",
  ``response_format`` json_object, the session under "## New Messages") gets ``{"memory": [...]}``
  with one memory per user turn, ``"User said: <turn>"``: schema-valid for Mem0's parser and
  traceable back to the turn it came from.
- ``answer``: the product answer rubric (``products/answer``) gets the last retrieved memory
  line, or "I don't know." when nothing was retrieved.
"""

from __future__ import annotations

import re

from .mock_openai import ChatRequest

_NEW = re.compile(r"## New Messages\n(.*?)\n\n## Observation Date", re.S)
_TURN = re.compile(r"^(user|assistant): (.*)$", re.M)


def is_extraction(req: ChatRequest) -> bool:
    return "Memory Extractor" in req.system and "## New Messages" in req.last_user


def new_messages(req: ChatRequest) -> list[tuple[str, str]]:
    """(role, text) of the turns Mem0 put under "## New Messages", in its order."""
    m = _NEW.search(req.last_user)
    return _TURN.findall(m.group(1)) if m else []


def extraction(req: ChatRequest):
    if not is_extraction(req):
        return None
    users = [text for role, text in new_messages(req) if role == "user"]
    return {"memory": [{"id": str(i), "text": f"User said: {t}"} for i, t in enumerate(users)]}


_MEMORIES = re.compile(r"<<<\n(.*?)\n>>>", re.S)


def answer(req: ChatRequest):
    text = req.last_user
    if "Memories retrieved" not in text or "Question:" not in text:
        return None
    m = _MEMORIES.search(text)
    lines = [ln for ln in (m.group(1).splitlines() if m else []) if re.match(r"^\d+\. ", ln)]
    if not lines:
        return "I don't know."
    return re.sub(r"^\d+\. ", "", lines[0])


RESPONDERS = [extraction, answer]
