"""Measure the store readers on the labelled store snapshots beside this script.

Run: .venv/bin/python devsets/stores/measure.py [--part dev|heldout|all] [--version N]
     [--show-errors] [--write]
(--write records the held-out figures in agentmemgate/evaluate/store_accuracy.json, which reports
quote; the labelling guideline and how the snapshots were made are in README.md beside this script).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from agentmemgate.evaluate.store_reading import ACCURACY, load_cues, reader_for
from agentmemgate.stats import wilson

HERE = Path(__file__).parent
FILES = {"dev": HERE / "dev.jsonl", "heldout": HERE / "heldout.jsonl"}


def snapshots(part: str) -> list[dict]:
    parts = list(FILES) if part == "all" else [part]
    return [json.loads(line) for p in parts for line in FILES[p].read_text().splitlines() if line]


def measure(rows: list[dict], version: int | None = None) -> tuple[dict, list[str]]:
    """product -> figures, and one line per snapshot read wrong."""
    figs: dict[str, dict] = {}
    errors = []
    for r in rows:
        reader = reader_for(r["product"], version)
        values = [r["values"]["initial"], r["values"]["plan"]]
        got = reader.read(r["records"], values, dt.date.fromisoformat(r["at"]))
        roles = sorted({"initial" if v == values[0] else "plan" for v in got.held})
        want = sorted(x for x in r["holds"] if x != "other")  # a third value is not read
        f = figs.setdefault(
            r["product"],
            {"n": 0, "exact": 0, "plan_held": 0, "missed_plan": 0, "plan_not_held": 0,
             "false_plan": 0, "other_labelled": 0},
        )  # fmt: skip
        f["n"] += 1
        f["exact"] += roles == sorted(r["holds"])
        f["other_labelled"] += "other" in r["holds"]
        if "plan" in want:
            f["plan_held"] += 1
            f["missed_plan"] += "plan" not in roles
        else:
            f["plan_not_held"] += 1
            f["false_plan"] += "plan" in roles
        if roles != sorted(r["holds"]):
            errors.append(f"{r['id']}: labelled {r['holds']}, read {roles}: {got.records}")
    return figs, errors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="all", choices=["dev", "heldout", "all"])
    ap.add_argument("--version", type=int, default=None)
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    ref = load_cues(a.version).ref
    for part in ["dev", "heldout"] if a.part == "all" else [a.part]:
        figs, errors = measure(snapshots(part), a.version)
        print(f"{ref} on {part}:")
        for product, f in sorted(figs.items()):
            w = wilson(f["exact"], f["n"])
            print(
                f"  {product:<9} exact {f['exact']}/{f['n']} {100 * w.value:.1f}% "
                f"[{100 * w.ci_low:.1f}, {100 * w.ci_high:.1f}]; plan read as held where it is "
                f"not {f['false_plan']}/{f['plan_not_held']}; plan missed "
                f"{f['missed_plan']}/{f['plan_held']}; third values labelled "
                f"{f['other_labelled']} (not read)"
            )
        if a.show_errors:
            print("\n".join(f"    {e}" for e in errors))
        if a.write and part == "heldout":
            data = json.loads(ACCURACY.read_text()) if ACCURACY.exists() else {}
            data[ref] = figs
            ACCURACY.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            print(f"wrote {ACCURACY}")


if __name__ == "__main__":
    main()
