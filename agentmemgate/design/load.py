"""Read a design file into a ``Design``, reporting every problem at once.

``read_design`` returns the design (when it could be built) and a list of ``Problem``s, each
naming the file and the key; ``load_design`` raises the first as a one-line ``DesignError``.
What the rooms that use a design's files need of them (phrase banks, recovery cues) is checked
by those rooms; ``pipeline.check_design`` puts all of it together for ``amg design check``.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import BadInput
from ..suggest import did_you_mean
from .bundle import Bundle, read_bundle
from .model import (
    CORRECTION_PARTS,
    PLAN_KINDS,
    CatalogKey,
    Cell,
    Design,
    DesignFiles,
    Factor,
    Level,
    Split,
    Structure,
    StructureOverride,
)


class DesignError(BadInput):
    """A design file (or a file it names) is not a usable design."""


@dataclass(frozen=True)
class Problem:
    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key + ': ' if self.key else ''}{self.message}"


# -- syntax and schema --------------------------------------------------------------------------
def parse_toml(data: bytes, origin: str) -> tuple[dict | None, Problem | None]:
    """A TOML file's table, or the syntax error with its line and column."""
    try:
        return tomllib.loads(data.decode("utf-8")), None
    except UnicodeDecodeError as e:
        return None, Problem(origin, "", f"not UTF-8 text ({e.reason} at byte {e.start})")
    except tomllib.TOMLDecodeError as e:
        return None, Problem(origin, "", f"TOML syntax error: {e}")


def key_path(loc: Sequence[Any]) -> str:
    """pydantic's ``('splits', 'core', 'cells', 2, 'n')`` as ``splits.core.cells#3.n``."""
    out = ""
    for part in loc:
        out += f"#{part + 1}" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_MODELS: dict[str, type[BaseModel]] = {}


def _model_at(loc: Sequence[Any]) -> type[BaseModel] | None:
    """The model a location's last key belongs to (to list the keys it knows)."""
    path = [p for p in loc if not isinstance(p, int)]
    if not path:
        return Design
    head = path[0]
    if head == "files":
        return DesignFiles
    if head == "catalog_keys":
        return CatalogKey if len(path) >= 2 else None
    if head == "factors":
        if len(path) >= 4 and path[3] == "structure":
            return StructureOverride
        return Level if len(path) >= 3 and path[2] == "levels" else Factor
    if head == "splits":
        if len(path) >= 3 and path[2] == "cells":
            return Cell
        if len(path) >= 3 and path[2] == "structure":
            return Structure
        return Split
    return None


def schema_problems(e: ValidationError, origin: str) -> list[Problem]:
    out = []
    for err in e.errors():
        loc = err["loc"]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            model = _model_at(loc[:-1])
            known = ", ".join(model.model_fields) if model else ""
            msg = f"unknown key{f' (known keys: {known})' if known else ''}"
        elif err["type"] == "missing":
            msg = "missing key"
        out.append(Problem(origin, key_path(loc), msg))
    return out


def _prepare(data: dict) -> dict:
    """The file's tables with each factor's and split's name filled in from its key."""
    data = dict(data)
    for section in ("factors", "splits"):
        if isinstance(data.get(section), dict):
            data[section] = {
                k: ({"name": k, **v} if isinstance(v, dict) else v)
                for k, v in data[section].items()
            }
    return data


def named_files(data: dict) -> dict[str, list[str]]:
    """What ``files`` asks the bundle to read (best effort on a malformed table)."""
    files = data.get("files") if isinstance(data.get("files"), dict) else {}
    phrases = files.get("phrases", "phrases")
    single = [
        files.get(k) for k in ("correction_phrases", "recovery", "consistency", "catalog_keys")
    ]
    catalog = files.get("catalog", [])
    return {
        "files": [s for s in single if isinstance(s, str)],
        "folders": [phrases] if isinstance(phrases, str) else [],
        "catalog": [c for c in catalog if isinstance(c, str)] if isinstance(catalog, list) else [],
    }


# -- reading -------------------------------------------------------------------------------------
def read_design(
    ref: str | Path = "paper", catalogs: Sequence[Path] = ()
) -> tuple[Design | None, list[Problem]]:
    """The design at ``ref`` (a built-in name, a design file or its folder) and its problems."""
    bundle = _bundle(ref, catalogs)
    return design_from_bundle(bundle)


def _bundle(ref: str | Path, catalogs: Sequence[Path]) -> Bundle:
    from .bundle import design_path

    path, _ = design_path(ref)
    data, _ = parse_toml(path.read_bytes(), str(path))
    return read_bundle(ref, named_files(data or {}), tuple(catalogs))


