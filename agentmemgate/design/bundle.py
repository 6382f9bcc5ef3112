"""The files a design is made of, read once: the design file, the files it names, the catalog.

A ``Bundle`` holds bytes, not paths, so a design stored with a workspace (``workspace_design``)
is the same design later even when the folder it was built from has changed or gone; its
hashes go into the manifest and the dataset card.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput, unreadable

PACKAGE_DIR = Path(__file__).parent
CATALOG_DIR = PACKAGE_DIR / "catalog"
BUILTIN = {"paper": PACKAGE_DIR / "paper" / "design.toml"}
DESIGN_FILE = "design.toml"
BUILTIN_CATALOG = "catalog (built in)"  # how messages name the built-in catalog's folder


@dataclass(frozen=True)
class NamedFile:
    """One file by the name messages use for it, with its bytes."""

    origin: str  # "my-design/phrases/plan.toml", "catalog (built in)/bank.toml"
    data: bytes

    @property
    def name(self) -> str:
        return self.origin.replace("\\", "/").rsplit("/", 1)[-1]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def builtin(self) -> bool:
        """A file of the toolkit's own catalog (not one a user supplied)."""
        return self.origin.startswith(BUILTIN_CATALOG + "/")

    def text(self) -> str:
        return self.data.decode("utf-8")


@dataclass
class Bundle:
    """``design`` is the design file; ``files`` every file it names, by its path relative to the
    design file; ``catalog`` every domain file the design can draw from, by domain."""

    design: NamedFile
    files: dict[str, NamedFile] = field(default_factory=dict)
    catalog: dict[str, NamedFile] = field(default_factory=dict)
    builtin: str | None = None  # "paper" for the design that ships with the toolkit

    @property
    def sha256(self) -> str:
        return self.design.sha256

    def folder(self, rel: str) -> list[tuple[str, NamedFile]]:
        """The files under folder ``rel`` (one level), by relative path, sorted."""
        prefix = rel.rstrip("/") + "/"
        return sorted(
            (k, v)
            for k, v in self.files.items()
            if k.startswith(prefix) and "/" not in k[len(prefix) :]
        )

    def to_json(self) -> str:
        """Text form for the workspace (every file is UTF-8 TOML)."""

        def enc(f: NamedFile) -> dict:
            return {"origin": f.origin, "text": f.text()}

        return json.dumps(
            {
                "design": enc(self.design),
                "builtin": self.builtin,
                "files": {k: enc(v) for k, v in sorted(self.files.items())},
                "catalog": {k: enc(v) for k, v in sorted(self.catalog.items())},
            },
            ensure_ascii=False,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Bundle:
        d = json.loads(text)

        def dec(x: dict) -> NamedFile:
            return NamedFile(x["origin"], x["text"].encode("utf-8"))

        return cls(
            design=dec(d["design"]),
            files={k: dec(v) for k, v in d["files"].items()},
            catalog={k: dec(v) for k, v in d["catalog"].items()},
            builtin=d.get("builtin"),
        )

    def catalog_sha256(self, domains) -> str:
        """One digest over the catalog files of ``domains`` (file name and bytes)."""
        return sha256_files_of([self.catalog[d] for d in domains if d in self.catalog])


def sha256_files_of(files: list[NamedFile]) -> str:
    """``rubrics.sha256_files`` over files held in memory: name and bytes, sorted by name."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.name):
        h.update(f.name.encode())
        h.update(b"\0")
        h.update(f.data)
    return h.hexdigest()


def _read(path: Path, origin: str) -> NamedFile:
    try:
        return NamedFile(origin, path.read_bytes())
    except OSError as e:
        raise unreadable(origin, e) from None


def design_path(ref: str | Path) -> tuple[Path, str | None]:
    """The design file ``ref`` names (a built-in name, a design file, or a folder holding
    ``design.toml``), and the built-in name if it is one."""
    if isinstance(ref, str) and ref in BUILTIN and not Path(ref).exists():
        return BUILTIN[ref], ref
    p = Path(ref)
    if p.is_dir():
        p = p / DESIGN_FILE
        if not p.is_file():
            raise BadInput(
                f"No design at {str(ref)!r}: the folder has no {DESIGN_FILE} (create one "
                f"with `amg design init {ref} --from paper`)"
            )
        return p, None
    if not p.is_file():
        from ..suggest import did_you_mean

        raise BadInput(
            f"No design {str(ref)!r}: not a built-in design ({', '.join(BUILTIN)}), a "
            f"design file or a folder with {DESIGN_FILE}"
            f"{did_you_mean(str(ref), list(BUILTIN))}"
        )
    return p, None


def catalog_files_in(folder: Path, origin: str) -> dict[str, NamedFile]:
    if folder.is_file():
        raise BadInput(f"{origin!r} is a file: a catalog is a folder of DOMAIN.toml files")
    if not folder.is_dir():
        raise BadInput(f"No catalog folder {origin!r} (expected a folder of DOMAIN.toml files)")
    return {p.stem: _read(p, f"{origin}/{p.name}") for p in sorted(folder.glob("*.toml"))}


def read_bundle(
    ref: str | Path, named: dict[str, list[str]], catalogs: list[Path] | tuple[Path, ...] = ()
) -> Bundle:
    """Read the design file ``ref`` and the files ``named`` lists (``{"files": [...],
    "folders": [...], "catalog": [...]}``, relative to it), then the built-in catalog with
    ``catalogs`` on top (a domain file of the same name replaces the earlier one)."""
    path, builtin = design_path(ref)
    base = path.parent
    label = builtin and f"{builtin} (built in)"
    shown = f"{label}/{path.name}" if label else str(path)
    bundle = Bundle(design=_read(path, shown), builtin=builtin)
    root = label or str(base)
    for rel in named.get("files", []):
        p = base / rel
        if p.is_file():
            bundle.files[rel] = _read(p, f"{root}/{rel}")
    for rel in named.get("folders", []):
        folder = base / rel
        if folder.is_dir():
            for p in sorted(folder.glob("*.toml")):
                key = f"{rel.rstrip('/')}/{p.name}"
                bundle.files[key] = _read(p, f"{root}/{key}")
    bundle.catalog = catalog_files_in(CATALOG_DIR, BUILTIN_CATALOG)
    for rel in named.get("catalog", []):
        bundle.catalog.update(catalog_files_in(base / rel, f"{root}/{rel}"))
    for folder in catalogs:
        bundle.catalog.update(catalog_files_in(Path(folder), str(folder)))
    return bundle
