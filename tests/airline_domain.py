"""A user's new domain file, as a researcher extending the catalog would write it: a copy of a
built-in domain file with its field and values replaced (``preferred_airline.toml``; and
``ski_resort.toml``, whose values no other file has either)."""

from __future__ import annotations

import json
import re

from agentmemgate.design.catalog import CATALOG_DIR

BASE = "phone_carrier"
VALUES = [
    "Delta",
    "United",
    "American Airlines",
    "Southwest",
    "JetBlue",
    "Alaska Airlines",
    "Spirit",
    "Hawaiian Airlines",
]
LONG_VALUES = [
    "the Delta flights out of the hub near my parents",
    "the United flights with the free checked bag on my card",
    "the American Airlines flights with the lounge access on my card",
    "the Southwest flights with two free checked bags per person",
    "the JetBlue flights with the extra legroom seats up front",
    "the Alaska Airlines flights out of the small airport near home",
    "the Spirit flights with the bare fares and paid carry-ons",
    "the Hawaiian Airlines flights with the island hopper passes",
]
FIELD = {
    "noun": "airline",
    "probe_question": "Which airline does the user currently fly with?",
    "oblique_thing": "the new airline",
}


def replace_key(text: str, key: str, value: str | list[str]) -> str:
    """``text`` with top-level ``key`` set to ``value`` (a string, or a list written one item a
    line, as the built-in files write them), the rest of the file unchanged."""
    if isinstance(value, str):
        return re.sub(rf"(?m)^{key} = .*$", lambda _: f"{key} = {json.dumps(value)}", text, count=1)
    items = "".join(f"  {json.dumps(v)},\n" for v in value)
    return re.sub(rf"(?ms)^{key} = \[\n.*?^\]", lambda _: f"{key} = [\n{items}]", text, count=1)


def airline_domain(**changes: str | list[str]) -> str:
    """The airline file; ``changes`` set further keys (``values=[...]`` for five values...)."""
    text = (CATALOG_DIR / f"{BASE}.toml").read_text(encoding="utf-8")
    text = text.replace("# phone carrier:", "# preferred airline:", 1)
    for key, value in {**FIELD, "values": VALUES, "long_values": LONG_VALUES, **changes}.items():
        text = replace_key(text, key, value)
    return text


SKI_VALUES = [
    "Vail",
    "Aspen Snowmass",
    "Park City",
    "Jackson Hole",
    "Big Sky",
    "Breckenridge",
    "Killington",
    "Mammoth Mountain",
]


def ski_domain() -> str:
    """A second new domain, for runs that propose two."""
    return airline_domain(
        noun="ski resort",
        probe_question="Which ski resort does the user currently go to?",
        oblique_thing="the new resort",
        values=SKI_VALUES,
        long_values=[f"the {v} season pass with the early morning lift access" for v in SKI_VALUES],
    )
