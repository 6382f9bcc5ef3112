"""The offline evidence-type classifiers on natural turns: the hedge dev set as a commit/hold test.

Run: .venv/bin/python benchmarks/classifier_natural.py [--set dev|heldout|both]
     [--classifier offline:lexicon.v1 --classifier offline:lexicon.v2] [--unit turn|sentence]
     [--show-misses] [--fit-temperature] [--json]

The labels (devsets/hedges, LoCoMo + LongMemEval turns hand-labelled spec / borderline / none by
the miner's helper, independently of the offline renderer) say whether a turn states the
speaker's own not-yet-real change. A classifier should hold (argmax speculation) the spec turns
and commit the none turns. Printed per corpus and pooled: speculation recall and precision
(borderline left out, then counted as spec), the share of none turns held, and the commit/hold
AUROC of P(commit) with a bootstrap interval; proportions carry 95% Wilson intervals. With two
classifiers it adds the paired AUROC difference (second minus first).

The dev part is where offline:lexicon.v2 was developed (its weights were set while reading these
turns: optimistic); the held-out part was not read or scored while v2 was written.
--fit-temperature prints the binary log loss of P(hold), plain and class-balanced, over a grid of
temperatures on the chosen set (the v2 file's temperature was picked by the class-balanced
figure on the dev part: the turns are 95% none, the statements the gate sees are not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentmemgate.classify import get_classifier
from agentmemgate.classify.natural import UNITS, auroc_difference, devset_turns, route
from agentmemgate.corpora.devset import load_devset
from agentmemgate.corpora.home import require_file
from agentmemgate.errors import AmgError

ROOT = Path(__file__).resolve().parent.parent
DEVSET = ROOT / "devsets" / "hedges"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--locomo",
        type=Path,
        default=None,
        help="locomo10.json (default: the one in the corpora folder, AMG_CORPORA)",
    )
    ap.add_argument(
        "--longmemeval",
        type=Path,
        default=None,
        help="longmemeval_oracle_subset.json (default: the one in the corpora folder)",
    )
    ap.add_argument("--set", default="both", choices=("dev", "heldout", "both"))
    ap.add_argument(
        "--classifier",
        action="append",
        default=None,
        help="offline:lexicon.vN or another classifier spec (repeat; default v1 and v2)",
    )
    ap.add_argument("--unit", default="turn", choices=UNITS)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument(
        "--show-misses", action="store_true", help="list spec turns committed and none turns held"
    )
    ap.add_argument("--fit-temperature", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    specs = args.classifier or ["offline:lexicon.v1", "offline:lexicon.v2"]
    sets = ["dev", "heldout"] if args.set == "both" else [args.set]
    try:
        args.locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        args.longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        clfs = [get_classifier(s) for s in specs]
        data = {
            s: devset_turns(
                load_devset(
                    DEVSET if s == "dev" else DEVSET / "heldout", args.locomo, args.longmemeval
                )
            )
            for s in sets
        }
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if args.fit_temperature:
        return fit_temperature(clfs[-1], data, args.unit)
    out = {}
    for name, items in data.items():
        results = [route(c, items, args.unit, resamples=args.resamples) for c in clfs]
        out[name] = {"results": [r.model_dump(exclude={"p_commit", "held"}) for r in results]}
        if len(results) == 2:
            out[name]["auroc_difference"] = {
                g: auroc_difference(
                    results[1], results[0], items, g, resamples=args.resamples
                ).model_dump()
                for g in ("locomo", "longmemeval", "all")
            }
        if not args.json:
            show(name, items, results, args)
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


def show(name, items, results, args) -> None:
    print(f"\n== {name} set, unit: {args.unit} ==")
    for g in ("locomo", "longmemeval", "all"):
        rows = [next(x for x in r.groups if x.group == g) for r in results]
        r0 = rows[0]
        print(f"\n{g}: {r0.n_spec} spec, {r0.n_none} none, {r0.n_borderline} borderline turns")
        for r, row in zip(results, rows):
            print(f"  {r.classifier}")
            print(f"    speculation recall      {row.recall.fmt()}")
            print(f"    speculation precision   {row.precision.fmt()}")
            print(f"    none turns held         {row.none_held.fmt()}")
            print(f"    borderline turns held   {row.borderline_held.fmt()}")
            print(
                f"    recall / precision, borderline as spec: {row.recall_with_borderline.fmt()} / "
                f"{row.precision_with_borderline.fmt()}"
            )
            print(f"    commit/hold AUROC       {row.auroc.fmt(3)}")
            if row.log_loss is not None:
                print(
                    f"    log loss of P(hold)     {row.log_loss:.3f} (class-balanced "
                    f"{row.balanced_log_loss:.3f})"
                )
        if len(results) == 2:
            d = auroc_difference(results[1], results[0], items, g, resamples=args.resamples)
            print(
                f"  AUROC {results[1].classifier} - {results[0].classifier}: {d.fmt(3, signed=True)}"
            )
    if args.show_misses:
        last = results[-1]
        print(f"\n{last.classifier} misses ({name} set):")
        for it in items:
            p, held = last.p_commit[it.name], last.held[it.name]
            if it.label == "spec" and not held or it.label == "none" and held:
                print(f"  [{it.label}] P(commit)={p:.2f} {it.name}: {it.statement.text[:160]!r}")


def fit_temperature(clf, data, unit: str) -> int:
    """Log loss of P(hold) over temperatures (the argmax, and so the routing, does not move)."""
    if not hasattr(clf, "temperature"):
        print("Error: this classifier has no temperature", file=sys.stderr)
        return 1
    base = clf.temperature
    for t in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0):
        clf.temperature = t
        losses = []
        for name, items in data.items():
            row = next(g for g in route(clf, items, unit, resamples=0).groups if g.group == "all")
            losses.append(f"{name} {row.log_loss:.4f} (class-balanced {row.balanced_log_loss:.4f})")
        print(f"temperature {t:4.2f}: log loss " + ", ".join(losses))
    clf.temperature = base
    return 0


if __name__ == "__main__":
    sys.exit(main())
