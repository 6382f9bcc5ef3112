"""Measure the hedge miner on a hand-labelled set: each stage, and the miner end to end.

Run: .venv/bin/python devsets/hedges/measure.py [--set dev|heldout|heldout2|heldout3|heldout4|unseen] [--cues N] [--rules N]
[--scorer N|none] [--json] [--show-misses] [--save]   (the labelling guideline and the figures are
in README.md beside this script). Every proportion is printed as k/n with its 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentmemgate.corpora._rules import load_rules
from agentmemgate.corpora.devset import (
    DevReport,
    DevSet,
    load_devsets,
    measure,
    share_passed,
    unseen_folders,
)
from agentmemgate.corpora.home import require_file
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.errors import AmgError, BadInput
from agentmemgate.hashing import sha256_file

HERE = Path(__file__).parent
SETS = {
    "dev": "the tuning set",
    "heldout": "labelled after v2 was first frozen; v2's last changes read its misses",
    "heldout2": "labelled before v3 was written; no rule written from it (turns.v1 learnt from "
    "its LoCoMo turns)",
    "heldout3": "LoCoMo conv-42 and conv-44, labelled blind to every rule; no rule written from "
    "it (turns.v1 learnt from it)",
    "heldout4": "LoCoMo conv-26, conv-30 and conv-43 sessions 12-29 and 12 LongMemEval "
    "instances, labelled blind; never used for tuning",
    "agreement": "second readings of conv-49, conv-26 and conv-30 (the first are in heldout2 and "
    "heldout4)",
    "unseen": "heldout2, heldout3 and heldout4 pooled, less any a measured file was trained on: "
    "every labelled conversation the measured files never learnt from",
}
FOLDERS = {name: [HERE if name == "dev" else HERE / name] for name in SETS}
SAVED_SET = "unseen"
PARTS = ("locomo", "longmemeval")


def folders_for(name: str, lexicon, part: str, scorer=None) -> list[Path]:
    """The labelled folders a set reads for one corpus: for ``unseen``, the held-out sets none of
    the measured files was trained on (``devset.unseen_folders``)."""
    return unseen_folders(HERE, lexicon, part, scorer) if name == "unseen" else FOLDERS[name]


def describe(dev: DevSet, part: str) -> str:
    """What a part of a labelled set is, in one phrase: '<corpus> <which> (<n> turns read, <k>
    speculation)'."""
    turns = [t for t in dev.turns if t.part == part]
    spec = sum(t.label == "spec" for t in turns)
    convs = sorted({t.conversation_id for t in turns})
    if part == "locomo":
        sessions: dict[str, list[int]] = {}
        for conv in dev.conversations.get("locomo", []):
            for session in conv.sessions:
                number = int(session.session_id.split("_")[-1])
                sessions.setdefault(conv.conversation_id, []).append(number)

        def named(conv: str) -> str:  # a conversation labelled from a later session on says so
            got = sessions.get(conv, [])
            return f"{conv} sessions {min(got)}-{max(got)}" if got and min(got) > 1 else conv

        what = "LoCoMo " + ", ".join(named(c) for c in convs)
    else:
        what = f"LongMemEval oracle, {len(convs)} instances"
    who = "turns" if part == "locomo" else "user turns"
    return f"{what} ({len(turns)} {who} read, {spec} speculation)"


def save(report: DevReport, devs: dict[str, DevSet]) -> None:
    """Store the held-out figures ``amg mine hedges`` states (k and n; never retyped)."""
    from agentmemgate.corpora.accuracy import ACCURACY_FILE
    from agentmemgate.corpora.accuracy import save as store

    parts = {}
    for p in report.parts:
        figures = {
            "prefilter_recall": p.recall_spec,
            "flagged": p.flagged,
            "precision": p.precision,
            "recall": p.recall,
            "named": p.named,
        }
        parts[p.part] = {
            "data": describe(devs[p.part], p.part),
            **{k: {"k": v.k, "n": v.n} for k, v in figures.items()},
        }
    entry = {"lexicon": report.lexicon, "rules": report.rules, "set": SAVED_SET, "parts": parts}
    if report.scorer:
        entry["scorer"] = report.scorer
    store(entry, ACCURACY_FILE)
    print(f"wrote {ACCURACY_FILE}", file=sys.stderr)


