"""Measure the offline recovery judge's reading of a plan-wording factor on statements it was not
written on: ``hedge_statements.tsv`` (one user message per row, labelled with its level).

Run: .venv/bin/python devsets/levels/measure.py [--design paper|DIR] [--statements FILE] [--json]
A design with a plan-wording level the file has no rows for is refused: pass ``--statements`` with
rows for it (the same columns), written blind to its recovery rules.
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


class Uncovered(AmgError):
    """The statements have no row for a level of the design's plan-wording factor."""


def measure(
    design_ref: str = "paper", rows: list[dict] | None = None, extra: Path | None = None
) -> dict:
    """Recovery of the design's plan-wording levels on the held-out statements (and the rows of
    ``extra``, a file of the user's for levels of their own). Every level of the factor is an
    option, as in blind recovery; a level with no statement is refused, since the judge would
    still be offered it and the figure would mean something else."""
    design = load_design(design_ref)
    factor = design.by_role("plan_wording")
    rows = load() if rows is None else rows
    if extra is not None:
        if not extra.is_file():
            raise AmgError(f"No statements file at {str(extra)!r}")
        more = load(extra)
        bad = [i + 2 for i, r in enumerate(more) if not (r.get("level") and r.get("text"))]
        if bad or not more:
            raise AmgError(
                f"{extra}: a tab-separated file with columns level, domain, text "
                f"({'no rows' if not more else f'line {bad[0]} has no level or text'})"
            )
        rows = rows + more
    levels = list(factor.level_names)
    missing = [lv for lv in levels if not any(r["level"] == lv for r in rows)]
    if missing:
        raise Uncovered(
            f"No statements for level(s) {', '.join(missing)} of factor {factor.name!r} in design "
            f"{design.name!r}: pass --statements FILE (tab-separated: level, domain, text) with "
            "rows written for them, blind to their recovery rules"
        )
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
        "source": SET.name + (f" + {extra.name}" if extra is not None else ""),
        "levels": levels,
        "per_level": {lv: p.model_dump() for lv, p in per.items()},
        "overall": overall.model_dump(),
        "guesses": guesses,
        "confusion": {i: {j: confusion[(i, j)] for j in levels} for i in levels},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="paper")
    ap.add_argument(
        "--statements",
        type=Path,
        help="more statements (same columns) for levels of your own; added to the held-out set",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        r = measure(args.design, extra=args.statements)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"design {r['design']}, factor {r['factor']}: {r['source']}")
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
