"""The offline extractor's gazetteer: every value the domain catalog knows, and what it is a value of.

Built from the toolkit's built-in domain catalog (``design/catalog``: short and long values, and
each domain's noun), never from an arc or a benchmark's design: it is part of the system under
test, which must not learn the benchmark's vocabulary from the benchmark. Caveat that every report inherits: the offline renderer draws its arcs' values from the
same catalog, so on offline arcs the gazetteer finds every value by construction; what the
offline systems measure there is the plan framing, the gate and the checker, not value recall.
Values the catalog does not know are found only by the extractor's patterns ("switch to X").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..design.catalog import load_catalog
from .rules import offline_rules, stem, words


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    surface: str  # the text as the turn spells it
    domains: tuple[str, ...]  # catalog attributes it is a value of (empty: found by a pattern)


def _is_common_word(value: str) -> bool:
    """A one-word, capitalized-only value that is also an English word ('Factor', 'Chase')."""
    return bool(re.fullmatch(r"[A-Z][a-z]+", value))


class Gazetteer:
    def __init__(self) -> None:
        catalog = load_catalog()
        by_value: dict[str, set[str]] = {}
        for key, domain in catalog.items():
            for v in domain.values + domain.long_values:
                by_value.setdefault(v, set()).add(key)
        self._domains = {v.lower(): tuple(sorted(d)) for v, d in by_value.items()}
        # One alternation per case rule, longest value first, so each position takes the longest.
        common = sorted((v for v in by_value if _is_common_word(v)), key=len, reverse=True)
        other = sorted((v for v in by_value if not _is_common_word(v)), key=len, reverse=True)
        self._rx = [
            re.compile(rf"(?<![\w'])(?:{'|'.join(map(re.escape, vs))})(?![\w'])", flags)
            for vs, flags in ((other, re.IGNORECASE), (common, 0))
            if vs
        ]
        rules = offline_rules()
        self.nouns: dict[str, set[str]] = {}  # stem of a noun word -> domains it names
        for key, domain in catalog.items():
            for w in set(words(domain.noun) + words(key)):
                if w not in rules.stop_words and len(w) > 2:
                    self.nouns.setdefault(stem(w), set()).add(key)

    def find(self, text: str) -> list[Hit]:
        """Known values in ``text``, longest first and non-overlapping, in text order."""
        return list(_find(self, text))

    def noun_domains(self, text: str) -> dict[str, int]:
        """Domains whose noun words occur in ``text``, with how many of their words occur."""
        found: dict[str, int] = {}
        for w in set(stem(w) for w in words(text)):
            for d in self.nouns.get(w, ()):
                found[d] = found.get(d, 0) + 1
        return found


@lru_cache(maxsize=50_000)
def _find(gz: Gazetteer, text: str) -> tuple[Hit, ...]:
    found = [m for rx in gz._rx for m in rx.finditer(text)]
    found.sort(key=lambda m: (-(m.end() - m.start()), m.start()))
    taken: list[Hit] = []
    for m in found:
        a, b = m.span()
        if not any(a < h.end and h.start < b for h in taken):
            taken.append(Hit(a, b, m.group(0), gz._domains[m.group(0).lower()]))
    return tuple(sorted(taken, key=lambda h: h.start))


@lru_cache(maxsize=1)
def gazetteer() -> Gazetteer:
    return Gazetteer()
