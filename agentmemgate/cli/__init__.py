"""The ``amg`` command: thin wrappers, one library call each (see the command modules).

``amg CMD ...`` imports only the modules that define ``CMD`` (each module registers its commands
on ``_app.app`` when imported), so a command starts without paying for the others; ``amg
--help``, an unknown command and ``from agentmemgate.cli import app`` load them all. Which module
defines which command is read from the modules' own registrations (``commands``): no map is kept
by hand.

The command modules keep real annotations (no ``from __future__ import annotations``): typer reads
every command's annotations as the CLI starts, and strings would be compiled and evaluated again
each time."""

import gc
import importlib
import re
import sys
from functools import cache
from pathlib import Path

# The command modules, in the order ``amg --help`` lists their commands (a test checks that every
# module of this folder is here).
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
# How a module registers a top-level command: ``@app.command("NAME")`` (or ``@app.command()`` over
# ``def NAME``), ``app.add_typer(GROUP_APP, name="NAME")``, ``@report_app.command(...)`` (a report).
_REGISTERS = re.compile(
    r'^@app\.command\((?:"(?P<named>[\w-]+)")?[^\n]*\)\n(?:@.*\n)*def (?P<function>\w+)'
    r'|^app\.add_typer\(\w+, name="(?P<group>[\w-]+)"'
    r"|^@(?P<report>report)_app\.command\(",
    re.M,
)


@cache
def commands() -> dict[str, tuple[str, ...]]:
    """Top-level command -> the modules that register it, read from the modules' source (a few
    kilobytes of text: far cheaper than importing them)."""
    found: dict[str, tuple[str, ...]] = {}
    for module in MODULES:
        text = Path(__file__).with_name(f"{module}.py").read_text(encoding="utf-8")
        for m in _REGISTERS.finditer(text):
            name = m["named"] or m["group"] or m["report"] or m["function"].replace("_", "-")
            if module not in found.get(name, ()):
                found[name] = (*found.get(name, ()), module)
    return found


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
    load(commands().get(words[0], MODULES) if words and sys.argv[1] == words[0] else MODULES)
    from ._app import app

    try:
        app()
    finally:
        # The interpreter's shutdown collections walk every object pandas, scipy and the SDKs
        # made (about 0.3 s of CPU after a judged run) only to free memory the exiting process
        # gives back anyway; frozen objects are skipped. Files and databases are closed already.
        gc.freeze()
