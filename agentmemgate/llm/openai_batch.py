"""OpenAI's Batch API for chat completions: one JSONL input file (``custom_id``, ``method``,
``url``, ``body`` per line), a batch over it, and the output and error files it ends with.

The body of each line is exactly what ``OpenAIModel.execute`` would send live
(``OpenAIModel.request_body``), so a batch answer is the same request at half the price. States:
``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed``; or ``failed`` (the input
file was refused: every request fails with the batch's error), ``expired`` (24 h passed: the
requests not done are in the error file with code ``batch_expired``), ``cancelling`` ->
``cancelled`` (code ``batch_cancelled``).

OpenAI serves it, and so do gateways in front of other servers (a LiteLLM proxy, Azure OpenAI).
Whether the server at a ``--base-url`` does is asked, not assumed (``unserved``): one cheap
``GET {base}/batches?limit=1`` per server and process, and none for a server the workspace has
already batched through.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import openai

from ._batch_state import BatchInfo, Outcome
from ._errors import from_sdk_error, rejected_field

ENDPOINT = "/v1/chat/completions"
ENDED = ("completed", "expired", "cancelled", "failed")
_ITEM_STATUS = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
PROBE_TIMEOUT_S = 30.0  # the probe is one small GET: a server that takes longer is not batching

_served: dict[str, str | None] = {}  # server (``model.endpoint``) -> None, or why it does not serve
_served_lock = threading.Lock()


def unserved(model: Any) -> str | None:
    """Why the server ``model`` talks to does not serve the Batch and Files API, or None when it
    does. Asked once per server and process; a server this workspace has already submitted a
    batch to is known to serve it (so a re-run collects its batches without asking again)."""
    server = model.endpoint
    with _served_lock:  # held while asking: models of one server ask once between them
        if server not in _served:
            store = model._store
            known = store is not None and store.batched_through(server)
            _served[server] = None if known else _probe(model)
        return _served[server]


def forget_servers() -> None:
    """Forget which servers were found to serve the API (test isolation)."""
    with _served_lock:
        _served.clear()


def _probe(model: Any) -> str | None:
    url = f"{str(model.client.base_url).rstrip('/')}/batches?limit=1"
    timeout = min(model.options.timeout, PROBE_TIMEOUT_S)
    client = model.client.with_options(max_retries=1, timeout=timeout)
    try:
        reply = client.batches.with_raw_response.list(limit=1)
    except openai.APIStatusError as e:
        refused = (
            " (the server refused the key: set OPENAI_API_KEY)"
            if e.status_code in (401, 403)
            else ""
        )
        return f"GET {url} answered HTTP {e.status_code}{refused}"
    except openai.APITimeoutError:
        return f"GET {url} got no answer within {timeout:g} s"
    except openai.APIError as e:  # no connection
        detail = re.sub(r"^\[Errno -?\d+\] ", "", str(e.__cause__ or e)).rstrip(".")
        return f"GET {url} got no answer: {detail}"
    try:
        body = reply.http_response.json()
    except ValueError:
        body = None
    if not (isinstance(body, dict) and isinstance(body.get("data"), list)):
        return f"GET {url} did not answer with a list of batches"
    return None


def _sdk(model: Any, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except openai.APIError as e:
        raise from_sdk_error(
            e,
            label=f"{model.label} (batch API)",
            key_env="OPENAI_API_KEY",
            model=model.name,
            attempts=1,
            secrets=model.secrets(),
        ) from None


def submit(model: Any, items: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
    data = "".join(
        json.dumps(
            {"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False
        )
        + "\n"
        for cid, body in items
    ).encode()
    f = _sdk(
        model,
        model.client.files.create,
        file=("amg-batch.jsonl", data, "application/jsonl"),
        purpose="batch",
    )
    b = _sdk(
        model,
        model.client.batches.create,
        completion_window="24h",
        endpoint=ENDPOINT,
        input_file_id=f.id,
        metadata={"created_by": "agentmemgate"},
    )
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
    return BatchInfo(
        id=b.id,
        state=b.status,
        ended=b.status in ENDED,
        total=counts.total if counts else 0,
        done=(counts.completed + counts.failed) if counts else 0,
        failed=counts.failed if counts else 0,
        input_file_id=b.input_file_id,
        output_file_id=b.output_file_id,
        error_file_id=b.error_file_id,
        error=error,
    )


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
                yield Outcome(
                    cid,
                    _ITEM_STATUS.get(code, "errored"),
                    error=f"{code}: {err.get('message') or ''}".strip(),
                    http_status=status_code,
                )
            else:
                body = resp.get("body") or {}
                e = body.get("error", body) if isinstance(body, dict) else {}
                message = e.get("message") if isinstance(e, dict) else str(body)
                yield Outcome(
                    cid,
                    "errored",
                    error=f"HTTP {status_code}: {message or 'no detail'}",
                    http_status=status_code,
                    field=rejected_field(body),
                )
