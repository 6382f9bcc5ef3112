"""Sending a call live, the way ``Model.complete`` does when no batch collects it (``batch``).

Try after try until a reply is valid (``asking``): each in the structured-output strategy the
server accepts (``strategies``; a request the server refuses for how it asks for JSON moves the
model to the next one and is asked again), its HTTP attempts logged (``call_log``) and counted in
the model's ``usage``; the valid answer is cached.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ..errors import AmgError
from ._errors import CallFailed, scrub, shorten
from ._http import Attempt, recording
from .asking import Asking, gave_up, read_reply, reask
from .request import RawReply, Request
from .structured import STRATEGY_FIELDS, ask_text


@dataclasses.dataclass
class _Sent:
    """One attempt that got a reply: what was sent, the reply, and its HTTP attempts."""

    req: Request
    raw: RawReply
    attempts: list[Attempt]
    t0: float


def send(model: Any, ask: Asking) -> Any:
    """Ask ``model`` live until a reply is valid or the tries are spent; the ``Response``."""
    started = time.monotonic()
    tries = model.options.invalid_output_retries + 1
    while ask.tries < tries:
        sent = _attempt(model, ask)
        if sent is None:
            continue  # the server refused this way of asking for JSON: ask the next way
        ask.tries += 1
        raw = sent.raw
        parsed, problem = (
            (None, None)
            if raw.refusal is not None
            else read_reply(ask, raw, hint=lambda: _empty_reply_hint(model))
        )
        model._count(
            sent.attempts,
            raw,
            failed=raw.refusal is not None or (problem is not None and ask.tries == tries),
        )
        if raw.refusal is not None:
            reason = shorten(scrub(raw.refusal or "no reason given", model.secrets()))
            _log_reply(model, ask, sent, "refused", reason)
            raise CallFailed(f"{model.label} refused to answer: {reason}", kind="refusal")
        if problem is None:
            _log_reply(model, ask, sent, "ok")
            latency = round(time.monotonic() - started, 4)
            model.cache.put(ask.key, sent.req, raw, latency)
            return model._response(
                raw.text,
                parsed,
                ask.key,
                cached=False,
                resolved=raw.resolved_model or model.name,
                latency=latency,
                tokens=(raw.input_tokens, raw.output_tokens, raw.cached_tokens),
                logprobs=raw.logprobs,
                strategy=sent.req.strategy,
                tries=ask.tries,
            )
        _log_reply(model, ask, sent, "invalid_output", problem)
        reask(ask, raw, problem)
    raise gave_up(model.label, ask, tries, ask.problem)


def _attempt(model: Any, ask: Asking) -> _Sent | None:
    """Ask once (the SDK's retries included), in the structured-output strategy of the moment.

    Returns the reply, or None when the server refused the strategy (the next one is in
    place: ask again). A failed call is logged, counted and raised.
    """
    strategy = model.strategy() if ask.schema is not None else None
    req = ask.request(ask_text(ask.asked, ask.schema, strategy), strategy)
    with (
        model.throttle.slot() as slot,
        recording(on_lost=lambda waited, s=slot: model.throttle.lost(s, waited)) as attempts,
    ):
        t0 = time.monotonic()
        try:
            raw = model.execute(req)
        except CallFailed as e:
            if (
                strategy is not None
                and e.kind == "unsupported"
                and e.field in STRATEGY_FIELDS.get(strategy, ())
            ):
                ask.logged = model.call_log.record(
                    ask.key,
                    req,
                    attempts,
                    t0,
                    ask.logged,
                    status="unsupported",
                    error=str(e),
                    note=f"{strategy} refused ({e.field})",
                )
                model._count(attempts, call=False)
                ask.note = model.structured.refused(strategy, e)
                return None
            if e.kind == "timeout":
                e = model.throttle.timeout_error(slot, len(attempts))
            _failed(model, ask, req, attempts, t0, e)
            raise e from None
        except AmgError as e:
            _failed(model, ask, req, attempts, t0, e)
            raise
        slot.usable = True
    return _Sent(req, raw, attempts, t0)


def _failed(
    model: Any,
    ask: Asking,
    req: Request,
    attempts: list[Attempt],
    t0: float,
    error: AmgError | CallFailed,
) -> None:
    ask.logged = model.call_log.record(
        ask.key,
        req,
        attempts,
        t0,
        ask.logged,
        status=getattr(error, "kind", "fatal"),
        error=str(error),
        note=ask.note,
    )
    model._count(attempts, failed=True)


def _empty_reply_hint(model: Any) -> str:
    """The provider's advice on an empty reply, said once to the person running the command."""
    if hint := model.empty_reply_hint():
        model.say(f"{model.label} sent an empty reply: {hint}")
    return hint


def _log_reply(model: Any, ask: Asking, sent: _Sent, status: str, error: str = "") -> None:
    ask.logged = model.call_log.record(
        ask.key,
        sent.req,
        sent.attempts,
        sent.t0,
        ask.logged,
        status=status,
        raw=sent.raw,
        error=error,
        note=ask.note,
    )
