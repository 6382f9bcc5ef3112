"""OpenAI's Batch API for chat completions: one JSONL input file (``custom_id``, ``method``,
``url``, ``body`` per line), a batch over it, and the output and error files it ends with.

The body of each line is exactly what ``OpenAIModel.execute`` would send live
(``OpenAIModel.request_body``), so a batch answer is the same request at half the price. States:
``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed``; or ``failed`` (the input
file was refused: every request fails with the batch's error), ``expired`` (24 h passed: the
requests not done are in the error file with code ``batch_expired``), ``cancelling`` ->
``cancelled`` (code ``batch_cancelled``).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import openai

from ._batch_state import BatchInfo, Outcome
from ._errors import from_sdk_error, rejected_field

ENDPOINT = "/v1/chat/completions"
ENDED = ("completed", "expired", "cancelled", "failed")
_ITEM_STATUS = {"batch_expired": "expired", "batch_cancelled": "cancelled"}


def _sdk(model: Any, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except openai.APIError as e:
        raise from_sdk_error(e, label=f"{model.label} (batch API)", key_env="OPENAI_API_KEY",
                             model=model.name, attempts=1, secrets=model.secrets()) from None


def submit(model: Any, items: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
    data = "".join(json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body},
                              ensure_ascii=False) + "\n" for cid, body in items).encode()
    f = _sdk(model, model.client.files.create, file=("amg-batch.jsonl", data, "application/jsonl"),
             purpose="batch")
    b = _sdk(model, model.client.batches.create, completion_window="24h", endpoint=ENDPOINT,
             input_file_id=f.id, metadata={"created_by": "agentmemgate"})
    return _info(b)


def retrieve(model: Any, batch_id: str) -> BatchInfo:
    return _info(_sdk(model, model.client.batches.retrieve, batch_id))


def _info(b: Any) -> BatchInfo:
    counts = b.request_counts
    error = ""
    if b.errors is not None and b.errors.data:
        e = b.errors.data[0]
        error = f"{e.code or 'error'}: {e.message or ''}".strip()
        if e.line is not None:
            error += f" (line {e.line})"
    return BatchInfo(id=b.id, state=b.status, ended=b.status in ENDED,
                     total=counts.total if counts else 0,
                     done=(counts.completed + counts.failed) if counts else 0,
                     failed=counts.failed if counts else 0, input_file_id=b.input_file_id,
                     output_file_id=b.output_file_id, error_file_id=b.error_file_id, error=error)


def results(model: Any, info: BatchInfo) -> Iterator[Outcome]:
    """Every line of the output and error files, as outcomes (payload: the completion body)."""
    for file_id in (info.output_file_id, info.error_file_id):
        if not file_id:
            continue
        text = _sdk(model, model.client.files.content, file_id).text
        for line in text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            cid = row.get("custom_id") or ""
            resp = row.get("response") or {}
            err = row.get("error")
            status_code = resp.get("status_code")
            if status_code == 200 and isinstance(resp.get("body"), dict):
                yield Outcome(cid, "returned", payload=resp["body"], http_status=200)
            elif err:
                code = err.get("code") or "error"
                yield Outcome(cid, _ITEM_STATUS.get(code, "errored"),
                              error=f"{code}: {err.get('message') or ''}".strip(),
                              http_status=status_code)
            else:
                body = resp.get("body") or {}
                e = body.get("error", body) if isinstance(body, dict) else {}
                message = e.get("message") if isinstance(e, dict) else str(body)
                yield Outcome(cid, "errored", error=f"HTTP {status_code}: {message or 'no detail'}",
                              http_status=status_code, field=rejected_field(body))

