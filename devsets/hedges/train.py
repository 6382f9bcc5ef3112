"""Train the offline miner's stage-2 scorer on the dev turns only, and choose its threshold by
cross-validation over whole conversations.

Run: .venv/bin/python devsets/hedges/train.py [--version N] [--write] [--C 1.0]

Training data: every prefilter hit (``cues.vN`` as packaged) among the labelled dev turns, this
folder's files and ``heldout/`` (whose misses were read while v2 was tuned, so it is dev data now);
``heldout2/`` is never read. Label: ``spec`` is 1, ``borderline`` and ``none`` are 0 (precision
counts a kept borderline turn as wrong). Model: scikit-learn's LogisticRegression (L2, balanced
class weights) over the binary features of ``agentmemgate.corpora.scorer.features``.

Cross-validation: GroupKFold over conversations (each LoCoMo conversation, each LongMemEval
instance), so no conversation is scored by a model that saw it. The threshold is the one whose
out-of-fold predictions give the highest F1 of the miner end to end on the dev turns of both
corpora pooled (recall over every ``spec`` turn, the ones the prefilter missed included). The
cross-validated figures at that threshold are printed (k/n, 95% Wilson intervals) and, with
``--write``, stored in ``agentmemgate/corpora/scorer.vN.json`` with the weights of the model fitted
on all the dev hits.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from agentmemgate.atomic import write_text_atomic
from agentmemgate.corpora.devset import load_devset
from agentmemgate.corpora.extract import RuleExtractor
from agentmemgate.corpora.home import require_file
from agentmemgate.corpora.prefilter import load_lexicon, scan_conversation
from agentmemgate.corpora.scorer import SCORER_DIR, features
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson

HERE = Path(__file__).parent
DEV_FOLDERS = (HERE, HERE / "heldout")  # never heldout2
FOLDS = 6
MIN_HITS = 1
PRUNE = 0.02  # weights smaller than this are dropped, in cross-validation and in the file
THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.025), 3)
# Words that name no object: a kept plan's value made only of its verb and these is not given
# ("head out", "pass", "try it"); stored in the scorer file, read by stage 2.
EMPTY_WORDS = sorted(
    """it that this them those these one some something anything things stuff out up off over
    back in on to for with at by from about into around away down a an the my our your more much
    lot bit little again too now soon later today there here way ways time times all go shot try
    look sure ready myself ourselves other others new own just really even also definitely
    probably maybe someday eventually day future next people everyone else what we can i you me
    nice good great better best and or but so if when then do doing done get getting be being
    keep going see more most well thing""".split()
)


def dev_hits(
    locomo: Path, longmemeval: Path, lexicon, folders=None, rules=None
) -> tuple[list[dict], dict[str, int]]:
    """Every prefilter hit among the labelled turns of ``folders`` (features, label, group), and
    the number of ``spec`` turns per corpus (the recall denominators, misses included). A hit only
    the lexicon's turn model passed is left out: the offline stage 2 rejects it before any scorer
    (``no plan cue``). With ``rules`` (a ``RuleExtractor``), the rules' verdict is a feature."""
    hits, spec = [], {"locomo": 0, "longmemeval": 0}
    if folders is None:
        folders = [(f, ("locomo", "longmemeval")) for f in DEV_FOLDERS]
    for folder, parts in folders:
        dev = load_devset(folder, locomo, longmemeval)
        labels = {(t.part, t.conversation_id, t.ref): t.label for t in dev.turns}
        for t in dev.turns:
            spec[t.part] += t.label == "spec" and t.part in parts
        for part in parts:
            for conv in dev.conversations[part]:
                for cand in scan_conversation(conv, lexicon).candidates:
                    label = labels.get((part, conv.conversation_id, cand.source_ref))
                    if label is None:  # a turn outside the labelled sessions
                        continue
                    if cand.model_only:
                        continue
                    verdict = rules._rules(cand) if rules is not None else None
                    hits.append(
                        {
                            "part": part,
                            "group": f"{part}:{conv.conversation_id}",
                            "label": label,
                            "x": dict.fromkeys(features(cand, verdict), 1),
                        }
                    )
    return hits, spec


