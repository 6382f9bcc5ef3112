"""The scorer's judges: the fixed equivalence judge (value vs value) and the answer judge (what a
free-text answer asserts as the user's current value).

Both are named like every judge: ``offline`` (heuristic rules, labelled so in every report) or
``provider:model`` through the LLM layer (cache, call log, retries). The equivalence judge is the
validation room's (``validate.judges``), reused, with a memo so each distinct pair is asked once
per run. Judges are the scorer, not the system under test: the offline answer rules may look for
the arc's labelled values; the LLM answer judge is shown only the field, question and answer.
"""

from __future__ import annotations

import hashlib
import re
import threading
import tomllib
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec, normalize_text
from ..validate.judges import OFFLINE_JUDGE, OFFLINE_JUDGE_FAMILY, Judge, JudgeInfo, get_judge
from ..validate.judges.questions import EquivalenceQuestion
from ..validate.store import sha256_text as sha256_parts  # one digest of several strings
from ..versioned import versioned_file

ANSWER_CUES_DIR = Path(__file__).parent
ANSWER_CUES_PATH = ANSWER_CUES_DIR / "answer_cues.v1.toml"
ANSWER_RUBRIC = "answer_assertion"
# Part of every score key: a change to how measures or their stored reasons are computed
# re-scores stored traces and answers (no system is re-run; the judges' cache answers again).
# 2: reasons count sessions from 1 and every measure has one.
SCORING_VERSION = 2

# ``offline`` is the newest offline answer rule file; ``offline:answer_cues.vN`` pins one.
_PINNED_ANSWER_CUES = re.compile(r"offline:answer_cues\.v(\d+)")


def offline_answer_version(spec: str) -> int | None | bool:
    """``None`` for ``offline`` (the newest rules), N for ``offline:answer_cues.vN``, False for a
    spec that names no offline answer rules (a model spec)."""
    if spec == OFFLINE_JUDGE:
        return None
    m = _PINNED_ANSWER_CUES.fullmatch(spec)
    return int(m.group(1)) if m else False


# -- equivalence --------------------------------------------------------------------------------
class ValueJudge:
    """``same(field, value, reference)`` through one equivalence judge, each pair asked once."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self._memo: dict[tuple[str, str, str, str], bool] = {}
        self._lock = threading.Lock()

    @property
    def info(self) -> JudgeInfo:
        return self.judge.info

    @property
    def rubric(self) -> str:
        return self.judge.rubric_ref("equivalence")

    @property
    def key(self) -> str:
        """Scores are stored under this: a judge (or rubric) change re-scores stored traces."""
        return sha256_parts("equivalence", f"scoring-v{SCORING_VERSION}", self.judge.spec,
                            self.judge.family,
                            self.judge.rubric_sha256.get("equivalence", ""))

    def same(self, field: FieldSpec, value: str | None, reference: str) -> bool:
        if value is None or not value.strip():
            return False
        k = (field.attribute, field.description, value, reference)
        with self._lock:
            hit = self._memo.get(k)
        if hit is not None:
            return hit
        # Position order is fixed per pair (not by role), so a position-biased judge is not
        # biased toward either the stored value or the reference.
        a, b = sorted((value, reference), key=lambda s: sha256_parts(s, value + reference))
        verdict = self.judge.ask(EquivalenceQuestion(field=field.attribute,
                                                     description=field.description,
                                                     first=a, second=b))
        with self._lock:
            self._memo[k] = bool(verdict.equivalent)
        return bool(verdict.equivalent)


def get_value_judge(spec: str = OFFLINE_JUDGE, *, workspace: Any = None,
                    base_url: str | None = None, **llm_options: Any) -> ValueJudge:
    if offline_answer_version(spec) is not False:
        # ``offline:answer_cues.vN`` pins the answer rules; equivalence stays the offline judge
        spec, llm_options = OFFLINE_JUDGE, {}  # the CLI refuses LLM options when no model uses them
    return ValueJudge(get_judge(spec, workspace=workspace, base_url=base_url, **llm_options))


# -- answers ------------------------------------------------------------------------------------
class AnswerQuestion(BaseModel):
    """One answer to a field's probe question. ``candidates`` (the arc's labelled values) are read
    by the offline rules only; the LLM rubric never renders them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: str
    description: str
    probe_question: str
    answer: str
    candidates: tuple[str, ...] = ()


class AnswerVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asserted: list[str]  # values stated as the user's current value (empty: none)
    rationale: str


class AnswerJudge(ABC):
    spec: str = ""
    family: str = ""
    heuristic: bool = False
    rubric: str = ""
    rubric_sha256: str = ""

    @abstractmethod
    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        """What ``q.answer`` asserts; raise ``llm.CallFailed`` when no valid verdict could be had."""

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(spec=self.spec, family=self.family, heuristic=self.heuristic)

    def usage(self) -> dict[str, int]:
        return {}


@lru_cache(maxsize=None)
def load_answer_cues(path: Path = ANSWER_CUES_PATH) -> tuple[dict[str, re.Pattern], str]:
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))

    def rx(words: list[str], anchor: str = "") -> re.Pattern:
        return re.compile(anchor + r"(?<!\w)(?:" + "|".join(f"(?:{w})" for w in words) + r")(?!\w)")

    cues = {k: rx(v) for k, v in data.items()}
    cues["clause_breaks"] = re.compile(
        r"(?<!\w)(?:qqbreakqq|" + "|".join(data["clause_breaks"]) + r")(?!\w)")
    return cues, hashlib.sha256(raw).hexdigest()


def _canon(value: str) -> str:
    words = normalize_text(value).split()
    while words and words[0] in {"a", "an", "the", "my", "our", "your", "their"}:
        words = words[1:]
    return " ".join(words)


class OfflineAnswerJudge(AnswerJudge):
    """Heuristic rules (``answer_cues.vN.toml``, the newest unless ``version`` pins one): a
    labelled value found in the answer is asserted unless its clause frames it as a plan, a
    possibility, a past or negated value, or one side of an "X or Y" choice. Values the answer
    names that are not labelled cannot be read by these rules (they assert nothing the measures
    count); an LLM answer judge reads any value. ``spec`` is ``offline`` for the newest rules and
    ``offline:answer_cues.vN`` when pinned; ``rubric`` names the file's version either way."""

    family = OFFLINE_JUDGE_FAMILY
    heuristic = True

    def __init__(self, version: int | None = None) -> None:
        v, path = versioned_file(ANSWER_CUES_DIR, "answer_cues", "toml", version, "offline answer rules")
        self.version = v
        self.spec = OFFLINE_JUDGE if version is None else f"offline:answer_cues.v{v}"
        self.rubric = f"answer_cues.v{v}"
        self.cues, self.rubric_sha256 = load_answer_cues(path)

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        cues = self.cues
        text = " " + normalize_text(re.sub(r"[.!?;,\n]", _BREAK, q.answer)) + " "
        text = cues["ignore"].sub(" ", text)
        # Find the labelled values first (longest first, so one inside another is not found
        # twice; a comma inside a value may stand where the answer has one) and put a token in
        # their place, so a clause break inside a value ("Crate and Barrel") cannot cut it.
        found: dict[str, str] = {}
        for i, value in enumerate(sorted(set(q.candidates), key=lambda v: -len(_canon(v)))):
            words = _canon(value).split()
            if not words:
                continue
            pattern = r"(?<!\w)" + rf"(?:\s+{_BREAK.strip()})?\s+".join(map(re.escape, words)) + r"(?!\w)"
            token = f" qqvalue{i}qq "
            text, n = re.subn(pattern, token, text)
            if n:
                found[token.strip()] = value
        if not found:
            nothing = cues["no_answer"].search(text)
            return AnswerVerdict(asserted=[], rationale=(
                f"Says it does not know ('{nothing.group(0)}')." if nothing else
                "Names none of the arc's values (the offline rules cannot read other values)."))
        asserted: list[str] = []
        reasons: list[str] = []
        for clause in cues["clause_breaks"].split(text):
            tokens = [m for m in re.finditer(r"qqvalue\d+qq", clause)]
            if not tokens:
                continue
            choice = (len({m.group(0) for m in tokens}) > 1
                      and re.search(r"(?<!\w)or(?!\w)", clause) is not None)
            for m in tokens:
                value = found[m.group(0)]
                # Only the words between this value and its neighbours frame it
                # ("switched from X to Y": 'from' frames X, not Y).
                before = re.split(r"qqvalue\d+qq", clause[:m.start()])[-1]
                after = re.split(r"qqvalue\d+qq", clause[m.end():])[0]
                if choice:
                    reasons.append(f"'{value}' is one side of a choice")
                elif (c := cues["plan_before"].search(before) or cues["plan_after"].search(after)):
                    reasons.append(f"'{value}' is framed as a plan ('{c.group(0)}')")
                elif (c := cues["past_before"].search(before) or cues["past_after"].search(after)):
                    reasons.append(f"'{value}' is framed as past or negated ('{c.group(0)}')")
                else:
                    if value not in asserted:
                        asserted.append(value)
                    reasons.append(f"'{value}' is stated as current")
        return AnswerVerdict(asserted=asserted, rationale="; ".join(dict.fromkeys(reasons)) + ".")


