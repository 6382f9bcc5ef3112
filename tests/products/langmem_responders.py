"""LangMem's side of the mock server: answers LangMem 0.0.x's own prompts the way a model would.

- ``extraction``: the memory manager's call (trustcall: the tools ``Memory``, and ``PatchDoc``
  once memories exist; the session between ``<session_ID>`` tags) gets one ``Memory`` tool call
  whose content is the session's user turns, ``"User said: <turn> <turn> ..."``: valid for
  LangMem's parser and traceable back to the session it came from.
- ``answer``: the product answer rubric gets the first retrieved memory line, or "I don't know."
"""

from __future__ import annotations

import re

from .mem0_responders import answer
from .mock_openai import ChatRequest, Reply

_SESSION = re.compile(r"<session_[0-9a-f-]+>\n(.*)\n</session_[0-9a-f-]+>", re.S)
_HUMAN = re.compile(r"=+ Human Message =+\n\n(.*?)(?=\n\n=+ \w+ Message =+|\Z)", re.S)


def is_extraction(req: ChatRequest) -> bool:
    names = [t.get("function", t).get("name") for t in req.body.get("tools") or []]
    return "Memory" in names and "<session_" in req.text


def user_turns(req: ChatRequest) -> list[str]:
    """The session's user turns as LangMem rendered them, in order."""
    m = _SESSION.search(req.text)
    return [t.strip() for t in _HUMAN.findall(m.group(1))] if m else []


def extraction(req: ChatRequest):
    if not is_extraction(req):
        return None
    return Reply({"content": "User said: " + " ".join(user_turns(req))}, tool="Memory")


RESPONDERS = [extraction, answer]
