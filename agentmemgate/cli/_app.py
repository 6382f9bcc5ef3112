"""The typer apps and the one place where library errors become one-line CLI errors."""

from __future__ import annotations

import functools
import sys
from typing import Callable

import typer

app = typer.Typer(
    help="AgentMemGate toolkit: build, validate and audit speculation-contamination benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
report_app = typer.Typer(help="Reports: validation, agreement, classifier, eval.", no_args_is_help=True)
app.add_typer(report_app, name="report")


def fail(message: str, code: int = 1) -> None:
    """Print one line to stderr and exit non-zero."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def handles_errors(fn: Callable) -> Callable:
    """Turn domain errors into one-line messages; keep tracebacks for real bugs only."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from ..errors import AmgError

        try:
            return fn(*args, **kwargs)
        except AmgError as e:
            fail(str(e).splitlines()[0] if str(e) else type(e).__name__)
        except KeyboardInterrupt:
            typer.echo("Interrupted: finished work is saved; re-run the same command to resume.",
                       err=True)
            raise typer.Exit(130)
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0)

    return wrapper
