"""Measure the timeline consistency check (``structure.consistency``) on planted defects.

``planted.jsonl`` holds defects of each kind the check is meant to catch, and consistent edits it
must leave alone, written blind to its rules (see README.md). Each item is planted into arcs of a
build of a design (default: the paper's, offline, seed 0) whose outcome it applies to, ``--per``
arcs per item chosen by a seeded draw; the check is run on each edited arc. Printed: per kind,
the share of planted defects caught (and how many of those name a planted turn), the share of
consistent edits flagged, and the false alarms on the unedited build, each with n and a 95% Wilson
interval, for the held-out half of the items (even numbers) and the dev half (odd numbers).

Run: .venv/bin/python devsets/timeline/measure.py [--design paper|DIR] [--per 3] [--json]
     [--show dev|heldout]   (print the misses and false alarms of one half)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from agentmemgate.design import load_design, load_domains
from agentmemgate.errors import AmgError
from agentmemgate.generate import get_renderer, plan_split
from agentmemgate.schema import Arc, Turn, TurnRef
from agentmemgate.stats import wilson
from agentmemgate.text import WEEKDAYS
from agentmemgate.validate.consistency import consistency, rules_for

HERE = Path(__file__).parent
PLANTED = HERE / "planted.jsonl"
KINDS = (
    "date_not_introduced",
    "open_resolved",
    "premature_resolution",
    "abandoned_in_use",
    "confirmed_denied",
    "reply_contradicts",
)


def load(path: Path = PLANTED) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def half(item: dict) -> str:
    """Items numbered even are held out (never read while the rules were written); odd: dev."""
    return "heldout" if int(re.sub(r"\D", "", item["id"].split("-")[-1])) % 2 == 0 else "dev"


def build(design) -> list[Arc]:
    renderer = get_renderer("offline", design=design)
    return [
        renderer.render(s) for split in design.splits for s in plan_split(split, 0, design=design)
    ]


def _unsaid_date(arc: Arc, rng: random.Random) -> str:
    text = " ".join(t.text for s in arc.sessions for t in s.turns)
    last = arc.sessions[-1].date
    for _ in range(200):
        d = last + dt.timedelta(days=rng.randint(-40, 40))
        said = f"{d:%B} {d.day}"
        if said not in text and all(abs((d - s.date).days) > 1 for s in arc.sessions):
            return said
    raise RuntimeError(f"no unsaid date for {arc.id}")


def _unsaid_weekday(arc: Arc, rng: random.Random) -> str:
    text = " ".join(t.text for s in arc.sessions for t in s.turns).lower()
    free = [w for w in WEEKDAYS if w not in text]
    return rng.choice(free or list(WEEKDAYS)).title()


def _fill(template: str, arc: Arc, noun: str, rng: random.Random) -> str:
    out = template.replace("{plan}", arc.spec.plan_value).replace(
        "{initial}", arc.spec.initial_value
    )
    out = out.replace("{noun}", noun)
    if "{date}" in out:
        out = out.replace("{date}", _unsaid_date(arc, rng))
    if "{weekday}" in out:
        out = out.replace("{weekday}", _unsaid_weekday(arc, rng))
    return out


def _insert(arc: Arc, after: TurnRef, user: str, assistant: str) -> TurnRef:
    """A user turn and its reply inserted after ``after``'s exchange; later refs in that session
    move down by two."""
    s, at = after.session, after.turn + 2
    arc.sessions[s].turns[at:at] = [
        Turn(role="user", text=user),
        Turn(role="assistant", text=assistant),
    ]
    for name in ("initial_turn", "plan_turn", "outcome_turn", "pending_turn", "correction_turn"):
        ref = getattr(arc, name)
        if ref is not None and ref.session == s and ref.turn >= at:
            setattr(arc, name, TurnRef(session=s, turn=ref.turn + 2))
    return TurnRef(session=s, turn=at)


def _later(arc: Arc) -> TurnRef:
    return arc.pending_turn or arc.outcome_turn or arc.plan_turn


def plant(arc: Arc, item: dict, noun: str, rng: random.Random) -> list[TurnRef]:
    """Plant ``item`` into (a copy of) ``arc``; the planted turns."""
    user = _fill(item["user"], arc, noun, rng) if item["user"] else ""
    reply = _fill(item["assistant"], arc, noun, rng) if item["assistant"] else ""
    where = item["where"]
    if where in ("append_pending", "append_outcome"):
        ref = _later(arc)
        t = arc.turn(ref)
        t.text = f"{t.text} {user}"
        return [ref]
    if where == "exchange_pending_window":
        return [_insert(arc, arc.plan_turn, user, reply)]
    if where == "exchange_after_outcome":
        at = _insert(arc, _later(arc), user, reply)
        return [at, TurnRef(session=at.session, turn=at.turn + 1)]
    ref = arc.plan_turn if where == "reply_to_plan" else _later(arc)
    at = TurnRef(session=ref.session, turn=ref.turn + 1)
    arc.turn(at).text = reply
    return [at]


def _eligible(arc: Arc, item: dict, dated: set[str]) -> bool:
    sp = arc.spec
    if sp.outcome not in item["applies_to"]:
        return False
    if item["where"] == "exchange_pending_window" and not sp.pending_window:
        return False
    # A date defect needs an arc whose plan gave no day (in a scheduled plan it may be no defect).
    text = (item["user"] + item["assistant"]).lower()
    if item["kind"] == "date_not_introduced" or "{date}" in text or "{weekday}" in text:
        return arc.id not in dated
    return True


def _dated(arc: Arc) -> bool:
    from agentmemgate.validate.consistency import _introduced  # what the check reads as days

    plan = arc.turn(arc.plan_turn).text.lower()
    return bool(_introduced(plan, arc.sessions[arc.plan_turn.session].date)) or any(
        w in plan for w in ("deadline", "cut-off", "cutoff", "end of the month", "by the end")
    )


def _named(reason: str, refs: list[TurnRef]) -> bool:
    return any(f"session {r.session} turn {r.turn} " in reason for r in refs)


def measure(design_ref: str = "paper", per: int = 3, planted: Path = PLANTED) -> dict:
    design = load_design(design_ref)
    rules = rules_for(design)
    arcs = [a for a in build(design) if a.spec.outcome != "correction"]
    nouns = {name: d.noun for name, d in load_domains(design).items()}
    baseline = [(a.id, consistency(a, rules)) for a in arcs]
    dated = {a.id for a in arcs if _dated(a)}
    items = load(planted)
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    shown: dict[str, list[str]] = {"dev": [], "heldout": []}
    for item in items:
        pool = [a for a in arcs if _eligible(a, item, dated)]
        rng = random.Random(f"amg-planted:{item['id']}")
        for arc in rng.sample(pool, min(per, len(pool))):
            edited = arc.model_copy(deep=True)
            refs = plant(edited, item, nouns[arc.spec.domain], rng)
            reason = consistency(edited, rules)
            kind = item["kind"] if item["defect"] else "consistent"
            t = tally[(half(item), kind)]
            t[0] += 1
            t[1] += reason is not None
            t[2] += reason is not None and _named(reason, refs)
            if item["defect"] and reason is None:
                shown[half(item)].append(
                    f"missed {item['id']} ({kind}) in {arc.id}: {item['user'] or item['assistant']}"
                )
            elif not item["defect"] and reason is not None:
                shown[half(item)].append(f"false alarm {item['id']} in {arc.id}: {reason}")

    def row(part: str, kind: str) -> dict:
        n, k, named = tally[(part, kind)]
        return {"n": n, "flagged": wilson(k, n).model_dump() if n else None, "named_turn": named}

    out = {
        "design": design.name,
        "rules_sha256": rules.sha256,
        "per_item": per,
        "baseline": {
            "arcs": len(arcs),
            "flagged": wilson(sum(1 for _, r in baseline if r), len(arcs)).model_dump(),
            "reasons": [f"{i}: {r}" for i, r in baseline if r],
        },
    }
    for part in ("heldout", "dev"):
        kinds = {k: row(part, k) for k in KINDS}
        n = sum(tally[(part, k)][0] for k in KINDS)
        caught = sum(tally[(part, k)][1] for k in KINDS)
        out[part] = {
            "items": sum(1 for i in items if half(i) == part),
            "defects": kinds,
            "all_defects": wilson(caught, n).model_dump(),
            "consistent": row(part, "consistent"),
        }
    out["shown"] = shown
    return out


def _pct(w: dict | None) -> str:
    if not w:
        return "n/a"
    return f"{w['k']}/{w['n']} = {100 * w['value']:.1f}% [{100 * w['ci_low']:.1f}, {100 * w['ci_high']:.1f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="paper")
    ap.add_argument("--per", type=int, default=3, help="arcs each item is planted into")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--show", choices=("dev", "heldout"), help="print that half's misses and false alarms"
    )
    args = ap.parse_args()
    try:
        r = measure(args.design, args.per)
    except AmgError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "shown"}, indent=2))
        return 0
    b = r["baseline"]
    print(
        f"design {r['design']}: {b['arcs']} arcs built offline (seed 0), {r['per_item']} arcs per planted item"
    )
    print(f"  unedited arcs flagged (false alarms): {_pct(b['flagged'])}")
    for part in ("heldout", "dev"):
        p = r[part]
        print(f"{part} half ({p['items']} items):")
        for kind, v in p["defects"].items():
            print(
                f"  {kind:<22} caught {_pct(v['flagged'])}; naming a planted turn: {v['named_turn']}"
            )
        print(f"  {'all defects':<22} caught {_pct(p['all_defects'])}")
        print(f"  {'consistent edits':<22} flagged {_pct(p['consistent']['flagged'])}")
    if args.show:
        print(f"{args.show} half, misses and false alarms:")
        for line in r["shown"][args.show]:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
