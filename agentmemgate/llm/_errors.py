"""LLM failures, split by what a run should do next, and the scrubbing every error text passes.

``CallFailed``: this one call could not be answered (refusal, invalid output after re-asks, server
errors after the SDK's retries); the run records it and goes on. It is deliberately not an
``AmgError``: ``except AmgError`` (stop the run, one line) never catches it by accident, whatever
the order of the ``except`` clauses; the CLI prints one that escapes to it as one line all the same.
``FatalProviderError``: no later call can succeed either (bad key, exhausted quota, unknown model,
unreachable server); the run stops at once, keeping finished work.
"""

from __future__ import annotations

import json
import os
import re

from ..errors import ProviderError

KEY_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_SECRET_PATTERNS = [
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}"),
    re.compile(r"(?i)\bbearer\s+[^\s,;\"']+"),
    re.compile(r"(?i)\b(x-api-key|authorization|api[_-]?key)(\s*[:=]\s*)[^\s,;\"']+"),
]
QUOTA_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}


class CallFailed(Exception):
    """One model call failed after its retries; the run records it and continues (not an AmgError).

    ``kind`` says what failed: ``invalid_output``, ``refusal``, ``timeout`` (client-side),
    ``server_error``, ``rate_limited``, ``bad_request``, ``unsupported`` (the server rejects a
    request field, named in ``field``), ...
    """

    def __init__(
        self, message: str, kind: str = "error", field: str | None = None, problem: str = ""
    ):
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.problem = problem or message  # what was wrong, without the model's name


class StrategyRefused(CallFailed):
    """The server rejected the structured-output strategy of this request (not the model's fault)."""

    def __init__(self, message: str, strategy: str, field: str):
        super().__init__(message, kind="unsupported", field=field)
        self.strategy = strategy


class FatalProviderError(ProviderError):
    """The provider refuses every call (auth, quota, unknown model, unreachable): stop the run."""


class DryRunCall(ProviderError):
    """A ``--dry-run`` reached a model call not answered from the workspace: a dry run sends
    nothing, so the step that needed it stops here (dry runs count calls with ``Model.plan``)."""

    def __init__(self, message: str, purpose: str = ""):
        super().__init__(message)
        self.purpose = purpose


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove API keys (known values and key-shaped strings) from text bound for logs or users."""
    known = [s for s in (*secrets, *(os.environ.get(v, "") for v in KEY_ENV_VARS)) if len(s) >= 4]
    for s in sorted(set(known), key=len, reverse=True):
        text = text.replace(s, "[redacted]")
    text = _SECRET_PATTERNS[0].sub("[redacted]", text)
    text = _SECRET_PATTERNS[1].sub("Bearer [redacted]", text)
    text = _SECRET_PATTERNS[2].sub(lambda m: f"{m[1]}{m[2]}[redacted]", text)
    return " ".join(text.split())


def shorten(text: str, limit: int = 300) -> str:
    """``text`` cut at a word boundary (never mid-word) with an ellipsis when it is too long."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "\u2026"


# Request fields a server may name when it rejects a request no retry can fix.
REQUEST_FIELDS = (
    "response_format",
    "json_schema",
    "json_object",
    "tool_choice",
    "tools",
    "functions",
    "function_call",
    "input_schema",
    "logprobs",
    "top_logprobs",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "temperature",
)
_FIELD = re.compile(r"(?<![A-Za-z_])(" + "|".join(REQUEST_FIELDS) + r")(?![A-Za-z_])")
_PYDANTIC_LOC = re.compile(r"""['"]loc['"]\s*:\s*[(\[]\s*['"]body['"]\s*,\s*['"](\w+)['"]""")


def rejected_field(body: object, message: str = "") -> str | None:
    """The request field an error body names (OpenAI ``param``, a pydantic ``loc``, or a known
    field name in the message), or None: such errors are the server refusing the request as sent,
    which no retry can fix."""
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict):
        param = err.get("param")
        if isinstance(param, str) and param:
            return param.split(".")[0].split("[")[0]
        message = message or str(err.get("message") or err.get("detail") or "")
    elif isinstance(body, dict) and "detail" in body:  # FastAPI's own 422 shape
        message = message or json.dumps(body["detail"])
    if m := _PYDANTIC_LOC.search(message):
        return m.group(1)
    if m := _FIELD.search(message):
        return m.group(1)
    return None


def _server_message(exc: Exception) -> tuple[str, str]:
    """(message, code-or-type) from an SDK status error body, whatever its provider's shape."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or ""), str(err.get("code") or err.get("type") or "")
    return str(getattr(exc, "message", "") or exc), ""


def from_sdk_error(
    exc: Exception,
    *,
    label: str,
    key_env: str | None,
    model: str,
    attempts: int,
    secrets: tuple[str, ...] = (),
) -> CallFailed | ProviderError:
    """Map an OpenAI/Anthropic SDK exception (same Stainless names in both) to our one-liners."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    message, code = _server_message(exc)
    detail = shorten(scrub(message, secrets))
    tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    if status == 401 or name == "AuthenticationError":
        fix = f"check {key_env}" if key_env else "check the server's API key"
        return FatalProviderError(f"{label} rejected the API key (HTTP 401): {fix}")
    if status == 402 or code in QUOTA_CODES:
        return FatalProviderError(
            f"{label} quota or credit exhausted (HTTP {status}, {code or 'billing'}): "
            "check your plan and billing, then re-run to resume"
        )
    if status == 403:
        return FatalProviderError(f"{label} denied access (HTTP 403): {detail}")
    if status == 404:
        return FatalProviderError(f"{label} has no model {model!r} (HTTP 404): {detail}")
    body = getattr(exc, "body", None)
    if status in (400, 409, 415, 422, 500, 501) and (field := rejected_field(body, message)):
        return CallFailed(
            f"{label} rejected the request field {field!r} (HTTP {status}): {detail}",
            kind="unsupported",
            field=field,
        )
    if name == "APITimeoutError" or status == 408:
        return CallFailed(f"{label} timed out {tries}", kind="timeout")
    if name == "APIConnectionError":
        cause = shorten(scrub(str(exc.__cause__ or exc), secrets), 200)
        return FatalProviderError(f"cannot reach {label} {tries}: {cause}")
    if status == 429:
        return CallFailed(
            f"{label} rate limit (HTTP 429) persisted {tries}: {detail}", kind="rate_limited"
        )
    if status is not None and status >= 500:
        return CallFailed(
            f"{label} server error (HTTP {status}) {tries}: {detail}", kind="server_error"
        )
    if status is not None:
        return CallFailed(
            f"{label} rejected the request (HTTP {status}): {detail}", kind="bad_request"
        )
    return CallFailed(f"{label} call failed ({name}): {shorten(scrub(str(exc), secrets))}")
