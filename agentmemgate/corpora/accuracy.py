"""What the offline miner is measured to get right, on hand-labelled conversations it was not tuned on.

``devsets/hedges/measure.py --set unseen --save`` stores the figures of the packaged cue lexicon,
stage-2 rules and (when one decides) stage-2 scorer in ``miner_accuracy.json`` (k and n of each
proportion, per corpus, keyed by the files' versions and hashes); ``amg mine hedges`` states them in
its summary, with their Wilson intervals and the data they were measured on. A file the figures
were not measured for (your own, an edited copy) gets no figures, and the summary says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..stats import wilson
from ._rules import Rules
from .prefilter import Lexicon
from .scorer import Scorer

ACCURACY_FILE = Path(__file__).parent / "miner_accuracy.json"
FIGURES = ("prefilter_recall", "flagged", "precision", "recall")


def _ref(lexicon: Lexicon, rules: Rules) -> tuple[str, str]:
    return f"{lexicon.ref}:{lexicon.sha256[:12]}", f"{rules.ref}:{rules.sha256[:12]}"


def scorer_ref(scorer: Scorer | None) -> str | None:
    return f"{scorer.ref}:{scorer.sha256[:12]}" if scorer is not None else None


def _key(entry: dict) -> tuple[str, str, str]:
    return entry["lexicon"], entry["rules"], entry.get("scorer") or ""


def _entries(path: Path = ACCURACY_FILE) -> list[dict]:
    try:
        return list(json.loads(path.read_text(encoding="utf-8")).get("entries", []))
    except (OSError, ValueError, AttributeError):
        return []


def measured(
    lexicon: Lexicon, rules: Rules, path: Path = ACCURACY_FILE, scorer: Scorer | None = None
) -> dict | None:
    """The stored held-out figures of this very lexicon, rules and scorer (or none), or None."""
    lex, rul = _ref(lexicon, rules)
    sco = scorer_ref(scorer)
    for entry in _entries(path):
        if (entry.get("lexicon"), entry.get("rules"), entry.get("scorer")) == (lex, rul, sco):
            return entry
    return None


def prefilter_measured(lexicon: Lexicon, path: Path = ACCURACY_FILE) -> dict | None:
    """Figures stored for this lexicon with any rules (stage-1 recall does not depend on them)."""
    lex = f"{lexicon.ref}:{lexicon.sha256[:12]}"
    return next((e for e in _entries(path) if e.get("lexicon") == lex), None)


def save(entry: dict, path: Path = ACCURACY_FILE) -> None:
    """Store (or replace) the figures of one lexicon, rules and scorer, atomically."""
    from ..atomic import write_text_atomic

    entries = [e for e in _entries(path) if _key(e) != _key(entry)]
    data = {
        "what": "the offline miner on hand-labelled held-out conversations, per corpus: "
        "stage-1 recall of speculation turns, share of turns flagged, precision of the kept "
        "hedges (speculation turns among them) and end-to-end recall (speculation turns kept)",
        "measured_by": "devsets/hedges/measure.py --set unseen --save",
        "entries": sorted([*entries, entry], key=_key),
    }
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def summary_lines(
    corpus: str,
    lexicon: Lexicon,
    rules: Rules,
    *,
    offline: bool,
    prefilter: str = "lexicon",
    scorer: Scorer | None = None,
) -> list[str]:
    """Summary lines (at most 100 characters) stating what the miner that just ran is measured to
    get right on ``corpus``, and on what; or that it was not measured."""
    if prefilter == "none":
        return []
    if offline:
        entry = measured(lexicon, rules, scorer=scorer)
        if entry is None:
            return [
                "Accuracy: not measured for this lexicon and these rules (devsets/hedges/measure.py)"
            ]
    else:
        entry = prefilter_measured(lexicon)
        if entry is None:
            return ["Accuracy: the prefilter was not measured for this lexicon"]
    part = entry["parts"].get(corpus)
    if part is None:
        return [f"Accuracy: not measured on {corpus}"]
    f = {k: wilson(part[k]["k"], part[k]["n"]) for k in FIGURES}
    lines = [f"Accuracy on held-out {part['data']}:"]
    if offline:
        lines += [
            f"  kept hedges that are speculation (precision): {f['precision'].fmt()}",
            f"  speculation turns kept (recall): {f['recall'].fmt()}",
        ]
        if "named" in part:
            named = wilson(part["named"]["k"], part["named"]["n"])
            lines.append(f"  kept hedges naming an attribute: {named.fmt()}")
    else:
        lines.append("  stage 2 by an LLM: its precision and recall are not measured here")
    lines.append(f"  prefilter recall: {f['prefilter_recall'].fmt()}")
    return lines
