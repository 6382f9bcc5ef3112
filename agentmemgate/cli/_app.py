"""The typer apps and the one place where library errors become one-line CLI errors."""

import functools
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

# Typer >= 0.24 vendors click (its errors derive from TyperException); older typer raises click's.
# click is imported only for an older typer: a second copy of click costs a third of start-up.
_USAGE_ERRORS: tuple[type[BaseException], ...] = (typer.TyperException,)
try:
    import typer._click
except ImportError:  # pragma: no cover - typer < 0.24
    import click

    _USAGE_ERRORS += (click.ClickException,)


class _OneLineUsageErrors(TyperGroup):
    """A usage error (a wrong option type, a missing argument, an unknown command) prints one
    ``Error:`` line and the ``--help`` hint and exits 1, like every other error, instead of
    typer's boxed panel."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _USAGE_ERRORS as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `amg audit`: print its help
                typer.echo(e.format_message())
                sys.exit(1)
            typer.echo(f"Error: {' '.join(e.format_message().split())}", err=True)
            ctx = getattr(e, "ctx", None)
            path = ctx.command_path if ctx is not None else self._path(args, prog_name)
            typer.echo(f"Try '{path} --help' for help.", err=True)
            sys.exit(1)
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def _path(self, args, prog_name) -> str:
        """``amg audit create`` from the command line, for errors raised without a context."""
        words, cmd = [prog_name or "amg"], self
        for a in sys.argv[1:] if args is None else list(args):
            sub = getattr(cmd, "commands", {}).get(a)
            if sub is None:
                break
            words.append(a)
            cmd = sub
        return " ".join(words)


def group(**kwargs: Any) -> typer.Typer:
    """A command group with click's plain help: typer's boxed help imports rich's Markdown,
    syntax and traceback machinery, which tripled the start-up of ``amg --help``."""
    return typer.Typer(rich_markup_mode=None, **kwargs)


app = group(
    cls=_OneLineUsageErrors,
    help="AgentMemGate toolkit: build, validate and audit speculation-contamination benchmarks.\n\n"
    "A model named by --ROLE (--generator, --judge, --model, --miner ...) is reached at "
    "the OpenAI-compatible server --ROLE-base-url names; --base-url, where a command had "
    "it, still works.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
report_app = group(
    help="Reports: validation, equivalence, agreement, classifier, eval.", no_args_is_help=True
)
app.add_typer(report_app, name="report")


def display_spec(spec: str) -> str:
    """``llm.model.display_spec``, imported when a command prints (not when the CLI starts)."""
    from ..llm.model import display_spec as show

    return show(spec)


def load_rooms() -> None:
    """Import the rooms that register with lower ones (the evaluation's dataset-card section and
    ``answers:SYSTEM`` audit source): called by the commands that use those registries (writing a
    dataset card, reading an audit source) once their inputs are checked; others never pay."""
    from .. import evaluate  # noqa: F401  (registers them)


def design_splits(workspace, split: str, design: str | None = None, catalogs=()):
    """The design a command works with (``--design``, else the workspace's, else the paper's)
    and the splits ``split`` names in it; a mistyped name is refused before anything is made."""
    from ..design.stored import design_for

    chosen = design_for(workspace, design, catalogs or ())
    with unknown_names_explained(workspace, design):
        return chosen, chosen.resolve_splits(split)


@contextmanager
def unknown_names_explained(workspace, design: str | None = None):
    """An unknown split, factor or level checked against the paper's design only because the
    ``--workspace`` given does not exist (a typo, often) says so."""
    from ..errors import UnknownLevel
    from ..workspace import DB_NAME

    try:
        yield
    except UnknownLevel as e:
        path = Path(getattr(workspace, "path", workspace)) if workspace is not None else None
        if design is None and path is not None and not (path / DB_NAME).is_file():
            raise UnknownLevel(
                f"{e} (there is no workspace at {str(workspace)!r} yet, so the "
                "paper's design applies: pass --design, or the --workspace that "
                "holds yours)"
            ) from None
        raise


def show(result: Any) -> None:
    """Print what a command made as the result renders itself: its ``lines()``, under its
    ``table()`` when it has one (a rich table); or the text or lines given. Lines are printed
    whole and verbatim (never wrapped at the terminal's width, never read as markup)."""
    if callable(getattr(result, "table", None)) and (table := result.table()) is not None:
        from rich.console import Console

        Console().print(table)
    if hasattr(result, "lines"):
        result = result.lines()
    typer.echo(result if isinstance(result, str) else "\n".join(result))


def fail(message: str, code: int = 1) -> None:
    """Print one line to stderr and exit non-zero."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def _command_path(fn: Callable) -> str:
    """``amg mine hedges`` for the command running now (recorded with every model call)."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - typer without its vendored click
        from click import get_current_context
    ctx = get_current_context(silent=True)
    if ctx is None:
        return f"amg {fn.__name__}"
    return " ".join(["amg", *ctx.command_path.split()[1:]])  # the test runner names it "root"


def handles_errors(fn: Callable) -> Callable:
    """Turn domain errors into one-line messages; keep tracebacks for real bugs only."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import gc

        from ..errors import AmgError
        from ..llm import CallFailed
        from ..run_context import run_context

        gc.enable()  # ``main`` paused it for the start-up imports

        try:
            with run_context(
                command=_command_path(fn),
                dry_run=bool(kwargs.get("dry_run")),
                batch=bool(kwargs.get("batch")),
            ):
                return fn(*args, **kwargs)
        except (AmgError, CallFailed) as e:  # a model call no item records: one line all the same
            fail(str(e).splitlines()[0] if str(e) else type(e).__name__)
        except KeyboardInterrupt:
            typer.echo(
                "Interrupted: finished work is saved; re-run the same command to resume.", err=True
            )
            raise typer.Exit(130) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None

    return wrapper
