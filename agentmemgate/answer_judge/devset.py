"""The answer-judge dev set (``devsets/answers/``): load the hand-labelled answers and measure any
answer judge on them, scored the way ``amg eval answers`` scores an answer.

Each item is one answer to a field's probe question with the two labelled values of its arc
(``initial``, ``plan``) and the roles the answer asserts as the user's current value (``other``: a
value that is neither). A judge is shown what ``amg eval`` shows it (the field, its description,
the question, the answer; the offline rules also the two values); the strings it calls asserted
are mapped to roles with the equivalence judge the eval uses, a string matching neither labelled
value being ``other``. The set is two files: ``answers.jsonl`` (parts ``dev`` and ``heldout``,
split by a documented rule) and ``heldout2.jsonl`` (part ``heldout2``, written later by another
reader blind to the rules). Measures per part and per shape, 95% Wilson intervals:

- exact: the judged role set equals the label (n = every item; a judge failure counts as wrong);
- false plan: the plan value read as asserted where the label does not assert it (n = judged
  items whose label lacks ``plan``): each such error is a false exposure in ``amg eval answers``;
- false initial / false other: the same for the other roles;
- missed: a labelled role the judge did not assert (n = labelled roles of judged items);
- failures: items with no valid verdict (an LLM judge's ``CallFailed``), counted, never dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator, model_validator

from ..errors import BadInput
from ..jsonl import read_records
from ..llm import CallFailed
from ..schema import FieldSpec
from ..stats import Proportion, wilson
from .base import AnswerJudge, AnswerQuestion, ValueComparer

Role = Literal["initial", "plan", "other"]
ROLES: tuple[str, ...] = ("initial", "plan", "other")
PARTS: tuple[str, ...] = (
    "dev",
    "heldout",
    "heldout2",
    "dev3",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "heldout12",
)
SPLIT_PARTS: tuple[str, ...] = ("dev", "heldout")  # the parts of answers.jsonl, by split_part
DEVSET = Path(__file__).resolve().parents[2] / "devsets" / "answers" / "answers.jsonl"
HELDOUT2 = DEVSET.with_name("heldout2.jsonl")
# The frames version 2 misread (graph relations naming a plan, a change a third party scheduled,
# a fact marked invalid since a date): held-out 3 written first, dev 3 after it, for version 3.
DEV3, HELDOUT3 = DEVSET.with_name("dev3.jsonl"), DEVSET.with_name("heldout3.jsonl")
# Written later, each blind to every rule and every other set, measured once before being read.
HELDOUT4, HELDOUT5, HELDOUT6, HELDOUT7, HELDOUT8, HELDOUT9, HELDOUT10, HELDOUT11, HELDOUT12 = (
    DEVSET.with_name(f"heldout{k}.jsonl") for k in (4, 5, 6, 7, 8, 9, 10, 11, 12)
)
ANSWER_FILES: tuple[Path, ...] = (
    DEVSET, HELDOUT2, DEV3, HELDOUT3, HELDOUT4, HELDOUT5, HELDOUT6, HELDOUT7, HELDOUT8,
    HELDOUT9, HELDOUT10, HELDOUT11, HELDOUT12,
)  # fmt: skip


class LabelledValues(BaseModel):
    model_config = ConfigDict(extra="forbid")
    initial: StrictStr = Field(min_length=1)
    plan: StrictStr = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct(self) -> LabelledValues:
        if self.initial.strip().lower() == self.plan.strip().lower():
            raise ValueError("initial and plan are the same value")
        return self


class AnswerItem(BaseModel):
    """One line of ``answers.jsonl``."""

    model_config = ConfigDict(extra="forbid")
    id: StrictStr = Field(min_length=1)
    part: Literal[PARTS]  # type: ignore[valid-type]  # one list of parts: PARTS above
    shape: StrictStr = Field(min_length=1)
    field: StrictStr = Field(min_length=1)
    question: StrictStr = Field(min_length=1)
    values: LabelledValues
    answer: StrictStr = Field(min_length=1)
    asserts: list[Role]
    note: StrictStr = ""

    @field_validator("asserts")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a role is listed twice")
        return sorted(v, key=ROLES.index)


class AnswerFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    sha256: str
    parts: list[str]


class AnswerSet(BaseModel):
    """One or more answer files. ``path`` and ``sha256`` are the file's own for one file; for
    several, the paths joined with " + " and the sha256 of their bytes concatenated in order."""

    model_config = ConfigDict(extra="forbid")
    path: str
    sha256: str
    items: list[AnswerItem]
    files: list[AnswerFile] = []

    def part_sha256(self, part: str) -> str:
        """The sha256 of the file(s) holding ``part``'s items (what a recorded figure names), so
        a figure for ``heldout`` stays tied to ``answers.jsonl`` whichever files were loaded."""
        holding = [f for f in self.files if part in f.parts]
        if len(holding) == 1:
            return holding[0].sha256
        return (
            hashlib.sha256("".join(f.sha256 for f in holding).encode()).hexdigest()
            if holding
            else self.sha256
        )


def split_part(item_id: str, shape_ids: list[str]) -> str:
    """The documented split rule: within a shape, ids ordered by sha256("answers-devset:" + id)
    alternate dev, heldout, dev, ... from the first."""
    order = sorted(
        shape_ids, key=lambda i: hashlib.sha256(f"answers-devset:{i}".encode()).hexdigest()
    )
    return SPLIT_PARTS[order.index(item_id) % 2]


def field_spec(attribute: str, question: str) -> FieldSpec:
    """The field as ``amg eval`` shows it to a judge: the catalog's description, the item's
    question as the probe question."""
    from ..design.catalog import load_catalog

    domain = load_catalog().get(attribute)
    if domain is None:
        raise BadInput(f"unknown field {attribute!r} (not a catalog attribute)")
    return domain.field().model_copy(update={"probe_question": question})


def load_answer_set(path: str | Path | Sequence[str | Path] = ANSWER_FILES) -> AnswerSet:
    """One file or several (default: ``answers.jsonl`` and ``heldout2.jsonl``). Every line
    checked (JSON, fields, known roles, catalog field, an id unique across the files); the first
    bad one is a one-line ``BadInput`` naming the file and line. A file with no answers is refused."""
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    if not paths:
        raise BadInput("No answer set given")
    items: list[AnswerItem] = []
    files: list[AnswerFile] = []
    seen: dict[str, str] = {}
    for p in paths:
        if not p.is_file():
            raise BadInput(f"No answer set at {str(p)!r}")
        mine: list[AnswerItem] = []
        for where, item in read_records(p, AnswerItem):
            if item.id in seen:
                raise BadInput(f"{where}: duplicate id {item.id!r} (first on {seen[item.id]})")
            seen[item.id] = where
            try:
                field_spec(item.field, item.question)
            except BadInput as e:
                raise BadInput(f"{where}: {e}") from None
            mine.append(item)
        if not mine:
            raise BadInput(f"{p.name}: no answers")
        files.append(
            AnswerFile(
                path=str(p),
                sha256=hashlib.sha256(p.read_bytes()).hexdigest(),
                parts=[x for x in PARTS if any(it.part == x for it in mine)],
            )
        )
        items += mine
    if len(files) == 1:
        path_s, sha = files[0].path, files[0].sha256
    else:
        path_s = " + ".join(f.path for f in files)
        sha = hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()
    return AnswerSet(path=path_s, sha256=sha, items=items, files=files)


# -- measuring ------------------------------------------------------------------------------
class ItemResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    part: str
    shape: str
    expected: list[str]
    judged: list[str] | None  # None: the judge gave no valid verdict
    asserted: list[str] = []  # the strings the judge called asserted
    rationale: str = ""
    error: str = ""

    @property
    def correct(self) -> bool:
        return self.judged is not None and set(self.judged) == set(self.expected)


class Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int
    exact: Proportion
    failures: Proportion
    false_plan: Proportion
    false_initial: Proportion
    false_other: Proportion
    missed: Proportion


class ShapeFigures(Figures):
    shape: str


class PartReport(Figures):
    part: str
    shapes: list[ShapeFigures]


class DevsetReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: str
    judge_family: str
    heuristic: bool
    rubric: str
    rubric_sha256: str
    value_judge: str
    value_rubric: str
    answers_path: str
    answers_sha256: str
    part_sha256: dict[str, str] = {}  # each measured part: the sha256 of the file(s) holding it
    parts: list[PartReport]
    items: list[ItemResult]
    usage: dict[str, int] = {}


def roles_of(
    asserted: Iterable[str],
    item: AnswerItem,
    field: FieldSpec,
    same: Callable[[FieldSpec, str, str], bool],
) -> list[str]:
    """Map a judge's asserted strings to roles, as ``amg eval`` compares them with the values."""
    roles: set[str] = set()
    for x in asserted:
        hit = {r for r in ("initial", "plan") if same(field, x, getattr(item.values, r))}
        roles |= hit or {"other"}
    return [r for r in ROLES if r in roles]


