"""The stored digests keep their values: each name in ``hashing`` is one byte layout."""

from __future__ import annotations

import hashlib

from agentmemgate.hashing import sha256_file, sha256_joined, sha256_parts


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_parts_are_each_followed_by_a_nul():
    """Verdicts, traces and scores are keyed by this layout: an arc's stored text hashes as the
    text and one NUL, so hashes stored by earlier versions still match."""
    assert sha256_parts("a", "bc") == _sha(b"a\0bc\0")
    assert sha256_parts('{"id": "arc-1"}') == _sha(b'{"id": "arc-1"}\0')
    assert sha256_parts("ab", "c") != sha256_parts("a", "bc")


def test_joined_parts_have_no_nul_after_the_last():
    """The offline judges' rubric hashes: a lexicon's hash joined to the rules' digest."""
    assert sha256_joined("a", "bc") == _sha(b"a\0bc")
    assert sha256_joined("a", "bc") != sha256_parts("a", "bc")


def test_a_file_hashes_as_its_bytes(tmp_path):
    path = tmp_path / "big.bin"
    data = bytes(range(256)) * 5000  # more than one read chunk
    path.write_bytes(data)
    assert sha256_file(path) == _sha(data)
    assert sha256_file(str(path)) == _sha(data)
