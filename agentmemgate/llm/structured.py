"""Structured output on any server: the strategies, reading JSON out of a reply, and what makes a
reply invalid beyond its schema.

Servers differ in what they accept. OpenAI, vLLM, recent Ollama and llama.cpp's own server take
``response_format: json_schema``; llama-cpp-python's server refuses it (HTTP 500 "Input should be
'text' or 'json_object'") but constrains decoding with a schema attached to ``json_object``; some
servers only do forced tool calls; any server can be asked in words. A model tries them in
``STRATEGIES`` order, remembers per (endpoint, model) which one its server accepts, and moves on
after one refused request (see ``Model.complete``).

Whatever the strategy, the reply is read the same way: the whole text as JSON, else the first JSON
object in it (code fences and prose around it are common from small models), validated by the
pydantic schema, then rejected if it only repeats the prompt's format example (``Prose`` fields)
or puts one value in every field.
"""

from __future__ import annotations

import json
import re
import typing
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ValidationError

from .strategies import CHOICES, STRATEGIES  # noqa: F401  (re-exported)

StructuredOutput = Literal["auto", "json_schema", "json_object", "tools", "prompt"]
# What each strategy sends: the request fields a server that refuses it names in its error.
STRATEGY_FIELDS = {
    "json_schema": ("response_format", "json_schema", "strict"),
    "json_object": ("response_format", "json_object", "schema"),
    "tools": ("tools", "tool_choice", "functions", "function_call", "tool_use", "input_schema"),
    "prompt": (),
}

_PLACEHOLDER = re.compile(
    r"^\s*(?:<[^<>]{0,120}>|\.\.\.|…|\?+|n/?a|none|null|todo|tbd|string|text"
    r"|one sentence|your (?:answer|rationale|reason) here)\s*\.?\s*$",
    re.I,
)


def real_text(value: str) -> str:
    """An explanation must say something: not empty, not the format example's placeholder, not a
    lone word (small models put the verdict word, "pass", where the rationale goes)."""
    if not value or not value.strip():
        raise ValueError("is empty")
    if _PLACEHOLDER.match(value):
        raise ValueError(f"copies the format example ({value.strip()[:40]!r}) instead of answering")
    if len(value.split()) < 2:
        raise ValueError(f"is one word ({value.strip()[:40]!r}), not an explanation")
    return value


Prose = Annotated[str, AfterValidator(real_text)]
"""A free-text explanation (a rationale, a reason): invalid when empty, a placeholder or one word."""


def schema_instructions(strategy: str | None, schema_text: str) -> str:
    """What the prompt gains: under ``prompt`` the whole JSON Schema (nothing else constrains the
    reply); under ``json_object`` one line (the schema travels in ``response_format``, where
    llama-cpp-python turns it into a decoding grammar, and every rubric shows its format; a small
    context has no room for the schema twice)."""
    if strategy == "prompt":
        return (
            "\n\nReply with one JSON object and nothing else (no prose, no code fences). It must "
            f"match this JSON Schema:\n{schema_text}\n"
        )
    if strategy == "json_object":
        return "\n\nReply with one JSON object and nothing else.\n"
    return ""


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> str:
    """The schema's JSON Schema, computed once per class (it is on every call's hot path)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True)


def ask_text(prompt: str, schema: type[BaseModel] | None, strategy: str | None) -> str:
    """The prompt as sent in ``strategy``: with the schema's instructions when there is one."""
    if schema is not None:
        return prompt + schema_instructions(strategy, schema_json(schema))
    return prompt


def feedback(prompt: str, problem: str, reply: str) -> str:
    """The re-ask after an invalid reply: the original prompt plus what was wrong with the reply.

    Resending the identical temperature-0 request would get the identical bad reply back.
    """
    shown = " ".join(reply.split())
    shown = shown if len(shown) <= 200 else shown[:200].rsplit(" ", 1)[0] + " ..."
    return (
        f"{prompt}\n\nYOUR PREVIOUS REPLY WAS NOT ACCEPTED: {problem}.\n"
        f"Your reply began: {shown or '(empty)'}\n"
        "Answer again, following the format exactly and filling every field with a real answer.\n"
    )


# -- reading a reply ---------------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def extract_json(text: str) -> tuple[Any, str]:
    """(value, how) for the JSON in a reply: the whole text, a fenced block, or the first object
    found in prose; (None, reason) when there is none."""
    stripped = text.strip()
    if not stripped:
        return None, "the reply is empty"
    try:
        return json.loads(stripped), "whole"
    except ValueError:
        pass
    for m in _FENCE.finditer(text):
        try:
            return json.loads(m.group(1)), "fenced"
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict):
                return value, "embedded"
        except ValueError:
            pass
        start = text.find("{", start + 1)
    if "{" in text:
        return None, "the reply is not valid JSON (an object is opened but never closed)"
    return None, "the reply contains no JSON object"


def validate_reply(text: str, schema: type[BaseModel]) -> tuple[Any, str | None]:
    """(parsed, None) or (None, one-line reason) for a reply against the requested schema."""
    value, how = extract_json(text)
    if value is None:
        return None, how
    try:
        parsed = schema.model_validate(value)
    except ValidationError as e:
        errs = e.errors()
        first = "; ".join(
            f"{'.'.join(str(p) for p in x.get('loc', ())) or 'reply'}: {x.get('msg')}"
            for x in errs[:3]
        )
        return None, f"reply does not match {schema.__name__}: {first}"
    if (same := _one_value_everywhere(parsed)) is not None:
        return None, f"every field of the reply has the same value ({same[:40]!r})"
    return parsed, None


def _one_value_everywhere(parsed: BaseModel) -> str | None:
    """The value, when every free-text field (three or more) holds the same string: a small
    model's degenerate reply (two rationales that agree may be an honest answer)."""
    values = [v.strip().lower() for v in _free_text(parsed) if v and v.strip()]
    if len(values) >= 3 and len(set(values)) == 1:
        return values[0]
    return None


def _free_text(obj: Any) -> list[str]:
    if isinstance(obj, BaseModel):
        out: list[str] = []
        for name, info in type(obj).model_fields.items():
            value = getattr(obj, name)
            if isinstance(value, str):
                if not _is_choice(info.annotation):
                    out.append(value)
            else:
                out += _free_text(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [s for x in obj for s in _free_text(x)]
    return []


@lru_cache(maxsize=512)
def _is_choice(annotation: Any) -> bool:
    """Literal (or Optional Literal) fields are choices, not free text."""
    if typing.get_origin(annotation) is Literal:
        return True
    args = typing.get_args(annotation)
    return bool(args) and all(typing.get_origin(a) is Literal or a is type(None) for a in args)
