"""How far can a linear reading of whole turns go toward the miner's goal (75% precision at 75%
recall of the speculation turns)?

Run: .venv/bin/python devsets/hedges/linear_ceiling.py [--C 0.1 0.3 1.0] [--folds 10]

An experiment, not a miner the toolkit ships. Every labelled LoCoMo turn of every set in this
folder (the dev part, ``heldout``, ``heldout2``, ``heldout3`` and ``heldout4``) is a sample: label
1 for ``spec``, 0 for ``borderline`` and ``none``. A logistic regression (``train.fit``: words and
word pairs of the turn, ``turn_model.turn_features``, plus whether the cue rule passes the turn)
scores each turn out of fold, by a model that never saw its conversation (``GroupKFold`` over
conversations). It reads every turn, so it is what a learned stage 1 and stage 2 together could
do with these features, at their best threshold. Printed: AUROC, the best precision at a recall
of at least 75%, and the threshold of best F1, each proportion as k/n with its 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from sklearn.metrics import roc_auc_score
from train import out_of_fold
from train_turns import HERE, labelled_turns

from agentmemgate.corpora.home import require_file
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson

SETS = (HERE, HERE / "heldout", HERE / "heldout2", HERE / "heldout3", HERE / "heldout4")


def _p(k: int, n: int) -> str:
    return wilson(k, n).fmt()


def every_labelled_turn() -> list[dict]:
    """Every labelled LoCoMo turn of every set here (``train_turns.labelled_turns``), read from
    the corpora folder's files."""
    locomo = require_file("locomo", "locomo10.json", checkout=True)
    longmemeval = require_file("longmemeval", "longmemeval_oracle_subset.json", checkout=True)
    return labelled_turns(locomo, longmemeval, load_lexicon(2), SETS)


def ceiling_lines(y: np.ndarray, oof: np.ndarray) -> list[str]:
    """AUROC, the best precision at a recall of at least 75%, and the point of best F1, of
    out-of-fold scores ``oof`` for labels ``y``: thresholds read off the scores themselves, so
    upper bounds."""
    n_spec = int(y.sum())
    order = np.argsort(-oof, kind="stable")
    tp = np.cumsum(y[order])
    kept = np.arange(1, len(y) + 1)
    f1 = 2 * tp / (kept + n_spec)
    at75 = np.flatnonzero(tp >= 0.75 * n_spec)
    i75 = at75[np.argmax(tp[at75] / kept[at75])]
    best = int(np.argmax(f1))
    return [
        f"AUROC {roc_auc_score(y, oof):.3f}",
        f"at recall >= 75%: precision {_p(int(tp[i75]), int(kept[i75]))}, "
        f"recall {_p(int(tp[i75]), n_spec)}",
        f"at best F1 ({f1[best]:.2f}): precision {_p(int(tp[best]), int(kept[best]))}, "
        f"recall {_p(int(tp[best]), n_spec)}",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--C", type=float, nargs="+", default=[0.1, 0.3, 1.0], help="inverse L2")
    ap.add_argument("--folds", type=int, default=10, help="folds over conversations")
    args = ap.parse_args()
    try:
        rows = every_labelled_turn()
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    for r in rows:
        r["x"]["__cue_rule__"] = int(r["cue"])
    y = np.array([r["spec"] for r in rows], dtype=int)
    groups = [r["group"] for r in rows]
    n_spec = int(y.sum())
    print(
        f"{len(rows)} labelled LoCoMo turns, {n_spec} spec, {len(set(groups))} conversations; "
        f"{args.folds}-fold CV over conversations"
    )
    for c in args.C:
        oof = out_of_fold([r["x"] for r in rows], y, groups, c, args.folds)
        print(f"C={c:g}: " + "\n  ".join(ceiling_lines(y, oof)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
