"""The digests the toolkit stores, each function one byte layout.

Stored hashes (verdicts' item and input hashes, traces' arc hashes, judges' rubric hashes,
manifests, corpus checksums) keep their values only while the bytes hashed stay the same: so
each layout has one name here, and a name never changes layout. A new layout is a new name.
"""

from __future__ import annotations

import hashlib
from os import PathLike


def sha256_parts(*parts: str) -> str:
    """Each part in UTF-8 followed by a NUL byte (``a\\0b\\0``): what a verdict, trace or score
    is keyed by (an arc's stored JSON text, a judge's inputs, a run's settings)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def sha256_joined(*parts: str) -> str:
    """The parts joined by NUL bytes, none after the last (``a\\0b``): the offline judges'
    rubric hashes, which combine a lexicon's hash with the rules' or the corpus's digest."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def sha256_file(path: str | PathLike[str]) -> str:
    """A file's bytes, read in 1 MiB chunks: export manifests, corpus checksums."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
