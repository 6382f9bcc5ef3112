"""Load the heuristic judges' own cue lexicon (``lexicon.v1.toml``) and match it against text."""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

LEXICON_PATH = Path(__file__).with_name("lexicon.v1.toml")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """Lower-case, straight apostrophes, single spaces: what every cue is matched against."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True, eq=False)
class Lexicon:
    path: Path
    sha256: str
    categories: dict[str, re.Pattern]
    stopwords: frozenset[str]
    patterns: dict[str, tuple[str, ...]] = field(default_factory=dict)  # each category's cues

    def hits(self, category: str, text: str) -> list[str]:
        """Every cue of ``category`` found in ``text`` (normalized), in order of appearance."""
        return list(_hits(self, category, text))

    def has(self, category: str, text: str) -> bool:
        return bool(_hits(self, category, text))

    def has_any(self, categories: tuple[str, ...], text: str) -> bool:
        """``any(self.has(c, text) for c in categories)``, in one scan of ``text``.

        One regex over the union of the categories' cues finds a match exactly when one of them
        does (each category is the same look-behind, alternation and look-ahead), and scanning
        once costs about what scanning for one category does. The checks ask it first, so the
        turns with none of their cues (most of them) are scanned once instead of per category.
        """
        return _has_any(self, categories, text)

    def content_words(self, text: str) -> list[str]:
        return [w for w in _WORD.findall(normalize(text)) if w not in self.stopwords and len(w) > 1]


@lru_cache(maxsize=65536)
def _hits(lex: Lexicon, category: str, text: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in lex.categories[category].finditer(normalize(text)))


@lru_cache(maxsize=65536)
def _has_any(lex: Lexicon, categories: tuple[str, ...], text: str) -> bool:
    return _union(lex, categories).search(normalize(text)) is not None


@cache
def _union(lex: Lexicon, categories: tuple[str, ...]) -> re.Pattern:
    return _compile([p for c in categories for p in lex.patterns[c]])


def _compile(patterns: list[str]) -> re.Pattern:
    return re.compile("(?<![\\w'])(?:" + "|".join(f"(?:{p})" for p in patterns) + ")(?!\\w)")


@cache
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    raw_bytes = path.read_bytes()
    raw = tomllib.loads(raw_bytes.decode("utf-8"))
    stop = frozenset(raw.pop("stopwords", []))
    cats = {name: _compile(pats) for name, pats in raw.items()}
    return Lexicon(
        path=path,
        sha256=hashlib.sha256(raw_bytes).hexdigest(),
        categories=cats,
        stopwords=stop,
        patterns={name: tuple(pats) for name, pats in raw.items()},
    )
