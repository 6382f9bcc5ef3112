"""The ``scripted`` provider: a test double registered like any provider (after llm's MockModel).

``register()`` (the suite's ``conftest`` calls it, and so do the workers tests start as
subprocesses) makes ``scripted:NAME`` resolve as a model and as a generator, kept out of the
choices error messages list. Every ``scripted:NAME`` model shares one named script, so a test can
enqueue replies on the model it holds while the pipeline resolves its own instance from the spec. Replies are strings, dicts
(sent as JSON), or exceptions (raised as the call's failure); when the queue is empty a
``respond_with`` function answers. Tokens are counted as whitespace-separated words.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from agentmemgate.llm import CallFailed, Model, ModelOptions, RawReply, Request
from agentmemgate.workspace import Workspace

Reply = str | dict | BaseException


class ScriptedOptions(ModelOptions):
    delay: float = Field(0.0, ge=0, description="Seconds each call takes (for concurrency tests).")
    embedding_dims: int = Field(
        64, ge=2, le=4096, description="Size of the hashed bag-of-words vectors ``embed`` returns."
    )


class Script:
    """The shared queue, responder and request history behind one scripted model name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queue: list[Reply] = []
        self.history: list[Request] = []
        self.responder: Callable[[Request], Reply] | None = None
        self.embedded: list[str] = []  # texts sent to ``execute_embed``, in order


_SCRIPTS: dict[str, Script] = {}


def reset_scripts() -> None:
    """Forget every script (test isolation)."""
    _SCRIPTS.clear()


class ScriptedModel(Model):
    provider = "scripted"
    Options = ScriptedOptions

    def __init__(
        self,
        name: str,
        *,
        workspace: Workspace | str | Path | None = None,
        options: ScriptedOptions | None = None,
    ):
        super().__init__(name, workspace=workspace, options=options)
        self.script = _SCRIPTS.setdefault(name, Script())

    def enqueue(self, *replies: Reply) -> ScriptedModel:
        with self.script.lock:
            self.script.queue.extend(replies)
        return self

    def respond_with(self, fn: Callable[[Request], Reply] | None) -> ScriptedModel:
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
        return RawReply(
            text=text, resolved_model=self.name, input_tokens=words, output_tokens=len(text.split())
        )

    def execute_chat(self, body: dict) -> tuple[dict, RawReply]:
        """A product's chat call: the system messages become ``system``, the last other message
        the ``prompt`` the script sees; the reply comes back in OpenAI's completion shape."""
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        system = (
            "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
            or None
        )
        others = [m for m in messages if m.get("role") != "system"]
        prompt = str(others[-1].get("content") or "") if others else ""
        raw = self.execute(
            Request(
                prompt=prompt,
                system=system,
                temperature=float(body.get("temperature") or 0.0),
                max_tokens=body.get("max_tokens"),
            )
        )
        completion = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": self.name,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": raw.text},
                }
            ],
            "usage": {
                "prompt_tokens": raw.input_tokens,
                "completion_tokens": raw.output_tokens,
                "total_tokens": raw.input_tokens + raw.output_tokens,
            },
        }
        return completion, raw

    def execute_embed(
        self, texts: list[str], dimensions: int | None
    ) -> tuple[list[list[float]], int]:
        """Hashed bag-of-words vectors (unit length): texts sharing words are near each other."""
        dims = dimensions or self.options.embedding_dims  # type: ignore[attr-defined]
        with self.script.lock:
            self.script.embedded.extend(texts)
        return [hashed_embedding(t, dims) for t in texts], sum(len(t.split()) for t in texts)


def hashed_embedding(text: str, dims: int) -> list[float]:
    """A deterministic unit vector: each lower-cased word adds 1 at a hashed position."""
    vec = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vec[h % dims] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0:
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


def register() -> None:
    """Make ``scripted:NAME`` resolve (``get_model``, ``--generator``, ``--judge``...) to a
    ``ScriptedModel``: a test double, so hidden from what error messages list."""
    from agentmemgate.generate import register_renderer
    from agentmemgate.llm import register_provider

    register_provider("scripted", _model, user_pickable=False)
    register_renderer("scripted", _renderer, user_pickable=False)


def _model(name: str, *, workspace=None, base_url=None, **options) -> ScriptedModel:
    return ScriptedModel(name, workspace=workspace, options=ScriptedOptions(**options))


def _renderer(ref, **options):
    from agentmemgate.generate.llm_renderer import make_llm_renderer

    return make_llm_renderer(ref, **options)