def judge_item(item: AnswerItem, judge: AnswerJudge, value_judge: ValueComparer) -> ItemResult:
    field = field_spec(item.field, item.question)
    q = AnswerQuestion(
        field=field.attribute,
        description=field.description,
        probe_question=field.probe_question,
        answer=item.answer,
        candidates=(item.values.initial, item.values.plan),
    )
    base = dict(id=item.id, part=item.part, shape=item.shape, expected=list(item.asserts))
    try:
        v = judge.ask(q)
        judged = roles_of(v.asserted, item, field, value_judge.same)
    except CallFailed as e:
        return ItemResult(**base, judged=None, error=str(e))
    return ItemResult(**base, judged=judged, asserted=list(v.asserted), rationale=v.rationale)


def figures(results: list[ItemResult]) -> dict:
    judged = [r for r in results if r.judged is not None]

    def false(role: str) -> Proportion:
        pool = [r for r in judged if role not in r.expected]
        return wilson(sum(role in r.judged for r in pool), len(pool))  # type: ignore[operator]

    labelled = [(r, role) for r in judged for role in r.expected]
    return dict(
        n=len(results),
        exact=wilson(sum(r.correct for r in results), len(results)),
        failures=wilson(len(results) - len(judged), len(results)),
        false_plan=false("plan"),
        false_initial=false("initial"),
        false_other=false("other"),
        missed=wilson(sum(role not in r.judged for r, role in labelled), len(labelled)),
    )  # type: ignore[operator]


