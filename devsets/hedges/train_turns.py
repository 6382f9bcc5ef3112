"""Train the stage-1 turn model (``turns.vN.json``) that widens the cue rule in peer chat.

Run: .venv/bin/python devsets/hedges/train_turns.py [--version N] [--budget 0.32] [--write]

Training data: every labelled LoCoMo turn of the tuning folders (this folder's files,
``heldout/``, ``heldout2/``, ``heldout3/``); ``heldout4/`` is never read, it measures the result.
Label: ``spec`` is 1, ``borderline`` and ``none`` are 0. Model: scikit-learn's LogisticRegression
(L2, balanced class weights) over the words and word pairs of the whole turn
(``agentmemgate.corpora.turn_model.turn_features``).

The model only adds turns the cue rule (``--cues``, default 2) does not pass. Its threshold is
chosen by cross-validation with whole conversations held out per fold: the lowest probability
whose out-of-fold union with the cue rule flags at most ``--budget`` of the turns (stage 1's goal
is at most 35%), which is the highest recall within that budget. The cross-validated recall and
share flagged are printed (k/n, 95% Wilson intervals) and, with ``--write``, stored in
``agentmemgate/corpora/turns.vN.json`` with the weights of the model fitted on all the turns.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

# the stage-2 scorer's trainer, beside this script: the same model, pruning and folds code
from train import fitted_weights, out_of_fold

from agentmemgate.atomic import write_text_atomic
from agentmemgate.corpora.devset import load_devset
from agentmemgate.corpora.home import require_file
from agentmemgate.corpora.prefilter import load_lexicon, scan_turn
from agentmemgate.corpora.turn_model import MODEL_DIR, turn_features
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson

HERE = Path(__file__).parent
TUNING = (HERE, HERE / "heldout", HERE / "heldout2", HERE / "heldout3")  # never heldout4
CORPUS = "locomo"
FOLDS = 8


def labelled_turns(locomo: Path, longmemeval: Path, lexicon, folders=TUNING) -> list[dict]:
    """Every labelled LoCoMo turn of ``folders`` (the tuning folders): features, label,
    conversation, whether the cue rule passes it, and its text."""
    rows = []
    for folder in folders:
        dev = load_devset(folder, locomo, longmemeval)
        labels = {(t.conversation_id, t.ref): t.label for t in dev.turns if t.part == CORPUS}
        for conv in dev.conversations[CORPUS]:
            for session in conv.sessions:
                for turn in session.turns:
                    label = labels.get((conv.conversation_id, turn.ref))
                    if label is None or not turn.mined:
                        continue
                    rows.append(
                        {
                            "group": f"{folder.name}:{conv.conversation_id}",
                            "spec": label == "spec",
                            "cue": scan_turn(turn.text, lexicon, CORPUS).hit,
                            "x": dict.fromkeys(turn_features(turn.text), 1),
                            "text": turn.text,
                        }
                    )
    return rows


def cross_validate(rows: list[dict], c: float) -> np.ndarray:
    """Out-of-fold probabilities: each turn scored by a model that never saw its conversation."""
    y = np.array([r["spec"] for r in rows], dtype=int)
    return out_of_fold([r["x"] for r in rows], y, [r["group"] for r in rows], c, FOLDS)


def union(rows: list[dict], oof: np.ndarray, threshold: float) -> tuple[int, int, int, int]:
    """(spec passed, spec, turns passed, turns) of the cue rule or the model at ``threshold``."""
    passed = np.array([r["cue"] for r in rows]) | (oof >= threshold)
    spec = np.array([r["spec"] for r in rows])
    return int((passed & spec).sum()), int(spec.sum()), int(passed.sum()), len(rows)


def choose_threshold(rows: list[dict], oof: np.ndarray, budget: float) -> float:
    """The lowest out-of-fold probability whose union flags at most ``budget`` of the turns."""
    for t in np.sort(np.unique(np.round(oof, 4))):
        _, _, flagged, n = union(rows, oof, t)
        if flagged <= budget * n:
            return float(t)
    return 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", type=int, default=1, help="write turns.vN.json (default 1)")
    ap.add_argument("--cues", type=int, default=2, help="the cue lexicon it widens (default 2)")
    ap.add_argument("--C", type=float, default=0.1, help="inverse L2 strength (default 0.1)")
    ap.add_argument(
        "--budget",
        type=float,
        default=0.32,
        help="the share of turns (0 to 1) the cue rule and the model may flag together, at most "
        "(default 0.32; stage 1's goal is 0.35)",
    )
    ap.add_argument("--write", action="store_true", help="store the model and its CV figures")
    ap.add_argument("--locomo", type=Path, default=None)
    ap.add_argument("--longmemeval", type=Path, default=None)
    args = ap.parse_args()
    if args.write and (MODEL_DIR / f"turns.v{args.version}.json").exists():
        # a released file is never rewritten: its sha256 is in provenance (and, for a turn
        # model, in the lexicon that names it)
        print(f"Error: turns.v{args.version}.json exists; write a new --version", file=sys.stderr)
        return 1
    if not 0 < args.budget < 1:
        print(f"Error: --budget is a share between 0 and 1, not {args.budget:g}", file=sys.stderr)
        return 1
    try:
        locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        lexicon = load_lexicon(args.cues)
        if lexicon.model is not None:
            raise AmgError(f"{lexicon.ref} has a turn model already; widen a lexicon without one")
        rows = labelled_turns(locomo, longmemeval, lexicon)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    oof = cross_validate(rows, args.C)
    threshold = choose_threshold(rows, oof, args.budget)
    cue_hits = sum(r["cue"] and r["spec"] for r in rows)
    got, spec, flagged, n = union(rows, oof, threshold)
    cue_flagged = sum(r["cue"] for r in rows)
    print(f"{n} labelled LoCoMo turns, {spec} spec; {FOLDS}-fold CV over conversations")
    print(
        f"  cue rule alone: recall {wilson(cue_hits, spec).fmt()}, flagged {wilson(cue_flagged, n).fmt()}"
    )
    print(
        f"  with the model at {threshold:g}: recall {wilson(got, spec).fmt()}, flagged {wilson(flagged, n).fmt()}"
    )
    if not args.write:
        return 0
    y = np.array([r["spec"] for r in rows], dtype=int)
    weights, intercept = fitted_weights([r["x"] for r in rows], y, args.C)
    data = {
        "version": args.version,
        "what": "stage-1 turn model: logistic regression over the words and word pairs of a "
        "turn (agentmemgate.corpora.turn_model.turn_features); passes a turn the cue rule "
        "misses when its probability is at least the threshold, in the corpora named",
        "trained_on": "every labelled LoCoMo turn of devsets/hedges (conv-41, conv-47, conv-50; "
        "conv-43 sessions 1-11; conv-48, conv-49; conv-42, conv-44): "
        f"{n} turns, {spec} spec; borderline and none 0",
        "widens": f"{lexicon.ref}:{lexicon.sha256[:12]}",
        "model": f"LogisticRegression(C={args.C}, class_weight='balanced'), scikit-learn",
        "threshold_rule": f"lowest probability whose {FOLDS}-fold out-of-fold union with the cue "
        f"rule flags at most {args.budget:g} of the turns, folds grouped by conversation",
        "threshold": round(threshold, 4),
        "corpora": [CORPUS],
        "tuned_on_sets": {CORPUS: [f.name if f != HERE else "dev" for f in TUNING]},
        "measured": {
            "how": f"{FOLDS}-fold cross-validation over the training conversations",
            "recall": {"k": got, "n": spec},
            "flagged": {"k": flagged, "n": n},
        },
        "intercept": intercept,
    }
    out = MODEL_DIR / f"turns.v{args.version}.json"
    head = json.dumps(data, indent=1)
    rows_json = ",\n".join(
        f"  {json.dumps(k, ensure_ascii=False)}: {w}" for k, w in weights.items()
    )
    write_text_atomic(out, head[:-2] + ',\n "weights": {\n' + rows_json + "\n }\n}\n")
    print(f"wrote {out} ({len(weights)} weights)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
