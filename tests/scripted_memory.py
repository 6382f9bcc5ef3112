"""A deterministic stand-in model for the memory components' prompts (tests and benchmarks).

``scripted_responder(request)`` reads a memory prompt (extraction, matching, permissive matching,
predicates, checking) or the ``evidence_type`` classifier prompt, and answers with a valid,
plausible structured reply computed by the offline rules from the data in the prompt itself. So
``scripted:NAME`` (``ScriptedModel.respond_with(scripted_responder)``) or a mock OpenAI-compatible
server can drive the LLM path end to end, with the answers the offline systems would give. It is a
fixture, not a model: it never sees anything the prompt does not carry.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from agentmemgate.classify.lexicon import lexicon_classifier
from agentmemgate.corpora.statements import Statement
from agentmemgate.memory.extract import OfflineExtractor
from agentmemgate.memory.match import PermissiveMatcher, WordOverlapMatcher
from agentmemgate.memory.resolve import CueChecker, TemplatePredicateWriter
from agentmemgate.memory.system import ExtractedTuple, FieldKey, StagedState, UserTurn
from agentmemgate.schema import FieldSpec

_ANSWER_WORD = {
    "speculation": "speculative",
    "completed_event": "completed_event",
    "explicit_correction": "explicit_correction",
    "other": "other",
}


def _block(prompt: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return m.group(1) if m else None


def _lines(block: str) -> dict[str, str]:
    out = {}
    for line in block.splitlines():
        k, sep, v = line.partition(":")
        if sep:
            out[k.strip()] = v.strip()
    return out


def _fields(block: str | None) -> list[FieldSpec]:
    fields = []
    for line in (block or "").splitlines():
        m = re.match(r"^- ([a-z][a-z0-9_]*): (.*)$", line.strip())
        if m:
            fields.append(
                FieldSpec(
                    attribute=m.group(1),
                    description=m.group(2),
                    probe_question="(not shown to the matcher)",
                )
            )
    return fields


def _date(prompt: str) -> dt.date:
    m = re.search(r"(\d{4}-\d{2}-\d{2})", _block(prompt, "REFERENCE_TIME") or "") or re.search(
        r"Today's date is (\d{4}-\d{2}-\d{2})", prompt
    )
    return dt.date.fromisoformat(m.group(1)) if m else dt.date(2024, 1, 1)


def scripted_responder(request: Any) -> dict | str:
    """The reply to one memory-component or evidence-type prompt (``ValueError`` for others)."""
    prompt = request.prompt
    message = _block(prompt, "CURRENT_MESSAGE")
    if message is not None:
        style = "cautious" if "Record a plan as a plan" in " ".join(prompt.split()) else "literal"
        turn = UserTurn(text=message, session=0, turn=0, date=_date(prompt), t=0)
        tuples = OfflineExtractor(style).extract(turn, [])
        return {"tuples": [t.model_dump() for t in tuples]}
    tup = _block(prompt, "TUPLE")
    if tup is not None:
        d = _lines(tup)
        candidate = ExtractedTuple(
            entity=d.get("entity", "user"),
            attribute=d.get("attribute", "x"),
            value=d.get("value", ""),
        )
        matcher = (
            PermissiveMatcher()
            if "stricter matcher" in " ".join(prompt.split())
            else WordOverlapMatcher()
        )
        found = matcher.match(candidate, _fields(_block(prompt, "FIELDS")))
        return {"field": found.attribute if found else None}
    staged = _block(prompt, "STAGED_ITEM")
    if staged is not None:
        d = _lines(staged)
        fields = _fields(_block(prompt, "FIELDS"))
        field = next((f for f in fields if f.attribute == d.get("field")), None) or FieldSpec(
            attribute=d.get("field", "field"),
            description="The user's current field.",
            probe_question="?",
        )
        value = d.get("staged value", "")
        later = _block(prompt, "LATER_MESSAGE")
        if later is None:
            current = d.get("value stored now")
            p = TemplatePredicateWriter().write(
                field,
                ExtractedTuple(attribute=field.attribute, value=value),
                value,
                None if not current or current.startswith("(") else current,
                [],
            )
            return p.model_dump()
        item = StagedState(
            key=FieldKey.of(field),
            value=value,
            confirm_when=d.get("confirm when", ""),
            abandon_when=d.get("abandon when", ""),
            staged_at=0,
        )
        turn = UserTurn(text=later, session=0, turn=0, date=dt.date(2024, 1, 1), t=1)
        return {"verdict": CueChecker().check(item, field, turn, [])}
    m = re.search(r"Statement \(([^)]*)\):\n(.*?)\n\nAnswer with", prompt, re.S)
    if m:
        dist = lexicon_classifier().classify(Statement(id="scripted", text=m.group(2)))
        return _ANSWER_WORD[dist.predicted]
    raise ValueError("scripted_responder: not a memory-component or evidence-type prompt")
