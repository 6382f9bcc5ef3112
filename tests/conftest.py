"""Shared fixtures: a workspace in a temp dir and one small offline build reused across tests."""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session", autouse=True)
def scripted_provider():
    """``scripted:NAME`` models and generators for every test (``llm/scripted.py``), registered
    like any provider, as llm's own tests register their MockModel."""
    from llm.scripted import register

    register()


@pytest.fixture(autouse=True)
def _no_keys_no_scripts(monkeypatch):
    """Every test starts with no API keys or base URLs in the environment, no scripted replies
    and no server remembered as serving the OpenAI Batch API or not."""
    from llm.scripted import reset_scripts

    def forget() -> None:
        reset_scripts()
        batch = sys.modules.get("agentmemgate.llm.openai_batch")  # not imported for every test
        if batch is not None:
            batch.forget_servers()

    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    forget()
    yield
    forget()


@pytest.fixture
def ws(tmp_path):
    from agentmemgate.workspace import Workspace

    return Workspace(tmp_path / "ws")


@pytest.fixture(scope="session")
def small_build(tmp_path_factory):
    """All three splits with 2 arcs per cell, built offline once per test session."""
    from agentmemgate.pipeline import build

    root = tmp_path_factory.mktemp("small_build")
    summary = build(root / "ws", root / "out", split="all", n_per_cell=2, show_progress=False)
    return root, summary


@pytest.fixture
def design_dir(tmp_path):
    """An editable copy of the paper's design (keyed ids), as ``amg design init`` writes it."""
    from agentmemgate.design.init import init_design

    folder = tmp_path / "my_design"
    init_design(folder, "paper")
    return folder


@pytest.fixture
def edit_design():
    """``edit_design(folder, old, new, file="design.toml")``: replace ``old`` (which must occur)
    by ``new`` in one of a design's files, as a user editing it would."""

    def edit(folder, old: str, new: str, file: str = "design.toml") -> None:
        path = folder / file
        text = path.read_text()
        assert old in text, f"{old!r} not in {file}"
        path.write_text(text.replace(old, new, 1))

    return edit
