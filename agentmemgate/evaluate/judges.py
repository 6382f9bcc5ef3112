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
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from ..llm.structured import Prose, real_text
from ..schema import FieldSpec, normalize_text
from ..validate.judges import OFFLINE_JUDGE, OFFLINE_JUDGE_FAMILY, Judge, JudgeInfo, get_judge
from ..validate.judges.questions import EquivalenceQuestion
from ..validate.store import sha256_text as sha256_parts  # one digest of several strings
from ..versioned import versioned_file

ANSWER_CUES_DIR = Path(__file__).parent
ANSWER_CUES_PATH = ANSWER_CUES_DIR / "answer_cues.v1.toml"
ANSWER_RUBRIC = "answer_assertion"
ANSWER_BUDGET = 400  # output tokens of one verdict: a few values and a sentence
# Part of every score key: a change to how measures or their stored reasons are computed
# re-scores stored traces and answers (no system is re-run; the judges' cache answers again).
# 2: reasons count sessions from 1 and every measure has one.
# 3: correction arcs keep their end read and whether the wrong value ended never valid.
SCORING_VERSION = 3

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


def _not_placeholder(values: list[str]) -> list[str]:
    for v in values:
        if v.strip() and _PLACEHOLDER.match(v):
            real_text(v)  # raises "copies the format example (...)"
    # A small model (SmolLM2-135M) lists "I don't know" as the asserted value when it finds none:
    # that says nothing is asserted, so it is read as the empty list, not as a value.
    return [v for v in values if v.strip() and not _NO_VALUE.match(v)]


_NO_VALUE = re.compile(r"^\s*(?:i\s+(?:do\s*n[o']?t|dont)\s+know|i\s+have\s+no\s+record(?:\s+of\s+that)?"
                       r"|unknown|none|nothing|no\s+(?:value|answer|record|information)|n/?a"
                       r"|not\s+(?:stated|mentioned|known))\W*$", re.I)


_PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]{0,120}>|\.\.\.|…|value|x|y)\s*$", re.I)


class AssertionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asserted: Annotated[list[str], AfterValidator(_not_placeholder)]
    # minLength reaches a server's decoding grammar (llama-cpp-python's json_object): under it
    # SmolLM2-135M otherwise closed the rationale at once ("rationale": "").
    rationale: Annotated[Prose, Field(min_length=12)]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", normalize_text(text))


def assertion_schema(answer: str) -> type[AssertionAnswer]:
    """``AssertionAnswer`` that also refuses a value the answer does not contain (a small model
    invents values, "1.0", or copies the example's): each content word of every listed value
    must occur in the answer. The JSON schema and name are those of ``AssertionAnswer``, so the
    cache key does not depend on the answer twice."""
    have = set(_words(answer))

    class _Checked(AssertionAnswer):
        @field_validator("asserted")
        @classmethod
        def _in_answer(cls, values: list[str]) -> list[str]:
            for v in values:
                missing = [w for w in _words(v) if w not in have]
                if missing:
                    raise ValueError(f"{v!r} is not in the answer ({', '.join(missing[:3])} "
                                     "not found): list only values the answer itself gives, in "
                                     "its words")
            return values

    _Checked.__name__ = _Checked.__qualname__ = "AssertionAnswer"
    return _Checked


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
        return self.model.plan(self.prompt(q), schema=assertion_schema(q.answer),
                               purpose="eval.answer", max_tokens=ANSWER_BUDGET)

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        a = self.model.complete(self.prompt(q), schema=assertion_schema(q.answer),
                                purpose="eval.answer", max_tokens=ANSWER_BUDGET).parsed
        return AnswerVerdict(asserted=[v for v in a.asserted if v.strip()], rationale=a.rationale)

    def usage(self) -> dict[str, int]:
        return self.model.usage.as_dict()


class ScopedOfflineAnswerJudge(AnswerJudge):
    """Heuristic rules from version 2 on (``answer_cues.vN.toml``, read by ``answer_reader``): the
    answer's structure first (memory lists, Mem0 JSON, Graphiti facts and their validity, prose),
    then each labelled value in its own scope; see the rules file's header."""

    family = OFFLINE_JUDGE_FAMILY
    heuristic = True

    def __init__(self, version: int, path: Path | None = None) -> None:
        from .answer_reader import load_cues

        self.path = path or ANSWER_CUES_DIR / f"answer_cues.v{version}.toml"
        self.cues = load_cues(self.path)
        self.version = version
        self.spec = f"offline:answer_cues.v{version}"
        self.rubric, self.rubric_sha256 = f"answer_cues.v{version}", self.cues.sha256

    def ask(self, q: AnswerQuestion) -> AnswerVerdict:
        from .answer_reader import field_stems, judge_answer

        words = field_stems(self.cues, q.field, q.description, q.probe_question)
        asserted, why = judge_answer(self.cues, q.answer, q.candidates, words)
        return AnswerVerdict(asserted=asserted, rationale=why)


def offline_answer_judge(version: int | None = None) -> AnswerJudge:
    """The offline answer rules ``answer_cues.vN.toml`` (the newest when ``version`` is None):
    v1 read by ``OfflineAnswerJudge`` (unchanged), v2 on by ``ScopedOfflineAnswerJudge``.
    ``spec`` is ``offline`` for the newest rules and ``offline:answer_cues.vN`` when pinned;
    ``rubric`` names the file's version either way."""
    v, path = versioned_file(ANSWER_CUES_DIR, "answer_cues", "toml", version, "offline answer rules")
    judge: AnswerJudge = OfflineAnswerJudge(path) if v == 1 else ScopedOfflineAnswerJudge(v, path)
    judge.spec = OFFLINE_JUDGE if version is None else f"offline:answer_cues.v{v}"
    return judge


def get_answer_judge(spec: str = OFFLINE_JUDGE, *, workspace: Any = None,
                     base_url: str | None = None, **llm_options: Any) -> AnswerJudge:
    """``offline`` (the newest answer rules), ``offline:answer_cues.vN`` (pinned: v1 stays
    selectable, so results stored under it reproduce) or a model spec."""
    version = offline_answer_version(spec)
    if version is not False:
        return offline_answer_judge(version)
    if spec.startswith("offline"):
        from ..errors import BadInput

        raise BadInput(f"Unknown offline answer judge {spec!r}; use offline (the newest rules) or "
                       "offline:answer_cues.vN (N a released version, e.g. offline:answer_cues.v1)")
    return LLMAnswerJudge(spec, workspace=workspace, base_url=base_url, **llm_options)


def answers_key(value_judge: ValueJudge, answer_judge: AnswerJudge) -> str:
    return sha256_parts(value_judge.key, "answers", answer_judge.spec, answer_judge.family,
                        answer_judge.rubric_sha256)
