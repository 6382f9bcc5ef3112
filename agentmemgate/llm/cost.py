"""What model calls cost: prices from ``genai-prices``, never a hand-written table.

``genai-prices`` is a maintained price database (provider and model matching, price history,
batch variants). We use its bundled data only: it is not updated at run time (its
``UpdatePrices`` downloader is never started), so a run needs no network and the same calls get
the same price. ``price_data()`` names the package version and the newest dated price change in
effect today, the "date" of the prices a run shows.

Prices are looked up by our model spec: ``openai:MODEL`` at OpenAI and ``anthropic:MODEL`` at
Anthropic by provider id, ``openai:MODEL`` at another server by that server's URL (genai-prices
knows hosted OpenAI-compatible APIs by their URL pattern); a local server, a test double or a
model the database does not know has no price: its cost is *unknown* (``None``), never 0, unless
``--price IN,OUT`` (USD per million input and output tokens) sets one. ``--price`` prices only
models the database has no price for; cached input tokens are charged at the input price then.

A call's tokens are priced as the provider counts them: ``input_tokens`` includes the
provider-cached (prompt-cache read) tokens, which are charged at the cached price.
``batch=True`` asks for the provider's batch price (genai-prices' ``processing: batch`` price
variants, e.g. 50% at OpenAI and Anthropic); a model without a batch variant keeps its
standard price, and ``--price`` is applied as given (state the batch price there). Calls
answered through a batch are costed at the batch price everywhere (the run's summary, the call
log, ``amg usage``, the reports); a dry run with ``--batch`` estimates at batch prices and says
so, with the share of the live price.

Dry runs estimate tokens without a tokenizer (none of our dependencies ships one): input tokens
are ``ceil(characters / 4)`` of the system and user prompt as they would be sent (the common
rule of thumb for English text with OpenAI and Anthropic tokenizers); output tokens are each
call's stated output budget (``max_tokens``), an upper bound rather than a guess.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

from ..errors import BadInput

PRICE_EXAMPLE = "--price 0.15,0.60"
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]"}


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT`` (USD per million input and output tokens) or a one-line error."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or any(not math.isfinite(v) or v < 0 for v in values):
        raise BadInput(
            f"--price must be two numbers per million tokens, e.g. {PRICE_EXAMPLE} "
            f"(input, output USD); got {text!r}"
        )
    return values  # type: ignore[return-value]


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by the documented rule: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


@dataclasses.dataclass(frozen=True)
class Price:
    """Where a model's price comes from: the price database (``ref`` = its model and provider)
    or ``--price`` (``per_million`` = input, output USD per million tokens)."""

    source: str  # "genai-prices" or "--price"
    model_ref: str = ""
    provider_id: str | None = None
    provider_api_url: str | None = None
    per_million: tuple[float, float] | None = None
    ref: str = ""  # how summaries name the price used

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cached_tokens: int = 0,
        *,
        when: datetime | None = None,
        batch: bool = False,
    ) -> float:
        """USD of one call (``input_tokens`` includes ``cached_tokens``)."""
        if self.per_million is not None:
            pin, pout = self.per_million
            return (input_tokens * pin + output_tokens * pout) / 1e6
        from genai_prices import Usage, calc_price

        usage = Usage(
            input_tokens=int(input_tokens or 0),
            output_tokens=int(output_tokens or 0),
            cache_read_tokens=int(cached_tokens or 0) or None,
        )
        kwargs: dict[str, Any] = {"genai_request_timestamp": when or datetime.now(UTC)}
        if batch:
            kwargs["price_context"] = {"processing": "batch"}
        if self.provider_id:
            kwargs["provider_id"] = self.provider_id
        else:
            kwargs["provider_api_url"] = self.provider_api_url
        return float(calc_price(usage, self.model_ref, **kwargs).total_price)

    def has_batch_price(self) -> bool:
        """Whether the price data has a batch price for this model in effect today (``--price``
        has none: it is applied as given)."""
        return self.per_million is None and _has_batch_price(self)


_UNRESOLVED = object()


class Pricing:
    """One model's price, looked up on first use (``lookup``), and what its calls cost."""

    def __init__(self, model: Any):
        self.model = model
        self._price: Any = _UNRESOLVED

    @property
    def price(self) -> Price | None:
        """The price database's price, or ``--price``'s, or None: unknown."""
        if self._price is _UNRESOLVED:
            m = self.model
            self._price = lookup(m.provider, m.name, getattr(m, "base_url", None), m.options.price)
        return self._price

    def call_cost(
        self, input_tokens: int, output_tokens: int, cached_tokens: int = 0, *, batch: bool = False
    ) -> float | None:
        """USD of one call with these tokens; None when the model has no price (never 0)."""
        price = self.price
        if price is None:
            return None
        try:
            return price.cost(input_tokens, output_tokens, cached_tokens, batch=batch)
        except LookupError:  # no price in effect at this date
            return None


