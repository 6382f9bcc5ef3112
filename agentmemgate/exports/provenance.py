"""Where exported arcs came from: the design that planned them (its files' sha256s), the catalog
it drew from, the seed and ``--n-per-cell`` each split was planned with, the files arcs were
imported from, and whether a command rebuilds them.

The manifest and the dataset card both write this record. The card says the same seed
reproduces the arcs only when it does: every arc rendered by the offline generator from the
plan of the design stored with the workspace, none imported and none dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..design import Design
from ..design.stored import split_plans, stored_design
from ..generate.importer import ImportSource, import_sources
from ..schema import Arc
from ..workspace import Workspace

OFFLINE = "offline"  # the one generator whose output a seed fixes


class DesignRecord(BaseModel):
    """A design by name and the sha256 of every file it was read from."""

    model_config = ConfigDict(extra="forbid")
    name: str
    builtin: bool
    sha256: str  # of the design file
    files: dict[str, str]  # design file and every file it names (relative path) -> sha256
    catalog_sha256: str  # over the domain files the design draws from (``Bundle.catalog_sha256``)
    domains: int
    catalog_builtin: bool  # every domain file it draws from ships with the toolkit

    @classmethod
    def of(cls, design: Design) -> DesignRecord:
        src = design.source
        names = sorted(src.catalog) if design.domains == "all" else list(design.domains)
        return cls(
            name=design.name,
            builtin=src.builtin is not None,
            sha256=src.sha256,
            files={
                src.design.name: src.sha256,
                **{rel: f.sha256 for rel, f in sorted(src.files.items())},
            },
            catalog_sha256=src.catalog_sha256(names),
            domains=len(names),
            catalog_builtin=all(src.catalog[d].builtin for d in names if d in src.catalog),
        )


class PlanRecord(BaseModel):
    """How one split was last planned (``amg build``/``amg generate``)."""

    model_config = ConfigDict(extra="forbid")
    design: str
    design_sha256: str
    seed: int
    n_per_cell: int | None


class Origin(BaseModel):
    """Where the exported arcs of some splits came from, and what rebuilds them."""

    model_config = ConfigDict(extra="forbid")
    design: DesignRecord | None  # the design stored with the workspace
    plans: dict[str, PlanRecord]  # split -> its plan (splits with a recorded plan)
    imports: list[ImportSource]
    toolkit_version: str | None  # of the arcs, when they share one
    commands: list[str]  # what rebuilds the data files byte for byte; empty: nothing does
    not_reproducible: list[str]  # why not, one phrase each

    @property
    def reproducible(self) -> bool:
        return bool(self.commands)

    def manifest(self) -> dict:
        """The manifest's ``provenance`` entry."""
        return {
            "design": self.design.model_dump() if self.design else None,
            "plans": {s: p.model_dump() for s, p in self.plans.items()},
            "imports": [i.model_dump() for i in self.imports],
            "reproduce": (
                {"commands": self.commands, "toolkit_version": self.toolkit_version}
                if self.commands
                else None
            ),
            "not_reproducible": self.not_reproducible,
        }


def origin_of(
    ws: Workspace, split_arcs: dict[str, list[Arc]], dropped: dict[str, list[str]] | None = None
) -> Origin:
    """The provenance of ``split_arcs`` (the arcs an export writes, per split)."""
    design = stored_design(ws)
    record = DesignRecord.of(design) if design is not None else None
    rows = split_plans(ws)
    arcs = [a for v in split_arcs.values() for a in v]
    imports = import_sources(ws, [a.id for a in arcs])
    imported = _imported_ids(ws, arcs)
    plans = {
        s: PlanRecord(
            design=r["design"],
            design_sha256=r["design_sha256"],
            seed=r["seed"],
            n_per_cell=r["n_per_cell"],
        )
        for s, r in rows.items()
        if s in split_arcs and any(a.id not in imported for a in split_arcs[s])
    }
    versions = sorted({a.provenance.toolkit_version for a in arcs})
    why: list[str] = []
    if imports:
        n = sum(i.arcs for i in imports)
        why.append(f"{n} arc{'s' if n != 1 else ''} imported with `amg import`")
    others = sorted(
        {
            a.provenance.generator
            for a in arcs
            if a.id not in imported and a.provenance.generator != OFFLINE
        }
    )
    if others:
        why.append(
            f"generator {', '.join(f'`{g}`' for g in others)} (a model's output is not "
            "fixed by a seed)"
        )
    unplanned = [
        s for s, v in split_arcs.items() if any(a.id not in imported for a in v) and s not in plans
    ]
    if unplanned:
        why.append(f"no plan recorded for {', '.join(unplanned)}")
    stale = [s for s, p in plans.items() if record is None or p.design_sha256 != record.sha256]
    if stale:
        why.append(
            f"{', '.join(stale)} planned with another version of design "
            f"`{plans[stale[0]].design}` than the one stored with the workspace"
        )
    if dropped:
        why.append("arcs left out by --drop-failing")
    if len(versions) > 1:
        why.append(f"arcs from toolkit versions {', '.join(versions)}")
    commands = [] if why or record is None else _commands(record, plans)
    return Origin(
        design=record,
        plans=plans,
        imports=imports,
        toolkit_version=versions[0] if len(versions) == 1 else None,
        commands=commands,
        not_reproducible=why,
    )


def _imported_ids(ws: Workspace, arcs: list[Arc]) -> set[str]:
    wanted = {a.id for a in arcs}
    return {i for (i,) in ws.db.execute("select arc_id from arc_imports").fetchall() if i in wanted}


def _commands(design: DesignRecord, plans: dict[str, PlanRecord]) -> list[str]:
    """``amg build`` lines that rebuild the planned splits: one line when every split shares its
    seed and ``--n-per-cell``, else one per split."""
    ref = design.name if design.builtin else "DIR"
    catalog = "" if design.catalog_builtin else " --catalog CATALOG"

    def line(p: PlanRecord, split: str | None) -> str:
        return (
            f"amg build --design {ref}{catalog}"
            + (f" --split {split}" if split else "")
            + f" --seed {p.seed}"
            + (f" --n-per-cell {p.n_per_cell}" if p.n_per_cell is not None else "")
        )

    kinds = {(p.seed, p.n_per_cell) for p in plans.values()}
    if len(kinds) == 1:
        return [line(next(iter(plans.values())), None)]
    return [line(p, s) for s, p in plans.items()]
