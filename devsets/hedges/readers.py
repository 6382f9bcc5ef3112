"""How far two readers of the same conversations agree: the ceiling any miner is measured under.

Run: .venv/bin/python devsets/hedges/readers.py [--first heldout2,heldout4] [--second agreement]

Each folder is a labelled set (``locomo.tsv``, ``longmemeval.tsv``); ``--first`` may pool several.
The turns both readings label are compared. Taking the first reading as the truth, the second reader's precision and recall of
``spec`` turns are what a miner that read exactly like a second person would score, the same
figures ``measure.py`` gives a miner. Also printed: the 3x3 table and Cohen's kappa (scikit-learn),
over the three labels and over ``spec`` against the rest.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

from agentmemgate.corpora.devset import LABELS, load_devset, load_devsets
from agentmemgate.corpora.home import require_file
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson

HERE = Path(__file__).parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--first",
        default="heldout2,heldout4",
        help="folder(s) of the first reading, comma-separated (default heldout2,heldout4)",
    )
    ap.add_argument("--second", default="agreement", help="folder of the second reading")
    ap.add_argument("--locomo", type=Path, default=None)
    ap.add_argument("--longmemeval", type=Path, default=None)
    args = ap.parse_args()
    try:
        locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        names = [n.strip() for n in args.first.split(",") if n.strip()]
        folder = lambda name: HERE if name == "dev" else HERE / name
        first = load_devsets([folder(n) for n in names], locomo, longmemeval)
        second = load_devset(folder(args.second), locomo, longmemeval)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    b = {(t.part, t.conversation_id, t.ref): t.label for t in second.turns}
    keyed = [
        (t.conversation_id, t.label, b[k])
        for t in first.turns
        if (k := (t.part, t.conversation_id, t.ref)) in b
    ]
    pairs = [(x, y) for _, x, y in keyed]
    if not pairs:
        print(f"Error: {args.first} and {args.second} label no turn in common", file=sys.stderr)
        return 1
    convs = sorted({t.conversation_id for t in second.turns})
    a_lab, b_lab = zip(*pairs)
    both = sum(x == y == "spec" for x, y in pairs)
    print(
        f"{args.first} (first) and {args.second} (second): {len(pairs)} turns of {' '.join(convs)}"
    )
    print(f"  second reader's precision on spec  {wilson(both, b_lab.count('spec')).fmt()}")
    print(f"  second reader's recall of spec      {wilson(both, a_lab.count('spec')).fmt()}")
    for conv in convs:
        mine = [(x, y) for c, x, y in keyed if c == conv]
        agree = sum(x == y == "spec" for x, y in mine)
        said = sum(y == "spec" for _, y in mine)
        found = sum(x == "spec" for x, _ in mine)
        print(
            f"    {conv}: precision {wilson(agree, said).fmt()}, recall {wilson(agree, found).fmt()}"
        )
    kappa3 = cohen_kappa_score(a_lab, b_lab)
    kappa2 = cohen_kappa_score([x == "spec" for x in a_lab], [y == "spec" for y in b_lab])
    print(f"  Cohen's kappa, three labels {kappa3:.3f}; spec against the rest {kappa2:.3f}")
    table = Counter(pairs)
    print("  first \\ second " + "".join(f"{lab:>12}" for lab in LABELS))
    for x in LABELS:
        print(f"  {x:<15}" + "".join(f"{table[(x, y)]:>12}" for y in LABELS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
