"""The options every model-calling command shares (``@llm_command``: --timeout ... --no-wait), the
tail they share (``LlmRun.finish``: the result, the tokens and cost per model, the exit status) and
the one exit-status rule: 0 all done, 2 finished with recorded failures (a re-run retries them),
1 could not run (a one-line ``Error: ...``, see ``_app.handles_errors``)."""

import dataclasses
import functools
import inspect
import os
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Annotated, Any, TypeVar

import typer

from ..llm.strategies import CHOICES
from ._app import show

EXIT_FAILURES = 2
T = TypeVar("T")

TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=1,
        help="Seconds to wait for one model reply (per HTTP attempt; default 120). Raise it for a "
        "slow local server; a timeout is reported as one, never as a model failure.",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Output token limit for every model call (default: each call's own budget, e.g. a few "
        "tokens for a class name, 4096 for a generated conversation).",
    ),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        metavar="IN,OUT",
        help="USD per million input and output tokens, e.g. 0.15,0.60, for a model the price "
        "database (genai-prices) has no price for, such as a local server; known models keep "
        "their listed price.",
    ),
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the model calls the run would make (cached answers not counted), "
        "their expected input and output tokens and estimated cost per model; send "
        "nothing and change nothing.",
    ),
]
StructuredChoice = Enum("StructuredChoice", {c: c for c in CHOICES}, type=str)
StructuredOpt = Annotated[
    StructuredChoice,
    typer.Option(
        "--structured-output",
        help="How to ask the model for JSON: auto (json_schema, then json_object, tools, prompt; the "
        "one a server accepts is remembered per server) or force one.",
    ),
]


def model_options(
    timeout: float | None,
    max_tokens: int | None,
    structured_output: StructuredChoice | str,
    specs: Iterable[str | None] = (),
    price: str | None = None,
) -> dict:
    """The options for ``get_model``; refuses them when no model spec will use them."""
    from ..llm.cost import parse_price

    options = {
        k: v
        for k, v in (
            ("timeout", timeout),
            ("max_tokens", max_tokens),
            ("price", parse_price(price)),
        )
        if v is not None
    }
    structured = getattr(structured_output, "value", structured_output)
    if structured != "auto":
        options["structured_output"] = structured
    if options and not uses_model(specs):
        from ..errors import BadInput

        names = ", ".join(f"--{k.replace('_', '-')}" for k in options)
        raise BadInput(
            f"{names} apply to model calls; this run uses no model (name one, e.g. openai:MODEL)"
        )
    return options


def print_costs(*, planned: bool = False, unestimated: bool = False) -> None:
    """Tokens and cost per model of this command (``planned``: a dry run's estimates;
    ``unestimated``: the dry run left calls out that it named above, e.g. a product's)."""
    from ..llm.cost import cost_lines
    from ..run_context import current

    lines = cost_lines(current().models, planned=planned)
    if planned and not lines:
        lines = (
            ["no call estimated: the calls named above are not estimated"]
            if unestimated
            else ["no model calls: every answer is already in the workspace, or no model is used"]
        )
    for line in lines:
        typer.echo(line)


def uses_model(specs: Iterable[str | None]) -> bool:
    """Whether any of these specs names a model (not an offline backend)."""
    from ..llm.ref import ModelRef

    return any(ModelRef.parse(s).is_model for s in specs)


BatchOpt = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Send the model calls to the provider's batch API (OpenAI Batch API, Anthropic Message "
        "Batches: half the price, answers within 24 h; a server at a base URL is used when it "
        "serves OpenAI's, as a LiteLLM proxy does): submit, poll with a progress bar, collect. "
        "Ctrl-C leaves the batches running; re-running the command picks them up.",
    ),
]
NoWaitOpt = Annotated[
    bool,
    typer.Option(
        "--no-wait", help="With --batch: submit and exit 2 (\"submitted; re-run to collect\")."
    ),
]
POLL_ENV = "AMG_BATCH_POLL_SECONDS"


def batched(
    ws: Any,
    batch: bool,
    no_wait: bool,
    specs: Iterable[str | None],
    fn: Callable[[], T],
    show_progress: bool = True,
    dry_run: bool = False,
) -> T:
    """``fn()``, or with ``--batch`` ``fn`` run until every model call it makes is answered by a
    batch (``llm.batch.run_batched``); ``--no-wait`` with batches still out exits 2. A dry run
    with ``--batch`` sends nothing: it estimates at batch prices (the run context has both)."""
    with batch_mode(batch, no_wait, specs) as poll:
        if not batch or dry_run:
            return fn()
        from ..llm.batch import run_batched

        return run_batched(
            ws, fn, wait=not no_wait, show_progress=show_progress, poll_interval=poll
        )  # type: ignore[return-value]


class batch_mode:
    """The ``--batch`` / ``--no-wait`` rules around a command body that runs its own batches
    (``amg build``): ``with batch_mode(...) as poll``: refusals first, then the poll interval;
    batches still running (``--no-wait``) exit 2."""

    def __init__(self, batch: bool, no_wait: bool, specs: Iterable[str | None]):
        self.poll = batch_poll_interval(batch, no_wait, specs)
        self.batch = batch

    def __enter__(self) -> float:
        return self.poll

    def __exit__(self, kind: Any, e: Any, tb: Any) -> bool:
        if self.batch and e is not None:
            from ..llm.batch import BatchesPending

            if isinstance(e, BatchesPending):
                pending_exit(e)
        return False


