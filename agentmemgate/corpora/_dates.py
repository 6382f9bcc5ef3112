"""Source date strings -> ISO 8601, keeping the raw string when a date does not parse."""

from __future__ import annotations

import datetime as dt
import re

from ..text import MONTH_NUMBERS

_LME = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\(\w+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$")
_LOCOMO = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)


def iso_date(raw: str | None) -> str | None:
    """LongMemEval '2023/08/11 (Fri) 20:17' and LoCoMo '1:56 pm on 8 May, 2023' as ISO strings."""
    if raw is None:
        return None
    raw = str(raw)
    try:
        if m := _LME.match(raw):
            y, mo, d, h, mi = m.groups()
            return dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0)).isoformat(
                timespec="minutes"
            )
        if m := _LOCOMO.match(raw):
            h, mi, ampm, d, month, y = m.groups()
            month_no = MONTH_NUMBERS.get(month.lower())  # full names only, as LoCoMo writes them
            if month_no:
                hour = int(h) % 12 + (12 if ampm.lower() == "pm" else 0)
                return dt.datetime(int(y), month_no, int(d), hour, int(mi)).isoformat(
                    timespec="minutes"
                )
    except ValueError:
        pass
    return raw.strip() or None
