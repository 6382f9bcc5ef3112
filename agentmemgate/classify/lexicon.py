"""The offline evidence-type classifier: cue counts -> softmax probabilities (``evidence_cues``).

A transparent, deterministic baseline so ``amg classify`` and its report work without any model.
``evidence_cues.v1`` is a bag of cues (this module); from v2 on the file says ``scoring =
"scoped"`` and ``scoped.py`` reads each cue in its scope. ``lexicon_classifier()`` gives the
highest version; every released version stays loadable, so stored results can be reproduced.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from functools import cache
from pathlib import Path

from ..corpora.statements import Statement
from ..errors import BadInput
from ..text import PhraseMatcher, tokens
from ..versioned import versioned_file
from .classes import EVIDENCE_TYPES, Distribution

CUES_DIR = Path(__file__).parent


class LexiconClassifier:
    """Scores each class by its cue weights plus a prior; probabilities by softmax."""

    kind = "evidence_type"
    family = "offline"

    def __init__(self, version: int | None = None):
        v, path = versioned_file(CUES_DIR, "evidence_cues", "toml", version, "offline lexicon")
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
        self.version = v
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.temperature = float(data.get("temperature", 1.0))
        self.priors = {c: float(data[c].get("prior", 0.0)) for c in EVIDENCE_TYPES}
        self.weights = {c: float(data[c].get("weight", 1.0)) for c in EVIDENCE_TYPES}
        self.matcher = PhraseMatcher({c: data[c]["cues"] for c in EVIDENCE_TYPES})
        self.name = f"offline:lexicon.v{v}"
        self.rubric_ref = f"evidence_cues.v{v}"

    def scores(self, text: str) -> dict[str, float]:
        s = dict(self.priors)
        for _, _, cat, _ in self.matcher.find(tokens(text)):
            s[cat] += self.weights[cat]
        if text.rstrip().endswith("?"):
            s["other"] += self.weights["other"]
        return s

    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        s = self.scores(statement.text)
        top = max(s.values())
        exp = {c: math.exp((v - top) / self.temperature) for c, v in s.items()}
        return Distribution(probs=exp, method="lexicon")


@cache
def lexicon_classifier(version: int | None = None):
    """The offline classifier of that cue-file version (default: the highest), one per version."""
    v, _ = versioned_file(CUES_DIR, "evidence_cues", "toml", version, "offline lexicon")
    return _load(v)


@cache
def _load(version: int):
    v, path = versioned_file(CUES_DIR, "evidence_cues", "toml", version, "offline lexicon")
    raw = path.read_bytes()
    scoring = tomllib.loads(raw.decode("utf-8")).get("scoring", "bag")
    if scoring == "bag":
        return LexiconClassifier(v)
    if scoring == "scoped":
        from .scoped import ScopedLexiconClassifier

        return ScopedLexiconClassifier(v, path, raw)
    raise BadInput(f"{path.name}: unknown scoring {scoring!r} (bag or scoped)")
