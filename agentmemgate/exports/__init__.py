"""Exports: JSONL, Parquet, a Hugging Face style dataset card and a manifest per split.

An export replaces its output folder in one step (``atomic.replaced_folder``): after any
interruption every folder is the complete old export or the complete new one, each manifest
matching its files. Rows are in a seeded shuffled order and arc ids are opaque, so neither the
order nor an id tells a model or a memory system under test the labels (they stay as fields).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..atomic import replaced_folder
from ..errors import BadInput, WorkspaceError
from ..registry import Registry
from ..schema import Arc
from ..workspace import Workspace
from .card import card, cell_counts
from .files import write_jsonl, write_manifest, write_parquet

SPLIT_FILES = ("data.jsonl", "turns.parquet", "README.md", "manifest.json")
ROOT_FILES = ("README.md", "manifest.json")

CardSection = Callable[[Workspace, list[str]], str]
"""A dataset-card section: (workspace, split names) -> markdown, or "" when it has nothing to say."""
DropRule = Callable[[Workspace, list[str]], dict[str, list[str]]]
"""Arcs to leave out under --drop-failing: (workspace, split names) -> {arc id: reasons}."""


def _validation_section(ws: Workspace, splits: list[str]) -> str:
    from ..validate.card import card_section

    return card_section(ws, splits)


def _diversity_section(ws: Workspace, splits: list[str]) -> str:
    from ..validate.card import diversity_section

    return diversity_section(ws, splits)


def _failing_arcs(ws: Workspace, splits: list[str]) -> dict[str, list[str]]:
    from ..validate.card import failing_arcs

    return failing_arcs(ws, splits)


# Named by their functions (``module.name``), in the order the card shows them. The validation
# room sits below this one, so its sections and rule are registered here; rooms downstream of
# exports (the evaluation) add theirs with ``register_card_section`` when imported.
CARD_SECTIONS: Registry[CardSection] = Registry("dataset-card section")
DROP_RULES: Registry[DropRule] = Registry("drop rule")


def _name(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def register_card_section(section: CardSection) -> None:
    """Add a section to every dataset card written from now on (once, however often called)."""
    CARD_SECTIONS.register(_name(section), section)


def register_drop_rule(rule: DropRule) -> None:
    """Add a reason to leave arcs out under ``--drop-failing``."""
    DROP_RULES.register(_name(rule), rule)


register_card_section(_validation_section)
register_card_section(_diversity_section)
register_drop_rule(_failing_arcs)


class ExportSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_dir: str
    counts: dict[str, int]
    dropped: int
    files: list[str]
    kept: dict[str, int] = {}  # split folders an earlier export left beside these (arcs each)

    def lines(self) -> list[str]:
        if not any(self.counts.values()):
            return [f"nothing exported to {self.out_dir}: no arcs in the chosen splits"]
        line = f"exported to {self.out_dir}: " + ", ".join(
            f"{k} {v}" for k, v in self.counts.items()
        )
        if self.kept:  # the root manifest counts and hashes them too: say where they came from
            line += "; kept from an earlier export in that folder: " + ", ".join(
                f"{k} {v}" for k, v in self.kept.items()
            )
        return [line]


def row_order(arcs: list[Arc], split: str) -> list[Arc]:
    """The rows of a split in a seeded shuffled order: the same arcs always give the same order,
    and it follows no label (the workspace keeps arcs grouped by design cell)."""
    seeds = ",".join(str(s) for s in sorted({a.spec.plan_seed for a in arcs}))
    out = sorted(arcs, key=lambda a: a.id)
    random.Random(f"amg-rows:{split}:{seeds}").shuffle(out)
    return out


def export(
    ws: Workspace, out_dir: str | Path, splits: list[str], drop_failing: bool = False
) -> ExportSummary:
    """Write ``out_dir/<split>/{data.jsonl, turns.parquet, README.md, manifest.json}`` + a root card.

    The folder is replaced as a whole; other splits' folders and other files in it are kept.
    """
    with ws.read_cache():  # every card section reads each split's arcs and verdicts again
        return _export(ws, Path(out_dir), splits, drop_failing)


def _export(ws: Workspace, out: Path, splits: list[str], drop_failing: bool) -> ExportSummary:
    from ..design.stored import workspace_design
    from .provenance import origin_of

    dropped: dict[str, list[str]] = {}
    if drop_failing:
        for rule in DROP_RULES.values():
            for arc_id, reasons in rule(ws, splits).items():
                dropped.setdefault(arc_id, []).extend(reasons)
    split_arcs: dict[str, list[Arc]] = {}
    split_dropped: dict[str, dict[str, list[str]]] = {}
    for s in splits:
        arcs = list(ws.arcs(s))
        mine = {a.id: dropped[a.id] for a in arcs if a.id in dropped}
        # A split with arcs keeps its folder and card even when --drop-failing leaves none of them.
        if arcs:
            split_arcs[s] = row_order([a for a in arcs if a.id not in mine], s)
            split_dropped[s] = mine
    if not split_arcs:
        raise BadInput(
            f"No arcs to export in workspace {str(ws.path)!r} (split "
            f"{', '.join(splits)}): run `amg build` or `amg generate` first"
        )
    checks = ws.checks()
    written: list[str] = []
    kept: dict[str, int] = {}
    try:
        with replaced_folder(
            out, replace=list(split_arcs) + list(ROOT_FILES), protect=[ws.path]
        ) as stage:
            for split, arcs in split_arcs.items():
                folder = stage / split
                folder.mkdir()
                write_jsonl(arcs, folder / "data.jsonl")
                write_parquet(arcs, folder / "turns.parquet")
                ids = {a.id for a in arcs}
                sections = [t for f in CARD_SECTIONS.values() if (t := f(ws, [split]))]
                origin = origin_of(ws, {split: arcs}, split_dropped[split])
                (folder / "README.md").write_text(
                    card(
                        {split: arcs},
                        [(split, "data.jsonl")],
                        [c for c in checks if c.arc_id in ids],
                        ws.failures(split),
                        sections,
                        split_dropped[split],
                        origin,
                    ),
                    encoding="utf-8",
                )
                write_manifest(
                    folder,
                    {"arcs": len(arcs), "cells": cell_counts(arcs)},
                    {"provenance": origin.manifest()},
                )
                written += [f"{split}/{n}" for n in SPLIT_FILES]
            sections = [t for f in CARD_SECTIONS.values() if (t := f(ws, list(split_arcs)))]
            all_ids = {a.id for v in split_arcs.values() for a in v}
            origin = origin_of(ws, split_arcs, dropped)
            (stage / "README.md").write_text(
                card(
                    split_arcs,
                    [(s, f"{s}/data.jsonl") for s in split_arcs],
                    [c for c in checks if c.arc_id in all_ids],
                    [f for s in split_arcs for f in ws.failures(s)],
                    sections,
                    dropped or None,
                    origin,
                ),
                encoding="utf-8",
            )
            counts = {s: len(v) for s, v in split_arcs.items()}
            kept = _kept_splits(stage, split_arcs, workspace_design(ws).split_names)
            write_manifest(
                stage,
                {"arcs": {**counts, **kept}},
                {
                    "provenance": origin.manifest(),
                    **({"kept_from_an_earlier_export": sorted(kept)} if kept else {}),
                },
            )
            written += list(ROOT_FILES)
    except OSError as e:
        raise WorkspaceError(f"Cannot write export to {str(out)!r}: {e.strerror or e}") from None
    return ExportSummary(
        out_dir=str(out),
        counts={s: len(v) for s, v in split_arcs.items()},
        dropped=sum(len(d) for d in split_dropped.values()),
        files=[str(out / f) for f in written],
        kept=kept,
    )


def _kept_splits(stage: Path, exported: dict, splits) -> dict[str, int]:
    """Split folders (of ``splits``, the design's) an earlier export left in the folder (kept,
    see ``export``), with the arc count their own manifest gives: the root manifest hashes their
    files, so it counts them too."""
    import json

    kept = {}
    for s in splits:
        m = stage / s / "manifest.json"
        if s not in exported and m.is_file():
            try:
                kept[s] = int(json.loads(m.read_text(encoding="utf-8"))["counts"]["arcs"])
            except (ValueError, KeyError, TypeError):
                continue
    return kept


__all__ = [
    "CARD_SECTIONS",
    "DROP_RULES",
    "CardSection",
    "DropRule",
    "ExportSummary",
    "card",
    "export",
    "register_card_section",
    "register_drop_rule",
    "row_order",
]
