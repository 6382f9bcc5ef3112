"""Exports: JSONL, Parquet, a Hugging Face style dataset card and a manifest per split."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict

from ..errors import WorkspaceError
from ..outputs import writable
from ..workspace import Workspace
from .card import card, cell_counts
from .files import write_jsonl, write_manifest, write_parquet

# Other rooms add card sections (e.g. the validation summary) through this hook:
# a function (workspace, split names) -> markdown, or "" when it has nothing to say.
CardSection = Callable[[Workspace, list[str]], str]
CARD_SECTIONS: list[CardSection] = []
# And the ids to leave out under --drop-failing: (workspace, split names) -> {arc id: reasons}.
DropRule = Callable[[Workspace, list[str]], dict[str, list[str]]]
DROP_RULES: list[DropRule] = []


class ExportSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_dir: str
    counts: dict[str, int]
    dropped: int
    files: list[str]


def export(ws: Workspace, out_dir: str | Path, splits: list[str],
           drop_failing: bool = False) -> ExportSummary:
    """Write ``out_dir/<split>/{data.jsonl, turns.parquet, README.md, manifest.json}`` + a root card."""
    import agentmemgate.validate  # noqa: F401  (registers the validation card section and drop rule)

    out = Path(out_dir)
    writable(out)
    dropped: dict[str, list[str]] = {}
    if drop_failing:
        for rule in DROP_RULES:
            for arc_id, reasons in rule(ws, splits).items():
                dropped.setdefault(arc_id, []).extend(reasons)
    # A split with arcs keeps its folder and card even when --drop-failing leaves none of them.
    split_arcs = {s: [a for a in ws.arcs(s) if a.id not in dropped] for s in splits}
    split_arcs = {s: v for s, v in split_arcs.items()
                  if v or any(k.startswith(f"{s}-") for k in dropped)}
    checks = ws.checks()
    files: list[str] = []
    try:
        for split, arcs in split_arcs.items():
            folder = out / split
            folder.mkdir(parents=True, exist_ok=True)
            write_jsonl(arcs, folder / "data.jsonl")
            write_parquet(arcs, folder / "turns.parquet")
            ids = {a.id for a in arcs}
            sections = [t for f in CARD_SECTIONS if (t := f(ws, [split]))]
            (folder / "README.md").write_text(
                card({split: arcs}, [(split, "data.jsonl")], [c for c in checks if c.arc_id in ids],
                     ws.failures(split), sections,
                     {k: v for k, v in dropped.items() if k.startswith(f"{split}-")}),
                encoding="utf-8")
            write_manifest(folder, {"arcs": len(arcs), "cells": cell_counts(arcs)})
            files += [str(folder / n) for n in ("data.jsonl", "turns.parquet", "README.md", "manifest.json")]
        if split_arcs:
            sections = [t for f in CARD_SECTIONS if (t := f(ws, list(split_arcs)))]
            all_ids = {a.id for v in split_arcs.values() for a in v}
            (out / "README.md").write_text(
                card(split_arcs, [(s, f"{s}/data.jsonl") for s in split_arcs],
                     [c for c in checks if c.arc_id in all_ids],
                     [f for s in split_arcs for f in ws.failures(s)], sections, dropped or None),
                encoding="utf-8")
            files.append(str(out / "README.md"))
            write_manifest(out, {"arcs": {s: len(v) for s, v in split_arcs.items()}})
            files.append(str(out / "manifest.json"))
    except OSError as e:
        raise WorkspaceError(f"Cannot write export to {str(out)!r}: {e.strerror}") from None
    return ExportSummary(out_dir=str(out), counts={s: len(v) for s, v in split_arcs.items()},
                         dropped=len(dropped), files=files)


__all__ = ["CARD_SECTIONS", "DROP_RULES", "ExportSummary", "card", "export"]