def _scorer(choice: str | None):
    """The stage-2 scorer to measure: a version, 'none', or the miner's default."""
    from agentmemgate.corpora.mining import default_scorer
    from agentmemgate.corpora.scorer import load_scorer

    if choice is None:
        return default_scorer()
    if choice == "none":
        return None
    if not choice.isdigit():
        raise BadInput(f"--scorer takes a version number or 'none', not {choice!r}")
    return load_scorer(int(choice))


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
        "--rules-file",
        type=Path,
        default=None,
        help="a stage-2 rules TOML file of your own (e.g. rules.v3-candidate.toml here)",
    )
    ap.add_argument(
        "--scorer",
        default=None,
        help="stage-2 scorer version, or 'none' for the rules alone (default: the miner's default)",
    )
    ap.add_argument(
        "--set",
        default="dev",
        choices=tuple(SETS),
        help="; ".join(f"{k}: {v}" for k, v in SETS.items()),
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--save",
        action="store_true",
        help=f"with --set {SAVED_SET}: store the figures `amg mine hedges` states for these "
        "packaged cue, rules and scorer files",
    )
    ap.add_argument(
        "--show-misses",
        action="store_true",
        help="list the spec turns stage 1 misses and stage 2 drops, and the none turns kept "
        "(read them on the dev set only: a held-out set whose errors were read is no longer one)",
    )
    args = ap.parse_args()
    if args.save and (args.set != SAVED_SET or args.lexicon or args.rules_file):
        print(
            f"Error: --save stores the packaged files' figures on the {SAVED_SET} set: use "
            f"--set {SAVED_SET} without --lexicon or --rules-file",
            file=sys.stderr,
        )
        return 1
    try:
        args.locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        args.longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        lex = load_lexicon(path=str(args.lexicon)) if args.lexicon else load_lexicon(args.cues)
        rules = load_rules(path=str(args.rules_file)) if args.rules_file else load_rules(args.rules)
        scorer = _scorer(args.scorer)
        devs, reports = {}, {}
        for part in PARTS:  # each corpus on its own folders (see folders_for)
            folders = tuple(folders_for(args.set, lex, part, scorer))
            if folders not in reports:
                dev = load_devsets(list(folders), args.locomo, args.longmemeval)
                reports[folders] = (dev, measure(dev, lex, rules, scorer))
            devs[part], got = reports[folders]
        parts = [
            next(
                p
                for p in reports[tuple(folders_for(args.set, lex, part, scorer))][1].parts
                if p.part == part
            )
            for part in PARTS
        ]
        report = got.model_copy(update={"parts": parts})
        oracle = share_passed(args.longmemeval, lex)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    for part, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval)):
        if devs[part].sha256.get(part) and sha256_file(path) != devs[part].sha256[part]:
            print(
                f"warning: {path.name} differs from the file the labels were made on",
                file=sys.stderr,
            )
    if args.save:
        save(report, devs)
    if args.json:
        print(
            json.dumps(
                {**report.model_dump(), "longmemeval_file_share": oracle.model_dump()}, indent=2
            )
        )
        return 0
    print(
        f"{args.set} set ({SETS[args.set]}); lexicon {report.lexicon}; rules {report.rules}; "
        f"scorer {report.scorer or 'none'}"
    )
    if report.scorer and args.set == "dev":
        print(
            "(the scorer was trained on these turns: its figures here are training-set figures; "
            "train.py prints the cross-validated ones)"
        )
    for p in report.parts:
        if not any(t.part == p.part for t in devs[p.part].turns):
            continue  # a set with no turns of this corpus
        print(f"\n{describe(devs[p.part], p.part)}, {p.borderline} borderline")
        print("  end to end (prefilter + offline stage 2):")
        print(f"    precision: kept that are spec       {p.precision.fmt()}")
        print(f"    ... borderline counted right         {p.precision_spec_borderline.fmt()}")
        print(f"    recall: spec turns kept              {p.recall.fmt()}")
        print(f"    kept naming an attribute             {p.named.fmt()}")
        print(f"    kept with a plan value               {p.valued.fmt()}")
        print("  stage 1 (prefilter):")
        print(f"    turns flagged                        {p.flagged.fmt()}")
        print(f"    recall, spec                         {p.recall_spec.fmt()}")
        print(f"    ... spec + borderline                {p.recall_spec_borderline.fmt()}")
        print(f"    precision, spec among flagged        {p.prefilter_precision.fmt()}")
        print("  stage 2 (offline rules) on what stage 1 passes:")
        print(f"    keeps, spec                          {p.stage2_keep_spec.fmt()}")
        print(f"    ... borderline                       {p.stage2_keep_borderline.fmt()}")
        print(f"    ... none (should reject)             {p.stage2_keep_none.fmt()}")
        if args.show_misses:
            print("  missed by stage 1: " + (", ".join(p.missed) or "-"))
            print("  dropped by stage 2: " + ("; ".join(p.dropped) or "-"))
            print("  none turns kept: " + ("; ".join(p.kept_wrong) or "-"))
    print(
        f"\n{args.longmemeval.name}: stage 1 passes {oracle.fmt()} of user turns (sessions deduplicated)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
