"""The domain catalog: attributes people switch, their values, and the chat that surrounds them.

One TOML file per attribute in ``catalog/`` (the file name is the attribute), so adding a domain
is adding a data file, not code (``--catalog DIR`` adds a folder of them; a design names the
domains it draws from). ``catalog/README.md`` documents the slot grammar every key must follow;
``validate.catalog.catalog_problems`` enforces it (``amg catalog check``). The keys, by what they realize:

- the value-free field: ``noun``, ``probe_question``;
- statements about the value, each with one ``{value}`` slot: ``current`` (simple present, "I"
  first, value last), ``stay`` / ``switching`` (gerund phrases), ``switch`` (base form),
  ``switched`` (regular past), ``doing`` (simple past of using the value, no time word);
  ``change`` names the switch as a noun ("switch", "move"); ``oblique_thing`` the new value
  without naming it;
- why the user wants to change: ``reasons`` (present-tense clauses about the current situation);
- what the assistant says to a plan and its outcome, all value-free clauses: ``weigh`` (what to
  compare), ``steps`` (practical steps of the switch), ``settle`` (settling in after it),
  ``tips`` (using the thing well, whatever it is), ``stay_tips`` (getting more from the current);
- ``exchanges``: question-answer pairs of small talk. Each pair is one template: ``q`` and ``a``
  share slots filled from parallel lists (``slots.NAME``), so every filling is a question with
  the answer to that question.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache, lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..schema import FieldSpec

CATALOG_DIR = Path(__file__).with_name("catalog")
_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PERSON = [
    (re.compile(p), r)
    for p, r in (
        (r"\bI'm\b", "you're"),
        (r"\bI've\b", "you've"),
        (r"\bI'd\b", "you'd"),
        (r"\bI'll\b", "you'll"),
        (r"\bI\b", "you"),
        (r"\bmy\b", "your"),
        (r"\bMy\b", "Your"),
        (r"\bme\b", "you"),
        (r"\bmine\b", "yours"),
        (r"\bmyself\b", "yourself"),
    )
]


@lru_cache(maxsize=1 << 14)  # pure; the same bank sentences are quoted back many times
def second_person(text: str) -> str:
    """'I run in my old pair' -> 'you run in your old pair': the assistant quoting the user."""
    for pattern, repl in _PERSON:
        text = pattern.sub(repl, text)
    return text


class Exchange(BaseModel):
    """A small-talk question and its answer; ``slots`` are parallel lists (filling i uses item i
    of each list)."""

    model_config = ConfigDict(extra="forbid")
    q: str
    a: str
    slots: dict[str, list[str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _parallel(self) -> Exchange:
        sizes = {len(v) for v in self.slots.values()}
        if len(sizes) > 1:
            raise ValueError(f"slot lists of {self.q!r} differ in length: {sorted(sizes)}")
        used = set(_SLOT.findall(self.q)) | set(_SLOT.findall(self.a))
        if used != set(self.slots):
            raise ValueError(
                f"slots of {self.q!r}: used {sorted(used)}, given {sorted(self.slots)}"
            )
        return self

    @property
    def fillings(self) -> int:
        return len(next(iter(self.slots.values()))) if self.slots else 1

    def fill(self, i: int) -> tuple[str, str]:
        """Filling ``i``: the user asks in the first person, the assistant answers in the second
        ("my roommate" in the question is "your roommate" in the answer)."""
        values = {k: v[i % len(v)] for k, v in self.slots.items()}
        return (
            self.q.format_map(values),
            self.a.format_map({k: second_person(v) for k, v in values.items()}),
        )


class Domain(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attribute: str
    noun: str
    probe_question: str
    change: str
    current: list[str]
    stay: str
    switch: str
    switching: str
    switched: str
    doing: list[str]
    oblique_thing: str
    reasons: list[str]
    reasons_done: list[str]
    weigh: list[str]
    steps: list[str]
    settle: list[str]
    tips: list[str]
    stay_tips: list[str]
    exchanges: list[Exchange]
    values: list[str]
    long_values: list[str]
    # The items of catalog keys a design declares (``Design.catalog_keys``), by key: from the
    # domain file, or from the design's ``catalog_keys`` file.
    extra: dict[str, list[str]] = Field(default_factory=dict)

    def field(self) -> FieldSpec:
        """The value-free field: description built from the attribute name alone."""
        return FieldSpec(
            attribute=self.attribute,
            description=f"The user's current {self.noun}.",
            probe_question=self.probe_question,
        )


def catalog_files(folder: Path = CATALOG_DIR) -> list[Path]:
    return sorted(folder.glob("*.toml"))


def parse_domain(name: str, data: bytes, extra_keys: tuple[str, ...] = ()) -> Domain:
    """One domain file's bytes as a ``Domain`` (``tomllib.TOMLDecodeError`` or pydantic's
    ``ValidationError`` say why not; ``validate.catalog`` turns them into one-line problems).
    ``extra_keys``: a design's own catalog keys, kept in ``Domain.extra``."""
    body = tomllib.loads(data.decode("utf-8"))
    extra = {k: body.pop(k) for k in extra_keys if k in body}
    return Domain(attribute=name, extra=extra, **body)


def design_key_items(design) -> dict[str, dict[str, list]]:
    """The design's ``catalog_keys`` file: per domain, the items of its declared keys."""
    rel = design.files.catalog_keys
    f = design.source.files.get(rel) if rel else None
    if f is None:
        return {}
    try:
        data = tomllib.loads(f.text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}  # ``amg design check`` names the problem
    return {d: t for d, t in data.items() if isinstance(t, dict)}


def load_domains(design) -> dict[str, Domain]:
    """The domains ``design`` draws from, parsed from the files it was read with, by name
    (sorted), with the items of the design's own catalog keys. Parsed once per design."""
    cached = getattr(design, "_domains", None)
    if cached is None:
        src = design.source
        names = sorted(src.catalog) if design.domains == "all" else sorted(design.domains)
        keys = tuple(sorted(design.catalog_keys))
        cached = {n: _parsed(n, src.catalog[n].data, keys) for n in names}
        if keys:
            overlay = design_key_items(design)
            for n, d in cached.items():
                given = {k: v for k, v in overlay.get(n, {}).items() if k in keys}
                if given:
                    cached[n] = d.model_copy(update={"extra": {**given, **d.extra}})
        design._domains = cached
    return cached


@lru_cache(maxsize=512)
def _parsed(name: str, data: bytes, extra_keys: tuple[str, ...] = ()) -> Domain:
    return parse_domain(name, data, extra_keys)


@cache
def load_catalog(folder: Path = CATALOG_DIR) -> dict[str, Domain]:
    out: dict[str, Domain] = {}
    for path in catalog_files(folder):
        with open(path, "rb") as f:
            out[path.stem] = Domain(attribute=path.stem, **tomllib.load(f))
    return out