def measure(
    answer_set: AnswerSet,
    judge: AnswerJudge,
    value_judge: ValueComparer,
    *,
    parts: Iterable[str] | None = None,
    run: Callable[[Callable[[AnswerItem], ItemResult], list[AnswerItem]], Iterable[ItemResult]]
    | None = None,
) -> DevsetReport:
    """Judge every item of the chosen parts and compute the figures. ``run`` maps the judging
    function over the items (default: in order; the script passes a concurrent runner with a
    progress bar for model judges). ``parts``: default every part the set has; a part asked for
    that is unknown or has no answers in the set is a ``BadInput`` (nothing is judged)."""
    present = {it.part for it in answer_set.items}
    if parts is None:
        parts = [p for p in PARTS if p in present]
    else:
        asked = list(parts)
        unknown = [p for p in asked if p not in PARTS]
        if unknown:
            raise BadInput(f"unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
        empty = [p for p in asked if p not in present]
        if empty:
            raise BadInput(f"no answers in part {empty[0]!r} in {answer_set.path}")
        parts = [p for p in PARTS if p in set(asked)]
    chosen = [it for it in answer_set.items if it.part in parts]
    work = lambda it: judge_item(it, judge, value_judge)
    done = {r.id: r for r in (run(work, chosen) if run else map(work, chosen))}
    results = [done[it.id] for it in chosen]
    reports = []
    for p in parts:
        rs = [r for r in results if r.part == p]
        shapes = sorted({r.shape for r in rs})
        reports.append(
            PartReport(
                part=p,
                **figures(rs),
                shapes=[
                    ShapeFigures(shape=s, **figures([r for r in rs if r.shape == s]))
                    for s in shapes
                ],
            )
        )
    return DevsetReport(
        judge=judge.spec,
        judge_family=judge.family,
        heuristic=judge.heuristic,
        rubric=judge.rubric,
        rubric_sha256=judge.rubric_sha256,
        value_judge=value_judge.judge.spec,
        value_rubric=value_judge.rubric,
        answers_path=answer_set.path,
        answers_sha256=answer_set.sha256,
        part_sha256={p: answer_set.part_sha256(p) for p in parts},
        parts=reports,
        items=results,
        usage=judge.usage(),
    )


def first_try_valid(ws, model: str, purpose: str = "eval.answer") -> Proportion:
    """Of the questions ``model`` was asked for ``purpose`` in this workspace (one cache key
    each), the share whose first logged reply was a valid verdict (call log ``llm_calls``;
    re-asks after invalid output and server errors are later rows of the same key). Answers
    served from the cache add no rows."""
    if "llm_calls" not in ws.db.table_names():
        return wilson(0, 0)
    first: dict[str, str] = {}
    for key, status in ws.db.execute(
        "select cache_key, status from llm_calls where purpose = ? and requested_model = ? "
        "order by id",
        [purpose, model],
    ).fetchall():
        first.setdefault(key, status)
    return wilson(sum(s == "ok" for s in first.values()), len(first))
