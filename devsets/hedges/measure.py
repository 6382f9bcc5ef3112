"""Measure the miner on its hand-labelled dev set: stage-1 recall and share flagged, stage-2 keep rate.

Run: .venv/bin/python devsets/hedges/measure.py [--cues N] [--rules N] [--json] [--show-misses]
(the labelling guideline and the figures are in README.md beside this script).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentmemgate.corpora._rules import load_rules
from agentmemgate.corpora.devset import load_devset, measure, share_passed
from agentmemgate.corpora.home import require_file
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.corpora.public import file_sha256
from agentmemgate.errors import AmgError

HERE = Path(__file__).parent


def save_recall(report) -> None:
    """The held-out stage-1 recall, stored once for the miner's summary (never retyped)."""
    import os

    from agentmemgate.corpora.prefilter import RECALL_FILE

    data = {
        "lexicon": report.lexicon,
        "set": "heldout",
        "measured_by": "devsets/hedges/measure.py --set heldout --save-recall",
        "what": "stage-1 recall of the turns labelled speculation (spec), by corpus",
        "parts": {p.part: {"k": p.recall_spec.k, "n": p.recall_spec.n} for p in report.parts},
    }
    tmp = RECALL_FILE.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, RECALL_FILE)
    print(f"wrote {RECALL_FILE}", file=sys.stderr)


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
    ap.add_argument("--cues", type=int, default=None, help="cue lexicon version (default: latest)")
    ap.add_argument(
        "--lexicon", type=Path, default=None, help="a cue-lexicon TOML file of your own"
    )
    ap.add_argument(
        "--rules", type=int, default=None, help="stage-2 rules version (default: latest)"
    )
    ap.add_argument(
        "--set",
        default="dev",
        choices=("dev", "heldout"),
        help="dev: the tuning set; heldout: labelled after v2 was frozen",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--save-recall",
        action="store_true",
        help="with --set heldout: store the stage-1 recall (k/n per corpus) that "
        "`amg mine hedges` reports for this lexicon",
    )
    ap.add_argument(
        "--show-misses",
        action="store_true",
        help="list the spec turns stage 1 misses and stage 2 drops",
    )
    args = ap.parse_args()
    try:
        args.locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        args.longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        dev = load_devset(
            HERE if args.set == "dev" else HERE / "heldout", args.locomo, args.longmemeval
        )
        lex = load_lexicon(path=str(args.lexicon)) if args.lexicon else load_lexicon(args.cues)
        rules = load_rules(args.rules)
        report = measure(dev, lex, rules)
        oracle = share_passed(args.longmemeval, lex)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    for part, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval)):
        if dev.sha256.get(part) and file_sha256(path) != dev.sha256[part]:
            print(
                f"warning: {path.name} differs from the file the labels were made on",
                file=sys.stderr,
            )
    if args.save_recall:
        if args.set != "heldout" or args.lexicon:
            print(
                "Error: --save-recall stores the packaged lexicon's held-out recall: use "
                "--set heldout without --lexicon",
                file=sys.stderr,
            )
            return 1
        save_recall(report)
    if args.json:
        print(
            json.dumps(
                {**report.model_dump(), "longmemeval_file_share": oracle.model_dump()}, indent=2
            )
        )
        return 0
    print(f"{args.set} set; lexicon {report.lexicon}; rules {report.rules} (offline-rules stage 2)")
    for p in report.parts:
        print(f"\n{p.part}: {p.turns} turns, {p.spec} spec, {p.borderline} borderline")
        print(f"  stage 1 flags            {p.flagged.fmt()}")
        print(f"  stage 1 recall, spec     {p.recall_spec.fmt()}")
        print(f"  ... spec + borderline    {p.recall_spec_borderline.fmt()}")
        print(f"  stage 2 keeps, spec      {p.stage2_keep_spec.fmt()}")
        print(f"  ... borderline           {p.stage2_keep_borderline.fmt()}")
        print(f"  ... none (should reject) {p.stage2_keep_none.fmt()}")
        if args.show_misses:
            print("  missed by stage 1: " + (", ".join(p.missed) or "-"))
            print("  dropped by stage 2: " + ("; ".join(p.dropped) or "-"))
    print(
        f"\n{args.longmemeval.name}: stage 1 passes {oracle.fmt()} of user turns (sessions deduplicated)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
