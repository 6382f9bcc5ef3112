"""The ``scripted`` provider: a test double registered like any provider (after llm's MockModel).

Every ``scripted:NAME`` model shares one named script, so a test can enqueue replies on the model
it holds while the pipeline resolves its own instance from the spec. Replies are strings, dicts
(sent as JSON), or exceptions (raised as the call's failure); when the queue is empty a
``respond_with`` function answers. Tokens are counted as whitespace-separated words.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable

from pydantic import Field

from ..workspace import Workspace
from ._errors import CallFailed
from .model import Model, ModelOptions, RawReply, Request

Reply = str | dict | BaseException


class ScriptedOptions(ModelOptions):
    delay: float = Field(0.0, ge=0, description="Seconds each call takes (for concurrency tests).")


class Script:
    """The shared queue, responder and request history behind one scripted model name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queue: list[Reply] = []
        self.history: list[Request] = []
        self.responder: Callable[[Request], Reply] | None = None


_SCRIPTS: dict[str, Script] = {}


def reset_scripts() -> None:
    """Forget every script (test isolation)."""
    _SCRIPTS.clear()


class ScriptedModel(Model):
    provider = "scripted"
    Options = ScriptedOptions

    def __init__(self, name: str, *, workspace: Workspace | str | Path | None = None,
                 options: ScriptedOptions | None = None):
        super().__init__(name, workspace=workspace, options=options)
        self.script = _SCRIPTS.setdefault(name, Script())

    def enqueue(self, *replies: Reply) -> "ScriptedModel":
        with self.script.lock:
            self.script.queue.extend(replies)
        return self

    def respond_with(self, fn: Callable[[Request], Reply] | None) -> "ScriptedModel":
        self.script.responder = fn
        return self

    @property
    def history(self) -> list[Request]:
        return self.script.history

    def execute(self, request: Request) -> RawReply:
        with self.script.lock:
            self.script.history.append(request)
            reply = self.script.queue.pop(0) if self.script.queue else None
        if self.options.delay:  # type: ignore[attr-defined]
            time.sleep(self.options.delay)  # type: ignore[attr-defined]
        if reply is None:
            if self.script.responder is None:
                raise CallFailed(f"{self.spec} has no scripted reply left", kind="script_empty")
            reply = self.script.responder(request)
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        words = len(((request.system or "") + " " + request.prompt).split())
        return RawReply(text=text, resolved_model=self.name, input_tokens=words,
                        output_tokens=len(text.split()))
