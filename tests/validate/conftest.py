"""Validation tests: one tiny generated workspace, shared."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def _tiny_template(tmp_path_factory):
    """One arc per cell of every split, generated (no judges, no export) once per session."""
    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.workspace import Workspace

    root = tmp_path_factory.mktemp("tiny")
    ws = Workspace(root / "ws")
    generate(
        ws,
        get_renderer("offline"),
        ["core", "heldout", "controlled"],
        seed=0,
        n_per_cell=1,
        show_progress=False,
    )
    ws.db.conn.close()
    return root / "ws"


@pytest.fixture
def tiny(tmp_path, _tiny_template):
    """A private copy of the tiny workspace (16 arcs), so tests can judge and edit freely."""
    from agentmemgate.workspace import Workspace

    dest = tmp_path / "ws"
    shutil.copytree(_tiny_template, dest)
    return Workspace(dest)
