"""Whole-word phrase lists matched as token n-grams (stage 1, stage-2 rules, outcome cues)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+|['\u2019][^\W_]+")


def tokens(text: str) -> list[tuple[int, str]]:
    """(start offset, normalized word) pairs; contractions split: "I'd" -> i, 'd."""
    low = text.lower().replace("\u2019", "'")
    if len(low) == len(text):  # offsets still line up (true unless a letter lower-cases to two)
        return [(m.start(), m.group(0)) for m in _TOKEN.finditer(low)]
    return [(m.start(), m.group(0).lower().replace("\u2019", "'")) for m in _TOKEN.finditer(text)]


def _join(words: tuple[str, ...]) -> str:
    return "".join(w if w.startswith("'") or not i else " " + w for i, w in enumerate(words))


class PhraseMatcher:
    """Whole-word phrase matching by token n-grams: dict lookups keyed by the first word.

    A trailing ``*`` on a cue's last word matches any ending of that word.
    """

    def __init__(self, entries: dict[str, list[str]]):
        self.exact: dict[tuple[str, ...], set[str]] = {}
        self.lengths: dict[str, set[int]] = {}  # first word -> n-gram lengths starting with it
        self.stems: dict[str, list[tuple[str, str]]] = {}  # first 3 letters -> (stem, category)
        self.short_stems: list[tuple[str, str]] = []  # stems under 3 letters (checked on every word)
        self.headed: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}  # multi-word stems
        for category, cues in entries.items():
            for cue in cues:
                words = tuple(w for _, w in tokens(cue))
                if not words:
                    continue
                if cue.strip().endswith("*") and len(words) == 1:
                    stem = words[0]
                    if len(stem) >= 3:
                        self.stems.setdefault(stem[:3], []).append((stem, category))
                    else:
                        self.short_stems.append((stem, category))
                elif cue.strip().endswith("*"):
                    self.headed.setdefault(words[0], []).append((words[:-1], words[-1], category))
                else:
                    self.exact.setdefault(words, set()).add(category)
                    self.lengths.setdefault(words[0], set()).add(len(words))

    def find(self, toks: list[tuple[int, str]]) -> list[tuple[int, int, str, str]]:
        """(first token, last token + 1, category, surface) for every cue occurrence."""
        words = [w for _, w in toks]
        n_words = len(words)
        out = []
        lengths, stems, headed, exact = self.lengths, self.stems, self.headed, self.exact
        for i, w in enumerate(words):
            ns = lengths.get(w)
            if ns:
                for n in ns:
                    if i + n <= n_words:
                        key = tuple(words[i:i + n]) if n > 1 else (w,)
                        for cat in exact.get(key, ()):
                            out.append((i, i + n, cat, _join(key)))
            st = stems.get(w[:3])
            if st:
                for stem, cat in st:
                    if w.startswith(stem):
                        out.append((i, i + 1, cat, w))
            for stem, cat in self.short_stems:
                if w.startswith(stem):
                    out.append((i, i + 1, cat, w))
            hd = headed.get(w)
            if hd:
                for head, stem, cat in hd:
                    n = len(head) + 1
                    if i + n <= n_words and tuple(words[i:i + n - 1]) == head and words[i + n - 1].startswith(stem):
                        out.append((i, i + n, cat, _join(tuple(words[i:i + n]))))
        return out

    def matches(self, text: str) -> set[str]:
        """Categories with at least one cue in ``text``."""
        return {cat for _, _, cat, _ in self.find(tokens(text))}

    def surfaces(self, text: str) -> list[tuple[str, str]]:
        return [(cat, surface) for _, _, cat, surface in self.find(tokens(text))]
