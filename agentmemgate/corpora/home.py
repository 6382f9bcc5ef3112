"""Where the public corpora live on this computer: one setting that commands, tests, dev sets and
benchmarks all read, so a file fetched once is found everywhere.

The folder is ``$AMG_CORPORA`` when set, else the user's data folder
(``$XDG_DATA_HOME/agentmemgate/corpora``, i.e. ``~/.local/share/agentmemgate/corpora`` on Linux;
``~/Library/Application Support/agentmemgate/corpora`` on macOS;
``%LOCALAPPDATA%\\agentmemgate\\corpora`` on Windows). Inside it each corpus has its folder:
``locomo/locomo10.json``, ``longmemeval/longmemeval_oracle.json``, ... (``amg corpora fetch``
puts them there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import BadInput

ENV = "AMG_CORPORA"
# A source checkout of this repository may have the corpora in a sibling folder: its own tests,
# dev sets and benchmarks look there after the setting (an installed package never does).
CHECKOUT_SIBLING = Path("shared") / "corpora-src"
_CHECKOUT = Path(__file__).resolve().parents[2]


def default_dir() -> Path:
    """The corpora folder when ``$AMG_CORPORA`` is unset: under the user's data folder."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "agentmemgate" / "corpora"


def corpora_dir() -> Path:
    """The folder the toolkit reads corpora from and fetches them into."""
    value = os.environ.get(ENV, "").strip()
    return Path(value).expanduser() if value else default_dir()


def described_dir() -> str:
    """The folder and where the choice came from, for messages."""
    how = (
        f"from {ENV}" if os.environ.get(ENV, "").strip() else f"the default; set {ENV} to change it"
    )
    return f"{corpora_dir()} ({how})"


def checkout_copy(checkout: Path | None = None) -> Path | None:
    """``../shared/corpora-src`` beside a source checkout of this repository, or None when the
    package is not running from one."""
    root = checkout or _CHECKOUT
    if not (root / "pyproject.toml").is_file():
        return None
    return root.parent / CHECKOUT_SIBLING


def corpus_file(corpus: str, name: str, *, checkout: bool = False) -> Path:
    """``corpora_dir()/CORPUS/NAME``. With ``checkout`` (this repository's tests, dev sets and
    benchmarks), the copy beside the source checkout when the corpora folder lacks the file.
    The path returned may not exist: check ``is_file()``, and name ``fetch_hint`` when not."""
    path = corpora_dir() / corpus / name
    if checkout and not path.is_file():
        sibling = checkout_copy()
        if sibling is not None and (sibling / corpus / name).is_file():
            return sibling / corpus / name
    return path


def require_file(corpus: str, name: str, *, checkout: bool = False) -> Path:
    """``corpus_file`` for a caller that cannot go on without it: a one-line error saying how to
    get the file when it is missing."""
    path = corpus_file(corpus, name, checkout=checkout)
    if not path.is_file():
        raise BadInput(f"No {name} in {path.parent}: {fetch_hint(corpus)}")
    return path


def fetch_hint(corpus: str) -> str:
    """How to get a missing corpus, in one clause."""
    return f"run `amg corpora fetch {corpus}` or set {ENV} to the folder that holds it"
