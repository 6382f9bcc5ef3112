"""How big a module and a room may grow, and how the test folders import one another.

Sizes: no module of the package holds more than 900 lines, and no room (a top-level subpackage,
everything under it included) more than 15% of the package's lines. Lines are those of the
``.py`` files under ``agentmemgate/``; data files do not count, so word lists, cue tables and
prompts belong in data files. A module that outgrows the limit is split by concern; a room that
outgrows its share holds more than one concern, and one of them becomes a room of its own.

What is over a limit today is listed below with what brings it under. The lists only shrink: an
offender not listed fails, and so does a listed one that is back under the limit.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "agentmemgate"
MODULE_LINES = 900
ROOM_SHARE = 0.15

MODULES_OVER: dict[str, str] = {}
ROOMS_OVER: dict[str, str] = {}


def _lines() -> dict[str, int]:
    """Lines of each module, by its path inside the package."""
    return {
        p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def test_no_module_over_900_lines():
    over = {name: n for name, n in _lines().items() if n > MODULE_LINES}
    assert set(over) == set(MODULES_OVER), f"modules over {MODULE_LINES} lines: {over}"


def test_no_room_over_15_percent_of_the_package():
    lines = _lines()
    total = sum(lines.values())
    rooms: dict[str, int] = {}
    for name, n in lines.items():
        if "/" in name:
            room = name.split("/")[0]
            rooms[room] = rooms.get(room, 0) + n
    assert len(rooms) > 5 and total > 10_000  # the package was found and its rooms counted
    over = {
        room: f"{n} of {total} lines ({n / total:.1%})"
        for room, n in rooms.items()
        if n > ROOM_SHARE * total
    }
    assert set(over) == set(ROOMS_OVER), f"rooms over {ROOM_SHARE:.0%} of the package: {over}"


def test_every_test_folder_is_a_package():
    """Each folder under tests/ has an ``__init__.py`` and tests/ itself none: a test imports its
    folder's helpers relatively (``from .doubles import ...``), another folder's by that folder's
    name (``from llm.llm_fakes import ...``) and the modules at the root of tests/ by theirs
    (``from extend_design import ...``), with no edit of ``sys.path``."""
    tests = Path(__file__).parent
    folders = [
        d
        for d in tests.rglob("*")
        if d.is_dir()
        and "__pycache__" not in d.parts
        and not any(part.startswith(".") for part in d.relative_to(tests).parts)
    ]
    assert len(folders) > 5
    assert [
        d.relative_to(tests).as_posix() for d in folders if not (d / "__init__.py").exists()
    ] == []
    assert not (tests / "__init__.py").exists()
