"""What one arc's rendering reads besides its spec: its domain's file and place, the phrase
lists of its levels, the levels themselves and its split's note.

A keyed design names each arc by its content (``planner.keyed_id``): its offline rendering and
what an LLM generator's prompt reads besides the spec (``prompt_inputs``). Where the design's
phrase lists cannot render it offline, by its spec and everything its rendering would read
(``rendering_inputs``).
"""

from __future__ import annotations

import hashlib
import json

from ..design import Design, load_domains
from ..schema import ArcSpec
from .banks import correction_bank, phrase_bank

# Lists every arc reads: its opening, the session openers, the acknowledgement of the current
# value, and the off-topic small talk.
_ALWAYS = (
    ("chat", "initial"),
    ("chat", "session_opener"),
    ("chat", "question_opener"),
    ("chat", "exchanges"),
    ("replies", "after_initial"),
)


def domain_place(design: Design, domain: str) -> tuple[int, int]:
    """(ordinal, stride) of a domain, which the offline renderer's deals start from. Sequential
    designs: its place among the design's domains sorted, and their number (the paper's). Keyed
    ones: its place in the design's list and a stride that does not grow while there are at
    most 33 domains, so that appending a domain to the list moves no other domain's deals."""
    names = list(load_domains(design))
    if design.ids == "sequential":
        return names.index(domain), len(names)
    listed = names if design.domains == "all" else list(design.domains)
    return listed.index(domain), 3 * -(-max(len(listed), 33) // 3)


def lists_read(design: Design, spec: ArcSpec) -> list[tuple[str, str]]:
    """(phrase file, key) of every list the offline renderer may draw this arc's turns from."""
    out = list(_ALWAYS)
    plan_f, conf_f, out_f = (
        design.by_role(r) for r in ("plan_wording", "confirmation_wording", "outcome")
    )
    wording = (
        plan_f.level(spec.plan_wording)
        if plan_f is not None and plan_f.has(spec.plan_wording)
        else None
    )
    if wording is not None:
        out += [
            ("plan", wording.phrase_key),
            ("replies", wording.reply or wording.name),
            ("plan", "motivation_done" if wording.control else "motivation"),
        ]
    if spec.correction is not None:
        c = spec.correction
        out += [
            ("correction", k)
            for k in ("said_when_same", "said_when_later", "reply", f"{c.target}_{c.marker}")
        ]
    elif spec.outcome == "came_true" and conf_f is not None and spec.confirmation_wording:
        lv = conf_f.level(spec.confirmation_wording)
        out += [("outcome", lv.phrase_key), ("replies", lv.reply or "came_true")]
    elif spec.outcome in ("abandoned", "open") and out_f is not None:
        lv = next(
            (x for x in out_f.levels if x.name == spec.level and spec.factor == out_f.name), None
        ) or next((x for x in out_f.levels if (x.kind or x.name) == spec.outcome), None)
        if lv is not None:
            group = wording.group if wording is not None else None
            out += [
                ("outcome", lv.phrase_key),
                ("replies", (lv.reply or lv.phrase_key).format(group=group)),
            ]
    return out


def rendering_inputs(design: Design, spec: ArcSpec) -> str:
    """sha256 of what, besides its spec, an arc's rendering reads: the phrase lists it may be
    drawn from, its domain's file and place, the levels it is worded at (with their definitions,
    which an LLM generator's prompt shows) and its split's note. A keyed id digests it with the
    spec; the offline renderer records it as a keyed arc's provenance hash."""
    banks = {**phrase_bank(design), "correction": correction_bank(design)}
    h = hashlib.sha256()
    for file, key in lists_read(design, spec):
        value = banks.get(file, {}).get(key)
        if file == "chat" and key == "exchanges" and value is not None:
            value = [e.model_dump() for e in value]
        h.update(json.dumps([file, key, value], sort_keys=True).encode())
    h.update(b"\0domain\0" + design.source.catalog[spec.domain].data)
    h.update(f"\0split note\0{design.splits[spec.split].note}".encode())  # an LLM prompt shows it
    h.update(repr(domain_place(design, spec.domain)).encode())
    for f in design.factors.values():
        if f.role in ("plan_wording", "confirmation_wording", "outcome"):
            for lv in f.levels:
                if lv.name in (spec.plan_wording, spec.confirmation_wording, spec.level) or (
                    f.role == "outcome" and (lv.kind or lv.name) == spec.outcome
                ):
                    h.update(lv.model_dump_json().encode())
    return h.hexdigest()


def prompt_inputs(design: Design, spec: ArcSpec) -> str:
    """What an LLM generator's prompt reads besides the spec: the definitions of the arc's
    levels and its split's note (an edit to them re-ids the arcs they word)."""
    defs = {}
    for f in design.factors.values():
        for lv in f.levels:
            if lv.name in (spec.plan_wording, spec.confirmation_wording) or (
                f.name == spec.factor and lv.name == spec.level
            ):
                defs[f"{f.name}/{lv.name}"] = lv.definition
    return json.dumps([defs, design.splits[spec.split].note], sort_keys=True)
