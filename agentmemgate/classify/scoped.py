"""The offline classifier from version 2 on: cues read in their scope (``evidence_cues.v2.toml``).

v1 adds up cue words wherever they stand; v2 reads which verb a cue governs and in which clause it
stands, so "I just need to find the time" is not a completed event and "The plan is to switch to
X on Friday, November 15" is a plan. The data file's header documents the rules in order:
``_scoped_sentence`` reads a sentence (steps 1, 3 and 7), ``scoped_rules`` holds one function per
rule and ``RULES``, their order by the header's steps. The rules name only the words they are
about ("may", "going to", "'d", "yet", "now", "since", "while"); every cue, weight and word list
is data: the file's, and for the lists v2 leaves out, ``scoped_words.v2.toml`` (a file may list
each under [syntax]).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import tomllib
from functools import lru_cache
from pathlib import Path

from ..corpora.statements import Statement
from ..text import sentence_spans, tokens
from ._scoped_sentence import Lexicon, Sentence
from .classes import EVIDENCE_TYPES, Distribution
from .scoped_rules import Evidence, read

OTHER = EVIDENCE_TYPES[-1]


class ScopedLexiconClassifier:
    """Reads cues in their scope (rules in the data file's header); probabilities by softmax."""

    kind = "evidence_type"
    family = "offline"

    def __init__(self, version: int, path: Path, raw: bytes):
        data = tomllib.loads(raw.decode("utf-8"))
        self.version = version
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.name = f"offline:lexicon.v{version}"
        self.rubric_ref = f"evidence_cues.v{version}"
        self.path = path
        self.temperature = float(data.get("temperature", 1.0))
        self._answers: dict[tuple, Distribution] = {}  # (text, date, temperature) -> answer
        self.priors = {c: float(data["priors"][c]) for c in EVIDENCE_TYPES}
        self.lex = Lexicon(data, path.name)

    # -- the classifier interface ------------------------------------------------------------
    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        # A pure function of the text, the date and the temperature: the answer is memoized
        # (every gated system on an arc classifies the same spans) and each caller gets a copy.
        key = (statement.text, statement.date, self.temperature)
        d = self._answers.get(key)
        if d is None:
            s = self.scores(statement.text, statement.date)
            top = max(s.values())
            exp = {c: math.exp((v - top) / self.temperature) for c, v in s.items()}
            d = Distribution(probs=exp, method="lexicon")
            if len(self._answers) >= 20_000:
                self._answers.clear()
            self._answers[key] = d
        return d.model_copy(update={"probs": dict(d.probs)})

    def scores(self, text: str, date: str | None = None) -> dict[str, float]:
        return dict(_scores(self, text, _day(date)))

    def explain(self, text: str, date: str | None = None) -> list[Evidence]:
        """Every piece of evidence the statement produced (what ``scores`` adds up)."""
        return list(_evidence(self, text, _day(date)))

    def sentence(self, k: int, text: str, day: dt.date | None = None) -> Sentence:
        """Sentence ``k`` of a statement, read (cues, segments, reason clauses, dates) for the rules."""
        return Sentence(self.lex, k, text, tokens(text), day)

    def sentence_evidence(self, k: int, text: str, day: dt.date | None) -> list[Evidence]:
        toks = tokens(text)
        if not toks:
            return []
        return read(Sentence(self.lex, k, text, toks, day))


def _day(date: str | None) -> dt.date | None:
    if not date:
        return None
    try:
        return dt.date.fromisoformat(str(date)[:10])
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _evidence(clf: ScopedLexiconClassifier, text: str, day: dt.date | None) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    for k, (a, b) in enumerate(sentence_spans(text)):
        out += clf.sentence_evidence(k, text[a:b], day)
    return tuple(out)


@lru_cache(maxsize=4096)
def _scores(
    clf: ScopedLexiconClassifier, text: str, day: dt.date | None
) -> tuple[tuple[str, float], ...]:
    """Revisionary classes sum their evidence (weak evidence: only the strongest piece per class);
    other takes its strongest sentence (header, "Scores")."""
    s = dict(clf.priors)
    other_by_sentence: dict[int, float] = {}
    weak: dict[str, float] = {}
    for e in _evidence(clf, text, day):
        if e.cls == OTHER:
            other_by_sentence[e.sentence] = other_by_sentence.get(e.sentence, 0.0) + e.weight
        elif e.weak:
            weak[e.cls] = max(weak.get(e.cls, 0.0), e.weight)
        else:
            s[e.cls] += e.weight
    for c, w in weak.items():
        s[c] += w
    s[OTHER] += max(other_by_sentence.values(), default=0.0)
    return tuple(s.items())