def design_from_bundle(bundle: Bundle) -> tuple[Design | None, list[Problem]]:
    origin = bundle.design.origin
    data, syntax = parse_toml(bundle.design.data, origin)
    if syntax:
        return None, [syntax]
    try:
        design = Design.model_validate(_prepare(data))
    except ValidationError as e:
        problems = schema_problems(e, origin)
        # The rest of the file may hold other mistakes: check what remains without the broken
        # entries, so that one run reports them all.
        rest = _without(_prepare(data), e.errors())
        try:
            partial = Design.model_validate(rest)
        except ValidationError:
            return None, problems
        partial._source = bundle
        said = {p.key for p in problems}
        return None, problems + [p for p in semantic_problems(partial, bundle) if p.key not in said]
    design._source = bundle
    return design, semantic_problems(design, bundle)


_PLACEHOLDERS = {"definition": "-", "description": "-", "title": "-", "note": "-", "n": 1}


def _without(data: dict, errors: list[dict]) -> dict:
    """``data`` mended so the schema accepts it: an unknown key dropped, a missing text or count
    filled in, and any other broken entry (the cell or level that holds it) left out."""
    import copy

    data = copy.deepcopy(data)

    def parent(path):
        node = data
        for part in path[:-1]:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
        return node

    drops = set()
    for err in errors:
        loc = tuple(err["loc"])
        node = parent(loc)
        if err["type"] == "extra_forbidden" and isinstance(node, dict):
            node.pop(loc[-1], None)
        elif err["type"] == "missing" and loc[-1] in _PLACEHOLDERS and isinstance(node, dict):
            node[loc[-1]] = _PLACEHOLDERS[loc[-1]]
        else:
            cut = max(
                (i for i, part in enumerate(loc) if isinstance(part, int)), default=len(loc) - 1
            )
            drops.add(loc[: cut + 1])
    for path in sorted(drops, key=lambda p: [str(x) for x in p], reverse=True):
        node = parent(path)
        try:
            del node[path[-1]]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            pass
    return data


def load_design(ref: str | Path = "paper", catalogs: Sequence[Path] = ()) -> Design:
    """The design at ``ref``, or a one-line ``DesignError`` (the first problem, and how many more)."""
    design, problems = read_design(ref, catalogs)
    return _checked(design, problems, ref)


def _checked(design: Design | None, problems: list[Problem], ref) -> Design:
    if problems:
        more = (
            f" (and {len(problems) - 1} more problem(s): `amg design check {ref}` lists them)"
            if len(problems) > 1
            else ""
        )
        raise DesignError(f"{problems[0]}{more}")
    assert design is not None
    return design


def design_of_bundle(bundle: Bundle) -> Design:
    design, problems = design_from_bundle(bundle)
    return _checked(design, problems, bundle.design.origin)


@functools.lru_cache(maxsize=1)
def paper_design() -> Design:
    """The paper's design as it ships with the toolkit (three splits and the corrections)."""
    return load_design("paper")


