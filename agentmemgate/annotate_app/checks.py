"""The checks of an open audit, made when it is created: gold, attention and qualification items.

Gold and qualification items are items with a reference label: the source's own items that have
one (taken out of what is audited) or those of ``--gold-from FILE`` (a JSONL file as
``--from FILE`` reads it). Attention checks are written by the toolkit from the audit's own items:
a copy of an item whose highlighted text (or answer, or second value) is replaced by a sentence
that tells the reader which label to choose, so on the page it has the shape of any other item.
Their expected labels go to ``audit_checks`` only, never into a display payload.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from ..errors import BadInput, unreadable
from .items import ItemDisplay, SourceItem
from .labels import CANT_TELL, LabelSet, display_name, normalize_label
from .sources import load_jsonl

ATTENTION_TEXT = (
    'Please read this one carefully: whatever the rest of this item says, choose "{label}" for it.'
)


class Check:
    """One check item: what it shows, its kind and the label it expects."""

    def __init__(self, display: ItemDisplay, kind: str, label: str):
        self.display, self.kind, self.label = display, kind, label


def pick_reference_items(
    items: list[SourceItem],
    n: int,
    labels: LabelSet,
    seed: int,
    what: str,
    hint: str,
    where: str = "the source",
) -> list[SourceItem]:
    """``n`` items with a reference label, spread evenly over the reference labels (seeded);
    ``where`` names the items' file in an error."""
    pool: dict[str, list[SourceItem]] = defaultdict(list)
    for it in sorted(items, key=lambda x: x.id):
        if it.reference is None:
            continue
        lab = normalize_label(it.reference.label)
        if lab not in labels.choices:
            raise BadInput(
                f"{where}: item {it.id!r} has reference label {it.reference.label!r}, not in the "
                f"{labels.task} label set: {', '.join(labels.choices)}"
            )
        pool[lab].append(it)
    total = sum(len(v) for v in pool.values())
    if total < n:
        raise BadInput(
            f"{what} needs {n} {'item' if n == 1 else 'items'} with a reference label; {hint} "
            f"has {total}"
        )
    rng = random.Random(f"checks:{seed}")
    for key in sorted(pool):
        rng.shuffle(pool[key])
    out: list[SourceItem] = []
    while len(out) < n:
        for key in sorted(pool):
            if pool[key] and len(out) < n:
                out.append(pool[key].pop())
    return out


def attention_checks(chosen: list[SourceItem], n: int, labels: LabelSet, seed: int) -> list[Check]:
    """``n`` attention items shaped like the audit's own items, each asking for one label (the
    substantive labels in turn, never "can't tell")."""
    if not n:
        return []
    rng = random.Random(f"attention:{seed}")
    wanted = [lab for lab in labels.labels if lab != CANT_TELL] or list(labels.choices)
    out = []
    for i in range(n):
        template = rng.choice(chosen).display
        label = wanted[i % len(wanted)]
        text = ATTENTION_TEXT.format(label=display_name(label))
        d = template.model_copy(deep=True)
        d.id = f"attention-{i + 1:03d}"
        if d.kind == "answer" and d.answer is not None:
            d.answer.text = text
        elif d.turns:
            at = d.target if d.target is not None else len(d.turns) - 1
            d.turns[at].text = text
        elif d.pair is not None:
            d.pair.b = text
        out.append(Check(ItemDisplay.model_validate(d.model_dump()), "attention", label))
    return out


def load_gold_file(path: str) -> list[SourceItem]:
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"--gold-from: {unreadable(p)}")
    return load_jsonl(p)


def plan_checks(
    items: list[SourceItem],
    labels: LabelSet,
    *,
    gold: int,
    qualify: int,
    gold_from: str | None,
    seed: int,
) -> tuple[list[SourceItem], list[Check]]:
    """The gold and qualification checks, and the items left to audit (the source's items less
    those taken as checks, unless they come from ``gold_from``)."""
    if not gold and not qualify:
        if gold_from is not None:
            raise BadInput("--gold-from gives gold items: add --gold N or --qualify N")
        return items, []
    what = " and ".join(
        f
        for f in (f"--gold {gold}" if gold else "", f"--qualify {qualify}" if qualify else "")
        if f
    )
    if gold_from is not None:
        extra = load_gold_file(gold_from)
        clash = {it.id for it in extra} & {it.id for it in items}
        if clash:
            raise BadInput(
                f"{gold_from}: item id {sorted(clash)[0]!r} is also an item of the audit's source; "
                "give gold items ids of their own"
            )
        picked = pick_reference_items(
            extra, gold + qualify, labels, seed, what, gold_from, where=gold_from
        )
        rest = items
    else:
        picked = pick_reference_items(
            items,
            gold + qualify,
            labels,
            seed,
            what,
            "the source (pass --gold-from FILE for gold items of your own)",
        )
        ids = {it.id for it in picked}
        rest = [it for it in items if it.id not in ids]
        if not rest:
            raise BadInput(
                f"{what} would take every item of the source as a check; audit a larger "
                "source or pass --gold-from FILE"
            )
    checks = [
        Check(it.display, "qualify" if i < qualify else "gold", normalize_label(it.reference.label))
        for i, it in enumerate(picked)
    ]
    return rest, checks
