"""The arcs an evaluation runs on: every arc of the chosen splits with the sha256 of its stored
JSON (the text a trace, answers and a score name, so a rebuilt arc's results are not mistaken for
the new text's), and the rule that the judge is of another model family than the arcs'
generator. ``amg eval run`` and ``amg eval answers`` read them alike."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import BadInput
from ..hashing import sha256_parts
from ..schema import Arc
from ..validate.judges import check_families
from ..validate.store import generator_families_of
from ..workspace import Workspace
from .judges import ValueJudge


def workspace_arcs(ws: Workspace, splits: Iterable[str]) -> list[tuple[Arc, str]]:
    """Every arc of ``splits`` (built or imported) with the sha256 of its stored JSON, in plan
    order where there is a plan (arcs with no spec row, e.g. imported ones, come after)."""
    splits = list(splits)
    q = ",".join("?" * len(splits))
    rows = ws.db.execute(
        f"select arcs.json from arcs left join specs on specs.id = arcs.id where arcs.split in ({q}) "
        "order by specs.rowid is null, specs.rowid, arcs.rowid",
        splits,
    ).fetchall()
    return [(Arc.model_validate_json(raw), sha256_parts(raw)) for (raw,) in rows]


def load_arcs(ws: Workspace, splits: list[str]) -> list[tuple[Arc, str]]:
    arcs = workspace_arcs(ws, splits)
    if not arcs:
        raise BadInput(
            f"No arcs in split(s) {', '.join(splits)} of workspace {str(ws.path)!r}: "
            "build them with `amg build` (or bring them in with `amg import`)"
        )
    return arcs


def check_judge_family(
    ws: Workspace, judge: ValueJudge, arcs: list[tuple[Arc, str]], allow_same_family: bool
) -> None:
    gens = generator_families_of(ws, [a.provenance.generator for a, _ in arcs])
    families = set().union(*gens.values()) if gens else set()
    check_families([judge.judge], families, allow_same_family, what="the arcs' generator")
