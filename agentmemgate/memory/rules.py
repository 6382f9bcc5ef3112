"""The offline components' rule data (``offline_rules.vN.toml``) and the text helpers they share.

Everything an offline component decides comes from the cue lists in the TOML file, so a reader
can check a decision against data rather than code; the file's sha256 is part of every offline
component's name in ``SystemInfo.components``.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from ..text import PhraseMatcher, sentence_spans, tokens
from ..versioned import versioned_file

RULES_DIR = Path(__file__).parent

# Clause breaks inside a sentence: punctuation and coordinating/subordinating words.
_CLAUSE_PUNCT = re.compile(r"[,;:\u2014\u2013()]|\s-\s")
CLAUSE_WORDS = frozenset(
    {"but", "and", "or", "so", "because", "though", "although", "while", "whereas", "yet", "since"}
)


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


def sentences(text: str) -> list[Sentence]:
    """Split a turn into sentences (character offsets kept); never returns an empty list.

    A sentence ends after . ! ? and a space (a colon is no end: "Done: I switched to X"), not at a
    line break, and after a title or an initial too; only straight quotes and brackets ride along.
    """
    spans = sentence_spans(text, closers="\"')]", newlines=False, abbreviations=False)
    return [Sentence(a, b, text[a:b]) for a, b in spans] or [Sentence(0, len(text), text)]


def clause_ids(text: str, toks: list[tuple[int, str]]) -> list[int]:
    """A clause number per token: punctuation and words like 'but', 'and' start a new clause."""
    breaks = sorted(m.start() for m in _CLAUSE_PUNCT.finditer(text))
    out, clause, b = [], 0, 0
    for start, word in toks:
        while b < len(breaks) and breaks[b] < start:
            clause += 1
            b += 1
        if word in CLAUSE_WORDS:
            clause += 1
        out.append(clause)
    return out


def stem(word: str) -> str:
    """A light stemmer for word-overlap tests: plurals and -ing/-ed ('groceries' -> 'grocery')."""
    w = word.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def words(text: str) -> list[str]:
    """Lower-case words of a text or a snake_case name ('grocery_store' -> grocery, store)."""
    return list(_words(text))


@lru_cache(maxsize=50_000)
def _words(text: str) -> tuple[str, ...]:
    return tuple(w for _, w in tokens(text.replace("_", " ").replace("-", " ")))


class OfflineRules:
    """One version of the rule file, parsed: phrase matchers per cue list, compiled regexes."""

    def __init__(self, version: int | None = None):
        v, path = versioned_file(
            RULES_DIR, "offline_rules", "toml", version, "offline memory rules"
        )
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
        self.version = v
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.ref = f"offline_rules.v{v}"
        ex, ma, re_, ch = data["extract"], data["match"], data["retry"], data["check"]
        self.extract = PhraseMatcher(
            {
                k: ex[k]
                for k in (
                    "target",
                    "departure",
                    "stay",
                    "negation",
                    "plan",
                    "firm_plan",
                    "completion",
                )
            }
        )
        self.check = PhraseMatcher(
            {k: ch[k] for k in ("completion", "abandon", "oblique", "not_done")}
        )
        self.irregular_past = frozenset(ch["irregular_past"])
        self.stop_words = frozenset(ma["stop_words"])
        self.plan_words = frozenset(ma["plan_words"])
        self.value_frames = [re.compile(p, re.IGNORECASE) for p in re_["value_frames"]]
        self.value_suffixes = [re.compile(p, re.IGNORECASE) for p in re_["value_suffixes"]]

    def tag(self, component: str) -> str:
        """A component name that pins this rule file: ``offline-NAME.v1#1a2b3c4d``."""
        return f"offline-{component}.v{self.version}#{self.sha256[:8]}"


@cache
def offline_rules(version: int | None = None) -> OfflineRules:
    return OfflineRules(version)


def cue_hits(matcher: PhraseMatcher, toks: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """(first token, end token, category) of every cue occurrence."""
    return [(a, b, cat) for a, b, cat, _ in matcher.find(toks)]


__all__ = [
    "OfflineRules",
    "Sentence",
    "clause_ids",
    "cue_hits",
    "offline_rules",
    "sentences",
    "stem",
    "tokens",
    "words",
]
