"""Open a corpus file by its structure: LongMemEval or LoCoMo, whatever the file is called."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import CorpusError, unreadable
from ._jsonstream import first_byte, first_item_keys
from .locomo import iter_locomo
from .longmemeval import iter_longmemeval
from .model import CORPORA, Conversation


def check_corpus_path(path: str | Path) -> Path:
    """The one-line error for a mistyped corpus path (cheap: commands call it before they
    create a workspace)."""
    path = Path(path)
    if path.is_dir():
        raise CorpusError(
            f"{str(path)!r} is a folder, not a file: give a LongMemEval or LoCoMo JSON file"
        )
    if not path.is_file():
        raise unreadable(path, cls=CorpusError)
    return path


def detect_format(path: str | Path) -> str:
    """'longmemeval' or 'locomo' from the first list item's keys; CorpusError otherwise."""
    path = check_corpus_path(path)
    found = first_item_keys(path)
    if found is None:
        b = first_byte(path)
        kind = (
            "empty file"
            if not b
            else ("a JSON object" if b == b"{" and _is_json(path) else "not JSON")
        )
        raise CorpusError(
            f"{path.name}: {kind}, expected a JSON list of LongMemEval instances or LoCoMo samples"
        )
    keys, conv_keys = found
    if "haystack_sessions" in keys:
        return "longmemeval"
    if "conversation" in keys and ({"speaker_a", "speaker_b"} & conv_keys):
        return "locomo"
    if not keys:
        raise CorpusError(
            f"{path.name}: an empty list or a list of non-objects; expected "
            "LongMemEval instances or LoCoMo samples"
        )
    shown = ", ".join(sorted(keys)[:6])
    raise CorpusError(
        f"{path.name}: unknown structure (item 0 has keys {shown}; expected "
        "'haystack_sessions' for LongMemEval or 'conversation' for LoCoMo)"
    )


def check_corpus(path: str | Path, corpus: str = "auto") -> str:
    """The detected corpus, or a one-line error if it is not the one asked for."""
    path = Path(path)
    if corpus not in CORPORA + ("auto",):
        raise CorpusError(f"Unknown corpus {corpus!r}; choose one of: auto, {', '.join(CORPORA)}")
    found = detect_format(path)
    if corpus != "auto" and corpus != found:
        raise CorpusError(
            f"{path.name}: looks like a {found} file, not {corpus} (pass --corpus {found} or auto)"
        )
    return found


def iter_conversations(
    path: str | Path,
    corpus: str = "auto",
    on_bytes: Callable[[int], None] | None = None,
    skip: int = 0,
) -> Iterator[Conversation]:
    """Stream conversations; ``corpus`` must match the detected structure unless 'auto'.
    ``skip`` conversations are passed over unparsed (a resumed stage 1 starts there)."""
    path = Path(path)
    found = check_corpus(path, corpus)
    return (iter_longmemeval if found == "longmemeval" else iter_locomo)(path, on_bytes, skip)


_EXPECTED = {
    "longmemeval": (
        "LongMemEval instance",
        "user turns",
        "'haystack_sessions': lists of {role: user, content} turns",
    ),
    "locomo": (
        "LoCoMo sample",
        "turns",
        "'conversation': session_N lists of {speaker, text} turns",
    ),
}


def nothing_to_mine(path: str | Path, corpus: str, conversations: int) -> CorpusError:
    """The error for a file whose conversations hold no turn to mine (not a silent "0 scanned")."""
    what, missing, expected = _EXPECTED[corpus]
    return CorpusError(
        f"{Path(path).name}: {conversations} {what}{'s' if conversations != 1 else ''} "
        f"but no {missing} to mine (expected {expected})"
    )


def load_corpus(path: str | Path, corpus: str = "auto") -> list[Conversation]:
    """All conversations in memory: for small files and tests (stream big ones)."""
    return list(iter_conversations(path, corpus))


def _is_json(path: Path) -> bool:
    """Whether the whole file parses (only asked of files that are not a list, so rarely large)."""
    import ijson

    try:
        with open(path, "rb") as f:
            for _ in ijson.parse(f):
                pass
    except ijson.JSONError:
        return False
    return True
