"""Streaming JSON: iterate a top-level list item by item (LongMemEval _m is several GB)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import ijson

from ..errors import CorpusError, unreadable


def first_byte(path: Path) -> bytes:
    """The first non-whitespace byte, to tell a JSON list from an object before parsing."""
    try:
        with open(path, "rb") as f:
            while chunk := f.read(4096):
                stripped = chunk.lstrip(b" \t\r\n\xef\xbb\xbf")
                if stripped:
                    return stripped[:1]
    except OSError as e:
        raise unreadable(path, e, CorpusError) from None
    return b""


def require_list(path: Path, what: str) -> None:
    b = first_byte(path)
    if b == b"":
        raise CorpusError(f"{path.name}: empty file, expected a JSON list of {what}")
    if b != b"[":
        kind = "a JSON object" if b == b"{" else "not JSON"
        raise CorpusError(f"{path.name}: {kind}, expected a JSON list of {what}")


def _problem(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0].strip() if text else type(e).__name__


def iter_items(
    path: Path, what: str, on_bytes: Callable[[int], None] | None = None, skip: int = 0
) -> Iterator[dict]:
    """Yield the top-level list's items one at a time; malformed JSON -> one-line CorpusError.

    ``on_bytes`` gets the bytes read so far after each item (progress over multi-GB files).
    ``skip`` items are parsed but not yielded: resuming at instance ``skip`` costs a parse of the
    bytes before it (the C parser reads about 400 MB/s here), not the work done on them.
    """
    require_list(path, what)
    n = 0
    try:
        with open(path, "rb") as f:
            for item in ijson.items(f, "item", use_float=True):
                if n >= skip:
                    yield item
                n += 1
                if on_bytes is not None:
                    on_bytes(f.tell())
    except ijson.JSONError as e:
        raise CorpusError(f"{path.name}: malformed JSON after item {n} ({_problem(e)})") from None
    except OSError as e:
        raise unreadable(path, e, CorpusError) from None


def first_item_keys(path: Path) -> tuple[set[str], set[str]] | None:
    """Top-level keys of the first list item, and of its 'conversation' member (LoCoMo).

    Reads parse events only, so sniffing a multi-GB file costs one item, not the file.
    """
    if first_byte(path) != b"[":
        return None
    keys: set[str] = set()
    conv_keys: set[str] = set()
    try:
        with open(path, "rb") as f:
            for prefix, event, value in ijson.parse(f):
                if prefix == "item" and event == "map_key":
                    keys.add(value)
                elif prefix == "item.conversation" and event == "map_key":
                    conv_keys.add(value)
                elif prefix == "item" and event == "end_map":
                    break
                elif prefix == "item" and event not in ("start_map", "map_key", "end_map"):
                    break  # a list of scalars or lists
                elif prefix == "" and event == "end_array":
                    break
    except ijson.JSONError as e:
        raise CorpusError(f"{path.name}: malformed JSON ({_problem(e)})") from None
    return keys, conv_keys