_BREAK = " qqbreakqq "


class AssertionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asserted: list[str]
    rationale: str


class LLMAnswerJudge(AnswerJudge):
    heuristic = False

    def __init__(self, spec: str, *, workspace: Any = None, base_url: str | None = None,
                 **llm_options: Any):
        from .. import rubrics
        from ..errors import MissingApiKey
        from ..llm import get_model

        try:
            self.model = get_model(spec, workspace=workspace, base_url=base_url, **llm_options)
        except MissingApiKey as e:
            raise e.for_flag("--judge", f"judge {spec}") from None
        self.spec, self.family = spec, self.model.family
        r = rubrics.load(ANSWER_RUBRIC)
        self._rubric = r
        self.rubric, self.rubric_sha256 = r.ref, r.sha256

    def prompt(self, q: AnswerQuestion) -> str:
        return self._rubric.render(field=q.field, description=q.description,
                                   probe_question=q.probe_question, answer=q.answer)

    def plan(self, q: AnswerQuestion) -> bool:
        """Count the call ``ask`` would make (dry runs, ``model.planned``)."""
        return self.model.plan(self.prompt(q), schema=AssertionAnswer, purpose="eval.answer")

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        a = self.model.complete(self.prompt(q), schema=AssertionAnswer, purpose="eval.answer").parsed
        return AnswerVerdict(asserted=[v for v in a.asserted if v.strip()], rationale=a.rationale)

    def usage(self) -> dict[str, int]:
        return self.model.usage.as_dict()


def get_answer_judge(spec: str = OFFLINE_JUDGE, *, workspace: Any = None,
                     base_url: str | None = None, **llm_options: Any) -> AnswerJudge:
    """``offline`` (the newest answer rules), ``offline:answer_cues.vN`` (pinned) or a model spec."""
    version = offline_answer_version(spec)
    if version is not False:
        return OfflineAnswerJudge(version)
    if spec.startswith("offline"):
        from ..errors import BadInput

        raise BadInput(f"Unknown offline answer judge {spec!r}; use offline (the newest rules) or "
                       "offline:answer_cues.vN (N a released version, e.g. offline:answer_cues.v1)")
    return LLMAnswerJudge(spec, workspace=workspace, base_url=base_url, **llm_options)


def answers_key(value_judge: ValueJudge, answer_judge: AnswerJudge) -> str:
    return sha256_parts(value_judge.key, "answers", answer_judge.spec, answer_judge.family,
                        answer_judge.rubric_sha256)
