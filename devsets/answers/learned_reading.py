"""Would a learned reading of answers catch the plans the offline rules read as asserted?

Run: .venv/bin/python devsets/answers/learned_reading.py [--C 1.0]

An experiment, not a judge the toolkit ships. For every labelled value an answer names (its first
word of four letters or more appears in the answer), a logistic regression (scikit-learn) over
the answer's words and word pairs and the words just before and after the value predicts whether
the label asserts it. It is trained leaving out one labelled part at a time (each part was written
by another writer), so every value is scored by a model that never saw its writer. Two readings:

- blind to roles, as the offline judge must be (it is given the values, not which one is the
  plan): every named value is a sample;
- told which value is the plan (what a blind judge may not know): only the plan values.

For each, the leave-one-part-out AUROC, and what the model would do as a veto on the offline
rules version 9 (the newest when it was run; held-out 12, written later, is left out): among the values the rules read as asserted, how many false assertions a veto
below each threshold removes, and how many true ones it removes with them (k of n).
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from agentmemgate.answer_judge import get_answer_judge
from agentmemgate.answer_judge.devset import ANSWER_FILES, HELDOUT11, load_answer_set, measure
from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.llm import ModelRef

_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")
_WORD = re.compile(r"[a-z0-9']+")
THRESHOLDS = (0.1, 0.2, 0.3, 0.5)


def features(answer: str, value: str) -> dict[str, int]:
    """Words and word pairs of the answer; ``l:``/``r:`` the words just before and after the
    value's first long word, where the answer has it."""
    a = answer.lower()
    toks = _TOKEN.findall(a)
    out = dict.fromkeys(
        [f"w:{t}" for t in toks] + [f"b:{x}_{y}" for x, y in zip(toks, toks[1:])], 1
    )
    key = [w for w in _WORD.findall(value.lower()) if len(w) > 3][:1]
    at = a.find(key[0]) if key else -1
    if at < 0:
        out["nofind"] = 1
        return out
    left, right = _TOKEN.findall(a[max(0, at - 80) : at])[-10:], _TOKEN.findall(a[at : at + 140])
    out.update(dict.fromkeys([f"l:{t}" for t in left] + [f"r:{t}" for t in right[1:9]], 1))
    return out


def named(answer: str, value: str | None) -> bool:
    key = [w for w in _WORD.findall((value or "").lower()) if len(w) > 3][:1]
    return bool(key) and key[0] in answer.lower()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength (default 1.0)")
    args = ap.parse_args()
    # the parts and rules its documented figures were made with: held-out 12 came later
    answers = load_answer_set(ANSWER_FILES[: ANSWER_FILES.index(HELDOUT11) + 1])
    ref = ModelRef.parse("offline:answer_cues.v9", None, {})
    parts = sorted({it.part for it in answers.items})
    report = measure(answers, get_answer_judge(ref), get_value_judge(ref), parts=parts)
    items = {it.id: it for it in answers.items}
    print(
        f"offline rules {report.rubric}; {len(answers.items)} labelled answers in {len(parts)} parts"
    )
    for reading, roles in (("blind to roles", ("initial", "plan")), ("told the plan", ("plan",))):
        rows = []
        for r in report.items:
            it = items[r.id]
            for role in roles:
                value = getattr(it.values, role)
                if named(it.answer, value):
                    rows.append(
                        {
                            "x": features(it.answer, value),
                            "y": int(role in r.expected),
                            "rules": int(r.judged is not None and role in r.judged),
                            "part": r.part,
                        }
                    )
        y = np.array([r["y"] for r in rows])
        rules = np.array([r["rules"] for r in rows])
        part = np.array([r["part"] for r in rows])
        score = np.zeros(len(rows))
        for p in parts:
            train = [i for i, r in enumerate(rows) if r["part"] != p]
            test = [i for i, r in enumerate(rows) if r["part"] == p]
            if not test:
                continue
            vec = DictVectorizer()
            model = LogisticRegression(C=args.C, class_weight="balanced", max_iter=5000)
            model.fit(vec.fit_transform([rows[i]["x"] for i in train]), y[train])
            score[test] = model.predict_proba(vec.transform([rows[i]["x"] for i in test]))[:, 1]
        print(f"\n{reading}: {len(rows)} named values, {int(y.sum())} asserted")
        print(f"  leave-one-part-out AUROC {roc_auc_score(y, score):.3f}")
        false, true = (rules == 1) & (y == 0), (rules == 1) & (y == 1)
        print(
            f"  the rules read {int(false.sum())} unasserted values as asserted, {int(true.sum())} rightly"
        )
        for t in THRESHOLDS:
            veto = score < t
            latest = part == "heldout11"
            print(
                f"  veto below {t:.1f}: removes {int((veto & false).sum())}/{int(false.sum())} false "
                f"and {int((veto & true).sum())}/{int(true.sum())} true assertions "
                f"(held-out 11: {int((veto & false & latest).sum())}/{int((false & latest).sum())} "
                f"false, {int((veto & true & latest).sum())}/{int((true & latest).sum())} true)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
