"""A learned stage-2 scorer: how likely a prefilter hit is the speaker's own speculation.

A logistic regression over the words of the turn, the words of its cue sentences and the cues the
prefilter found, trained on the hand-labelled dev turns only (``devsets/hedges/train.py``, with
scikit-learn) and shipped as data: ``scorer.vN.json`` holds the weights of the features, the
intercept and the threshold chosen by cross-validation on the dev conversations. Scoring is a sum
of weights in plain Python (no scikit-learn at mining time). Like the cue lexicon and the rules, a
released file is never edited in place; its sha256 goes into provenance.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import BadInput
from ..text import PhraseMatcher, tokens
from ..versioned import versioned_file
from .model import Candidate, Extraction

SCORER_DIR = Path(__file__).parent
_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def features(cand: Candidate, verdict: Extraction | None = None) -> set[str]:
    """The binary features of a prefilter hit: ``w:``/``b:`` words and word pairs of the whole
    turn, ``cw:``/``cb:`` the same within its cue sentences, ``cue:`` the prefilter's cue
    categories and cues, ``corpus:`` where it came from; with the stage-2 rules' ``verdict``
    (scorer.v2 on), ``r:`` what they decided: kept and the attribute, or the reason they rejected
    it. Training and scoring both call this."""
    out = {f"corpus:{cand.corpus}"}
    if verdict is not None:
        out.add(f"r:kept={verdict.kept}")
        out.add(f"r:attr={verdict.attribute}" if verdict.kept else f"r:why={verdict.reject_reason}")
    turn = _words(cand.turn_text)
    out.update(f"w:{w}" for w in turn)
    out.update(f"b:{a}_{b}" for a, b in zip(turn, turn[1:]))
    for sentence in cand.cue_sentences():
        words = _words(sentence)
        out.update(f"cw:{w}" for w in words)
        out.update(f"cb:{a}_{b}" for a, b in zip(words, words[1:]))
    for cue in cand.prefilter_cues:
        out.add(f"cue:{cue.split(':', 1)[0]}")
        out.add(f"cue:{cue}")
    return out


@dataclass(frozen=True)
class Scorer:
    """A loaded ``scorer.vN.json``; ``ref`` (e.g. 'scorer.v1') and ``sha256`` go into provenance."""

    version: int
    sha256: str
    intercept: float
    threshold: float  # keep a hit whose probability is at least this
    weights: dict[str, float] = field(repr=False)
    measured: dict = field(default_factory=dict, repr=False)  # cross-validated dev figures
    empty_words: frozenset[str] = frozenset()  # words that name no object ("it", "out", "try")
    names: PhraseMatcher | None = field(default=None, repr=False)  # value words -> attribute
    names_order: tuple[str, ...] = ()
    reads_rules: bool = False  # v2: the rules' verdict is among its features
    rules: str | None = None  # ... of these rules ("rules.vN:sha256[:12]"), the ones it learnt from
    # v2: the labelled sets (devsets/hedges folder names) it learnt from, per corpus
    tuned_on_sets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"scorer.v{self.version}"

    def probability(self, cand: Candidate, verdict: Extraction | None = None) -> float:
        """``verdict``: the rules' reading of the hit, for a scorer that reads it."""
        z = self.intercept + sum(self.weights.get(f, 0.0) for f in features(cand, verdict))
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    def keeps(self, probability: float) -> bool:
        return probability >= self.threshold

    def names_object(self, value: str) -> bool:
        """Whether a plan value names what the plan is about: a word after its first (the verb)
        that is not an empty word ("a dance studio", "adopting a child"; not "pass", "head out")."""
        return any(w not in self.empty_words and len(w) > 1 for w in _words(value)[1:])

    def name(self, value: str) -> str:
        """The attribute a value's words point to (the file's ``names``, first list wins), or
        ``unspecified``."""
        if self.names is None:
            return "unspecified"
        found = {cat for _, _, cat, _ in self.names.find(tokens(value))}
        return next((c for c in self.names_order if c in found), "unspecified")


@cache
def load_scorer(version: int | None = None, path: str | None = None) -> Scorer:
    """The packaged scorer (highest version unless pinned), or a scorer file of your own."""
    if path is None:
        v, file = versioned_file(SCORER_DIR, "scorer", "json", version, "stage-2 scorer")
    else:
        file = Path(path)
    try:
        raw = file.read_bytes()
        data = json.loads(raw.decode("utf-8"))
        weights = {str(k): float(w) for k, w in data["weights"].items()}
        intercept, threshold = float(data["intercept"]), float(data["threshold"])
        names = {str(k): [str(c) for c in v] for k, v in data.get("names", {}).items()}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"{file.name}: not a stage-2 scorer ({type(e).__name__}: {e})") from None
    return Scorer(
        version=int(data.get("version", 0)),
        sha256=hashlib.sha256(raw).hexdigest(),
        intercept=intercept,
        threshold=threshold,
        weights=weights,
        measured=dict(data.get("measured", {})),
        empty_words=frozenset(w.lower() for w in data.get("empty_words", [])),
        names=PhraseMatcher(names) if names else None,
        names_order=tuple(names),
        reads_rules=bool(data.get("reads_rules", False)),
        rules=str(data["rules"]) if data.get("rules") else None,
        tuned_on_sets={k: tuple(v) for k, v in data.get("tuned_on_sets", {}).items()},
    )