@lru_cache(maxsize=256)
def _has_batch_price(price: Price) -> bool:
    from genai_prices import Usage, calc_price

    kwargs = (
        {"provider_id": price.provider_id}
        if price.provider_id
        else {"provider_api_url": price.provider_api_url}
    )
    try:
        info = calc_price(Usage(input_tokens=1, output_tokens=1), price.model_ref, **kwargs).model
    except LookupError:
        return False
    today = datetime.now(UTC)
    return any(
        v.when.get("processing") == "batch" and (v.constraint is None or v.constraint.active(today))
        for v in info.price_variants or ()
    )


def lookup(
    provider: str,
    name: str,
    base_url: str | None = None,
    override: tuple[float, float] | None = None,
) -> Price | None:
    """The price of ``provider:name`` (at ``base_url``), or ``--price``'s, or None (unknown)."""
    found = _lookup(provider, name, _remote(base_url))
    if found is not None:
        return found
    if override is not None:
        return Price(source="--price", per_million=tuple(override), ref="--price")  # type: ignore[arg-type]
    return None


def _remote(base_url: str | None) -> str | None:
    """A base URL worth asking the price database about (not a server on this machine)."""
    if not base_url:
        return None
    host = (urlparse(base_url).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".local"):
        return ""
    return base_url


@lru_cache(maxsize=256)
def _lookup(provider: str, name: str, base_url: str | None) -> Price | None:
    if base_url == "":  # a local server: nobody bills it
        return None
    if provider == "openai" and base_url:
        price = Price(source="genai-prices", model_ref=name, provider_api_url=base_url)
    elif provider in ("openai", "anthropic") and not base_url:
        price = Price(source="genai-prices", model_ref=name, provider_id=provider)
    else:  # scripted test doubles, an Anthropic proxy: not in the price database
        return None
    try:
        from genai_prices import Usage, calc_price

        kwargs = (
            {"provider_id": price.provider_id}
            if price.provider_id
            else {"provider_api_url": price.provider_api_url}
        )
        calc = calc_price(Usage(input_tokens=1, output_tokens=1), name, **kwargs)
    except LookupError:
        return None
    return dataclasses.replace(price, ref=f"{calc.provider.id}/{calc.model.id}")


@lru_cache(maxsize=1)
def price_data() -> str:
    """The price data a run uses, e.g. ``genai-prices 0.2.3 (bundled data, newest price change
    in effect 2026-11-09)``."""
    from genai_prices import __version__, data

    today = date.today()
    dates = [d for d in _start_dates(data.providers) if d <= today]
    newest = f", newest price change in effect {max(dates).isoformat()}" if dates else ""
    return f"genai-prices {__version__} (bundled data{newest})"


def _start_dates(obj: Any, depth: int = 0):
    from genai_prices import types

    if depth > 8:
        return
    if isinstance(obj, types.StartDateConstraint):
        yield obj.start_date
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _start_dates(x, depth + 1)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _start_dates(getattr(obj, f.name), depth + 1)


def money(usd: float | None) -> str:
    """USD as summaries show it: cents for large sums, more digits for tiny ones."""
    if usd is None:
        return "unknown"
    if usd == 0:
        return "$0.00"
    if usd >= 1:
        return f"${usd:,.2f}"
    return f"${usd:.4f}" if usd >= 0.0001 else f"${usd:.6f}"


def _fmt(n: int) -> str:
    return f"{n:,}"


