"""The ``amg`` command: thin wrappers, one library call each (see the command modules)."""

from __future__ import annotations

from ._app import app, report_app  # noqa: F401
from . import build, validate  # noqa: F401  (registers build, generate, export, validate)
from . import audit  # noqa: F401  (registers audit, annotate, report agreement)
from . import corpora  # noqa: F401  (registers mine, statements, classify, report classifier)
from . import arcs_import  # noqa: F401  (registers import)
from . import eval  # noqa: F401  (registers eval run/answers/show, report eval)
from . import usage  # noqa: F401  (registers usage)
from . import natural  # noqa: F401  (registers natural build/list/show)


def main() -> None:
    app()
