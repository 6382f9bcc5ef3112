"""The offline answer judges: heuristic rule files, labelled so in every report.

Version 1 (``answer_cues.v1.toml``) is read here, unchanged so stored results reproduce; from
version 2 on a rule file is read by the scoped reader (``scoped.judge_answer``), whose steps the
file's header documents in order.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cache
from pathlib import Path

from ..schema import normalize_text
from ..validate.judges import OFFLINE_JUDGE_FAMILY
from .base import ANSWER_CUES_DIR, AnswerJudge, AnswerQuestion, AnswerVerdict

ANSWER_CUES_PATH = ANSWER_CUES_DIR / "answer_cues.v1.toml"
# Version 1 puts a word no answer holds where a clause breaks and where each labelled value stands.
_BREAK = " qqbreakqq "
_VALUE = "qqvalue"
_VALUE_TOKEN = re.compile(_VALUE + r"\d+qq")


@cache
def load_answer_cues(path: Path = ANSWER_CUES_PATH) -> tuple[dict[str, re.Pattern], str]:
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))

    def rx(words: list[str], anchor: str = "") -> re.Pattern:
        return re.compile(anchor + r"(?<!\w)(?:" + "|".join(f"(?:{w})" for w in words) + r")(?!\w)")

    cues = {k: rx(v) for k, v in data.items()}
    cues["clause_breaks"] = re.compile(
        r"(?<!\w)(?:" + _BREAK.strip() + "|" + "|".join(data["clause_breaks"]) + r")(?!\w)"
    )
    return cues, hashlib.sha256(raw).hexdigest()


def canonical_value(value: str) -> str:
    """A value as version 1 finds it: normalized, leading articles and possessives dropped."""
    words = normalize_text(value).split()
    while words and words[0] in {"a", "an", "the", "my", "our", "your", "their"}:
        words = words[1:]
    return " ".join(words)


class OfflineAnswerJudge(AnswerJudge):
    """Heuristic rules version 1 (``answer_cues.v1.toml``; kept unchanged so stored results
    reproduce): a labelled value found in the answer is asserted unless its clause frames it as a
    plan, a possibility, a past or negated value, or one side of an "X or Y" choice. Values the
    answer names that are not labelled cannot be read by these rules; an LLM answer judge reads
    any value. Version 2 on: ``ScopedOfflineAnswerJudge``; ``offline_answer_judge`` picks."""

    family = OFFLINE_JUDGE_FAMILY
    heuristic = True

    def __init__(self, path: Path = ANSWER_CUES_PATH) -> None:
        self.version = 1
        self.spec = "offline:answer_cues.v1"
        self.rubric = "answer_cues.v1"
        self.cues, self.rubric_sha256 = load_answer_cues(path)

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        cues = self.cues
        text = " " + normalize_text(re.sub(r"[.!?;,\n]", _BREAK, q.answer)) + " "
        text = cues["ignore"].sub(" ", text)
        # Find the labelled values first (longest first, so one inside another is not found
        # twice; a comma inside a value may stand where the answer has one) and put a token in
        # their place, so a clause break inside a value ("Crate and Barrel") cannot cut it.
        found: dict[str, str] = {}
        for i, value in enumerate(
            sorted(set(q.candidates), key=lambda v: -len(canonical_value(v)))
        ):
            words = canonical_value(value).split()
            if not words:
                continue
            pattern = (
                r"(?<!\w)" + rf"(?:\s+{_BREAK.strip()})?\s+".join(map(re.escape, words)) + r"(?!\w)"
            )
            token = f" {_VALUE}{i}qq "
            text, n = re.subn(pattern, token, text)
            if n:
                found[token.strip()] = value
        if not found:
            nothing = cues["no_answer"].search(text)
            return AnswerVerdict(
                asserted=[],
                rationale=(
                    f"Says it does not know ('{nothing.group(0)}')."
                    if nothing
                    else "Names none of the arc's values (the offline rules cannot read other values)."
                ),
            )
        asserted: list[str] = []
        reasons: list[str] = []
        for clause in cues["clause_breaks"].split(text):
            tokens = list(_VALUE_TOKEN.finditer(clause))
            if not tokens:
                continue
            choice = (
                len({m.group(0) for m in tokens}) > 1
                and re.search(r"(?<!\w)or(?!\w)", clause) is not None
            )
            for m in tokens:
                value = found[m.group(0)]
                # Only the words between this value and its neighbours frame it
                # ("switched from X to Y": 'from' frames X, not Y).
                before = _VALUE_TOKEN.split(clause[: m.start()])[-1]
                after = _VALUE_TOKEN.split(clause[m.end() :])[0]
                if choice:
                    reasons.append(f"'{value}' is one side of a choice")
                elif c := cues["plan_before"].search(before) or cues["plan_after"].search(after):
                    reasons.append(f"'{value}' is framed as a plan ('{c.group(0)}')")
                elif c := cues["past_before"].search(before) or cues["past_after"].search(after):
                    reasons.append(f"'{value}' is framed as past or negated ('{c.group(0)}')")
                else:
                    if value not in asserted:
                        asserted.append(value)
                    reasons.append(f"'{value}' is stated as current")
        return AnswerVerdict(asserted=asserted, rationale="; ".join(dict.fromkeys(reasons)) + ".")


class ScopedOfflineAnswerJudge(AnswerJudge):
    """Heuristic rules from version 2 on (``answer_cues.vN.toml``, read by ``scoped``): the
    answer's structure first (memory lists, Mem0 JSON, Graphiti facts and their validity, prose),
    then each labelled value in its own scope; see the rules file's header."""

    family = OFFLINE_JUDGE_FAMILY
    heuristic = True

    def __init__(self, version: int, path: Path | None = None) -> None:
        from .cues import load_cues

        self.path = path or ANSWER_CUES_DIR / f"answer_cues.v{version}.toml"
        self.cues = load_cues(self.path)
        self.version = version
        self.spec = f"offline:answer_cues.v{version}"
        self.rubric, self.rubric_sha256 = f"answer_cues.v{version}", self.cues.sha256

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        from .scoped import field_stems, judge_answer

        words = field_stems(self.cues, q.field, q.description, q.probe_question)
        asserted, why = judge_answer(self.cues, q.answer, q.candidates, words)
        return AnswerVerdict(asserted=asserted, rationale=why)
