"""Text helpers every room shares: word tokens, the phrase matcher, sentence spans, months and days.

The offline rules (the prefilter and stage-2 rules of mining, the offline classifier, the offline
memory components, the offline realism checks) read text through these, so a word, a sentence or
a month means the same thing in each. Where the rooms split sentences differently, the difference
is a parameter of ``sentence_spans`` that each caller names.
"""

from __future__ import annotations

import datetime as dt
import re

# -- tokens and phrases -----------------------------------------------------------------------
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
        self.short_stems: list[
            tuple[str, str]
        ] = []  # stems under 3 letters (checked on every word)
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
                        key = tuple(words[i : i + n]) if n > 1 else (w,)
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
                    if (
                        i + n <= n_words
                        and tuple(words[i : i + n - 1]) == head
                        and words[i + n - 1].startswith(stem)
                    ):
                        out.append((i, i + n, cat, _join(tuple(words[i : i + n]))))
        return out

    def matches(self, text: str) -> set[str]:
        """Categories with at least one cue in ``text``."""
        return {cat for _, _, cat, _ in self.find(tokens(text))}

    def surfaces(self, text: str) -> list[tuple[str, str]]:
        return [(cat, surface) for _, _, cat, surface in self.find(tokens(text))]


# -- sentences --------------------------------------------------------------------------------
CLOSERS = "\"')]\u201d\u2019"  # closing quotes and brackets a sentence end may carry
# A period after these is not a sentence end ("Dr. Smith", "e.g. a bike", "J. K. Rowling").
_ABBREVIATION = re.compile(
    r"(?:\b(?i:dr|mr|mrs|ms|mx|prof|st|jr|sr|mt|vs|approx|e\.g|i\.e|a\.m|p\.m)"
    r"|(?<![\w.])[A-HJ-Z])\.$"
)
_ENDS: dict[tuple[str, bool], re.Pattern] = {}


def _sentence_end(closers: str, newlines: bool) -> re.Pattern:
    rx = _ENDS.get((closers, newlines))
    if rx is None:
        carried = f"[{re.escape(closers)}]*" if closers else ""
        rx = _ENDS[(closers, newlines)] = re.compile(
            rf"(?<=[.!?]){carried}\s+" + (r"|\n+" if newlines else "")
        )
    return rx


def sentence_spans(
    text: str, *, closers: str = CLOSERS, newlines: bool = True, abbreviations: bool = True
) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``, stripped of surrounding space; none for blank
    text. A sentence ends after . ! ? (and any of ``closers``) followed by space; with
    ``newlines`` also at a line break, and with ``abbreviations`` not after a title or an initial
    ("Dr.", "e.g.", "J.")."""
    spans, start = [], 0
    for m in _sentence_end(closers, newlines).finditer(text):
        if (
            abbreviations
            and m.group(0)[0] != "\n"
            and _ABBREVIATION.search(text, max(start, m.start() - 8), m.start())
        ):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def sentences(
    text: str, *, closers: str = CLOSERS, newlines: bool = True, abbreviations: bool = True
) -> list[str]:
    """The sentences ``sentence_spans`` finds, as strings."""
    if abbreviations:
        return [text[a:b] for a, b in sentence_spans(text, closers=closers, newlines=newlines)]
    # every sentence end counts: the text between ends, stripped, is each sentence (a faster path)
    return [p for p in map(str.strip, _sentence_end(closers, newlines).split(text)) if p]


# -- months and days --------------------------------------------------------------------------
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTH_NUMBERS = {m: i for i, m in enumerate(MONTHS, start=1)}  # full names only
MONTH_ABBREVIATIONS = {m[:3]: i for m, i in MONTH_NUMBERS.items()} | {"sept": 9}


def nearest_date(day: dt.date, month: int, day_of_month: int) -> dt.date | None:
    """The date with that month and day nearest ``day`` (the year before, the same or the next;
    the earlier on a tie), or None when no such date exists ("February 30")."""
    best = None
    for year in (day.year - 1, day.year, day.year + 1):
        try:
            cand = dt.date(year, month, day_of_month)
        except ValueError:
            continue
        if best is None or abs((cand - day).days) < abs((best - day).days):
            best = cand
    return best


def counted(n: int, word: str, many: str | None = None) -> str:
    """``n`` and the word, plural unless one: "1 item", "3 items", "2 people" (``many``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"
