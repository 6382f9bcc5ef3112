import pytest

from agentmemgate.errors import BadInput
from agentmemgate.versioned import versioned_file


def test_highest_version_unless_pinned(tmp_path):
    for v in (1, 2, 10):
        (tmp_path / f"cues.v{v}.toml").write_text("")
    (tmp_path / "cues.vX.toml").write_text("")
    assert versioned_file(tmp_path, "cues", "toml") == (10, tmp_path / "cues.v10.toml")
    assert versioned_file(tmp_path, "cues", "toml", 2)[0] == 2
    with pytest.raises(BadInput, match=r"No cue lexicon version 3; known: \[1, 2, 10\]"):
        versioned_file(tmp_path, "cues", "toml", 3, "cue lexicon")
    with pytest.raises(BadInput, match="No rules named rules.vN.toml"):
        versioned_file(tmp_path, "rules", "toml", what="rules")
