"""Every data file of the package (rubrics, designs, the audit app's scripts and styles) is
shipped by a non-editable install: pyproject's package-data covers its suffix."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_package_data_covers_every_data_file():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["*"]
    data = [
        p
        for p in (ROOT / "agentmemgate").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc")
    ]
    assert any(p.suffix == ".js" for p in data) and any(p.suffix == ".css" for p in data)
    missed = [str(p.relative_to(ROOT)) for p in data if not any(fnmatch(p.name, g) for g in globs)]
    assert missed == []
