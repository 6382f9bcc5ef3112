"""Store readers: which value a product's store holds as the field's current value.

The paper's measure is defined on what a memory holds while a plan is pending. Products whose
store can be read (``AnsweringSystem.store_snapshot``: Mem0's memories for the user, Graphiti's
edges with their validity) are read after every session beside the probe's answer; a store
reader per product turns the snapshot into the values held, by documented rules
(``store_cues.vN.toml``, whose header says the order they apply in), measured on labelled
snapshots (``devsets/stores``) and quoted in every report that uses them
(``store_accuracy.json``).

A reader is rules, not a model, and the scorer's, not the system's: it may look for the arc's
labelled values (as the offline answer judge does).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..versioned import versioned_file

HERE = Path(__file__).parent
CUES = "store_cues"
ACCURACY = HERE / "store_accuracy.json"
_DETERMINERS = {"the", "a", "an", "my", "their", "his", "her", "your", "our", "its"}


def _norm_words(text: str) -> list[str]:
    return re.sub(r"[^\w\s]", " ", str(text).lower()).split()


@dataclass(frozen=True)
class StoreCues:
    version: int
    plan_relations: tuple[re.Pattern, ...]
    others: frozenset[str]
    change_verbs: frozenset[str]
    kept_frames: tuple[tuple[str, ...], ...]
    alternative_frames: tuple[tuple[str, ...], ...]
    ended: tuple[tuple[str, ...], ...]
    ended_after: tuple[tuple[str, ...], ...]
    plan: tuple[tuple[str, ...], ...]
    plan_after: tuple[tuple[str, ...], ...]

    @property
    def ref(self) -> str:
        return f"{CUES}.v{self.version}"


@cache
def load_cues(version: int | None = None) -> StoreCues:
    v, path = versioned_file(HERE, CUES, "toml", version, what="store-reader rule file")
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    rec, graph = raw["record"], raw["graphiti"]

    def phrases(key: str) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(_norm_words(p)) for p in rec.get(key, []))

    return StoreCues(
        version=v,
        plan_relations=tuple(re.compile(p) for p in graph["plan_relations"]),
        others=frozenset(rec["others"]),
        change_verbs=frozenset(rec["change_verbs"]),
        kept_frames=phrases("kept_frames"),
        alternative_frames=phrases("alternative_frames"),
        ended=phrases("ended"),
        ended_after=phrases("ended_after"),
        plan=phrases("plan"),
        plan_after=phrases("plan_after"),
    )


def _find(words: list[str], phrase: tuple[str, ...], start: int = 0, stop: int | None = None):
    """Start indexes of ``phrase`` in ``words[start:stop]``."""
    stop = len(words) if stop is None else stop
    n = len(phrase)
    return [i for i in range(start, stop - n + 1) if tuple(words[i : i + n]) == phrase]


def _any_before(words: list[str], phrases, end: int) -> int | None:
    """Where the first of ``phrases`` occurs wholly before index ``end`` (None: nowhere)."""
    hits = [i for p in phrases for i in _find(words, p, 0, end)]
    return min(hits) if hits else None


def _right_before(words: list[str], phrases, at: int) -> bool:
    """A phrase ending right before ``at`` (determiners between allowed)."""
    j = at
    while j > 0 and words[j - 1] in _DETERMINERS:
        j -= 1
    return any(tuple(words[j - len(p) : j]) == p for p in phrases if len(p) <= j)


def _value_spans(words: list[str], values: list[str]) -> dict[int, list[int]]:
    """value index -> start indexes where it occurs as whole words."""
    out: dict[int, list[int]] = {}
    for vi, v in enumerate(values):
        vw = tuple(_norm_words(v))
        if vw and (hits := _find(words, vw)):
            out[vi] = hits
    return out


def read_record(text: str, values: list[str], cues: StoreCues) -> tuple[set[int], str]:
    """The labelled values (by index) one record holds as current, and why."""
    words = _norm_words(text)
    spans = _value_spans(words, values)
    if not spans:
        return set(), "names no labelled value"
    first = min(min(s) for s in spans.values())
    if any(w in cues.others for w in words[:first]):
        return set(), "about someone else"
    # a change made: VERB ... from A ... to/with B, or "replaced A with B"
    for ci, w in enumerate(words):
        if w not in cues.change_verbs:
            continue
        planned = _any_before(words, cues.plan, ci) is not None
        src = dst = None
        for vi, starts in spans.items():
            for s in starts:
                if s > ci and (words[s - 1] == "from" or (w == "replaced" and src is None)):
                    src = vi if src is None else src
                elif s > ci and words[s - 1] in ("to", "with", "for") and src is not None:
                    dst = vi
        if src is not None and dst is not None and src != dst:
            if planned:
                return {src}, f"a change not made: {values[src]!r} presupposed current"
            return {dst}, f"a change made: {values[dst]!r} replaces {values[src]!r}"
    held: set[int] = set()
    reasons = []
    for vi, starts in spans.items():
        s = starts[0]
        end = s + len(_norm_words(values[vi]))
        ended_before = _any_before(words, cues.ended, s) is not None
        plan_before = _any_before(words, cues.plan, s) is not None
        if _right_before(words, cues.kept_frames, s) and not ended_before:
            held.add(vi)
            reasons.append(f"{values[vi]!r} presupposed current")
        elif _right_before(words, cues.alternative_frames, s):
            if plan_before:
                held.add(vi)
                reasons.append(f"{values[vi]!r} presupposed current (the alternative to a plan)")
            else:
                reasons.append(f"{values[vi]!r} the alternative not taken")
        elif ended_before or any(_find(words, p, end) for p in cues.ended_after):
            reasons.append(f"{values[vi]!r} ended")
        elif plan_before or any(_find(words, p, end) for p in cues.plan_after):
            reasons.append(f"{values[vi]!r} a plan")
        else:
            held.add(vi)
            reasons.append(f"{values[vi]!r} current")
    return held, "; ".join(reasons)


def _when(value: Any) -> dt.datetime | None:
    if value in (None, ""):
        return None
    try:
        t = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def valid_at(record: dict, at: dt.date) -> tuple[bool, str]:
    """Whether a Graphiti edge is valid at the end of day ``at``, and why not."""
    cutoff = dt.datetime.combine(at + dt.timedelta(days=1), dt.time(0), tzinfo=dt.UTC)
    start = _when(record.get("valid_at"))
    if start is not None and start >= cutoff:
        return False, f"valid only from {record['valid_at']}"
    for key in ("invalid_at", "expired_at"):
        stop = _when(record.get(key) or (record.get("meta") or {}).get(key))
        if stop is not None and stop < cutoff:
            return False, f"{key.split('_')[0]} since {stop.date().isoformat()}"
    return True, ""


@dataclass
class StoreReading:
    """What a store holds for the field: the values held, and per record why."""

    held: list[str]
    records: list[tuple[str, str]]  # (record text, why it holds what it holds)

    def to_json(self) -> dict:
        return {"held": self.held, "records": [list(r) for r in self.records]}


class StoreReader:
    """Reads one product's records (``read``: record dicts as the adapter stored them)."""

    product = ""

    def __init__(self, version: int | None = None):
        self.cues = load_cues(version)

    @property
    def ref(self) -> str:
        return f"{self.product} {self.cues.ref}"

    def text(self, record: dict) -> str:
        return str(record.get("text") or record.get("memory") or record.get("fact") or "")

    def keep(self, record: dict, at: dt.date) -> tuple[bool, str]:
        return True, ""

    def read(self, records: list[dict], values: list[str], at: dt.date) -> StoreReading:
        held: list[str] = []
        notes = []
        for r in records:
            text = self.text(r)
            ok, why = self.keep(r, at)
            if not ok:
                notes.append((text, why))
                continue
            got, why = read_record(text, values, self.cues)
            notes.append((text, why))
            held += [values[i] for i in sorted(got) if values[i] not in held]
        return StoreReading(held=held, records=notes)


