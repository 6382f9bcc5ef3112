"""The command this process is running and the models it created (no imports: the CLI's start-up
stays fast). The call log records the command with every call (``amg usage`` sums by it); the
CLI prints tokens and cost per model of the run from ``models()``."""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_command = ""
_dry_run = False
_batch = False
_models: list[Any] = []  # strong: a summary reports models the library already let go


def begin(command: str, dry_run: bool = False, batch: bool = False) -> None:
    """A new command starts: name it and forget the models of any earlier one (tests run many).
    ``dry_run``: it sends nothing, so a provider needs no API key to count its calls.
    ``batch``: ``--batch``, so a model whose server has no batch API is refused as it is made,
    before the command does any work."""
    global _command, _dry_run, _batch
    with _lock:
        _command = command
        _dry_run = dry_run
        _batch = batch
        _models.clear()


def end() -> None:
    """The command finished: calls made after it (a library caller in the same process, the
    next test) are no longer its calls, and are no longer in a dry run."""
    global _command, _dry_run, _batch
    with _lock:
        _command = ""
        _dry_run = _batch = False


def dry_run() -> bool:
    return _dry_run


def batch() -> bool:
    return _batch


def command() -> str:
    return _command


def created(model: Any) -> None:
    with _lock:
        _models.append(model)


def models() -> list[Any]:
    """The models created since ``begin``, in creation order."""
    with _lock:
        return list(_models)