def cost_lines(models: list[Any], *, planned: bool = False) -> list[str]:
    """One line per model of a run: calls, tokens (input with its provider-cached part, output)
    and cost, then the price data's name; ``planned``: what a dry run counted (estimates).

    Models of the same spec at the same server (several judges of one model) are summed."""
    groups: dict[str, dict[str, Any]] = {}
    for m in models:
        u = m.planned if planned else m.usage
        usage = u.as_dict()
        g = groups.setdefault(
            m.label, {"model": m, "cost": 0.0, "batch_cost": 0.0, "batch_live_cost": 0.0}
        )
        for k, v in usage.items():
            g[k] = g.get(k, 0) + v
        g["cost"] += u.cost_usd
        g["batch_cost"] += u.batch_cost_usd
        g["batch_live_cost"] += u.batch_live_cost_usd
    lines: list[str] = []
    priced = False
    for label, g in groups.items():
        if not (g["calls"] or g["cache_hits"]):
            continue
        price = g["model"].price
        hits = ""
        if g["cache_hits"]:
            hits = f" ({_fmt(g['cache_hits'])} answered from the workspace cache" + (
                " or by an identical call before them)" if planned else ")"
            )
        if planned:
            tokens = (
                f"~{_fmt(g['input_tokens'])} input tokens (characters / 4), at most "
                f"{_fmt(g['output_tokens'])} output tokens (the calls' output budgets)"
            )
        else:
            tokens = (
                f"{_fmt(g['input_tokens'])} input tokens ({_fmt(g['cached_tokens'])} "
                f"provider-cached), {_fmt(g['output_tokens'])} output tokens"
            )
        if g["calls"] and price is None:
            cost = "cost unknown: no price for this model; pass --price IN,OUT"
        elif planned and g["calls"] == g["unestimated"]:
            cost = "cost not estimated (their input is not made yet" + (
                "; to be sent through a batch API)" if g.get("batch_calls") else ")"
            )
        elif planned and g["unestimated"]:
            cost = (
                f"estimated cost at most {money(g['cost'])} for the "
                f"{_fmt(g['calls'] - g['unestimated'])} calls estimated"
            )
            priced = priced or price.source == "genai-prices"
        elif g["unpriced"]:
            cost = (
                f"cost {'at most ' if planned else ''}{money(g['cost'])} for the priced calls, "
                f"{_fmt(g['unpriced'])} call(s) without a price in effect"
            )
        else:
            cost = f"{'estimated cost at most' if planned else 'cost'} {money(g['cost'])}"
            priced = priced or bool(g["calls"] and price.source == "genai-prices")
        via = " (price from --price)" if price is not None and price.source == "--price" else ""
        if planned and g["calls"] == g["unestimated"]:
            pass  # said above
        elif g.get("batch_calls") and price is None:
            via += f" ({'to be ' if planned else ''}sent through a batch API)"
        elif g.get("batch_calls"):
            via += _batch_note(g, price, planned)
        lines.append(
            f"{label}: {_fmt(g['calls'])} {'planned ' if planned else ''}"
            f"call{'' if g['calls'] == 1 else 's'}{hits}; "
            f"{cost}{via}"
        )
        if g["calls"] > g["unestimated"]:
            lines.append(f"  {tokens}")
        if g["unestimated"]:
            lines.append(
                f"  {_fmt(g['unestimated'])} of the calls are on input not made yet (arcs "
                "still to render, answers still to give): not in the token and cost "
                "estimate"
            )
    if priced:
        lines.append(f"prices: {price_data()}")
    return lines


def _batch_note(g: dict[str, Any], price: Price, planned: bool) -> str:
    """How a model's batch calls are priced: at the batch price (and its share of the live
    price), or at the live price when the price data has no batch price for the model."""
    n = g["batch_calls"]
    some = "" if n >= g["calls"] else f"{_fmt(n)} of them "
    sent = "to be sent" if planned else "sent"
    if price.source == "--price":
        return f" ({some}{sent} through a batch API: --price applied as given)"
    if not price.has_batch_price():
        return (
            f" ({some}{sent} through a batch API, at the live price: the price data has no "
            "batch price for this model)"
        )
    share = (
        f": {100 * g['batch_cost'] / g['batch_live_cost']:.0f}% of the live price, "
        f"{money(g['batch_live_cost'])}"
        if g["batch_live_cost"]
        else ""
    )
    return f" ({some}{sent} through a batch API, at batch prices{share})"