def fit(x: list[dict], y: np.ndarray, c: float) -> tuple[DictVectorizer, LogisticRegression]:
    """A model over the features seen in at least ``MIN_HITS`` training hits (the rest, mostly
    word pairs seen once, carry a name or a topic, not a way of stating a plan)."""
    counts: dict[str, int] = {}
    for row in x:
        for f in row:
            counts[f] = counts.get(f, 0) + 1
    x = [{f: v for f, v in row.items() if counts[f] >= MIN_HITS} for row in x]
    vec = DictVectorizer()
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit(vec.fit_transform(x), y)
    model.coef_[np.abs(model.coef_) < PRUNE] = 0.0  # what is shipped is what is measured
    return vec, model


def fitted_weights(x: list[dict], y: np.ndarray, c: float) -> tuple[dict[str, float], float]:
    """What a model file stores: ``fit`` on every row, its non-zero weights by feature name
    (rounded to 4 places) and its intercept (to 5). ``train_turns.py`` uses it too."""
    vec, model = fit(x, y, c)
    weights = {
        name: round(float(w), 4)
        for name, w in sorted(zip(vec.get_feature_names_out(), model.coef_[0]))
        if w != 0.0
    }
    return weights, round(float(model.intercept_[0]), 5)


def out_of_fold(
    x: list[dict], y: np.ndarray, groups: list[str], c: float, folds: int
) -> np.ndarray:
    """Out-of-fold probabilities: each row scored by a model (``fit``) that never saw its group
    (its conversation). ``train_turns.py`` uses it too."""
    oof = np.zeros(len(x))
    for train, test in GroupKFold(n_splits=folds).split(x, y, groups):
        vec, model = fit([x[i] for i in train], y[train], c)
        oof[test] = model.predict_proba(vec.transform([x[i] for i in test]))[:, 1]
    return oof


def cross_validate(hits: list[dict], c: float) -> np.ndarray:
    """Out-of-fold probabilities: each hit scored by a model that never saw its conversation."""
    y = np.array([h["label"] == "spec" for h in hits], dtype=int)
    return out_of_fold([h["x"] for h in hits], y, [h["group"] for h in hits], c, FOLDS)


def end_to_end(hits, oof, spec, threshold, part=None) -> tuple[int, int, int]:
    """(spec kept, kept, spec turns) of the miner end to end at ``threshold``."""
    tp = kept = 0
    for h, p in zip(hits, oof):
        if (part is None or h["part"] == part) and p >= threshold:
            kept += 1
            tp += h["label"] == "spec"
    total = sum(spec.values()) if part is None else spec[part]
    return tp, kept, total


