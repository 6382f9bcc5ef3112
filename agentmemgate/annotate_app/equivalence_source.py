"""The ``equivalence[:SET]`` audit source: validate's stored equivalence pairs for a blind audit.

Each item shows the field and the two values (in a seeded order); the hidden reference is the
first judge's verdict on the pair (source ``judge``), so the audit's agreement report measures
human agreement with the equivalence judge, as in the paper's 54-pair audit.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from ..errors import BadInput
from .items import ItemDisplay, Reference, SourceItem, SourceRequest, ValuePair


def load_equivalence_items(req: SourceRequest) -> Iterable[SourceItem]:
    from ..validate.pairs import _latest_pairs_run, load_pairs, pair_sets, position_seed
    from ..validate.store import load_verdicts

    pair_set = req.arg or "default"
    pairs = load_pairs(req.workspace, pair_set)
    if not pairs:
        known = (
            ", ".join(pair_sets(req.workspace))
            or "none; run `amg validate equivalence-pairs` first"
        )
        raise BadInput(f"No equivalence pair set {pair_set!r}; sets: {known}")
    run = _latest_pairs_run(req.workspace, pair_set)
    judge = run["judges"][0]["spec"] if run else None
    verdicts = {
        r.item_id: r.verdict
        for r in load_verdicts(req.workspace, ["equivalence"], [judge] if judge else [])
        if r.ok and r.criterion == pair_set
    }
    for p in pairs:
        a, b = p.reference, p.candidate
        if random.Random(position_seed(p.id, "audit")).random() < 0.5:
            a, b = b, a
        label = verdicts.get(p.id)
        yield SourceItem(
            display=ItemDisplay(
                id=p.id,
                kind="pair",
                pair=ValuePair(field=p.field, description=p.description, a=a, b=b),
            ),
            reference=Reference(label=label, source="judge") if label else None,
            strata={
                "kind": p.kind,
                "borderline": "yes" if p.borderline else "no",
                "split": p.split,
                **({"judge": judge} if judge else {}),
            },
        )
