"""A learned turn model that widens stage 1 where cue phrases alone miss plans.

In chat between two people (LoCoMo) a plan is often stated with no cue a phrase list can hold
("I've been looking for a doggo to adopt - browsing websites, visiting shelters", "I'm still on
the lookout for the perfect furry friend", "I even got a beginners' guide to surfing. Just need
to find the right time"). On held-out LoCoMo conversations the cue rule passes about three in four
speculation turns. A logistic regression over the words and word pairs of the whole turn, trained
on the hand-labelled turns (``devsets/hedges/train_turns.py``, scikit-learn), passes many of the
rest for a bounded share of extra turns. It is shipped as data (``turns.vN.json``: weights,
intercept, threshold, the corpora it applies to) and scored in plain Python. A cue lexicon names
it (``[model]`` in ``cues.vN.toml``, with its sha256, so the lexicon's own hash covers it); a turn
is then a hit when the cue rule or the model passes it.
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

MODEL_DIR = Path(__file__).parent
_WORD = re.compile(r"[a-z0-9']+")


def turn_features(text: str) -> set[str]:
    """``w:`` words and ``b:`` word pairs of a turn; training and scoring both call this."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    out = {f"w:{w}" for w in words}
    out.update(f"b:{a}_{b}" for a, b in zip(words, words[1:]))
    return out


@dataclass(frozen=True)
class TurnModel:
    """A loaded ``turns.vN.json``; ``ref`` and ``sha256`` go into provenance via the lexicon."""

    version: int
    sha256: str
    intercept: float
    threshold: float  # pass a turn whose probability is at least this
    corpora: frozenset[str]  # where it applies; elsewhere the cue rule alone decides
    weights: dict[str, float] = field(repr=False)
    # the labelled sets (devsets/hedges folder names) it was trained on, per corpus: never
    # measure it on them
    tuned_on_sets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"turns.v{self.version}"

    def probability(self, text: str) -> float:
        z = self.intercept + sum(self.weights.get(f, 0.0) for f in turn_features(text))
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    def passes(self, text: str, corpus: str) -> bool:
        return corpus in self.corpora and self.probability(text) >= self.threshold


@cache
def load_turn_model(name: str, sha256: str | None = None, folder: Path | None = None) -> TurnModel:
    """The model file ``name`` (e.g. 'turns.v1.json'): beside the lexicon that names it
    (``folder``), else among the packaged files. ``sha256``, when given, must match, so a lexicon
    never runs with a model other than the one it names."""
    path = Path(folder) / name if folder is not None else MODEL_DIR / name
    if not path.is_file():
        path = MODEL_DIR / name
    if not path.is_file():
        where = f"{folder} or " if folder is not None else ""
        raise BadInput(f"{name}: no such turn model (looked in {where}the packaged files)")
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        corpora, tuned = data["corpora"], data.get("tuned_on_sets", {})
        if not isinstance(corpora, list) or not all(isinstance(c, str) for c in corpora):
            raise TypeError("corpora must be a list of corpus names")
        if not isinstance(data["weights"], dict) or not isinstance(tuned, dict):
            raise TypeError("weights and tuned_on_sets must be objects")
        model = TurnModel(
            version=int(data["version"]),
            sha256=hashlib.sha256(raw).hexdigest(),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            corpora=frozenset(corpora),
            tuned_on_sets={str(k): tuple(v) for k, v in tuned.items()},
            weights={str(k): float(v) for k, v in data["weights"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"{name}: not a turn model ({type(e).__name__}: {e})") from None
    if sha256 is not None and model.sha256 != sha256:
        raise BadInput(
            f"{name}: sha256 {model.sha256[:12]} is not the {sha256[:12]} its lexicon names"
        )
    return model
