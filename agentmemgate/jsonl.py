"""Read JSONL input files into pydantic records, naming the file and line of the first bad one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from .errors import BadInput, unreadable

M = TypeVar("M", bound=BaseModel)


def read_records(path: str | Path, model: type[M]) -> Iterator[tuple[str, M]]:
    """Yield ``("file:line", record)`` per non-blank line; a bad line raises a one-line BadInput."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise unreadable(path, e) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            yield where, model.model_validate(json.loads(line))
        except json.JSONDecodeError as e:
            raise BadInput(f"{where}: not JSON ({e.msg})") from None
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"]) or "line"
            raise BadInput(f"{where}: {loc}: {err['msg']}") from None
