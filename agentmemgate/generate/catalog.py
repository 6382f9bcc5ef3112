"""The domain catalog: attributes people switch, their values and the phrases that realize them.

The data lives in ``catalog.toml`` so that adding a domain is an edit to data, not code.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec

CATALOG_PATH = Path(__file__).with_name("catalog.toml")


class Domain(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attribute: str
    noun: str
    probe_question: str
    current: list[str]
    stay: str
    switch: str
    switching: str
    switched: str
    doing: list[str]
    oblique_thing: str
    reasons: list[str]
    user_chat: list[str]
    assistant_chat: list[str]
    values: list[str]
    long_values: list[str]

    def field(self) -> FieldSpec:
        """The value-free field: description built from the attribute name alone."""
        return FieldSpec(
            attribute=self.attribute,
            description=f"The user's current {self.noun}.",
            probe_question=self.probe_question,
        )


@lru_cache(maxsize=None)
def load_catalog(path: Path = CATALOG_PATH) -> dict[str, Domain]:
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    return {key: Domain(attribute=key, **body) for key, body in raw.items()}
