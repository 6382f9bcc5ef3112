"""The ``statements:SET`` audit source: corpora's statement sets as blind evidence_type items.

``amg audit create NAME --task evidence_type --from statements:SET`` audits the items both model
families agreed on (the paper audited 40 of them); ``statements:SET@disputed`` audits the disputed
ones separately; ``@voted``, ``@tie``, ``@imported``, ``@human`` (labels a crowd audit gave, with
``amg audit labels --to-statements``) and ``@all`` select by reference status. The
annotator sees the statement and its two preceding turns only; the reference label and the
status travel beside the item (hidden), as the audit room requires.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import BadInput
from .items import DisplayTurn, ItemDisplay, Reference, SourceItem, SourceRequest

if TYPE_CHECKING:
    from ..corpora.statements import Statement

SELECTORS = {
    "agreed": ("agreed", "imported", "human"),
    "disputed": ("disputed",),
    "voted": ("voted",),
    "tie": ("tie",),
    "imported": ("imported",),
    "human": ("human",),
    "all": None,
}


def _turn(speaker: str, text: str, date: str | None = None) -> DisplayTurn:
    role = speaker.lower() if speaker.lower() in ("user", "assistant") else "other"
    return DisplayTurn(role=role, speaker="" if role != "other" else speaker, text=text, date=date)


def statement_item(st: Statement) -> SourceItem:
    turns = [_turn(c.speaker, c.text) for c in st.context[-2:]] + [
        _turn(st.speaker, st.text, st.date)
    ]
    ref = None
    if st.reference:
        source = {"imported": "import", "human": "human"}.get(st.reference_status or "", "model")
        ref = Reference(label=st.reference, source=source)
    strata = {
        "corpus": st.corpus or "unknown",
        "stratum": st.stratum or "none",
        "reference_status": st.reference_status or "unlabeled",
    }
    if st.reference:
        strata["reference"] = st.reference
    return SourceItem(
        display=ItemDisplay(id=st.id, kind="statement", turns=turns, target=len(turns) - 1),
        reference=ref,
        strata=strata,
    )


def load_statement_items(req: SourceRequest) -> Iterable[SourceItem]:
    if not req.arg:
        raise BadInput("Use --from statements:SET (optionally SET@disputed, @voted, @tie, @all)")
    name, _, selector = req.arg.partition("@")
    selector = selector or "agreed"
    if selector not in SELECTORS:
        raise BadInput(
            f"Unknown selector @{selector}; choose one of: {', '.join('@' + s for s in SELECTORS)}"
        )
    from ..corpora.statements import load_set

    wanted = SELECTORS[selector]
    items = [
        s
        for s in load_set(req.workspace, name)
        if wanted is None or (s.reference_status in wanted and s.reference)
    ]
    if not items:
        raise BadInput(
            f"Statement set {name!r} has no {selector} items; label it with "
            "`amg statements label --relabel SPEC` or use statements:"
            f"{name}@all"
        )
    return [statement_item(s) for s in items]
