"""Measure the offline recovery judge's reading of a plan-wording factor on statements it was not
written on: ``hedge_statements.tsv`` (one user message per row, labelled with its level).

Run: .venv/bin/python devsets/levels/measure.py [--design paper|DIR] [--json]
Each statement is judged as a one-session conversation, blind, with the design's plan-wording
levels as options (those the file has rows for) in a seeded order per statement; where no cue
decides, the judge takes the first option and says it guessed (counted apart). Printed: recovery per level and overall, with
n and 95% Wilson intervals, and the confusion.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from collections import Counter
from pathlib import Path

from agentmemgate.design import load_design
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson
from agentmemgate.validate.judges import LevelOption, RecoveryQuestion, option_seed
from agentmemgate.validate.judges.heuristic import HeuristicJudge
from agentmemgate.validate.judges.questions import ChatSession, ChatTurn

HERE = Path(__file__).parent
SET = HERE / "hedge_statements.tsv"


def load(path: Path = SET) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def measure(design_ref: str = "paper", rows: list[dict] | None = None) -> dict:
    design = load_design(design_ref)
    factor = design.by_role("plan_wording")
    rows = load() if rows is None else rows
    levels = [lv for lv in factor.level_names if any(r["level"] == lv for r in rows)]
    rows = [r for r in rows if r["level"] in levels]
    judge = HeuristicJudge(design=design)
    options = tuple(
        LevelOption(level=lv, definition=design.definition(factor.name, lv)) for lv in levels
    )
    confusion: Counter = Counter()
    guesses = 0
    for i, r in enumerate(rows):
        shuffled = list(options)  # in a seeded order per statement, as blind recovery shows them
        random.Random(option_seed(f"statement-{i}")).shuffle(shuffled)
        q = RecoveryQuestion(
            sessions=(
                ChatSession(
                    date="2024-03-04",
                    turns=(
                        ChatTurn(role="user", text=r["text"]),
                        ChatTurn(role="assistant", text="I see."),
                    ),
                ),
            ),
            options=tuple(shuffled),
        )
        verdict = judge.ask(q)
        guesses += "is a guess" in verdict.rationale
        confusion[(r["level"], verdict.level)] += 1
    per = {
        lv: wilson(confusion[(lv, lv)], sum(n for (i, _), n in confusion.items() if i == lv))
        for lv in levels
    }
    overall = wilson(sum(confusion[(lv, lv)] for lv in levels), len(rows))
    return {
        "design": design.name,
        "factor": factor.name,
        "levels": levels,
        "per_level": {lv: p.model_dump() for lv, p in per.items()},
        "overall": overall.model_dump(),
        "guesses": guesses,
        "confusion": {i: {j: confusion[(i, j)] for j in levels} for i in levels},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="paper")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        r = measure(args.design)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"design {r['design']}, factor {r['factor']}: {SET.name}")
    for lv in r["levels"]:
        p = r["per_level"][lv]
        print(
            f"  {lv:<22} {p['k']}/{p['n']} = {100 * p['value']:.1f}% [{100 * p['ci_low']:.1f}, {100 * p['ci_high']:.1f}]"
        )
    o = r["overall"]
    print(
        f"  {'all':<22} {o['k']}/{o['n']} = {100 * o['value']:.1f}% [{100 * o['ci_low']:.1f}, {100 * o['ci_high']:.1f}]"
    )
    print(f"  no cue decided (a recorded guess among the options): {r['guesses']} of {o['n']}")
    print("confusion (rows: labelled level; columns: recovered):")
    print("  " + " ".join(f"{lv[:10]:>10}" for lv in r["levels"]))
    for i in r["levels"]:
        print("  " + " ".join(f"{r['confusion'][i][j]:>10}" for j in r["levels"]) + f"  {i}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
