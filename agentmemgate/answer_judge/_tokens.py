"""The token form the version 2 rules are written on (step 2 of the rule file's header).

Words are lower case, clitics split ("haven't" -> "have n't"), hyphenated words kept whole, a
trailing "+" kept ("Disney+"). Each labelled value found in a sentence becomes one placeholder
token; its spelling, ``qqv<N>qq``, is part of the rule files' format ("turned qqv* down"), so it
never changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOK = re.compile(
    r"(?<![A-Za-z0-9])'(?:s|re|ve|d|ll|m|t)(?![A-Za-z0-9])"
    r"|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?:'[A-Za-z]+)*\+*"
    r"|[^\sA-Za-z0-9]",
    re.I,
)
_CLITICS = ("n't", "'s", "'re", "'ve", "'d", "'ll", "'m")
# Punctuation that ends a clause (a dash only between words: see ``_clauses.clauses``).
PUNCT_BREAK = {",", ";", ":", "(", ")", "\u2014", "\u2013", "[", "]", "{", "}", "\u2022", "|"}
VALUE_MARK = "qqv"


@dataclass
class Tok:
    word: str  # normalized form
    orig: str  # surface form (capitalization)
    kind: str = "w"  # w word, p punctuation, v value placeholder
    value: int = -1  # index of the value (kind v)


def value_token(vi: int) -> str:
    """The placeholder word of labelled value ``vi``."""
    return f"{VALUE_MARK}{vi}qq"


def is_value_token(word: str) -> bool:
    return word.startswith(VALUE_MARK)


def names_a_value(text: str) -> bool:
    """Whether a token string holds a value placeholder."""
    return VALUE_MARK in text


def tok_str(t: Tok) -> str:
    return value_token(t.value) if t.kind == "v" else t.word


def _split_word(w: str, contractions: dict[str, str]) -> list[str]:
    low = w.lower()
    if low in contractions:
        return contractions[low].split()
    for c in _CLITICS:
        if low.endswith(c) and len(low) > len(c):
            return [low[: -len(c)], c]
    if low.endswith("'") and len(low) > 1:
        return [low[:-1]]
    return [low]


def tokenize(text: str, contractions: dict[str, str]) -> list[Tok]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    out: list[Tok] = []
    for m in _TOK.finditer(text):
        s = m.group(0)
        if s[0].isalnum() or (s[0] == "'" and len(s) > 1):
            parts = _split_word(s, contractions)
            for i, p in enumerate(parts):
                out.append(Tok(p, s if i == 0 else p))
        elif s == "'":
            continue
        else:
            out.append(Tok(s, s, "p"))
    return out


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(s).lower())).strip()


def past_form(w: str) -> bool:
    """A regular past form the verb lists need not hold ("visited"; not "bed", "shed")."""
    return w.endswith("ed") and len(w) > 4