def batch_poll_interval(batch: bool, no_wait: bool, specs: Iterable[str | None]) -> float:
    """Refuse ``--no-wait`` without ``--batch`` and ``--batch`` without a model; the seconds
    between polls (``AMG_BATCH_POLL_SECONDS``, default 30)."""
    from ..errors import BadInput

    if not batch:
        if no_wait:
            raise BadInput("--no-wait goes with --batch")
        return 0.0
    if not uses_model(specs):
        raise BadInput(
            "--batch applies to model calls; this run uses no model (name one, e.g. openai:MODEL)"
        )
    from ..llm.batch import DEFAULT_POLL_S

    try:
        return float(os.environ.get(POLL_ENV) or DEFAULT_POLL_S)
    except ValueError:
        raise BadInput(f"{POLL_ENV} must be a number of seconds") from None


def pending_exit(e: Exception) -> None:
    """``--no-wait`` (or batches still running): say so and exit 2."""
    typer.echo(str(e), err=True)
    raise typer.Exit(EXIT_FAILURES)


def exit_for(failures: int) -> None:
    """Exit 2 when the run finished with recorded failures."""
    if failures:
        raise typer.Exit(EXIT_FAILURES)


# name -> (annotation, default), in the order ``--help`` lists them
LLM_OPTIONS: dict[str, tuple[Any, Any]] = {
    "timeout": (TimeoutOpt, None),
    "max_tokens": (MaxTokensOpt, None),
    "structured_output": (StructuredOpt, StructuredChoice.auto),
    "price": (PriceOpt, None),
    "dry_run": (DryRunOpt, False),
    "batch": (BatchOpt, False),
    "no_wait": (NoWaitOpt, False),
}
BATCH_OPTIONS = ("batch", "no_wait")


@dataclasses.dataclass(frozen=True)
class LlmRun:
    """A model-calling command's LLM options, and what they do around its library call."""

    timeout: float | None = None
    max_tokens: int | None = None
    structured_output: Any = "auto"
    price: str | None = None
    dry_run: bool = False
    batch: bool = False
    no_wait: bool = False

    def options(self, specs: Iterable[str | None]) -> dict:
        """The options for ``get_model`` (``model_options``) of the models ``specs`` name."""
        return model_options(
            self.timeout, self.max_tokens, self.structured_output, specs, self.price
        )

    def run(
        self, ws: Any, specs: Iterable[str | None], fn: Callable[[], T], show_progress: bool = True
    ) -> T:
        """``fn()``, through the batch APIs with ``--batch`` (``batched``)."""
        return batched(ws, self.batch, self.no_wait, specs, fn, show_progress, self.dry_run)

    def batch_mode(self, specs: Iterable[str | None]) -> batch_mode:
        """The ``--batch`` rules around a body that runs its own batches (``amg build``)."""
        return batch_mode(self.batch, self.no_wait, specs)

    def finish(
        self, result: Any, failed: int = 0, *, unestimated: bool = False, costs: bool = True
    ) -> None:
        """The shared tail: print ``result`` (``_app.show``), then the tokens and cost per model
        (a dry run's estimates; ``costs=False`` for JSON output), and exit 2 when a real run
        recorded ``failed`` failures."""
        show(result)
        if costs:
            print_costs(planned=self.dry_run, unestimated=unestimated)
        if not self.dry_run:
            exit_for(failed)


def llm_command(fn: Callable | None = None, *, batch: bool = True) -> Callable:
    """Give a command the LLM options: its parameter ``llm: LlmRun`` becomes ``--timeout``,
    ``--max-tokens``, ``--structured-output``, ``--price``, ``--dry-run``, ``--batch`` and
    ``--no-wait`` (without the last two with ``batch=False``), listed in ``--help`` where it
    stands, and the command gets them back as one ``LlmRun``.

    A command that declares one of these options itself (to list it elsewhere in its ``--help``,
    or with help text of its own) keeps that declaration, and ``llm`` reads its value from there.
    Goes under ``@handles_errors``, which reads ``dry_run`` and ``batch`` as the command starts."""

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn, eval_str=True)  # typer reads the annotations as given here
        names = [n for n in LLM_OPTIONS if batch or n not in BATCH_OPTIONS]
        own = {n for n in names if n in sig.parameters}
        added = [
            inspect.Parameter(
                n,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=LLM_OPTIONS[n][0],
                default=LLM_OPTIONS[n][1],
            )
            for n in names
            if n not in own
        ]
        if "llm" not in sig.parameters:
            raise TypeError(f"@llm_command: {fn.__name__} has no `llm: LlmRun` parameter")
        params = [q for p in sig.parameters.values() for q in (added if p.name == "llm" else [p])]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {n: kwargs[n] if n in own else kwargs.pop(n) for n in names if n in kwargs}
            return fn(*args, llm=LlmRun(**values), **kwargs)

        wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        return wrapper

    return decorate(fn) if fn is not None else decorate
