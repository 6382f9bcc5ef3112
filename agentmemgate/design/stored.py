"""The design stored with a workspace: what ``validate``, ``export`` and ``eval`` read when no
``--design`` is given, so every command of a workspace speaks of the same splits and levels."""

from __future__ import annotations

from ..errors import BadInput
from ..workspace import Workspace, now
from .bundle import Bundle
from .load import design_of_bundle, paper_design
from .model import Design


def stored_design(ws: Workspace) -> Design | None:
    """The design the workspace was built from, or None (a workspace from before designs, or
    one that holds only imported arcs)."""
    row = ws.db.execute("select sha256, bundle from design where id = 1").fetchone()
    if row is None:
        return None
    cached = getattr(ws, "_design", None)
    if cached is not None and cached.source.sha256 == row[0]:
        return cached
    ws._design = design_of_bundle(Bundle.from_json(row[1]))  # type: ignore[attr-defined]
    return ws._design  # type: ignore[attr-defined]


def workspace_design(ws: Workspace, design: Design | None = None) -> Design:
    """``design`` if given (checked against the stored one), else the stored design, else the
    paper's."""
    stored = stored_design(ws)
    if design is None:
        return stored or paper_design()
    if stored is not None and stored.name != design.name:
        raise BadInput(
            f"Workspace {str(ws.path)!r} holds design {stored.name!r}; design "
            f"{design.name!r} goes into another --workspace"
        )
    return design


def store_design(ws: Workspace, design: Design) -> None:
    """Keep ``design`` with the workspace (replacing an earlier version of the same design)."""
    workspace_design(ws, design)
    with ws.db.conn:
        ws.db["design"].upsert(
            {
                "id": 1,
                "name": design.name,
                "sha256": design.source.sha256,
                "bundle": design.source.to_json(),
                "stored_at": now(),
            },
            pk="id",
        )
    ws._design = design  # type: ignore[attr-defined]


def record_plan(
    ws: Workspace, design: Design, split: str, seed: int, n_per_cell: int | None
) -> None:
    with ws.db.conn:
        ws.db["split_plans"].upsert(
            {
                "split": split,
                "design": design.name,
                "design_sha256": design.source.sha256,
                "seed": seed,
                "n_per_cell": n_per_cell,
                "planned_at": now(),
            },
            pk="split",
        )


def split_plans(ws: Workspace) -> dict[str, dict]:
    return {r["split"]: r for r in ws.db["split_plans"].rows}


def design_for(workspace, ref=None, catalogs=()) -> Design:
    """The design a command works with, chosen before any workspace is created: ``ref``
    (``--design``, with ``catalogs`` from ``--catalog``) when given, checked against the design
    an existing workspace was built from; else that stored design; else the paper's."""
    from pathlib import Path

    from ..workspace import DB_NAME
    from .load import load_design

    path = Path(getattr(workspace, "path", workspace)) if workspace is not None else None
    stored = None
    if path is not None and (path / DB_NAME).is_file():
        ws = workspace if isinstance(workspace, Workspace) else Workspace(path, create=False)
        stored = stored_design(ws)
    if ref is None:
        if stored is None:
            return load_design("paper", catalogs)
        if not catalogs:
            return stored
        if stored.source.builtin is None:
            raise BadInput(
                f"--catalog changes a design's files: pass --design again with it "
                f"(workspace {str(path)!r} holds design {stored.name!r})"
            )
        return load_design(stored.source.builtin, catalogs)
    design = load_design(ref, catalogs)
    if stored is not None and stored.name != design.name:
        raise BadInput(
            f"Workspace {str(path)!r} holds design {stored.name!r}; build design "
            f"{design.name!r} into another --workspace"
        )
    return design
