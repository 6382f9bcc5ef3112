"""``amg design init DIR --from paper``: an editable copy of a built-in design.

The copy holds the design file and every file it names (phrase banks, correction phrases,
recovery rules), so a user extends the benchmark by editing files in one folder. The copy is
renamed after its folder (a workspace refuses to mix two designs of one name) and switched to
keyed ids, so that later edits leave the arcs of unchanged cells as they were.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..atomic import write_text_atomic
from ..errors import BadInput
from .bundle import BUILTIN, DESIGN_FILE
from .load import load_design

_KEYED_NOTE = (
    "# Copied from the built-in {source!r} design. Arc ids are keyed: each arc is drawn from its own\n"
    "# key (split, cell, domain), so adding a cell or a domain leaves the other cells' arcs as they\n"
    "# were wherever the draw allows. (The built-in design keeps the paper's sequential ids: build\n"
    "# `--design {source}` to reproduce its arcs exactly.)\n"
)


def design_name_for(folder: Path) -> str:
    """A design name from a folder name: 'My Design-2' -> 'my_design_2'."""
    name = re.sub(r"[^a-z0-9]+", "_", folder.resolve().name.lower()).strip("_")
    return name if name[:1].isalpha() else f"design_{name}" if name else "my_design"


def init_design(dest: str | Path, source: str = "paper", name: str | None = None) -> list[Path]:
    """Write a copy of built-in design ``source`` into ``dest``; return the files written."""
    if source not in BUILTIN:
        from ..suggest import did_you_mean

        raise BadInput(
            f"Unknown built-in design {source!r}; choose one of: {', '.join(BUILTIN)}"
            f"{did_you_mean(source, list(BUILTIN))}"
        )
    dest = Path(dest)
    if (dest / DESIGN_FILE).exists():
        raise BadInput(
            f"{str(dest / DESIGN_FILE)!r} exists already: choose an empty folder "
            "(nothing was overwritten)"
        )
    if dest.exists() and not dest.is_dir():
        raise BadInput(f"{str(dest)!r} is a file, not a folder")
    design = load_design(source)
    name = name or design_name_for(dest)
    text = design.source.design.text()
    text, n_name = re.subn(r'(?m)^name = "[^"]*"', f'name = "{name}"', text, count=1)
    text, n_ids = re.subn(r'(?m)^ids = "sequential"', 'ids = "keyed"', text, count=1)
    if not (n_name and n_ids):  # the built-in file's layout changed: refuse rather than half-copy
        raise BadInput(f"Cannot adapt the built-in {source!r} design file (no name/ids line)")
    text = _KEYED_NOTE.format(source=source) + text
    written = []
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for rel, f in sorted(design.source.files.items()):
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, f.text())
            written.append(path)
        write_text_atomic(dest / DESIGN_FILE, text)  # last: a folder with design.toml is complete
        written.append(dest / DESIGN_FILE)
    except OSError as e:
        raise BadInput(f"Cannot write the design into {str(dest)!r}: {e.strerror or e}") from None
    return written
