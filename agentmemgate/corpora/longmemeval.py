"""LongMemEval (Wu et al., 2024; MIT): oracle, _s and _m files, streamed one instance at a time.

Each instance is one question with its haystack: parallel lists ``haystack_sessions`` (lists of
``{role, content}`` turns), ``haystack_dates`` and ``haystack_session_ids``. Only the user's turns
are mined. Haystacks of _s/_m reuse sessions across questions; mining skips repeats by session id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import CorpusError
from ._dates import iso_date
from ._jsonstream import iter_items
from .model import Conversation, CorpusSession, CorpusTurn

WHAT = "LongMemEval instances"
REQUIRED = ("question_id", "haystack_sessions")


def variant_of(path: Path) -> str:
    """'oracle', 's' or 'm' from the file name (structure decides the corpus; the name only this)."""
    name = path.name.lower()
    if "oracle" in name:
        return "oracle"
    if m := re.search(r"_(s|m)(?:_cleaned)?(?:[._]|$)", name):
        return m.group(1)
    return ""


def _bad(path: Path, i: int, problem: str) -> CorpusError:
    return CorpusError(f"{path.name}: not a JSON list of {WHAT} (item {i} {problem})")


def parse_instance(item: object, i: int, path: Path, variant: str = "") -> Conversation:
    if not isinstance(item, dict):
        raise _bad(path, i, "is not an object")
    for key in REQUIRED:
        if key not in item:
            raise _bad(path, i, f"has no {key!r}")
    qid = str(item["question_id"])
    sessions = item["haystack_sessions"]
    if not isinstance(sessions, list):
        raise _bad(path, i, "has 'haystack_sessions' that is not a list")
    dates = item.get("haystack_dates") or [None] * len(sessions)
    ids = item.get("haystack_session_ids") or [f"s{j}" for j in range(len(sessions))]
    if len(dates) != len(sessions) or len(ids) != len(sessions):
        raise CorpusError(
            f"{path.name}: item {i} ({qid}) has {len(sessions)} sessions but "
            f"{len(dates)} dates and {len(ids)} session ids"
        )
    out = []
    for j, (raw_turns, date, sid) in enumerate(zip(sessions, dates, ids)):
        if not isinstance(raw_turns, list):
            raise CorpusError(f"{path.name}: item {i} ({qid}) session {j} is not a list of turns")
        turns = []
        for k, t in enumerate(raw_turns):
            if not isinstance(t, dict) or "role" not in t or "content" not in t:
                raise CorpusError(
                    f"{path.name}: item {i} ({qid}) session {j} turn {k} "
                    "has no 'role' and 'content'"
                )
            role = str(t["role"])
            turns.append(
                CorpusTurn(
                    index=k,
                    speaker=role,
                    text=str(t["content"] or ""),
                    ref=f"{qid}/{sid}/{k}",
                    mined=role == "user",
                )
            )
        out.append(CorpusSession(index=j, session_id=str(sid), date=iso_date(date), turns=turns))
    return Conversation(
        corpus="longmemeval",
        conversation_id=qid,
        speakers=["user", "assistant"],
        sessions=out,
        variant=variant,
    )


def iter_longmemeval(
    path: str | Path, on_bytes: Callable[[int], None] | None = None, skip: int = 0
) -> Iterator[Conversation]:
    path = Path(path)
    variant = variant_of(path)
    for i, item in enumerate(iter_items(path, WHAT, on_bytes, skip), start=skip):
        yield parse_instance(item, i, path, variant)
