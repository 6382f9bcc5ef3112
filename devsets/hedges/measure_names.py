"""How well does the offline miner name what it keeps? Figures from names judged by a reader.

Run: .venv/bin/python devsets/hedges/measure_names.py [--check]

Each set compares two rules versions on hedges the offline miner (``cues.v3``) keeps in LongMemEval
``_s`` distractor sessions (sessions of the knowledge-update ``_s`` file that are in no oracle
instance, so no rule was written from them): ``names_s/`` rules v3 against v4 (60 kept hedges drawn
at random from all 2,944, 40 from the 503 the versions name differently), ``names_s2/`` v4 against
v5 (60 more at random, 30 from those v4 and v5 name differently), ``names_s3/`` v5 against v6 (60
more at random, the 16 others whose values v5 and v6 read differently). In each, ``readings.json`` has
each version's attribute and value; ``items.jsonl`` is what the reader saw (the turn, the kept
sentence, and the distinct readings in random order, with no version named); ``judged.tsv`` is the
reader's verdict: a plan of the speaker's own, and for each reading whether the attribute is a
fitting profile field and the value the plan's object.

Printed per sample and rules version: kept hedges naming an attribute, and among the plans, those
named, those named fittingly, and those whose value is the plan's object, each as k/n with its 95%
Wilson interval. ``--check`` mines the ``_s`` file again and confirms each version still reads
every item as ``readings.json`` says, and prints the share named over the whole pool.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

from agentmemgate.corpora import RuleExtractor, scan_conversation
from agentmemgate.corpora._rules import load_rules
from agentmemgate.corpora.home import corpus_file, require_file
from agentmemgate.corpora.loaders import iter_conversations
from agentmemgate.corpora.prefilter import load_lexicon
from agentmemgate.errors import AmgError
from agentmemgate.stats import wilson

HERE = Path(__file__).parent
S_FILE = "longmemeval_s_knowledge_update.json"  # the 78 knowledge-update questions of _s
SETS = ("names_s", "names_s2", "names_s3")  # rules v3 against v4, v4 against v5, v5 against v6


def load(folder: Path) -> tuple[dict, dict, dict]:
    items = {}
    for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items[item["id"]] = item
    readings = json.loads((folder / "readings.json").read_text(encoding="utf-8"))
    judged: dict[str, dict[int, dict]] = {}
    with open(folder / "judged.tsv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            judged.setdefault(row["id"], {})[int(row["reading"])] = row
    return items, readings, judged


def verdict(item: dict, judged: dict[int, dict], reading: list) -> dict:
    """The reader's row for the reading a version gave (items show each distinct one once)."""
    attribute, value = reading[0], reading[1] or ""
    number = next(
        r["reading"] for r in item["readings"] if (r["attribute"], r["value"]) == (attribute, value)
    )
    return judged[number]


def versions(readings: dict) -> list[str]:
    """The rules versions a set compares (the keys of its readings, "v3", "v4", ...)."""
    return sorted(k for k in next(iter(readings.values())) if k.startswith("v"))


def figures(items: dict, readings: dict, judged: dict) -> list[str]:
    lines = []
    for sample in ("random", "differing"):
        ids = sorted(i for i, r in readings.items() if r["sample"] == sample)
        plans = [i for i in ids if judged[i][1]["plan"] == "yes"]
        lines.append(
            f"{sample}: {len(ids)} kept hedges, plans {wilson(len(plans), len(ids)).fmt()}"
        )
        for v in versions(readings):

            def count(ids, test, v=v):
                return sum(test(i, readings[i][v]) for i in ids)

            def named(i, r):
                return r[0] != "unspecified"

            def fits(i, r):
                return verdict(items[i], judged[i], r)["attribute_ok"] == "yes"

            def valued(i, r):
                return verdict(items[i], judged[i], r)["value_ok"] == "yes"

            lines.append(
                f"  rules {v}: kept naming an attribute {wilson(count(ids, named), len(ids)).fmt()}"
            )
            n = len(plans)
            lines.append(
                f"    among plans: named {wilson(count(plans, named), n).fmt()}, attribute fits "
                f"{wilson(count(plans, fits), n).fmt()}, value is the object "
                f"{wilson(count(plans, valued), n).fmt()}"
            )
    return lines


def check(readings: dict, s_file: Path, oracle: Path) -> list[str]:
    """Mine the ``_s`` distractor sessions with each version and compare with ``readings``."""
    in_oracle = {s for x in json.loads(oracle.read_text()) for s in x["haystack_session_ids"]}
    extractors = {v: RuleExtractor(load_rules(int(v[1:]))) for v in versions(readings)}
    wanted = {r["ref"]: i for i, r in readings.items()}
    seen, kept, named, wrong = set(), 0, dict.fromkeys(extractors, 0), []
    lexicon = load_lexicon(3)
    for conv in iter_conversations(s_file, "longmemeval"):
        for cand in scan_conversation(conv, lexicon).candidates:
            _, session, turn = cand.source_ref.split("/")
            if session in in_oracle or (session, turn) in seen:
                continue
            seen.add((session, turn))
            ext = {v: x.extract(cand) for v, x in extractors.items()}
            if len({e.kept for e in ext.values()}) > 1:
                wrong.append(f"{cand.source_ref} kept by some versions only")
            if not next(iter(ext.values())).kept:
                continue
            kept += 1
            item = wanted.pop(cand.source_ref, None)
            for v in extractors:
                named[v] += ext[v].attribute != "unspecified"
                if item and [ext[v].attribute, ext[v].plan_value] != readings[item][v]:
                    wrong.append(f"{item} {v}")
    wrong += [f"{item} no longer kept" for item in wanted.values()]
    lines = [f"pool: {len(seen)} candidates, {kept} kept"]
    lines += [
        f"  rules {v}: kept naming an attribute {wilson(named[v], kept).fmt()}" for v in named
    ]
    lines.append("readings.json matches the rules" if not wrong else f"differ: {', '.join(wrong)}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="mine the _s file again and compare")
    ap.add_argument("--longmemeval-s", help="the _s file (default: the corpora folder's)")
    args = ap.parse_args()
    try:
        if args.check:
            s_file = Path(args.longmemeval_s or corpus_file("longmemeval", S_FILE, checkout=True))
            if not s_file.is_file():
                raise AmgError(
                    f"no {s_file.name} in {s_file.parent}: pass --longmemeval-s with the "
                    "knowledge-update questions of LongMemEval's _s file (the file the sets "
                    "were drawn from)"
                )
            oracle = require_file("longmemeval", "longmemeval_oracle.json", checkout=True)
        for name in SETS:
            items, readings, judged = load(HERE / name)
            print(f"{name} (rules {' against '.join(versions(readings))}):")
            print("\n".join(figures(items, readings, judged)))
            if args.check:
                print("\n".join(check(readings, s_file, oracle)))
    except BrokenPipeError:  # the reader stopped reading (``| head``): nothing is wrong
        sys.stdout = open(os.devnull, "w")  # so the flush at exit cannot fail again
    except (AmgError, OSError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
