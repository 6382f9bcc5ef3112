"""Where the corpora live: ``AMG_CORPORA``, else the user's data folder; this repository's tests
and benchmarks also look beside the checkout, after the setting."""

from __future__ import annotations

import sys

import pytest

from agentmemgate.corpora import home
from agentmemgate.corpora.home import checkout_copy, corpora_dir, corpus_file, default_dir


def test_the_setting_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("AMG_CORPORA", str(tmp_path))
    assert corpora_dir() == tmp_path
    assert corpus_file("locomo", "locomo10.json") == tmp_path / "locomo" / "locomo10.json"
    assert "from AMG_CORPORA" in home.described_dir()


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG layout is the Linux one")
def test_the_default_is_under_the_user_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("AMG_CORPORA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert corpora_dir() == default_dir() == tmp_path / "data" / "agentmemgate" / "corpora"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_dir() == tmp_path / ".local" / "share" / "agentmemgate" / "corpora"
    assert "set AMG_CORPORA to change it" in home.described_dir()


def test_other_platforms_use_their_own_data_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(home.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path))
    assert default_dir() == tmp_path / "agentmemgate" / "corpora"
    monkeypatch.setattr(home.sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert (
        default_dir() == tmp_path / "Library" / "Application Support" / "agentmemgate" / "corpora"
    )


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A source checkout with the corpora in its sibling folder, and an empty corpora setting."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'agentmemgate'\n")
    sibling = tmp_path / "shared" / "corpora-src" / "locomo"
    sibling.mkdir(parents=True)
    (sibling / "locomo10.json").write_text("[]")
    monkeypatch.setattr(home, "_CHECKOUT", repo)
    monkeypatch.setenv("AMG_CORPORA", str(tmp_path / "setting"))
    return tmp_path


def test_the_checkout_copy_is_a_fallback_for_tests_and_benchmarks_only(checkout):
    assert checkout_copy() == checkout / "shared" / "corpora-src"
    found = corpus_file("locomo", "locomo10.json", checkout=True)
    assert found == checkout / "shared" / "corpora-src" / "locomo" / "locomo10.json"
    # commands never look there
    assert (
        corpus_file("locomo", "locomo10.json") == checkout / "setting" / "locomo" / "locomo10.json"
    )
    # the setting comes first
    mine = checkout / "setting" / "locomo" / "locomo10.json"
    mine.parent.mkdir(parents=True)
    mine.write_text("[]")
    assert corpus_file("locomo", "locomo10.json", checkout=True) == mine


def test_an_installed_package_has_no_checkout_copy(tmp_path):
    assert checkout_copy(tmp_path) is None  # no pyproject.toml above the package
