"""What a benchmark is made of, as data: factors and their levels, splits and their cells, the
structure of a conversation, and the domains arcs draw from.

A ``Design`` is read from a TOML file (``design.toml``, see ``design/paper/design.toml`` for the
paper's); nothing here names a split, factor or level. Every room that needs the vocabulary of a
benchmark (the planner, the renderers, the checks and judges, audits, the miner, reports, the
card) asks the design it was given.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from ..errors import UnknownLevel
from ..suggest import did_you_mean

# What a factor's level decides about an arc (the Python semantics a design can pick from):
#   outcome               what became of the plan (each level has a ``kind`` below)
#   plan_wording          how the plan is worded (the plan turn's phrasings, its reply)
#   confirmation_wording  how a plan that came true is confirmed (the outcome turn's phrasings)
#   structure             only the structure parameters (``Level.structure``), e.g. how many
#                         sessions lie between the plan and its outcome
#   correction            the explicit-correction cells (what is corrected, where, marked or not)
Role = Literal["outcome", "plan_wording", "confirmation_wording", "structure", "correction"]
ROLES: tuple[str, ...] = (
    "outcome",
    "plan_wording",
    "confirmation_wording",
    "structure",
    "correction",
)
# What became of an arc's plan; ``ArcSpec.outcome`` is always one of these.
OUTCOME_KINDS: tuple[str, ...] = ("came_true", "abandoned", "open", "control", "correction")
PLAN_KINDS: tuple[str, ...] = ("came_true", "abandoned", "open")
# Correction levels are ``TARGET_TIMING_MARKER``; these are the parts the toolkit knows.
CORRECTION_PARTS = (("initial", "change"), ("same", "later"), ("marked", "unmarked"))
IdScheme = Literal["sequential", "keyed"]
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _name(v: str, what: str) -> str:
    if not _NAME.fullmatch(v):
        raise ValueError(f"{what} {v!r} must be snake_case (lower-case letters, digits, _)")
    return v


class StructureOverride(BaseModel):
    """Structure parameters a level changes for its cells (unset: the split's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sessions: tuple[int, ...] | None = None
    pending_window: bool | None = None
    values: Literal["short", "long"] | None = None
    first_date: dt.date | None = None
    first_date_span_days: int | None = Field(default=None, ge=1)
    gap_days: tuple[int, int] | None = None

    @field_validator("sessions")
    @classmethod
    def _sessions(cls, v):
        if v is not None and (not v or any(n < 2 for n in v)):
            raise ValueError("sessions lists the session counts an arc may have, each at least 2")
        return v

    @field_validator("gap_days")
    @classmethod
    def _gaps(cls, v):
        if v is not None and not 1 <= v[0] <= v[1]:
            raise ValueError(
                "gap_days is [fewest, most] days between sessions, 1 <= fewest <= most"
            )
        return v


class Structure(StructureOverride):
    """How an arc's conversation is laid out (the paper's Sections 5 and 6.1).

    ``pending_window``: the plan is stated in the first session and its outcome (or, for an open
    plan, the still-pending mention) comes in the last, with at least one user turn between; a
    probe between them reads the store while the plan is pending. Without it the plan ends its
    session and the outcome opens the next one (the held-out layout). ``sessions``: the session
    counts an arc draws from; with a pending window the number of sessions between the plan and
    its outcome is ``sessions - 2``. ``values``: the catalog's short names or its long free-text
    phrases. Dates: the first session falls within ``first_date_span_days`` days of
    ``first_date``; later ones ``gap_days`` apart.
    """

    sessions: tuple[int, ...] = (2, 3)
    pending_window: bool = True
    values: Literal["short", "long"] = "short"
    first_date: dt.date = dt.date(2023, 1, 2)
    first_date_span_days: int = Field(default=700, ge=1)
    gap_days: tuple[int, int] = (3, 21)

    def with_override(self, o: StructureOverride | None) -> Structure:
        if o is None:
            return self
        return self.model_copy(update={k: v for k, v in o.model_dump().items() if v is not None})


class Level(BaseModel):
    """One level of a factor. ``definition`` is what the LLM generator's prompt, the blind
    judges' options, the audit labels and the miner's rubric show for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    definition: str = Field(min_length=1)
    # Plan-wording levels: the group whose outcome phrasings and replies follow a plan at this
    # level (the paper's: hedged, committed).
    group: str | None = None
    # A control: the change has already happened (no plan); its cells have outcome "control".
    control: bool = False
    # Outcome levels: what became of the plan (came_true, abandoned or open); default: the name.
    kind: Literal["came_true", "abandoned", "open"] | None = None
    # Whether arcs of other factors' cells may draw this level (their plan wording, say).
    drawn: bool = True
    structure: StructureOverride | None = None
    # The offline renderer's phrase-bank keys for this level (default: the level's name; for a
    # confirmation level the reply list is ``came_true`` unless set). ``{group}`` in ``reply``
    # is the plan's group (the paper's open plans get ``pending_hedged`` or ``pending_committed``).
    phrases: str | None = None
    reply: str | None = None

    @field_validator("name")
    @classmethod
    def _snake(cls, v: str) -> str:
        return _name(v, "level")

    @property
    def phrase_key(self) -> str:
        return self.phrases or self.name


class Factor(BaseModel):
    """A dimension the design varies, with its levels in order (least to most committed for
    the paper's hedge strength: the order ordinal agreement and off-by-one use)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = ""  # the key it is declared under
    role: Role
    description: str = ""
    ordered: bool = False
    levels: tuple[Level, ...] = Field(min_length=1)

    @property
    def level_names(self) -> tuple[str, ...]:
        return tuple(lv.name for lv in self.levels)

    def level(self, name: str) -> Level:
        for lv in self.levels:
            if lv.name == name:
                return lv
        raise UnknownLevel(
            f"Unknown level {name!r} of factor {self.name!r}; choose one of: "
            f"{', '.join(self.level_names)}{did_you_mean(name, self.level_names)}"
        )

    def has(self, name: str) -> bool:
        return any(lv.name == name for lv in self.levels)

    @property
    def drawn(self) -> tuple[str, ...]:
        """The levels an arc of another factor's cell draws from (controls never)."""
        return tuple(lv.name for lv in self.levels if lv.drawn and not lv.control)

    @property
    def control_level(self) -> str | None:
        return next((lv.name for lv in self.levels if lv.control), None)


class Cell(BaseModel):
    """``n`` arcs at one level of one factor, with one outcome."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    factor: str
    level: str
    outcome: str | None = None  # implied by the level where it can be (see ``Design.outcome_of``)
    n: int = Field(ge=1, strict=True)  # a count, never "20"

    @property
    def key(self) -> str:
        return f"{self.factor}/{self.level}"


class Split(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = ""
    title: str = ""  # how reports name it ("core benchmark")
    note: str = ""  # one line for the LLM generator's prompt and the card
    structure: Structure = Structure()
    cells: tuple[Cell, ...] = Field(min_length=1)


class CatalogKey(BaseModel):
    """A catalog key a design declares: a list each domain it draws from supplies (in its own
    file, or in the design's ``catalog_keys`` file), one item of which the offline renderer
    draws per arc as ``{slot}`` (and ``{you_slot}``, the same in the second person) for the
    design's phrase files, so wording that fits a domain needs no code."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = Field(min_length=1)  # what an item is, for the docs and the checks
    slot: str | None = None  # the slot's name in phrase files (default: the key)
    least: int = Field(default=3, ge=1, strict=True)  # items each domain gives at least

    @field_validator("slot")
    @classmethod
    def _slot(cls, v: str | None) -> str | None:
        return None if v is None else _name(v, "slot")


class DesignFiles(BaseModel):
    """The data files a design names, relative to the design file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    phrases: str = "phrases"  # folder: plan.toml, outcome.toml, replies.toml, chat.toml
    correction_phrases: str | None = None
    recovery: str | None = None  # the offline judge's recovery rules per factor
    consistency: str | None = None  # cues and rules added to the timeline consistency check
    catalog_keys: str | None = None  # per domain, the items of the design's own catalog keys
    catalog: tuple[str, ...] = ()  # folders of domain files added to the built-in catalog


class Design(BaseModel):
    """A benchmark's design. Build one with ``load_design``; the model is the file's content."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    description: str = ""
    # How arc ids are made. "sequential": drawn in plan order (the paper's ids; any edit to a
    # design that is not the paper's re-deals every id). "keyed": each arc's draws come from its
    # own key (split, cell, domain) and its id from its content, so an edit leaves the other
    # cells' arcs as they were wherever the draw allows.
    ids: IdScheme = "keyed"
    domains: tuple[str, ...] | Literal["all"] = "all"
    groups: dict[str, tuple[str, ...]] = {}
    files: DesignFiles = DesignFiles()
    # Catalog keys of the design's own, by name: slots its phrase files may use.
    catalog_keys: dict[str, CatalogKey] = {}
    factors: dict[str, Factor]
    splits: dict[str, Split]

    _source: object = PrivateAttr(default=None)  # the ``Bundle`` it was read from

    @field_validator("name")
    @classmethod
    def _snake(cls, v: str) -> str:
        return _name(v, "design name")

    # -- names ---------------------------------------------------------------------------------
    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(self.splits)

    def split(self, name: str) -> Split:
        if name not in self.splits:
            raise UnknownLevel(
                f"Unknown split {name!r} in design {self.name!r}; choose one of: "
                f"{', '.join(self.split_choices())}{did_you_mean(name, self.split_choices())}"
            )
        return self.splits[name]

    def split_choices(self) -> list[str]:
        return [*self.splits, *self.groups, "all"]

    def resolve_splits(self, name: str) -> list[str]:
        """``all``, a group (the paper's ``paper``) or one split name, validated."""
        if name == "all":
            return list(self.splits)
        if name in self.groups:
            return list(self.groups[name])
        self.split(name)
        return [name]

    def factor(self, name: str) -> Factor:
        if name not in self.factors:
            raise UnknownLevel(
                f"Unknown factor {name!r} in design {self.name!r}; choose one of: "
                f"{', '.join(self.factors)}{did_you_mean(name, list(self.factors))}"
            )
        return self.factors[name]

    def by_role(self, role: str) -> Factor | None:
        return next((f for f in self.factors.values() if f.role == role), None)

    def levels(self, factor: str) -> tuple[str, ...]:
        return self.factor(factor).level_names

    def definition(self, factor: str, level: str) -> str:
        return self.factor(factor).level(level).definition

    def definitions(self) -> dict[str, str]:
        """Every level's definition by name (a level in two factors has one definition)."""
        out: dict[str, str] = {}
        for f in self.factors.values():
            for lv in f.levels:
                out.setdefault(lv.name, lv.definition)
        return out

    def factor_of_levels(self, names) -> Factor | None:
        """The factor whose levels are exactly ``names`` (a judge's options)."""
        want = set(names)
        return next((f for f in self.factors.values() if set(f.level_names) == want), None)

    @property
    def ordered_factors(self) -> dict[str, tuple[str, ...]]:
        return {f.name: f.level_names for f in self.factors.values() if f.ordered}

    def level_identifiers(self) -> set[str]:
        """Every level, factor and split name: what generated text must never contain."""
        return (
            {lv.name for f in self.factors.values() for lv in f.levels}
            | set(self.factors)
            | set(self.splits)
        )

    # -- cells ---------------------------------------------------------------------------------
    def implied_outcome(self, factor: str, level: str) -> str | None:
        """The outcome a level fixes for its cells (a control, an outcome level, a confirmation
        or correction level), or None (the cell must give one)."""
        f = self.factors[factor]
        lv = f.level(level)
        if lv.control:
            return "control"
        if f.role == "outcome":
            return lv.kind or lv.name
        return {"confirmation_wording": "came_true", "correction": "correction"}.get(f.role)

    def outcome_of(self, cell: Cell) -> str:
        """A cell's outcome: given, or implied by its level."""
        if cell.outcome is not None:
            return cell.outcome
        implied = self.implied_outcome(cell.factor, cell.level)
        if implied is None:
            raise ValueError(f"cell {cell.key} needs an outcome")
        return implied

    def structure_of(self, split: str, cell: Cell) -> Structure:
        """The split's structure with the cell level's overrides."""
        lv = self.factors[cell.factor].level(cell.level)
        return self.splits[split].structure.with_override(lv.structure)

    def cell_counts(self, split: str, n_per_cell: int | None = None) -> list[tuple[Cell, int]]:
        """Each cell of ``split`` with its arc count. ``n_per_cell`` scales the design's counts:
        the split's largest plan cell gets ``n_per_cell`` arcs and every other cell (controls
        among them) the same share of its own count, at least one."""
        cells = self.splits[split].cells
        if n_per_cell is None:
            return [(c, c.n) for c in cells]
        plan = [c.n for c in cells if self.outcome_of(c) != "control"] or [c.n for c in cells]
        ref = max(plan)
        return [(c, max(1, (2 * c.n * n_per_cell + ref) // (2 * ref))) for c in cells]

    def described(self, n_per_cell: int | None = None) -> dict:
        """The design as data (``amg design show --json``): its content, where it was read from
        and the arcs each cell gets (scaled by ``n_per_cell``)."""
        src = self.source
        counts = {
            name: {
                "arcs": self.arcs_in(name, n_per_cell),
                "cells": [
                    {"factor": c.factor, "level": c.level, "outcome": self.outcome_of(c), "n": n}
                    for c, n in self.cell_counts(name, n_per_cell)
                ],
            }
            for name in self.splits
        }
        return {
            "design": self.model_dump(mode="json"),
            "source": {
                "builtin": src.builtin,
                "file": src.design.origin,
                "sha256": src.sha256,
                "files": {rel: f.sha256 for rel, f in sorted(src.files.items())},
            },
            "n_per_cell": n_per_cell,
            "splits": counts,
            "arcs": sum(c["arcs"] for c in counts.values()),
        }

    def arcs_in(self, split: str, n_per_cell: int | None = None) -> int:
        return sum(n for _, n in self.cell_counts(split, n_per_cell))

    # -- the files it was read with --------------------------------------------------------------
    @property
    def source(self):
        """The ``Bundle`` of files this design was read from (design file, named files, catalog)."""
        if self._source is None:
            raise RuntimeError("this design was not read with load_design")
        return self._source
