"""No absolute path of one machine in the repository: what it ships, runs and documents works from
any checkout (corpora come from the corpora folder, models and servers from settings)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MACHINE_PATH = re.compile(
    "|".join(
        [
            r"(?<![\w.~-])/(?:work|root)/",  # a container's or a superuser's tree
            r"(?<![\w.~-])/home/[A-Za-z_][\w.-]*/",  # a user's home on Linux
            r"(?<![\w.~-])/Users/[A-Za-z_][\w. -]*/",  # ... on macOS
            r"\b[A-Za-z]:(?:\\|/)+Users(?:\\|/)+",  # ... on Windows
        ]
    )
)


def tracked_files() -> list[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.stdout.decode().split("\0") if name]


def test_no_tracked_file_names_a_path_of_one_machine():
    found = []
    for path in tracked_files():
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "absolute paths of one machine:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "/work/shared/corpora-src",
        '"/root/.pyenv/versions"',
        "/home/alice/models/x.gguf",
        "see /Users/bob/data",
        r"C:\Users\carol\corpora",
        "C:/Users/carol",
    ],
)
def test_the_patterns_catch_each_kind(text):
    assert MACHINE_PATH.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "~/.local/share/agentmemgate/corpora",
        "/models/gemma.gguf",
        "https://example.org/work/x",
        "%LOCALAPPDATA%\\agentmemgate",
        "datasets/xiaowu0162/longmemeval-cleaned/resolve/main",
    ],
)
def test_ordinary_paths_pass(text):
    assert not MACHINE_PATH.search(text)
