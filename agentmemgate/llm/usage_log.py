"""``amg usage`` and the reports' cost lines: what the call log says was spent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..errors import BadInput
from .cost import _fmt, money


def _model_name(family: str, model: str) -> str:
    """``openai:gpt-4o-mini``; a model at an OpenAI-compatible server names its server."""
    from .model import display_name
    from .servers import COMPATIBLE

    if family.startswith(COMPATIBLE):
        return f"openai:{display_name(model)} at {family[len(COMPATIBLE) :]}"
    return f"{family}:{display_name(model)}"


def usage_rows(
    ws, since: str | None = None, commands: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """What the workspace's call log says was spent, by command, model and purpose.

    ``calls``: replies received (an HTTP attempt that brought none, e.g. a 429, is counted in
    ``attempts`` only); tokens as providers reported them (``cached_input_tokens`` is part of
    ``input_tokens``); ``cost_usd`` sums the calls with a price, ``unpriced_calls`` counts the
    replies without one (their cost is unknown, not 0); ``cost_usd`` is None when every reply
    was unpriced, and 0 when nothing was charged (no reply came, or only a test double's).
    ``test_double``: the rows of a test model (``scripted``), which makes no HTTP requests (its
    ``attempts`` are its calls and failures) and is never charged; the total's ``http_attempts``
    leaves them out.
    ``batch_calls``: the part of ``calls`` answered through a provider batch API (``--batch``),
    costed at the batch price (the live one where the price data has none).
    ``since``: an ISO date or date-time (UTC); earlier calls are left out. ``commands``: only
    calls these commands made (reports: the calls behind their results)."""
    clauses, args = [], []
    if since is not None:
        try:
            when = datetime.fromisoformat(since)
        except ValueError:
            raise BadInput(
                f"--since must be a date such as 2026-11-30 (or 2026-11-30T14:00); got {since!r}"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        clauses.append("created_at >= ?")
        args.append(when.astimezone(UTC).isoformat(timespec="seconds"))
    if commands is not None:
        clauses.append(f"command in ({', '.join('?' * len(commands))})")
        args += list(commands)
    where = f"where {' and '.join(clauses)}" if clauses else ""
    sql = (
        f"select coalesce(command, ''), family, requested_model, coalesce(purpose, ''), "
        "count(*), count(input_tokens), coalesce(sum(input_tokens), 0), "
        "coalesce(sum(cached_tokens), 0), coalesce(sum(output_tokens), 0), sum(cost_usd), "
        "sum(input_tokens is not null and cost_usd is null), min(created_at), max(created_at), "
        "coalesce(sum(batch = 1 and input_tokens is not null), 0) "
        f"from llm_calls {where} group by 1, 2, 3, 4 order by min(id)"
    )
    from .registry import is_test_double

    rows = []
    for (
        command,
        family,
        model,
        purpose,
        attempts,
        calls,
        tin,
        tcached,
        tout,
        cost,
        unpriced,
        first,
        last,
        batch,
    ) in ws.db.execute(sql, args).fetchall():
        double = is_test_double(family)
        unpriced = 0 if double else unpriced or 0
        rows.append(
            {
                "command": command or "(not recorded)",
                "model": _model_name(family, model),
                "purpose": purpose or "(none)",
                "calls": calls,
                "attempts": attempts,
                "input_tokens": tin,
                "cached_input_tokens": tcached,
                "output_tokens": tout,
                "cost_usd": _charged(cost, unpriced),
                "unpriced_calls": unpriced,
                "batch_calls": batch,
                "test_double": double,
                "first": first,
                "last": last,
            }
        )
    total = {
        k: sum(r[k] for r in rows)
        for k in (
            "calls",
            "attempts",
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "unpriced_calls",
            "batch_calls",
        )
    }
    total["http_attempts"] = sum(r["attempts"] for r in rows if not r["test_double"])
    priced = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    total["cost_usd"] = sum(priced) if priced or not rows else None
    return {"since": since, "rows": rows, "total": total}


def _charged(cost: float | None, unpriced: int) -> float | None:
    """What the calls of one row cost: their priced sum; None (unknown) when every reply was
    unpriced; 0 when nothing was charged."""
    if cost is not None:
        return cost
    return None if unpriced else 0.0


def calls_behind(ws, commands: tuple[str, ...], purposes: tuple[str, ...]) -> dict | None:
    """The ``usage_rows`` of the calls behind one report's results: made by ``commands``, with a
    purpose starting with one of ``purposes``; None when there were none (nothing to show)."""
    usage = usage_rows(ws, commands=commands)
    usage["rows"] = [r for r in usage["rows"] if r["purpose"].startswith(purposes)]
    usage.pop("total")  # of every purpose: the report shows its own rows
    return usage if usage["rows"] else None


def usage_lines(report: dict[str, Any]) -> list[str]:
    """``amg usage`` as text: one block per command, one line per model and purpose."""
    rows = report["rows"]
    if not rows:
        return [
            "No model calls in the call log"
            + (f" since {report['since']}" if report["since"] else "")
            + "."
        ]

    def tokens(r: dict) -> str:
        return (
            f"{_fmt(r['input_tokens'])} in ({_fmt(r['cached_input_tokens'])} cached), "
            f"{_fmt(r['output_tokens'])} out"
        )

    out: list[str] = []
    for command in dict.fromkeys(r["command"] for r in rows):
        out.append(command)
        for r in (r for r in rows if r["command"] == command):
            out.append(f"  {r['model']}  {r['purpose']}: {_calls(r)}, {tokens(r)}; {_cost(r)}")
    t = report["total"]
    live = [r for r in rows if not r["test_double"]]
    doubles = [r for r in rows if r["test_double"]]
    what = []
    if live:
        calls = sum(r["calls"] for r in live)
        what.append(
            f"{_n(calls, 'call')} ({_n(t['http_attempts'], 'HTTP attempt')}{_batch(t, ', ')})"
        )
    if doubles:
        what.append(_from_test_models(doubles))
    out.append(f"total: {' and '.join(what)}, {tokens(t)}; {_cost(t)}")
    return out


def _n(n: int, word: str, plural: str | None = None) -> str:
    return f"{_fmt(n)} {word if n == 1 else plural or word + 's'}"


def _calls(r: dict[str, Any]) -> str:
    """What the calls of one row came to: replies, and the attempts that brought none."""
    if r["test_double"]:
        return _from_test_models([r])
    missed = r["attempts"] - r["calls"]
    return (
        _n(r["calls"], "call")
        + _batch(r)
        + (f" ({_n(missed, 'HTTP attempt')} without a reply)" if missed else "")
    )


def _from_test_models(rows: list[dict[str, Any]]) -> str:
    """``60 replies from the scripted test model (no HTTP)``, with the calls that failed."""
    replies = sum(r["calls"] for r in rows)
    failed = sum(r["attempts"] - r["calls"] for r in rows)
    names = " and ".join(dict.fromkeys(r["model"].partition(":")[0] for r in rows))
    return (
        _n(replies, "reply", "replies")
        + (f" and {_n(failed, 'failure')}" if failed else "")
        + f" from the {names} test model (no HTTP)"
    )


def _cost(r: dict[str, Any]) -> str:
    if r["cost_usd"] is None:
        return "cost unknown (no price)"
    return money(r["cost_usd"]) + (
        f" + {_n(r['unpriced_calls'], 'call')} without a price" if r["unpriced_calls"] else ""
    )


def by_model_lines(report: dict[str, Any]) -> list[str]:
    """One line per model of a ``usage_rows`` report (reports: calls, tokens, cost per model)."""
    models: dict[str, dict[str, Any]] = {}
    for r in report["rows"]:
        m = models.setdefault(
            r["model"],
            {
                "calls": 0,
                "input_tokens": 0,
                "cached_input_tokens": 0,
                "output_tokens": 0,
                "cost_usd": None,
                "unpriced_calls": 0,
                "batch_calls": 0,
            },
        )
        for k in (
            "calls",
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "unpriced_calls",
            "batch_calls",
        ):
            m[k] += r[k]
        if r["cost_usd"] is not None:
            m["cost_usd"] = (m["cost_usd"] or 0.0) + r["cost_usd"]
    out = []
    for name, m in models.items():
        cost = _cost(m)
        out.append(
            f"{name}: {_fmt(m['calls'])} calls{_batch(m)}, {_fmt(m['input_tokens'])} input tokens "
            f"({_fmt(m['cached_input_tokens'])} provider-cached), "
            f"{_fmt(m['output_tokens'])} output tokens; {cost}"
        )
    return out


def _batch(r: dict[str, Any], sep: str = " (") -> str:
    """`` (N through a batch API)`` when some of the calls went through one (their cost in the
    call log is the batch price, or the live one where the price data has no batch price)."""
    n = r.get("batch_calls") or 0
    if not n:
        return ""
    return f"{sep}{_fmt(n)} through a batch API" + (")" if sep == " (" else "")