# -- meaning -------------------------------------------------------------------------------------
def semantic_problems(d: Design, bundle: Bundle) -> list[Problem]:
    """Everything about a design's content that its schema cannot say (names that must exist,
    roles that must be unique, cells that must be buildable, files that must be there)."""
    f = bundle.design.origin
    out: list[Problem] = []

    def p(key: str, msg: str) -> None:
        out.append(Problem(f, key, msg))

    seen_roles: dict[str, str] = {}
    for name, fac in d.factors.items():
        if fac.role != "structure":
            if fac.role in seen_roles:
                p(
                    f"factors.{name}.role",
                    f"a design has one {fac.role} factor; {seen_roles[fac.role]!r} already is",
                )
            seen_roles[fac.role] = name
        names = [lv.name for lv in fac.levels]
        for i, lv in enumerate(fac.levels):
            key = f"factors.{name}.levels#{i + 1}"
            if names.index(lv.name) != i:
                p(f"{key}.name", f"level {lv.name!r} appears twice in factor {name!r}")
            if fac.role == "outcome" and not lv.control and (lv.kind or lv.name) not in PLAN_KINDS:
                p(
                    f"{key}.kind",
                    f"outcome level {lv.name!r} needs kind = came_true, abandoned or open",
                )
            if fac.role == "correction":
                parts = lv.name.split("_")
                if len(parts) != 3 or any(x not in ok for x, ok in zip(parts, CORRECTION_PARTS)):
                    p(
                        f"{key}.name",
                        f"correction levels are TARGET_TIMING_MARKER from "
                        f"{'/'.join(CORRECTION_PARTS[0])}, {'/'.join(CORRECTION_PARTS[1])}, "
                        f"{'/'.join(CORRECTION_PARTS[2])} (e.g. initial_same_marked)",
                    )
            if fac.role == "plan_wording" and not lv.control and not lv.group:
                p(
                    f"{key}.group",
                    f"plan-wording level {lv.name!r} needs a group (the outcome "
                    "phrasings that follow it, e.g. hedged or committed)",
                )
            if fac.role == "structure" and lv.structure is None:
                p(
                    f"{key}.structure",
                    f"a level of structure factor {name!r} sets structure "
                    "parameters (e.g. structure = {{sessions = [3]}})",
                )
        if fac.role in ("plan_wording", "confirmation_wording") and not fac.drawn:
            p(
                f"factors.{name}.levels",
                f"factor {name!r} has no level other cells can draw "
                "(one that is neither a control nor drawn = false)",
            )
    plan_f, conf_f = d.by_role("plan_wording"), d.by_role("confirmation_wording")

    for gname, members in d.groups.items():
        for s in members:
            if s not in d.splits:
                p(f"groups.{gname}", f"unknown split {s!r}")
        if gname in d.splits or gname == "all":
            p(f"groups.{gname}", "a group needs a name no split has (and not 'all')")

    for sname, split in d.splits.items():
        seen_cells: set[tuple] = set()
        counted: list[str] = []  # levels that set a session count where it cannot place an outcome
        for i, cell in enumerate(split.cells):
            key = f"splits.{sname}.cells#{i + 1}"
            fac = d.factors.get(cell.factor)
            if fac is None:
                p(
                    f"{key}.factor",
                    f"unknown factor {cell.factor!r}; the design declares: "
                    f"{', '.join(d.factors)}{did_you_mean(cell.factor, d.factors)}",
                )
                continue
            if not fac.has(cell.level):
                p(
                    f"{key}.level",
                    f"unknown level {cell.level!r} of factor {cell.factor!r}; "
                    f"choose one of: {', '.join(fac.level_names)}"
                    f"{did_you_mean(cell.level, fac.level_names)}",
                )
                continue
            lv = fac.level(cell.level)
            try:
                outcome = d.outcome_of(cell)
            except ValueError:
                p(key, f"cell {cell.key} needs outcome = came_true, abandoned or open")
                continue
            if (cell.factor, cell.level, outcome) in seen_cells:
                p(key, f"cell {cell.key} (outcome {outcome}) appears twice in split {sname!r}")
            seen_cells.add((cell.factor, cell.level, outcome))
            want = d.implied_outcome(cell.factor, cell.level)
            if want is not None and outcome != want:
                p(f"{key}.outcome", f"a cell of {cell.key} has outcome {want!r}, not {outcome!r}")
            elif outcome not in PLAN_KINDS + ("control", "correction"):
                p(
                    f"{key}.outcome",
                    f"unknown outcome {outcome!r}; choose one of: {', '.join(PLAN_KINDS)}",
                )
            if outcome in PLAN_KINDS and plan_f is None:
                p(key, "a cell with a plan needs a plan_wording factor in the design")
            if outcome == "control" and (plan_f is None or plan_f.control_level is None):
                p(
                    key,
                    "a control cell needs a control level (control = true) in the "
                    "plan_wording factor",
                )
            if outcome == "came_true" and fac.role != "confirmation_wording" and conf_f is None:
                p(key, "a came_true cell needs a confirmation_wording factor in the design")
            if outcome == "correction" and fac.role != "correction":
                p(f"{key}.outcome", "only cells of the correction factor have outcome 'correction'")
            st = d.structure_of(sname, cell)
            if (
                lv.structure is not None
                and lv.structure.sessions
                and not st.pending_window
                and outcome in PLAN_KINDS
                and cell.level not in counted
            ):
                counted.append(cell.level)
            if (
                outcome == "correction"
                and 3 not in st.sessions
                and cell.level.split("_")[:2] == ["change", "later"]
            ):
                p(
                    key,
                    "a correction of a reported change in a later session needs 3 sessions "
                    "among the structure's sessions",
                )

        if counted:
            p(
                f"splits.{sname}.structure",
                f"levels {', '.join(counted)} set the session count, but "
                f"split {sname!r} has no pending window: the outcome then "
                "opens the session after the plan's whatever the count "
                "(set pending_window = true)",
            )
    known = set(bundle.catalog)
    domains = sorted(known) if d.domains == "all" else list(d.domains)
    for dom in [] if d.domains == "all" else d.domains:
        if dom not in known:
            p(
                "domains",
                f"unknown domain {dom!r} (no {dom}.toml in the catalog: "
                f"{len(known)} built-in or --catalog files){did_you_mean(dom, known)}",
            )
    if d.domains != "all" and len(set(d.domains)) != len(d.domains):
        p("domains", "a domain is listed twice")
    if len(domains) < 1:
        p("domains", "the design draws from no domain")
    for rel in (
        d.files.correction_phrases,
        d.files.recovery,
        d.files.consistency,
        d.files.catalog_keys,
    ):
        if rel is not None and rel not in bundle.files:
            p("files", f"{rel!r} does not exist beside the design file")
    if not bundle.folder(d.files.phrases):
        p(
            "files.phrases",
            f"no phrase files in {d.files.phrases!r} beside the design file "
            "(plan.toml, outcome.toml, replies.toml, chat.toml)",
        )
    if (
        any(
            c.factor in d.factors and d.factors[c.factor].role == "correction"
            for s in d.splits.values()
            for c in s.cells
        )
        and d.files.correction_phrases is None
    ):
        p("files.correction_phrases", "correction cells need a correction_phrases file")
    return out
