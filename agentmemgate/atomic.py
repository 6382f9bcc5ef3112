"""Files and folders a user reads, written atomically.

``write_atomic`` / ``write_text_atomic``: one file, written to a temporary file beside the target
and renamed over it, so a reader (or a kill -9) never sees half of it.

``replaced_folder``: replace a whole folder at once: build the new one beside it, then swap the two.

A reader, or a run killed at any instant (Ctrl-C, ``kill -9``), sees either the complete old folder
or the complete new one, never a mix: every file and its manifest change together. The new
folder is built in a hidden sibling (same file system, so renames are atomic); entries of the old
folder that are not being replaced are carried over as hard links (no copy of the data). The swap
is one ``renameat2(RENAME_EXCHANGE)`` on Linux (``renamex_np(RENAME_SWAP)`` on macOS); where
neither exists it is two renames, and a run interrupted between them is repaired by the next one.
Leftovers of killed runs are removed by the next run (``process_alive`` tells them apart).
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import WorkspaceError

_NEW, _OLD = "amg-new", "amg-old"


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` fills a temporary file in ``path``'s folder, which then replaces ``path``."""
    fd, name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=path.suffix or ".tmp", dir=path.parent
    )
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _sibling(folder: Path, kind: str) -> Path:
    return folder.parent / f".{folder.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def _leftovers(folder: Path, kind: str) -> list[Path]:
    """Siblings of ``kind`` left by runs that are no longer alive."""
    out = []
    for p in folder.parent.glob(f".{folder.name}.{kind}-*"):
        try:
            pid = int(p.name.rsplit("-", 2)[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and process_alive(pid):
            continue  # another run is building its own copy right now
        out.append(p)
    return out


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (one we may not signal counts): a leftover named after a live
    process is still in use."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recover(folder: Path) -> None:
    """Finish or undo what a killed run left: restore a folder moved aside, drop stale copies."""
    olds = _leftovers(folder, _OLD)
    if not folder.exists() and olds:  # killed between the two renames of the fallback swap
        os.rename(max(olds, key=lambda p: p.stat().st_mtime), folder)
        olds = _leftovers(folder, _OLD)
    for p in olds + _leftovers(folder, _NEW):
        shutil.rmtree(p, ignore_errors=True)


_libc = None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False where the system offers no way to (then: fallback)."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux") and hasattr(_libc, "renameat2"):
            at_fdcwd, rename_exchange = -100, 2
            rc = _libc.renameat2(
                at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange
            )
        elif sys.platform == "darwin" and hasattr(_libc, "renamex_np"):
            rc = _libc.renamex_np(os.fsencode(a), os.fsencode(b), 0x2)  # RENAME_SWAP
        else:
            return False
    except (OSError, TypeError, AttributeError):  # no C library to call (e.g. Windows)
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _link_tree(src: Path, dst: Path) -> None:
    """``dst`` mirrors ``src`` with hard links (copies where links are refused)."""
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif src.is_dir():
        dst.mkdir()
        for child in src.iterdir():
            _link_tree(child, dst / child.name)
    else:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            with open(p, "rb") as f:
                os.fsync(f.fileno())
        fd = os.open(dirpath, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _check_target(folder: Path, protect: Iterable[Path]) -> None:
    cwd = Path.cwd().resolve()
    if folder == cwd or folder in cwd.parents:
        raise WorkspaceError(
            f"Output folder {str(folder)!r} holds the current folder; choose a "
            "folder of its own (e.g. --out exports)"
        )
    for p in protect:
        p = p.resolve()
        if p == folder or folder in p.parents:
            raise WorkspaceError(
                f"Output folder {str(folder)!r} holds {str(p)!r}; choose a folder "
                "of its own (e.g. --out exports)"
            )
    if folder.exists() and not folder.is_dir():
        raise WorkspaceError(f"Cannot write to {str(folder)!r}: it is a file, not a folder")
    if folder.is_dir() and os.path.ismount(folder):
        raise WorkspaceError(
            f"Output folder {str(folder)!r} is a mount point, which cannot be "
            f"replaced at once; use a folder inside it (e.g. {str(folder / 'exports')!r})"
        )


@contextmanager
def replaced_folder(
    folder: str | Path, replace: Iterable[str], protect: Iterable[Path] = ()
) -> Iterator[Path]:
    """Yield an empty-but-for-carried-entries copy of ``folder`` to fill; swap it in on success.

    Entries named in ``replace`` start absent in the copy (the caller writes them anew); every
    other entry of the old folder is carried over unchanged. If the block raises (or the process
    dies), ``folder`` stays exactly as it was.
    """
    folder = Path(os.path.abspath(folder))
    if folder.is_symlink():
        folder = folder.resolve()  # replace the folder the link points to, not the link
    _check_target(folder, protect)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        _recover(folder)
        stage = _sibling(folder, _NEW)
        stage.mkdir()
    except OSError as e:
        what = "replace" if folder.exists() else "create"
        raise WorkspaceError(
            f"Cannot {what} output folder {str(folder)!r}: {e.strerror or e} "
            f"(the new folder is built beside it, in {str(folder.parent)!r})"
        ) from None
    committed = False
    try:
        skip = set(replace)
        if folder.is_dir():
            for child in folder.iterdir():
                if child.name not in skip:
                    _link_tree(child, stage / child.name)
        yield stage
        _fsync_tree(stage)
        with _signals_held():
            _commit(stage, folder)
            committed = True
    finally:
        if not committed:
            shutil.rmtree(stage, ignore_errors=True)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the swap is done (a kill -9 cannot be held: see _recover)."""
    import signal
    import threading

    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commit(stage: Path, folder: Path) -> None:
    if not folder.exists():
        os.rename(stage, folder)
    elif _exchange(stage, folder):
        shutil.rmtree(stage, ignore_errors=True)  # the stage now holds the old folder
    else:
        old = _sibling(folder, _OLD)
        os.rename(folder, old)
        os.rename(stage, folder)  # a kill between these two is undone by the next run (_recover)
        shutil.rmtree(old, ignore_errors=True)
    try:
        fd = os.open(folder.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
