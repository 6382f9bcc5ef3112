"""Diversity of the offline build: distinct-turn shares, the most repeated sentences, Q/A relevance.

Run: .venv/bin/python benchmarks/offline_diversity.py            (renders all 386 arcs, seed 0)
     .venv/bin/python benchmarks/offline_diversity.py --exports DIR   (any export: OUT/<split>/data.jsonl)

Goals (over a full default build): at least 85% of assistant turns distinct, at least
90% of user small-talk turns distinct, no assistant sentence more than 8 times in the dataset.
BEFORE holds the figures of the renderer before its dealt data banks (seed 0, all 386 arcs),
measured with this script's ``--exports`` on that version's ``make build`` output.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agentmemgate.design import paper_design
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.generate.importer import read_arcs
from agentmemgate.validate.diversity import (
    ASSISTANT_DISTINCT_GOAL,
    SMALL_TALK_DISTINCT_GOAL,
    Diversity,
    measure,
)
from agentmemgate.validate.judging import judged_together

BEFORE = {
    "assistant_distinct": (480, 1951),
    "small_talk_distinct": (335, 827),
    "max_sentence": ("Happy to help with that.", 59),
    "sentences_over_limit": 143,
    "qa_no_overlap": (843, 1221),
}

SPLITS = paper_design().resolve_splits("paper")  # the 386 arcs the goals were set on


def _render(seed: int):
    renderer = get_renderer("offline")
    return [renderer.render(s) for split in SPLITS for s in plan_split(split, seed)]


def _load(folder: Path):
    arcs = []
    for split in SPLITS:
        path = folder / split / "data.jsonl"
        if path.exists():
            arcs += [a for _, a, _ in read_arcs(path)[0]]
    if not arcs:
        sys.exit(f"no OUT/<split>/data.jsonl under {folder}")
    return arcs


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} = {100 * k / n:.1f}%" if n else "n/a"


def report(d: Diversity, title: str) -> None:
    print(f"== {title}: {d.arcs} arcs")
    a, s = d.assistant_distinct, d.small_talk_distinct
    print(
        f"assistant turns distinct:   {a.fmt()}  goal >= {ASSISTANT_DISTINCT_GOAL:.0%}"
        f"  {'OK' if a.value and a.value >= ASSISTANT_DISTINCT_GOAL else 'MISSED'}"
    )
    print(
        f"user small talk distinct:   {s.fmt()}  goal >= {SMALL_TALK_DISTINCT_GOAL:.0%}"
        f"  {'OK' if s.value and s.value >= SMALL_TALK_DISTINCT_GOAL else 'MISSED'}"
    )
    print(
        f"assistant sentences over {d.sentence_limit} uses: {d.sentences_over_limit}"
        f"  {'OK' if d.sentences_over_limit == 0 else 'MISSED'}"
    )
    print("most repeated assistant sentences:")
    for r in d.top_sentences:
        print(f"  {r.count:4d}  {r.text}")
    if d.top_turns:
        print("most repeated assistant turns:")
        for r in d.top_turns[:5]:
            print(f"  {r.count:4d}  {r.text[:110]}")
    print(
        f"replies to a question: {d.qa_pairs}; shared content words with the question: "
        + ", ".join(f"{k}: {v}" for k, v in d.qa_overlap_histogram.items())
        + f"; none: {d.qa_no_overlap.fmt()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exports", type=Path, help="measure OUT/<split>/data.jsonl under this folder")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    arcs = _load(args.exports) if args.exports else _render(args.seed)
    took = time.perf_counter() - t0
    # sentence repeats counted within each set the repetition check judges together, as the card
    design = paper_design()
    sets = judged_together(design, [(a, "") for a in arcs])
    after = measure(arcs, groups=[{a.spec.split for a, _ in group} for group in sets])
    print("== before (the renderer before its dealt data banks, seed 0, 386 arcs)")
    print(f"assistant turns distinct:   {_pct(*BEFORE['assistant_distinct'])}")
    print(f"user small talk distinct:   {_pct(*BEFORE['small_talk_distinct'])}")
    print(
        f"assistant sentences over 8 uses: {BEFORE['sentences_over_limit']}; most repeated: "
        f"\"{BEFORE['max_sentence'][0]}\" ({BEFORE['max_sentence'][1]} times)"
    )
    print(f"replies sharing no content word with their question: {_pct(*BEFORE['qa_no_overlap'])}")
    print()
    report(
        after,
        f"now ({'read from ' + str(args.exports) if args.exports else f'rendered, seed {args.seed}'}, "
        f"{took:.2f} s)",
    )
    for split in SPLITS:
        part = [a for a in arcs if a.spec.split == split]
        if part:
            d = measure(part, top=0)
            print(
                f"  {split:10s} assistant distinct {d.assistant_distinct.fmt()}, "
                f"small talk distinct {d.small_talk_distinct.fmt()}"
            )


if __name__ == "__main__":
    main()
