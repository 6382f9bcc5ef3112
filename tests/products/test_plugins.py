"""Plug-ins: the docs' complete plug-in (docs/how-to/score-systems.md), installed with pip into a temporary directory, listed
by `amg eval systems` and run by `amg eval run`, beside a component plug-in and a broken one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

EXTRA_TOML = '''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "amg-extra"
version = "0.2.0"

[project.entry-points."agentmemgate.systems"]
remember-nothing = "amg_extra:Nothing"
broken-one = "amg_missing_module:Thing"

[tool.setuptools]
py-modules = ["amg_extra"]
'''
EXTRA_PY = '''
from agentmemgate.memory.system import FieldKey, FieldState, MemorySystem, StoreSnapshot, SystemInfo


class Nothing(MemorySystem):
    info = SystemInfo(name="remember-nothing", description="a component system that stores nothing",
                      gated=False)

    def begin(self, fields):
        self.key = FieldKey.of(fields[0])

    def process_turn(self, turn, context):
        return []

    def read(self, key):
        return None

    def snapshot(self, t):
        return StoreSnapshot(t=t, fields=[FieldState(key=self.key, current=None)])

    @property
    def calls(self):
        return 0
'''


def docs_plugin() -> tuple[str, str]:
    text = (ROOT / "docs" / "how-to" / "score-systems.md").read_text(encoding="utf-8")
    toml = re.search(r"```toml\n# pyproject.toml\n(.*?)```", text, re.S)
    py = re.search(r"```python\n# amg_recent.py\n(.*?)```", text, re.S)
    assert toml and py, "the docs' plug-in example is missing"
    return toml.group(1), py.group(1)


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """Both packages built and installed by pip into a directory that is put on PYTHONPATH."""
    root = tmp_path_factory.mktemp("plugins")
    toml, py = docs_plugin()
    from .plugin_doubles import recipe

    hosted_toml, hosted_py = recipe()
    for name, files in (
        ("recent", {"pyproject.toml": toml, "amg_recent.py": py}),
        ("extra", {"pyproject.toml": EXTRA_TOML, "amg_extra.py": EXTRA_PY}),
        ("hosted", {"pyproject.toml": hosted_toml, "amg_mem0_platform.py": hosted_py}),
    ):
        (root / name).mkdir()
        for f, text in files.items():
            (root / name / f).write_text(text, encoding="utf-8")
    target = root / "site"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(root / "recent"),
            str(root / "extra"),
            str(root / "hosted"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert (target / "amg_recent.py").is_file()
    ws = root / "ws"
    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.workspace import Workspace

    generate(Workspace(ws), get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    return target, ws


def amg(target: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", "from agentmemgate.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.slow
def test_eval_systems_lists_plugins_and_a_broken_one_spoils_nothing(plugins):
    target, _ = plugins
    r = amg(target, "eval", "systems")
    assert r.returncode == 0, r.stderr
    lines = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert (
        "answering system from package amg-recent: the user's last 3 messages"
        in lines["recent-messages"]
    )
    assert "component system from package amg-extra" in lines["remember-nothing"]
    # the hosted recipe's plug-in (docs/how-to/hosted-products.md), as its page spells it
    assert "answering system from package amg-mem0-platform" in lines["mem0-platform"]
    assert "plug-in 'broken-one' from package amg-extra is broken" in lines["broken-one"]
    assert "ModuleNotFoundError" in lines["broken-one"]
    for builtin in ("literal-gated", "full-context", "no-memory", "mem0", "graphiti"):
        assert builtin in lines
    assert len(r.stdout.splitlines()) == len(lines)  # one line each


def test_the_docs_plugin_runs_and_is_reported(plugins):
    target, ws = plugins
    r = amg(
        target,
        "eval",
        "run",
        "--system",
        "recent-messages",
        "--system",
        "remember-nothing",
        "--split",
        "core",
        "--workspace",
        ws,
        "--no-progress",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "systems: recent-messages, remember-nothing" in r.stdout
    assert "ran now 6" in r.stdout and "failed 0" in r.stdout
    # what was stored reads back without the plug-in installed (in-process: no PYTHONPATH)
    from typer.testing import CliRunner

    from agentmemgate.cli import app

    arc = _arc_ids(ws)[0]
    show = CliRunner().invoke(
        app, ["eval", "show", arc, "--system", "recent-messages", "--workspace", str(ws)]
    )
    assert show.exit_code == 0, show.output
    assert re.search(r"Answer after session 0: ['\"]Last you told me:", show.output)
    assert "Retrieved for the probe after session 0:" in show.output
    rep = CliRunner().invoke(app, ["report", "eval", "--json", "--workspace", str(ws)])
    assert rep.exit_code == 0, rep.output
    meta = json.loads(rep.stdout)["meta"]["systems"]
    assert meta["recent-messages"]["kind"] == "product"
    assert meta["recent-messages"]["provenance"]["library"] == "amg-recent"
    assert meta["recent-messages"]["provenance"]["library_version"] == "0.1.0"
    assert meta["remember-nothing"]["kind"] == "component"
    again = amg(
        target,
        "eval",
        "run",
        "--system",
        "recent-messages",
        "--split",
        "core",
        "--workspace",
        ws,
        "--no-progress",
    )
    assert "ran now 0" in again.stdout and "already stored 3" in again.stdout


def test_a_broken_plugin_is_one_line_naming_its_package(plugins):
    target, ws = plugins
    r = amg(target, "eval", "run", "--system", "broken-one", "--workspace", ws, "--no-progress")
    assert r.returncode == 1
    out = (r.stdout + r.stderr).strip().splitlines()
    assert len(out) == 1 and "Traceback" not in out[0]
    assert out[0].startswith("Error: Plug-in 'broken-one' from package amg-extra is broken")


def _arc_ids(ws: Path) -> list[str]:
    from agentmemgate.workspace import Workspace

    return [r[0] for r in Workspace(ws, create=False).db.execute("select id from arcs")]
