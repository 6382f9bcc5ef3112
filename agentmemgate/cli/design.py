"""design: show, check and copy a benchmark design (its factors, levels, splits and cells)."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import app, fail, group, handles_errors
from ._options import CatalogOpt, json_option

design_app = group(
    help="Designs: what a benchmark is made of (factors, levels, splits, cells).",
    no_args_is_help=True,
)
app.add_typer(design_app, name="design")

RefArg = Annotated[
    str, typer.Argument(help="A built-in design (paper), a design folder or a design.toml file.")
]


def describe(design, n_per_cell: int | None = None) -> list[str]:
    """A design as lines of text: factors with their levels, then every split's cells."""
    src = design.source
    where = f"{src.builtin} (built in)" if src.builtin else src.design.origin
    domains = "all catalog domains" if design.domains == "all" else f"{len(design.domains)} domains"
    lines = [
        f"design {design.name}: {where}, sha256 {src.sha256[:12]}",
        f"  {design.description}" if design.description else "",
        f"ids: {design.ids}; draws from {domains}",
        "",
        "factors (levels in order):",
    ]
    for f in design.factors.values():
        levels = ", ".join(
            lv.name + (" [control]" if lv.control else f" [{lv.group}]" if lv.group else "")
            for lv in f.levels
        )
        lines.append(f"  {f.name} ({f.role}{', ordered' if f.ordered else ''}): {levels}")
    total = 0
    for name, split in design.splits.items():
        counts = design.cell_counts(name, n_per_cell)
        n = sum(k for _, k in counts)
        total += n
        st = split.structure
        lines += [
            "",
            f"split {name}" + (f" ({split.title})" if split.title else "") + f": {n} arcs; "
            f"sessions {'/'.join(map(str, st.sessions))}, "
            f"{'pending window' if st.pending_window else 'no pending window'}, {st.values} values",
        ]
        width = max(len(c.key) for c, _ in counts)
        for cell, k in counts:
            extra = design.factors[cell.factor].level(cell.level).structure
            note = (
                f"  sessions {'/'.join(map(str, extra.sessions))}"
                if extra and extra.sessions
                else ""
            )
            lines.append(f"  {cell.key:<{width}}  {design.outcome_of(cell):<10} {k:>4}{note}")
    groups = "; ".join(f"{g} = {', '.join(m)}" for g, m in design.groups.items())
    lines += [
        "",
        f"total: {total} arcs in {len(design.splits)} splits"
        + (f" (groups: {groups})" if groups else ""),
    ]
    return [line for line in lines if line is not None]


@design_app.command("show")
@handles_errors
def show(
    ref: RefArg = "paper",
    n_per_cell: Annotated[
        int | None, typer.Option("--n-per-cell", help="Show the counts --n-per-cell N would build.")
    ] = None,
    catalog: CatalogOpt = None,
    json_: json_option(
        "Print the design, where it was read from and its counts as one JSON object."
    ) = False,
) -> None:
    """Print a design's factors, levels, splits, cells and arc counts."""
    from ..design import load_design

    design = load_design(ref, catalog or ())
    if n_per_cell is not None and n_per_cell < 1:
        fail(f"--n-per-cell must be a positive whole number, got {n_per_cell}")
    if json_:
        typer.echo(json.dumps(design.described(n_per_cell), indent=2, default=str))
        return
    typer.echo("\n".join(describe(design, n_per_cell)))


@design_app.command("check")
@handles_errors
def check(
    ref: RefArg = "paper",
    catalog: CatalogOpt = None,
) -> None:
    """Report every problem of a design at once, one line each (file: key: problem); exit 1 if any."""
    from ..design_checks import check_design

    design, problems = check_design(ref, catalog or ())
    for p in problems:
        typer.echo(str(p))
    if problems:
        fail(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {ref}")
    splits = len(design.splits)
    cells = sum(len(s.cells) for s in design.splits.values())
    arcs = sum(design.arcs_in(s) for s in design.splits)
    typer.echo(f"design {design.name}: {splits} splits, {cells} cells, {arcs} arcs; no problems")


@design_app.command("init")
@handles_errors
def init(
    folder: Annotated[
        Path, typer.Argument(help="Folder for the copy (created; must not hold a design.toml).")
    ],
    from_: Annotated[str, typer.Option("--from", help="The built-in design to copy.")] = "paper",
    name: Annotated[
        str | None,
        typer.Option("--name", help="The copy's design name (default: from the folder name)."),
    ] = None,
) -> None:
    """Write an editable copy of a built-in design, with its phrase banks and recovery rules."""
    from ..design.init import init_design

    written = init_design(folder, from_, name)
    typer.echo(f"wrote {len(written)} files to {folder}:")
    for p in written:
        typer.echo(f"  {p.relative_to(folder)}")
    typer.echo(
        f"next: edit {folder / 'design.toml'}, then `amg design check {folder}` and "
        f"`amg build --design {folder} --workspace WS`"
    )
