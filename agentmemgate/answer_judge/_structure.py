"""Step 1 of the version 2 rules: the answer cut into units (records and prose).

JSON anywhere in the answer (Mem0 search results and history, Graphiti facts), Graphiti's text
facts with their validity, memory lines ([structure] line_prefixes); whatever is left is prose,
one narrative. The JSON keys read here are the products' formats, not cues.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ._tokens import norm
from .cues import Cues


@dataclass
class Unit:
    text: str
    kind: str  # memory, fact, relation, prose
    valid: bool = True
    why: str = ""  # why it is invalid


def _json_values(text: str) -> tuple[list, str]:
    """Every top-level JSON array/object in the text, and the text left around them."""
    dec = json.JSONDecoder()
    found, rest, i = [], [], 0
    while i < len(text):
        if text[i] in "[{":
            try:
                obj, end = dec.raw_decode(text, i)
            except ValueError:
                rest.append(text[i])
                i += 1
                continue
            if isinstance(obj, (list, dict)) and obj:
                found.append(obj)
            i = end
        else:
            rest.append(text[i])
            i += 1
    return found, "".join(rest)


_KWARG = re.compile(r"""(\w+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")


def _triple(cues: Cues, rec: dict) -> Unit:
    """Version 6 on: a subject-predicate-object record (LangMem's ``Triple``) read as its
    words, with its context as a sentence after it; a predicate that names a plan
    (``wants_to_try``, ``considering_switch``) makes it assert nothing."""
    pred = str(rec.get("predicate") or "")
    words = " ".join(
        str(rec.get(k) or "").replace("_", " ") for k in ("subject", "predicate", "object")
    ).strip()
    ctx = str(rec.get("context") or "").strip()
    text = f"{words}. {ctx}" if ctx else words
    if pred and cues.plan_relation(pred):
        return Unit(text, "relation", False, f"predicate {pred} names a plan")
    return Unit(text, "relation")


def _triples_from_repr(cues: Cues, text: str) -> tuple[list[Unit], str]:
    """Version 6 on: the ``Triple(subject=..., predicate=..., object=...)`` records printed in
    the text, and the text left around them."""
    units: list[Unit] = []

    def take(m: re.Match) -> str:
        rec = {k: a if a or not b else b for k, a, b in _KWARG.findall(m.group(1))}
        if all(k in rec for k in cues.triple_keys):
            units.append(_triple(cues, rec))
            return " "
        return m.group(0)

    return units, cues.triple_repr.sub(take, text)


def _is_open(cues: Cues, v) -> bool:
    return v is None or norm(v) in cues.open_dates


def _keyed(cues: Cues, words: str, item: str) -> str:
    """A JSON list item read after its key's words (version 10 on); an item opening with a cue
    word ("Thinking of moving to X") is lowercased there, so it reads as the key's sentence going
    on, not as a name."""
    item = _strip_prefix(cues, item)
    if any(cues.rx[k].match(item.lower()) for k in ("plan", "pending", "offer", "abandoned")):
        item = item[:1].lower() + item[1:]
    return f"{words} {item}"


def _strings(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v)


def _records_from_json(cues: Cues, obj) -> list[Unit]:
    out: list[Unit] = []
    if isinstance(obj, dict):
        items = None
        for key in ("results", "memories", "facts", "edges", "data"):
            if isinstance(obj.get(key), list):
                items = obj[key]
                out += _records_from_json(cues, items)
        for rel in obj.get("relations") or []:
            if isinstance(rel, dict) and rel.get("target"):
                words = " ".join(
                    str(rel.get(k, "")).replace("_", " ")
                    for k in ("source", "relationship", "target")
                )
                out.append(Unit(words, "relation"))
        if items is None and not obj.get("relations"):
            if cues.triple_keys and all(k in obj for k in cues.triple_keys):
                out.append(_triple(cues, obj))
            elif any(k in obj for k in ("fact", "memory", "event")):
                out += _records_from_json(cues, [obj])
            else:  # an unknown wrapper: read what it holds
                for k, v in obj.items():
                    if cues.json_keys and _strings(v):  # version 10 on: with the key's words
                        words = str(k).replace("_", " ")
                        out += [Unit(_keyed(cues, words, x), "memory") for x in v]
                    elif isinstance(v, (list, dict)):
                        out += _records_from_json(cues, v)
        return out
    if not isinstance(obj, list):
        return out
    history: dict[str, list[dict]] = {}
    for it in obj:
        if isinstance(it, str):
            out.append(Unit(_strip_prefix(cues, it), "memory"))
        elif isinstance(it, dict):
            if "event" in it and ("new_memory" in it or "old_memory" in it):
                history.setdefault(str(it.get("memory_id") or it.get("id")), []).append(it)
            elif cues.triple_keys and all(k in it for k in cues.triple_keys):
                out.append(_triple(cues, it))
            elif "fact" in it:
                inv, exp = it.get("invalid_at"), it.get("expired_at")
                name = str(it.get("name") or "")
                if name and cues.plan_relation(name):
                    out.append(
                        Unit(str(it["fact"]), "fact", False, f"relation {name} names a plan")
                    )
                elif not _is_open(cues, exp):
                    out.append(Unit(str(it["fact"]), "fact", False, f"expired_at {exp}"))
                elif not _is_open(cues, inv):
                    out.append(Unit(str(it["fact"]), "fact", False, f"invalid_at {inv}"))
                else:
                    out.append(Unit(str(it["fact"]), "fact"))
            elif isinstance(it.get("memory"), str):
                out.append(Unit(it["memory"], "memory"))
            else:
                for v in it.values():
                    if isinstance(v, (list, dict)):
                        out += _records_from_json(cues, v)
        elif isinstance(it, list):
            out += _records_from_json(cues, it)
    for events in history.values():
        last = events[-1]
        for e in events:
            for t in (e.get("old_memory"), e.get("new_memory")):
                if t and not (e is last and t == last.get("new_memory")):
                    if not any(u.text == t and not u.valid for u in out):
                        out.append(Unit(str(t), "memory", False, "a superseded or deleted memory"))
        if (
            str(last.get("event", "")).upper() != "DELETE"
            and last.get("new_memory")
            and not last.get("is_deleted")
        ):
            out.append(Unit(str(last["new_memory"]), "memory"))
    return out


def _strip_prefix(cues: Cues, line: str) -> str:
    for rx in cues.line_prefixes:
        line = rx.sub("", line, count=1)
    return line.strip()


def _marked_line(cues: Cues, line: str) -> Unit | None:
    """Version 3 on: a relation line ("NAME: target", "source -- NAME --> target") read as the
    relation's words and its target, asserting nothing when the relation names a plan; a record
    ending in an invalid-since mark, ended unless its date is open. None: neither."""
    if cues.relation_line is not None and (m := cues.relation_line.match(line)):
        name, target = m.group(1), m.group(2)
        words = name.replace("_", " ").lower()
        if cues.plan_relation(name):
            return Unit(f"{words} {target}", "relation", False, f"relation {name} names a plan")
        return Unit(f"{words} {target}", "relation")
    if cues.invalid_marker is not None and (m := cues.invalid_marker.search(line)):
        when = m.group(1).strip()
        return Unit(
            line[: m.start()].strip(), "fact", _is_open(cues, when), f"invalid since {when}"
        )
    return None


def read_structure(cues: Cues, answer: str) -> tuple[list[Unit], bool]:
    """The answer's units and whether it is made of records (step 1)."""
    units: list[Unit] = []
    if cues.triple_repr is not None:
        units, answer = _triples_from_repr(cues, answer)
    objs, rest = _json_values(answer) if re.search(r"[\[{]\s*[\"{\[]", answer) else ([], answer)
    for obj in objs:
        units += _records_from_json(cues, obj)
    lines = rest.splitlines()
    prose: list[str] = []
    header: tuple[int, str] | None = None  # version 9 on: a "key:" line over a nested list
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or any(rx.search(line) for rx in cues.boilerplate):
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        if header is not None and indent <= header[0]:
            header = None
        if cues.list_headers is not None and (h := cues.list_headers.match(line)):
            header = (indent, h.group(1).replace("_", " "))
            i += 1
            continue
        m = cues.fact_line.match(line)
        if m:
            fact, until = m.group(1), None
            j = i + 1
            while j < len(lines) and cues.valid_line.match(lines[j]):
                k = cues.valid_until.match(lines[j])
                if k:
                    until = k.group(2).strip()
                j += 1
            units.append(Unit(fact, "fact", _is_open(cues, until), f"valid until {until}"))
            i = j
            continue
        stripped = _strip_prefix(cues, line)
        if (unit := _marked_line(cues, stripped)) is not None:
            units.append(unit)
            i += 1
            continue
        if stripped != line.strip():
            dr = cues.date_range.search(stripped)
            if dr and cues.range_end.search(dr.group(0)):
                fact = stripped[: dr.start()].strip()
                units.append(
                    Unit(
                        fact,
                        "fact",
                        _is_open(cues, dr.group(2)),
                        f"a date range ending {dr.group(2)}",
                    )
                )
            else:
                label = cues.label_line.match(stripped) if cues.label_in_lines else None
                # version 7 on: a listed "- Considering: X" reads as its label's words before X
                text = f"{label.group(1).replace('_', ' ')} {label.group(2)}" if label else stripped
                # version 9 on: an item nested under "researching:" reads "researching X"
                units.append(Unit(f"{header[1]} {text}" if header else text, "memory"))
        else:
            label = cues.label_line.match(line) if cues.label_line is not None else None
            prose.append(f"{label.group(1).replace('_', ' ')} {label.group(2)}" if label else line)
        i += 1
    records = bool(units)
    text = "\n".join(prose).strip()
    if text and cues.retraction is not None:
        text = _after_retraction(cues, text)
    if text:
        units.append(Unit(text, "prose"))
    return units, records


def _after_retraction(cues: Cues, text: str) -> str:
    """The prose after its last self-correction ("X. Wait, no, ..."): what came before is taken
    back (version 4 on)."""
    last = None
    for last in cues.retraction.finditer(text):
        pass
    return text[last.end() :].strip() if last else text
