"""Every prompt and rubric as a versioned text file; its sha256 goes into provenance.

Files are named ``NAME.vN.txt``. ``load("NAME")`` returns the highest version; pass ``version`` to
pin one. Never edit a released version in place: add ``NAME.v(N+1).txt``.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput

RUBRIC_DIR = Path(__file__).parent
_NAME = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)\.txt$")
_SLOT = re.compile(r"\{\{(\w+)\}\}")


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    version: int
    text: str
    sha256: str

    @property
    def ref(self) -> str:
        return f"{self.name}.v{self.version}"

    def render(self, **values: str) -> str:
        """Fill ``{{key}}`` slots; single braces stay literal so JSON examples need no escaping."""
        out = self.text
        for key, val in values.items():
            out = out.replace("{{" + key + "}}", str(val))
        missing = re.findall(r"\{\{(\w+)\}\}", out)
        if missing:
            raise BadInput(f"Rubric {self.ref} needs values for: {', '.join(sorted(set(missing)))}")
        return out

    def fill(self, **values: str) -> str:
        """Fill ``{{key}}`` slots with text from outside (corpus turns, which may hold ``{{...}}``
        themselves: code in LongMemEval) in one pass, so inserted text is never read for slots."""
        missing = sorted(set(_SLOT.findall(self.text)) - set(values))
        if missing:
            raise BadInput(f"Rubric {self.ref} needs values for: {', '.join(missing)}")
        return _SLOT.sub(lambda m: str(values[m.group(1)]), self.text)


def available() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for p in RUBRIC_DIR.glob("*.txt"):
        m = _NAME.match(p.name)
        if m:
            found.setdefault(m["name"], []).append(int(m["version"]))
    return {k: sorted(v) for k, v in sorted(found.items())}


@cache
def load(name: str, version: int | None = None) -> Rubric:
    versions = available().get(name)
    if not versions:
        raise BadInput(f"No rubric named {name!r}; known: {', '.join(available()) or 'none'}")
    v = version if version is not None else versions[-1]
    if v not in versions:
        raise BadInput(f"Rubric {name!r} has no version {v}; known: {versions}")
    raw = (RUBRIC_DIR / f"{name}.v{v}.txt").read_bytes()
    return Rubric(
        name=name, version=v, text=raw.decode("utf-8"), sha256=hashlib.sha256(raw).hexdigest()
    )


def sha256_files(paths: list[Path]) -> str:
    """One digest over several files (name + bytes), for prompts that are phrase banks."""
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()
