"""The ``amg`` command: thin wrappers, one library call each (see the command modules).

``amg CMD ...`` imports only the module that defines ``CMD`` (each module registers its commands
on ``_app.app`` when imported), so a command starts without paying for the other 30; ``amg
--help``, an unknown command and ``from agentmemgate.cli import app`` load them all."""

from __future__ import annotations

import gc
import importlib
import sys

# Top-level command -> the modules that register it, in the order ``amg --help`` lists them.
MODULES = (
    "build",
    "design",
    "catalog",
    "validate",
    "audit",
    "corpora",
    "corpora_files",
    "arcs_import",
    "eval",
    "usage",
    "natural",
    "view",
)
COMMANDS: dict[str, tuple[str, ...]] = {
    "build": ("build",),
    "generate": ("build",),
    "export": ("build",),
    "design": ("design",),
    "catalog": ("catalog",),
    "validate": ("validate",),
    "audit": ("audit",),
    "annotate": ("audit",),
    "mine": ("corpora",),
    "statements": ("corpora",),
    "classify": ("corpora",),
    "corpora": ("corpora_files",),
    "import": ("arcs_import",),
    "eval": ("eval",),
    "usage": ("usage",),
    "natural": ("natural",),
    "view": ("view",),
    "report": ("validate", "audit", "corpora", "eval"),
}


def load(modules: tuple[str, ...] = MODULES) -> None:
    for name in modules:
        importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str):
    if name in ("app", "report_app"):
        load()
        from . import _app

        return getattr(_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    # No cyclic collections while the CLI's modules load (they make no garbage worth one: ~10%
    # of a command's start-up); ``handles_errors`` turns the collector on as the command starts.
    gc.disable()
    words = [a for a in sys.argv[1:] if not a.startswith("-")]
    load(COMMANDS.get(words[0], MODULES) if words and sys.argv[1] == words[0] else MODULES)
    from ._app import app

    try:
        app()
    finally:
        # The interpreter's shutdown collections walk every object pandas, scipy and the SDKs
        # made (about 0.3 s of CPU after a judged run) only to free memory the exiting process
        # gives back anyway; frozen objects are skipped. Files and databases are closed already.
        gc.freeze()
