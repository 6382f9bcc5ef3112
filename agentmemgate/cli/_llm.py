"""The options every LLM-backed command shares (--timeout, --max-tokens, --structured-output) and
the one exit-status rule: 0 all done, 2 finished with recorded failures (a re-run retries them),
1 could not run (a one-line ``Error: ...``, see ``_app.handles_errors``)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Iterable, Optional

import typer

from ..llm.structured import CHOICES

EXIT_FAILURES = 2

TimeoutOpt = Annotated[Optional[float], typer.Option(
    "--timeout", min=1,
    help="Seconds to wait for one model reply (per HTTP attempt; default 120). Raise it for a "
         "slow local server; a timeout is reported as one, never as a model failure.")]
MaxTokensOpt = Annotated[Optional[int], typer.Option(
    "--max-tokens", min=1,
    help="Output token limit for every model call (default: each call's own budget, e.g. a few "
         "tokens for a class name, 4096 for a generated conversation).")]
PriceOpt = Annotated[Optional[str], typer.Option(
    "--price", metavar="IN,OUT",
    help="USD per million input and output tokens, e.g. 0.15,0.60, for a model the price "
         "database (genai-prices) has no price for, such as a local server; known models keep "
         "their listed price.")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="Print the model calls the run would make (cached answers not counted), "
                      "their expected input and output tokens and estimated cost per model; send "
                      "nothing and change nothing.")]
StructuredChoice = Enum("StructuredChoice", {c: c for c in CHOICES}, type=str)
StructuredOpt = Annotated[StructuredChoice, typer.Option(
    "--structured-output",
    help="How to ask the model for JSON: auto (json_schema, then json_object, tools, prompt; the "
         "one a server accepts is remembered per server) or force one.")]


def model_options(timeout: float | None, max_tokens: int | None,
                  structured_output: "StructuredChoice | str", specs: Iterable[str | None] = (),
                  price: str | None = None) -> dict:
    """The options for ``get_model``; refuses them when no model spec will use them."""
    from ..llm.cost import parse_price

    options = {k: v for k, v in (("timeout", timeout), ("max_tokens", max_tokens),
                                 ("price", parse_price(price))) if v is not None}
    structured = getattr(structured_output, "value", structured_output)
    if structured != "auto":
        options["structured_output"] = structured
    if options and not any(s and s not in ("offline", "offline-rules") and ":" in s
                           and not s.startswith("offline:") for s in specs):
        from ..errors import BadInput

        names = ", ".join(f"--{k.replace('_', '-')}" for k in options)
        raise BadInput(f"{names} apply to model calls; this run uses no model (name one, e.g. "
                       "openai:MODEL)")
    return options


def print_costs(*, planned: bool = False) -> None:
    """Tokens and cost per model of this command (``planned``: a dry run's estimates)."""
    from .. import invocation
    from ..llm.cost import cost_lines

    lines = cost_lines(invocation.models(), planned=planned)
    if planned and not lines:
        lines = ["no model calls: every answer is already in the workspace, or no model is used"]
    for line in lines:
        typer.echo(line)


def exit_for(failures: int) -> None:
    """Exit 2 when the run finished with recorded failures."""
    if failures:
        raise typer.Exit(EXIT_FAILURES)
