"""Write one split's files: data.jsonl, turns.parquet, the dataset card and the manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..hashing import sha256_file
from ..schema import Arc

if TYPE_CHECKING:
    import pandas as pd


def write_jsonl(arcs: list[Arc], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for arc in arcs:
            f.write(json.dumps(arc.export_record(), ensure_ascii=False) + "\n")


def turns_frame(arcs: list[Arc]) -> pd.DataFrame:
    import pandas as pd  # only here: importing the package stays cheap

    columns = [
        "arc_id",
        "session",
        "turn",
        "date",
        "role",
        "text",
        "is_plan_turn",
        "is_outcome_turn",
    ]
    cols: dict[str, list] = {c: [] for c in columns}  # column lists: faster to frame than row dicts
    for arc in arcs:
        plan = (arc.plan_turn.session, arc.plan_turn.turn)
        outcome = (arc.outcome_turn.session, arc.outcome_turn.turn) if arc.outcome_turn else None
        for si, session in enumerate(arc.sessions):
            date = session.date.isoformat()
            for ti, turn in enumerate(session.turns):
                cols["arc_id"].append(arc.id)
                cols["session"].append(si)
                cols["turn"].append(ti)
                cols["date"].append(date)
                cols["role"].append(turn.role)
                cols["text"].append(turn.text)
                cols["is_plan_turn"].append((si, ti) == plan)
                cols["is_outcome_turn"].append((si, ti) == outcome)
    return pd.DataFrame(cols, columns=columns).astype(
        {"session": "int32", "turn": "int32", "is_plan_turn": "bool", "is_outcome_turn": "bool"}
    )


def write_parquet(arcs: list[Arc], path: Path) -> None:
    turns_frame(arcs).to_parquet(path, index=False)


def write_manifest(folder: Path, counts: dict, extra: dict | None = None) -> Path:
    """manifest.json: counts, sha256 of every file beside it and below, toolkit version.

    Other manifests and hidden entries (``.git``, ``.gitattributes`` of a dataset repository) are
    not listed.
    """
    files = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if (
            p.is_file()
            and p.name != "manifest.json"
            and not any(x.startswith(".") for x in rel.parts)
        ):
            files[rel.as_posix()] = sha256_file(p)
    manifest = {"toolkit_version": __version__, "counts": counts, "files": files, **(extra or {})}
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
