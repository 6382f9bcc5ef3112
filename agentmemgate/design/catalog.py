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

    def field(self) -> FieldSpec:
        """The value-free field: description built from the attribute name alone."""
        return FieldSpec(
            attribute=self.attribute,
            description=f"The user's current {self.noun}.",
            probe_question=self.probe_question,
        )


def catalog_files(folder: Path = CATALOG_DIR) -> list[Path]:
    return sorted(folder.glob("*.toml"))


def parse_domain(name: str, data: bytes) -> Domain:
    """One domain file's bytes as a ``Domain`` (``tomllib.TOMLDecodeError`` or pydantic's
    ``ValidationError`` say why not; ``validate.catalog`` turns them into one-line problems)."""
    return Domain(attribute=name, **tomllib.loads(data.decode("utf-8")))


def load_domains(design) -> dict[str, Domain]:
    """The domains ``design`` draws from, parsed from the files it was read with, by name
    (sorted). Parsed once per design."""
    cached = getattr(design, "_domains", None)
    if cached is None:
        src = design.source
        names = sorted(src.catalog) if design.domains == "all" else sorted(design.domains)
        cached = {n: _parsed(n, src.catalog[n].data) for n in names}
        design._domains = cached
    return cached


@lru_cache(maxsize=512)
def _parsed(name: str, data: bytes) -> Domain:
    return parse_domain(name, data)


@cache
def load_catalog(folder: Path = CATALOG_DIR) -> dict[str, Domain]:
    out: dict[str, Domain] = {}
    for path in catalog_files(folder):
        with open(path, "rb") as f:
            out[path.stem] = Domain(attribute=path.stem, **tomllib.load(f))
    return out
