"""Anthropic's Message Batches: one create call with every request's ``custom_id`` and
``params`` (exactly what ``AnthropicModel.execute`` would send live), ``processing_status``
``in_progress`` -> (``canceling``) -> ``ended``, ``request_counts`` (processing, succeeded,
errored, canceled, expired), and a JSONL results file whose lines are ``succeeded`` (a Message),
``errored``, ``canceled`` or ``expired``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic

from ._batch_state import BatchInfo, Outcome
from ._errors import from_sdk_error, rejected_field

_ITEM_STATUS = {"errored": "errored", "canceled": "cancelled", "expired": "expired"}


def _sdk(model: Any, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except anthropic.APIError as e:
        raise from_sdk_error(
            e,
            label=f"{model.label} (batch API)",
            key_env="ANTHROPIC_API_KEY",
            model=model.name,
            attempts=1,
            secrets=model.secrets(),
        ) from None


def submit(model: Any, items: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
    b = _sdk(
        model,
        model.client.messages.batches.create,
        requests=[{"custom_id": cid, "params": body} for cid, body in items],
    )
    return _info(b)


def retrieve(model: Any, batch_id: str) -> BatchInfo:
    return _info(_sdk(model, model.client.messages.batches.retrieve, batch_id))


def _info(b: Any) -> BatchInfo:
    c = b.request_counts
    total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
    return BatchInfo(
        id=b.id,
        state=b.processing_status,
        ended=b.processing_status == "ended",
        total=total,
        done=total - c.processing,
        failed=c.errored + c.canceled + c.expired,
    )


def results(model: Any, info: BatchInfo) -> Iterator[Outcome]:
    for r in _sdk(model, model.client.messages.batches.results, info.id):
        result = r.result
        if result.type == "succeeded":
            yield Outcome(r.custom_id, "returned", payload=result.message.model_dump(mode="json"))
        elif result.type == "errored":
            e = result.error.error
            message = str(getattr(e, "message", "") or "")
            yield Outcome(
                r.custom_id,
                "errored",
                error=f"{getattr(e, 'type', 'error')}: {message}",
                field=rejected_field(None, message),
            )
        else:
            yield Outcome(
                r.custom_id,
                _ITEM_STATUS.get(result.type, "errored"),
                error=f"the request was {result.type} before it was processed",
            )
