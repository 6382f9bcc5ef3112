"""Checks of a whole design before anything is built: ``amg design check`` and ``amg build``.

A design is checked by every room that reads its files: the design file itself (``design``),
the domain catalog (``validate.catalog``), the offline renderer's phrase lists
(``generate.phrase_check``), the offline judge's recovery rules (``validate.judges.heuristic``),
the timeline consistency rules it adds (``validate.consistency``), and whether the catalog can fill every split (the planner). This
module only puts their problems together; each problem names its file and key.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from .design import Design, DesignError, Problem
from .design.bundle import BUILTIN_CATALOG, CATALOG_DIR
from .design.load import read_design
from .errors import BadInput
from .generate.phrase_check import default_problems, phrase_problems
from .generate.planner import check_plan
from .validate.catalog import catalog_problems, declared_key_problems
from .validate.consistency import design_rules
from .validate.judges.heuristic import design_problems as recovery_problems


def checked_domains(design: Design) -> list[str] | None:
    """The domain files a design's checks read: those it draws from, and every file a user
    supplied (``--catalog``, ``files.catalog``) even when the design does not draw it, since its
    author means to use it. None: all of them."""
    if design.domains == "all":
        return None
    supplied = [name for name, f in design.source.catalog.items() if not f.builtin]
    return list(design.domains) + sorted(set(supplied) - set(design.domains))


def replaced_domains(design: Design) -> list[str]:
    """Built-in domains the design draws from whose file a user's file of the same name replaced."""
    names = design.source.catalog if design.domains == "all" else design.domains
    return sorted(
        n
        for n in names
        if n in design.source.catalog
        and not design.source.catalog[n].builtin
        and (CATALOG_DIR / f"{n}.toml").is_file()
    )


def unused_domains(design: Design) -> list[str]:
    """Domain files a user supplied that the design does not draw from (a note, not an error)."""
    names = checked_domains(design)
    return [] if names is None else [n for n in names if n not in design.domains]


def require_sound_design(
    design: Design, offline_renderer: bool = True, offline_judge: bool = True
) -> None:
    """Refuse, before anything is planned, a design whose files the build would trip on: its
    domain files (every renderer reads them), and the phrase lists of the offline renderer and
    the recovery rules of the offline judge when the build uses them. One line: the first
    problem, and how many more."""
    problems = catalog_problems(
        design.source.catalog, checked_domains(design), design.catalog_keys
    ) + declared_key_problems(design)
    if problems:
        # the user's own files first: a value shared with a built-in domain is theirs to change
        problems.sort(key=lambda p: p.file.startswith(BUILTIN_CATALOG + "/"))
        folders = sorted(
            {
                str(PurePath(f.origin).parent)
                for f in design.source.catalog.values()
                if not f.builtin
            }
        )
        command = " ".join(["amg catalog check", *folders])
        more = f" (and {len(problems) - 1} more: {command})" if len(problems) > 1 else ""
        raise DesignError(f"Catalog problem: {problems[0]}{more}")
    problems = (
        (phrase_problems(design) + default_problems(design) if offline_renderer else [])
        + (recovery_problems(design) if offline_judge else [])
        + design_rules(design)[1]
    )
    if problems:
        ref = "" if design.source.builtin else f" {PurePath(design.source.design.origin).parent}"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DesignError(f"Design problem: {problems[0]}{more}: see amg design check{ref}")


def check_design(ref, catalogs=()) -> tuple[Design | None, list]:
    """Every problem of the design at ``ref`` at once (``amg design check``): the design file,
    the domain files it draws from, the phrase banks the offline renderer will reach, the
    offline judge's recovery rules, and whether the catalog can fill every split. Each problem
    names its file and key."""
    design, problems = read_design(ref, catalogs)
    if design is None:
        return None, problems
    consistent = not problems  # the rooms' checks read the design's cells and factors
    problems += catalog_problems(
        design.source.catalog, checked_domains(design), design.catalog_keys
    )
    problems += declared_key_problems(design)
    if consistent:
        problems += phrase_problems(design)
        if not problems:  # the defaults a level inherits, once its lists are there
            problems += default_problems(design)
        problems += recovery_problems(design)
    problems += design_rules(design)[1]
    if not problems:  # the plan needs a sound catalog; the build is planned as a whole
        try:
            for split in design.splits:
                check_plan(split, 0, None, design=design)
        except BadInput as e:
            named = re.search(r"in split '(\w+)'", str(e))
            problems.append(
                Problem(
                    design.source.design.origin,
                    f"splits.{named.group(1) if named else split}",
                    str(e),
                )
            )
    return design, problems
