"""Exports survive being killed: every folder is the complete old export or the complete new one.

The first test forks a real export process and SIGKILLs it at every file-system step it takes
(counted with an audit hook: each open for writing, mkdir, link, rename, swap, removal), so every
point between two steps is covered, not a sample. The others kill and interrupt the real ``amg
export`` command at a spread of moments.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentmemgate.design import paper_design
from agentmemgate.exports import export
from agentmemgate.generate import generate, get_renderer
from agentmemgate.workspace import Workspace

SPLITS = paper_design().resolve_splits("paper")
MUTATING = {
    "os.mkdir",
    "os.rename",
    "os.replace",
    "os.link",
    "os.symlink",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "shutil.rmtree",
    "ctypes.call_function",
    "shutil.copyfile",
}


def snapshot(out: Path) -> dict[str, dict[str, str]]:
    """folder (relative to out) -> {file name: sha256} for the export's own folders."""
    state = {}
    for folder in [out] + [out / s for s in SPLITS]:
        if folder.is_dir():
            state[folder.relative_to(out).as_posix()] = {
                p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.iterdir())
                if p.is_file()
            }
    return state


def manifest_matches(folder: Path) -> bool:
    m = json.loads((folder / "manifest.json").read_text())
    return all(
        hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
        for name, digest in m["files"].items()
    )


def assert_old_or_new(out: Path, old: dict, new: dict) -> str:
    """Each folder equals the old or the new export, with a manifest that matches its files."""
    now = snapshot(out)
    assert set(now) == set(old) == set(new), sorted(now)
    kinds = set()
    for folder, files in now.items():
        assert files in (old[folder], new[folder]), f"{folder or '.'} is a mix of two exports"
        kinds.add("old" if files == old[folder] else "new")
        assert manifest_matches(out / folder)
    return kinds.pop() if len(kinds) == 1 else "per-folder"


@pytest.fixture
def two_exports(tmp_path):
    """A workspace whose arcs changed (seed 1 -> 2) since the export in ``out`` was written."""
    ws = Workspace(tmp_path / "ws")
    renderer = get_renderer("offline")
    for name in ("out", "reference"):  # a file of the user's own beside the export is kept
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("the user's own file\n")
    generate(ws, renderer, SPLITS, seed=1, n_per_cell=1, show_progress=False)
    export(ws, tmp_path / "out", SPLITS)
    old = snapshot(tmp_path / "out")
    generate(ws, renderer, SPLITS, seed=2, n_per_cell=1, show_progress=False)
    export(ws, tmp_path / "reference", SPLITS)
    new = snapshot(tmp_path / "reference")
    assert all(old[f] != new[f] for f in old if f != ".") and old["."] != new["."]
    return ws, tmp_path / "out", old, new


def _export_killed_at(ws_path: Path, out: Path, step: int, no_exchange: bool = False) -> bool:
    """Fork an export that SIGKILLs itself at its ``step``-th file-system step; True if it did."""
    pid = os.fork()
    if pid == 0:  # the child: a real process doing a real export
        try:
            from agentmemgate import atomic

            if no_exchange:
                atomic._exchange = lambda a, b: False
            ws = Workspace(ws_path, create=False)
            seen = 0

            def hook(event, args):
                nonlocal seen
                if event in MUTATING or (event == "open" and _writes(args)):
                    seen += 1
                    if seen == step:
                        os.kill(os.getpid(), signal.SIGKILL)

            sys.addaudithook(hook)
            export(ws, out, SPLITS)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _writes(args) -> bool:
    _path, mode, flags = (list(args) + [None, None, 0])[:3]
    return bool(
        (isinstance(mode, str) and set(mode) & set("wax+"))
        or (flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
    )


@pytest.mark.slow
@pytest.mark.parametrize("no_exchange", [False, True], ids=["exchange", "two-renames"])
def test_killed_at_every_step_leaves_old_or_new(two_exports, no_exchange):
    ws, out, old, new = two_exports
    seen_kinds = set()
    step = 1
    while _export_killed_at(ws.path, out, step, no_exchange):
        if no_exchange and not out.exists():
            # Killed between the fallback's two renames: the next run puts the old one back.
            from agentmemgate.atomic import _recover

            _recover(out.resolve())
        kind = assert_old_or_new(out, old, new)
        seen_kinds.add(kind)
        assert (out / "notes.txt").read_text() == "the user's own file\n"
        if kind == "new":  # committed: restore the old export to kill the next step of a fresh run
            _restore(ws, out, old)
        step += 1
    assert step > 20, f"only {step - 1} steps: the hook did not see the export's writes"
    assert seen_kinds == {"old", "new"}
    assert assert_old_or_new(out, old, new) == "new"
    # Leftovers of the killed runs are gone once an export has finished.
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".out.")] == []


def _restore(ws: Workspace, out: Path, old: dict) -> None:
    generate(ws, get_renderer("offline"), SPLITS, seed=1, n_per_cell=1, show_progress=False)
    export(ws, out, SPLITS)
    assert snapshot(out) == old
    generate(ws, get_renderer("offline"), SPLITS, seed=2, n_per_cell=1, show_progress=False)


def _amg(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("amg")), *args]


def _started(proc: subprocess.Popen, out: Path, timeout: float = 60) -> bool:
    """Wait until the export is under way (its new folder is being built beside ``out``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if any(p.name.startswith(f".out.amg-new-{proc.pid}-") for p in out.parent.iterdir()):
            return True
        time.sleep(0.001)
    return False


@pytest.mark.slow
def test_real_amg_export_killed_or_interrupted(two_exports):
    ws, out, old, new = two_exports
    cmd = _amg("export", "--workspace", str(ws.path), "--out", str(out))
    kinds = []
    for delay in (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if _started(proc, out):
            time.sleep(delay)
        proc.kill()
        proc.wait()
        kinds.append(assert_old_or_new(out, old, new))
        if kinds[-1] == "new":
            _restore(ws, out, old)
    assert "old" in kinds
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert _started(proc, out)
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    _, err = proc.communicate()
    assert proc.returncode in (0, 130), err
    if proc.returncode == 130:
        assert err.startswith("Interrupted") and "Traceback" not in err
    assert_old_or_new(out, old, new)
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".out.")] == []