class Mem0Reader(StoreReader):
    """Mem0: every memory of the user (``Memory.get_all``) is one record."""

    product = "mem0"


class GraphitiReader(StoreReader):
    """Graphiti: every entity edge of the group, kept while valid at the probe; an edge whose
    relation names a plan holds nothing."""

    product = "graphiti"

    def keep(self, record: dict, at: dt.date) -> tuple[bool, str]:
        ok, why = valid_at(record, at)
        if not ok:
            return ok, why
        name = str(record.get("name") or (record.get("meta") or {}).get("relation") or "")
        padded = f"_{name.upper()}_"
        if any(p.search(padded) for p in self.cues.plan_relations):
            return False, f"relation {name} names a plan"
        return True, ""


class LangMemReader(Mem0Reader):
    """LangMem: every memory of the namespace is one record, read as Mem0's are (the same free-
    text statements; measured on Mem0's snapshots)."""

    product = "langmem"


READERS: dict[str, type[StoreReader]] = {
    "mem0": Mem0Reader,
    "graphiti": GraphitiReader,
    "langmem": LangMemReader,
}


def reader_for(product: str | None, version: int | None = None) -> StoreReader | None:
    """The store reader of a product (by its registry name), None when it has none."""
    cls = READERS.get((product or "").partition("@")[0])
    return cls(version) if cls else None


def reader_of(info: Any) -> StoreReader | None:
    """The store reader of an answering system: the one its ``info.components["store_reader"]``
    names (a plug-in whose records have a product's shape: ``mem0``, ``graphiti``,
    ``langmem``), else its own name's."""
    components = getattr(info, "components", None) or {}
    return reader_for(components.get("store_reader") or getattr(info, "name", None))


def accuracy() -> dict:
    """The readers' measured figures (``devsets/stores/measure.py --write``)."""
    try:
        return json.loads(ACCURACY.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def accuracy_line(ref: str) -> str:
    """One sentence a report quotes beside store measures."""
    acc = accuracy().get(ref.split()[-1], {})
    parts = []
    for product, fig in sorted(acc.items()):
        parts.append(
            f"{product} {fig['exact']}/{fig['n']} exact, plan read as held where it is not "
            f"{fig['false_plan']}/{fig['plan_not_held']}, plan missed {fig['missed_plan']}/"
            f"{fig['plan_held']}"
        )
    if not parts:
        return f"Store readers {ref}: not measured."
    return (
        f"Store readers ({ref.split()[-1]}), measured on held-out labelled store snapshots "
        "(devsets/stores, written and labelled before the rules): " + "; ".join(parts) + "."
    )


__all__ = [
    "GraphitiReader",
    "Mem0Reader",
    "READERS",
    "StoreReader",
    "StoreReading",
    "accuracy",
    "accuracy_line",
    "load_cues",
    "read_record",
    "reader_for",
    "reader_of",
    "valid_at",
]
