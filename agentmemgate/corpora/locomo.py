"""LoCoMo (Maharana et al., 2024; CC BY-NC 4.0): ``locomo10.json``, two named speakers per sample.

Each sample's ``conversation`` holds ``speaker_a``/``speaker_b``, ``session_N`` turn lists
(``speaker``, ``dia_id``, ``text``; image turns add a caption we ignore) and ``session_N_date_time``.
Some samples list dates for sessions that have no turns (conv-26 sessions 20-35): they are kept as
empty sessions so numbering and dates stay faithful. Both speakers are mined.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import CorpusError
from ._dates import iso_date
from ._jsonstream import iter_items
from .model import Conversation, CorpusSession, CorpusTurn

WHAT = "LoCoMo samples"
_SESSION = re.compile(r"^session_(\d+)(_date_time)?$")


def parse_sample(item: object, i: int, path: Path) -> Conversation:
    if not isinstance(item, dict):
        raise CorpusError(f"{path.name}: not a JSON list of {WHAT} (item {i} is not an object)")
    conv = item.get("conversation")
    if not isinstance(conv, dict):
        raise CorpusError(
            f"{path.name}: not a JSON list of {WHAT} (item {i} has no 'conversation')"
        )
    sample_id = str(item.get("sample_id") or f"sample-{i}")
    speakers = [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]
    if not speakers:
        raise CorpusError(f"{path.name}: item {i} ({sample_id}) has no 'speaker_a'/'speaker_b'")
    numbers: dict[int, dict] = {}
    for key, value in conv.items():
        if m := _SESSION.match(key):
            slot = numbers.setdefault(int(m.group(1)), {})
            slot["date" if m.group(2) else "turns"] = value
    sessions = []
    for idx, n in enumerate(sorted(numbers)):
        raw = numbers[n].get("turns") or []
        if not isinstance(raw, list):
            raise CorpusError(
                f"{path.name}: item {i} ({sample_id}) session_{n} is not a list of turns"
            )
        turns = []
        for k, t in enumerate(raw):
            if not isinstance(t, dict) or "speaker" not in t or "text" not in t:
                raise CorpusError(
                    f"{path.name}: item {i} ({sample_id}) session_{n} turn {k} "
                    "has no 'speaker' and 'text'"
                )
            turns.append(
                CorpusTurn(
                    index=k,
                    speaker=str(t["speaker"]),
                    text=str(t["text"] or ""),
                    ref=str(t.get("dia_id") or f"D{n}:{k + 1}"),
                    mined=True,
                )
            )
        sessions.append(
            CorpusSession(
                index=idx,
                session_id=f"session_{n}",
                date=iso_date(numbers[n].get("date")),
                turns=turns,
            )
        )
    return Conversation(
        corpus="locomo", conversation_id=sample_id, speakers=speakers, sessions=sessions
    )


def iter_locomo(
    path: str | Path, on_bytes: Callable[[int], None] | None = None, skip: int = 0
) -> Iterator[Conversation]:
    path = Path(path)
    for i, item in enumerate(iter_items(path, WHAT, on_bytes, skip), start=skip):
        yield parse_sample(item, i, path)