def choose_threshold(hits, oof, spec) -> float:
    def f1(t):
        tp, kept, total = end_to_end(hits, oof, spec, t)
        return 2 * tp / (kept + total) if kept + total else 0.0

    return float(max(THRESHOLDS, key=lambda t: (f1(t), -t)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", type=int, default=1, help="write scorer.vN.json (default 1)")
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength (default 1.0)")
    ap.add_argument("--min-hits", type=int, default=MIN_HITS, help="keep features seen this often")
    ap.add_argument("--prune", type=float, default=PRUNE, help="drop weights below this")
    ap.add_argument("--write", action="store_true", help="store the model and its CV figures")
    ap.add_argument(
        "--sets",
        default="dev,heldout",
        help="the labelled sets it learns from, comma-separated, each SET or SET:CORPUS (that "
        "corpus's turns only); default dev,heldout (scorer.v1); scorer.v2 learnt from "
        "dev,heldout,heldout2:locomo,heldout3:locomo. heldout4 is never one of them",
    )
    ap.add_argument(
        "--reads-rules",
        action="store_true",
        help="the stage-2 rules' verdict is a feature (scorer.v2)",
    )
    ap.add_argument("--locomo", type=Path, default=None)
    ap.add_argument("--longmemeval", type=Path, default=None)
    args = ap.parse_args()
    if args.write and (SCORER_DIR / f"scorer.v{args.version}.json").exists():
        # a released file is never rewritten: its sha256 is in provenance (and, for a turn
        # model, in the lexicon that names it)
        print(f"Error: scorer.v{args.version}.json exists; write a new --version", file=sys.stderr)
        return 1
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if not sets:
        print("Error: --sets names no labelled set", file=sys.stderr)
        return 1
    tuned: dict[str, list[str]] = {"locomo": [], "longmemeval": []}
    folders = []
    for item in sets:
        name, _, corpus = item.partition(":")
        parts = (corpus,) if corpus else ("locomo", "longmemeval")
        if name == "heldout4":
            print(
                "Error: --sets: heldout4 measures the scorers; it is never learnt from",
                file=sys.stderr,
            )
            return 1
        if not set(parts) <= set(tuned):
            print(f"Error: --sets: {item!r}: the corpus is locomo or longmemeval", file=sys.stderr)
            return 1
        folders.append((HERE if name == "dev" else HERE / name, parts))
        for part in parts:
            tuned[part].append(name)
    globals()["MIN_HITS"] = args.min_hits
    globals()["PRUNE"] = args.prune
    try:
        locomo = args.locomo or require_file("locomo", "locomo10.json", checkout=True)
        longmemeval = args.longmemeval or require_file(
            "longmemeval", "longmemeval_oracle_subset.json", checkout=True
        )
        lexicon = load_lexicon()
        rules = RuleExtractor() if args.reads_rules else None
        hits, spec = dev_hits(locomo, longmemeval, lexicon, folders, rules)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    oof = cross_validate(hits, args.C)
    threshold = choose_threshold(hits, oof, spec)
    measured = {}
    print(f"dev hits {len(hits)}; {FOLDS}-fold CV over conversations; threshold {threshold}")
    for part in ("locomo", "longmemeval"):
        tp, kept, total = end_to_end(hits, oof, spec, threshold, part)
        measured[part] = {"precision": {"k": tp, "n": kept}, "recall": {"k": tp, "n": total}}
        print(
            f"  {part}: precision {wilson(tp, kept).fmt()}, recall {wilson(tp, total).fmt()} "
            "(cross-validated, end to end)"
        )
    if not args.write:
        return 0
    y = np.array([h["label"] == "spec" for h in hits], dtype=int)
    weights, intercept = fitted_weights([h["x"] for h in hits], y, args.C)
    data = {
        "version": args.version,
        "what": "offline stage-2 scorer: logistic regression over the words of a prefilter hit, "
        "its cue sentences and its cues (agentmemgate.corpora.scorer.features); keeps a hit "
        "whose probability is at least the threshold",
        "trained_on": f"prefilter cue hits among the labelled turns of devsets/hedges sets "
        f"{', '.join(sets)}; spec 1, borderline and none 0; {len(hits)} hits, {int(y.sum())} spec",
        "reads_rules": args.reads_rules,
        **({"rules": f"{rules.rules.ref}:{rules.rules.sha256[:12]}"} if rules is not None else {}),
        "tuned_on_sets": tuned,
        "lexicon": f"{lexicon.ref}:{lexicon.sha256[:12]}",
        "model": f"LogisticRegression(C={args.C}, class_weight='balanced'), scikit-learn",
        "threshold_rule": f"highest end-to-end F1 of {FOLDS}-fold out-of-fold predictions, "
        "folds grouped by conversation, both corpora pooled",
        "threshold": threshold,
        "measured": {"how": f"{FOLDS}-fold cross-validation over dev conversations", **measured},
        "empty_words": EMPTY_WORDS,
        "names": tomllib.loads((HERE / "names.toml").read_text(encoding="utf-8"))["names"],
        "intercept": intercept,
    }
    out = SCORER_DIR / f"scorer.v{args.version}.json"
    head = json.dumps({k: v for k, v in data.items() if k != "weights"}, indent=1)
    rows = ",\n".join(f"  {json.dumps(k, ensure_ascii=False)}: {w}" for k, w in weights.items())
    write_text_atomic(out, head[:-2] + ',\n "weights": {\n' + rows + "\n }\n}\n")
    print(f"wrote {out} ({len(weights)} weights)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
