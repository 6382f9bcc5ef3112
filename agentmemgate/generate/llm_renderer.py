"""LLM generators: ``openai:MODEL`` / ``anthropic:MODEL`` (and ``scripted:NAME`` for tests).

The prompt is ``rubrics/generator_arc.vN.txt`` filled from the spec; the reply is a structured
``ArcDraft`` validated with pydantic, converted to an ``Arc`` and checked with the structural
checks every arc must pass (``validate.structure.check_arc``) plus checks only generated text
needs (the plan turn of a non-control arc must not already assert the change; no markup or label
leaks). A reply that fails is asked again with the problems appended, up to ``max_attempts``;
an arc that still fails becomes a ``RenderFailure`` and the run goes on. Every call goes through
the LLM layer's cache, so a re-run repeats no answered call.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .. import __version__, rubrics
from ..design import Design, paper_design
from ..errors import MissingApiKey
from ..llm import CallFailed, Model, Request, get_model, run_concurrent
from ..schema import (
    CORRECTION_MARKER_PHRASES,
    Arc,
    ArcSpec,
    Provenance,
    Session,
    Turn,
    TurnRef,
    normalize_text,
)
from ..validate.structure import check_arc
from .renderer import Renderer, RenderError, RenderFailure, register_renderer

RUBRIC = "generator_arc"
# Correction arcs (the corrections split) have their own prompt, so the other splits' prompts,
# cache keys and provenance are what they were before the split existed.
CORRECTION_RUBRIC = "generator_correction_arc"
TEMPERATURE = 0.7
MAX_TOKENS = 4096  # a whole multi-session conversation as JSON


# -- the reply the model must produce ----------------------------------------------------------
class DraftTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    text: str


class DraftSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: str
    turns: list[DraftTurn]


class DraftRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: int
    turn: int


class ArcDraft(BaseModel):
    """A generated conversation with its key turns, before conversion to ``Arc``."""

    model_config = ConfigDict(extra="forbid")
    sessions: list[DraftSession]
    initial_turn: DraftRef
    plan_turn: DraftRef
    outcome_turn: DraftRef | None
    pending_turn: DraftRef | None


class CorrectionDraft(BaseModel):
    """A generated correction arc: the initial statement, the reported change (corrected changes
    only) and the correction turn."""

    model_config = ConfigDict(extra="forbid")
    sessions: list[DraftSession]
    initial_turn: DraftRef
    change_turn: DraftRef | None
    correction_turn: DraftRef


def draft_schema(spec: ArcSpec) -> type[BaseModel]:
    return CorrectionDraft if spec.correction is not None else ArcDraft


# -- prompt --------------------------------------------------------------------------------------
def structure_of(spec: ArcSpec) -> str:
    """The rubric's name for the arc's layout (its STRUCTURE section describes each)."""
    if spec.outcome == "control":
        return "completed_change"
    return "pending_window" if spec.pending_window else "next_session_outcome"


def _own_structure(spec: ArcSpec, design: Design):
    """The level of the arc's cell when that level sets its own structure (a structure factor
    such as the sessions between plan and outcome), else None: the paper's levels set none."""
    f = design.factors.get(spec.factor)
    if f is None or not f.has(spec.level):
        return None
    lv = f.level(spec.level)
    return lv if lv.structure is not None else None


def structure_line(spec: ArcSpec, design: Design) -> str:
    """The prompt's STRUCTURE value: the structure's name, and for a level that sets its own
    structure, that level's definition and where the plan and its outcome fall."""
    name = structure_of(spec)
    lv = _own_structure(spec, design)
    if lv is None:
        return name
    line = f"{name} -- {lv.definition}"
    n = len(spec.session_dates)
    if spec.pending_window and spec.outcome != "control":
        between = {0: "no session lies", 1: "1 session lies"}.get(n - 2, f"{n - 2} sessions lie")
        line += (
            f" The plan_turn is in session 0 and the outcome_turn (or pending_turn) in "
            f"session {n - 1}, the last: {between} between them."
        )
    return line


def _wording_definition(design: Design, role: str, level: str) -> str:
    """The design's definition of a plan- or confirmation-wording level."""
    f = design.by_role(role)
    return f.level(level).definition if f is not None else design.definitions()[level]


def _split_note(design: Design, split: str) -> str:
    s = design.split(split)
    return s.note or s.title or split


def spec_brief(spec: ArcSpec) -> dict[str, Any]:
    """What the generator must realize, as data (no ids or seeds: nothing to leak into text)."""
    if (c := spec.correction) is not None:
        return {
            "split": spec.split,
            "structure": "correction",
            "field": spec.field.description,
            "attribute": spec.field.attribute,
            "first_value": spec.initial_value,
            "wrong_value": c.wrong_value,
            "right_value": c.value,
            "corrected_statement": c.target,
            "timing": c.timing,
            "marker": c.marker,
            "session_dates": [d.isoformat() for d in spec.session_dates],
        }
    return {
        "split": spec.split,
        "outcome": spec.outcome,
        "structure": structure_of(spec),
        "field": spec.field.description,
        "attribute": spec.field.attribute,
        "current_value": spec.initial_value,
        "new_value": spec.plan_value,
        "plan_wording": spec.plan_wording,
        "confirmation_wording": spec.confirmation_wording,
        "session_dates": [d.isoformat() for d in spec.session_dates],
    }


def build_prompt(
    spec: ArcSpec, rubric: rubrics.Rubric | None = None, design: Design | None = None
) -> str:
    """The first prompt for ``spec``: the rubric filled from the spec and from ``design`` (the
    paper's by default): its level definitions, split notes and structure."""
    design = design or paper_design()
    if spec.correction is not None:
        return build_correction_prompt(spec, design=design)
    rubric = rubric or rubrics.load(RUBRIC)
    conf = spec.confirmation_wording
    return rubric.render(
        field_description=spec.field.description,
        initial_value=spec.initial_value,
        plan_value=spec.plan_value,
        n_sessions=str(len(spec.session_dates)),
        dates=", ".join(f"session {i}: {d.isoformat()}" for i, d in enumerate(spec.session_dates)),
        outcome=spec.outcome,
        structure=structure_line(spec, design),
        plan_wording=spec.plan_wording,
        plan_wording_definition=_wording_definition(design, "plan_wording", spec.plan_wording),
        confirmation_wording=(
            f"{conf} -- {_wording_definition(design, 'confirmation_wording', conf)}"
            if conf
            else "(not used)"
        ),
        split=spec.split,
        split_note=_split_note(design, spec.split),
        brief_json=json.dumps(spec_brief(spec), ensure_ascii=False, sort_keys=True),
    )


# A correction level's definition names its three parts: "A correction: TARGET; TIMING; MARKER."
# (the target's may hold a semicolon of its own, the others not).
_CORRECTION_PARTS = re.compile(
    r"A correction: (?P<target>.+); (?P<timing>[^;]+); (?P<marker>[^;]+)\.", re.S
)


def correction_definitions(design: Design, spec: ArcSpec) -> tuple[str, str, str]:
    """The definitions of a correction arc's target, timing and marker, read from its level's
    definition in ``design``. A definition written otherwise is shown whole, with the timing and
    marker pointing back to it."""
    definition = design.factor(spec.factor).level(spec.level).definition
    m = _CORRECTION_PARTS.fullmatch(definition.strip())
    if m is None:
        return definition, "as defined above", "as defined above"
    return m["target"], m["timing"], m["marker"]


def build_correction_prompt(
    spec: ArcSpec, rubric: rubrics.Rubric | None = None, design: Design | None = None
) -> str:
    c = spec.correction
    assert c is not None
    rubric = rubric or rubrics.load(CORRECTION_RUBRIC)
    target, timing, marker = correction_definitions(design or paper_design(), spec)
    return rubric.render(
        field_description=spec.field.description,
        initial_value=spec.initial_value,
        wrong_value=c.wrong_value,
        right_value=c.value,
        n_sessions=str(len(spec.session_dates)),
        dates=", ".join(f"session {i}: {d.isoformat()}" for i, d in enumerate(spec.session_dates)),
        target=c.target,
        target_definition=target,
        timing=c.timing,
        timing_definition=timing,
        marker=c.marker,
        marker_definition=marker,
        # the structural check's list (validate.structure): an unmarked correction uses none
        marker_phrases=", ".join(f'"{p}"' for p in CORRECTION_MARKER_PHRASES),
        brief_json=json.dumps(spec_brief(spec), ensure_ascii=False, sort_keys=True),
    )


def with_feedback(prompt: str, problems: list[str]) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return (
        f"{prompt}\nYOUR PREVIOUS REPLY WAS REJECTED. It failed these checks:\n{lines}\n"
        "Write the whole log again as one JSON object, fixing every problem.\n"
    )


# -- draft -> arc, and the checks --------------------------------------------------------------
def to_arc(
    spec: ArcSpec,
    draft: ArcDraft | CorrectionDraft,
    *,
    generator: str,
    prompt_sha256: str,
    kind: str = "LLM",
    structured_output: str | None = None,
    design: Design | None = None,
) -> tuple[Arc | None, list[str]]:
    """Convert a draft to an ``Arc``; (None, problems) when it cannot be one for this spec (the
    checks are ``design``'s: the paper's by default)."""
    problems: list[str] = []
    if spec.correction is not None and not isinstance(draft, CorrectionDraft):
        return None, ["a correction arc needs initial_turn, change_turn and correction_turn"]
    if len(draft.sessions) != len(spec.session_dates):
        problems.append(f"expected {len(spec.session_dates)} sessions, got {len(draft.sessions)}")
    sessions: list[Session] = []
    for i, s in enumerate(draft.sessions):
        try:
            date = dt.date.fromisoformat(s.date.strip())
        except ValueError:
            problems.append(f"session {i} date {s.date!r} is not YYYY-MM-DD")
            continue
        sessions.append(Session(date=date, turns=[Turn(role=t.role, text=t.text) for t in s.turns]))
    if isinstance(draft, CorrectionDraft):
        change = draft.change_turn if spec.correction.target == "change" else None  # type: ignore[union-attr]
        if spec.correction.target == "change" and change is None:  # type: ignore[union-attr]
            problems.append("change_turn is null; this log needs the reported change")
        refs: dict[str, DraftRef | None] = {
            "initial_turn": draft.initial_turn,
            "plan_turn": change or draft.correction_turn,
            "outcome_turn": draft.correction_turn,
            "pending_turn": None,
            "correction_turn": draft.correction_turn,
        }
    else:
        refs = {
            "initial_turn": draft.initial_turn,
            "plan_turn": draft.plan_turn,
            "outcome_turn": draft.outcome_turn,
            "pending_turn": draft.pending_turn,
        }
    if spec.outcome == "control" and refs["outcome_turn"] is None:
        refs["outcome_turn"] = refs["plan_turn"]  # the one completed-change turn is both
    for name, ref in refs.items():
        if ref is not None and not (
            0 <= ref.session < len(draft.sessions)
            and 0 <= ref.turn < len(draft.sessions[ref.session].turns)
        ):
            problems.append(
                f"{name} points to session {ref.session} turn {ref.turn}, which does not exist"
            )
    if problems:
        return None, problems
    turn_refs = {k: TurnRef(session=v.session, turn=v.turn) if v else None for k, v in refs.items()}
    outcome = turn_refs["outcome_turn"]
    try:
        arc = Arc(
            spec=spec,
            sessions=sessions,
            initial_turn=turn_refs["initial_turn"],
            plan_turn=turn_refs["plan_turn"],
            outcome_turn=outcome,
            pending_turn=turn_refs["pending_turn"],
            correction_turn=turn_refs.get("correction_turn"),
            expected_value_after_session=spec.expected_timeline(
                outcome.session if outcome else None, turn_refs["plan_turn"].session
            ),
            provenance=Provenance(
                generator=generator,
                generator_kind=kind,
                prompt_sha256=prompt_sha256,
                seed=spec.plan_seed,
                toolkit_version=__version__,
                structured_output=structured_output,
            ),
        )
    except ValidationError as e:
        return None, [f"reply cannot form an arc: {e.errors()[0].get('msg')}"]
    return arc, arc_problems(arc, design)


def arc_problems(arc: Arc, design: Design | None = None) -> list[str]:
    """Failed structural checks plus the generator-only checks, as one-line reasons."""
    design = design or paper_design()
    problems = [f"{r.check}: {r.detail}" for r in check_arc(arc, design) if not r.passed]
    for name, fn in GENERATOR_CHECKS.items():
        if (problem := fn(arc, design)) is not None:
            problems.append(f"generator.{name}: {problem}")
    return problems


_DONE = re.compile(
    r"\b(?:i|we)(?: ve| have| had)?(?: (?:already|just|finally|officially|recently|now))? "
    r"(?:(?P<idiom>made the (?:switch|move|change|jump)|went ahead with (?:it|the (?:switch|move|change)))"
    r"|switched|moved|changed|swapped|transferred|relocated|converted|upgraded|downgraded|bought"
    r"|purchased|joined|enrolled|signed up|started using|started at|started going to|went with)\b"
)
_NOW = re.compile(
    r"\b(?:i m|i am|we re|we are) now (?:using|at|with|on|in|living in|working at|"
    r"driving|running in|shopping at|going to)\b|\b(?:i|we) now (?:use|live|work|drive|"
    r"run|shop|go|have)\b"
)
_HYPOTHETICAL = {
    "if",
    "suppose",
    "imagine",
    "whether",
    "wonder",
    "would",
    "could",
    "might",
    "once",
    "until",
    "unless",
}


_CLAUSE_BREAK = {
    "and",
    "but",
    "or",
    "might",
    "may",
    "could",
    "would",
    "will",
    "maybe",
    "though",
    "although",
    "while",
    "then",
    "if",
    "try",
    "trying",
    "thinking",
    "considering",
}


def asserted_change(text: str, plan_value: str) -> str | None:
    """The phrase by which ``text`` already asserts the change to ``plan_value`` (a heuristic:
    a first-person completion verb whose object, within a few words, is the plan value)."""
    norm, value = normalize_text(text), normalize_text(plan_value).split()
    for pattern in (_DONE, _NOW):
        for m in pattern.finditer(norm):
            if set(norm[: m.start()].split()[-3:]) & _HYPOTHETICAL:
                continue
            if m.groupdict().get("idiom"):
                return m.group(0)
            following = norm[m.end() :].split()
            for i in range(min(len(following), 7)):
                if set(following[:i]) & _CLAUSE_BREAK:
                    break
                if following[i : i + len(value)] == value:
                    return m.group(0)
    return None


def no_premature_change(arc: Arc, design: Design | None = None) -> str | None:
    if arc.spec.outcome in ("control", "correction"):
        return None
    phrase = asserted_change(arc.turn(arc.plan_turn).text, arc.spec.plan_value)
    return (
        f"the plan turn already says the change happened ({phrase!r}); it must be a plan"
        if phrase
        else None
    )


# Names from the prompts themselves: the rubric's structures and the draft's turn fields.
STRUCTURE_NAMES = (
    "pending_window",
    "immediate_outcome",
    "next_session_outcome",
    "completed_change",
)
TURN_FIELDS = ("initial_turn", "plan_turn", "outcome_turn", "pending_turn")
CORRECTION_TURN_FIELDS = ("change_turn", "correction_turn")
# Wording factors: the prompt shows their levels as labels ("PLAN WORDING: weakly_hedged"), so a
# multi-word level is refused spaced out too ("weakly hedged"). Other factors' levels are not:
# spaced, they are what people say ("it came true", "two sessions").
_SPACED_ROLES = ("plan_wording", "confirmation_wording")


def label_names(design: Design) -> tuple[list[str], list[str]]:
    """(identifiers, phrases) generated text must not contain: every identifier with an
    underscore (the design's levels, factors and splits; the prompts' structures and turn
    fields), and the spaced forms of the wording levels and turn fields. A one-word name (a
    level ``open`` or ``conditional``, a split ``core``) is an English word and is allowed."""
    names = {*design.level_identifiers(), *STRUCTURE_NAMES, *TURN_FIELDS, *CORRECTION_TURN_FIELDS}
    spaced = {*TURN_FIELDS, "hedge_turn", "pending_window"}
    for f in design.factors.values():
        if f.role in _SPACED_ROLES:
            spaced |= {lv.name for lv in f.levels if not lv.control}
    return (
        sorted(n for n in names if "_" in n),
        sorted(n.replace("_", " ") for n in spaced if "_" in n),
    )


_FORMAT_LEAKS = (
    (re.compile(r"\[[A-Za-z][A-Za-z0-9 _/-]*\]"), "a bracketed tag"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9_-]*(?:\s[^>]*)?>"), "markup tag"),
    (re.compile(r"\*\*|__|(?m:^\s*#{1,6}\s)"), "markdown"),
    (re.compile(r"(?i)^\s*(?:user|assistant|human|ai|system)\s*:"), "a speaker prefix"),
    (re.compile(r"\{\{|\}\}"), "template braces"),
)


@lru_cache(maxsize=16)
def _compiled(
    identifiers: tuple[str, ...], phrases: tuple[str, ...]
) -> tuple[tuple[re.Pattern, str], ...]:
    names = [
        re.compile(r"(?i)\b(?:" + "|".join(re.escape(n) for n in group) + r")\b")
        for group in (identifiers, phrases)
        if group
    ]
    return (*((p, "a label name") for p in names), *_FORMAT_LEAKS)


def leak_patterns(design: Design | None = None) -> tuple[tuple[re.Pattern, str], ...]:
    """(pattern, what it finds) for every leak the generator check refuses under ``design``."""
    ids, phrases = label_names(design or paper_design())
    return _compiled(tuple(ids), tuple(phrases))


def label_leak(text: str, design: Design | None = None, *, patterns=None) -> str | None:
    """What ``text`` leaks (a label name of ``design``, a tag, markup ...), or None."""
    for pattern, what in patterns or leak_patterns(design):
        if m := pattern.search(text):
            return f"{what} ({m.group(0)!r})"
    return None


def no_label_leak(arc: Arc, design: Design | None = None) -> str | None:
    patterns = leak_patterns(design)
    for si, s in enumerate(arc.sessions):
        for ti, t in enumerate(s.turns):
            if leak := label_leak(t.text, patterns=patterns):
                return f"session {si} turn {ti} contains {leak}; write plain chat"
    return None


def true_time_references(arc: Arc, design: Design | None = None) -> str | None:
    """'Last time' and 'like I said' point to an earlier session; weekdays match dates; a
    scheduled date lies ahead; a reported change is not dated before the plan (offline check)."""
    from ..validate.judges._realism import realism_lexicon, time_references
    from ..validate.judges.questions import realism_question

    verdict = time_references(realism_question(arc), realism_lexicon())
    return None if verdict.passed else verdict.rationale


GENERATOR_CHECKS = {
    "no_premature_change": no_premature_change,
    "no_label_leak": no_label_leak,
    "true_time_references": true_time_references,
}


# -- the renderer --------------------------------------------------------------------------------
class LlmRenderer(Renderer):
    """Renders specs with a model from the LLM layer, concurrently, cached and resumable."""

    def __init__(
        self,
        model: Model,
        *,
        concurrency: int = 4,
        max_attempts: int = 3,
        temperature: float = TEMPERATURE,
        design: Design | None = None,
    ):
        self.model = model
        self.design = design or paper_design()
        self.name = model.spec
        self.display = model.display  # a GGUF path shortened to its file name
        self.family = model.family
        self.kind = (
            "scripted test model (canned replies, no LLM)"
            if model.provider == "scripted"
            else "LLM"
        )
        self.rubric = rubrics.load(RUBRIC)
        self.correction_rubric = rubrics.load(CORRECTION_RUBRIC)
        self.prompt_sha256 = self.rubric.sha256
        self.concurrency = concurrency
        self.max_attempts = max(1, max_attempts)
        self.temperature = temperature

    def _ask(self, spec: ArcSpec, prompt: str, attempt: int = 1):
        # Each attempt is its own cached call: a re-ask whose feedback repeats the last one's
        # would otherwise be answered from the cache with the same rejected draft. A resumed run
        # replays the same attempts from the cache.
        seed_key = f"arc:{spec.seed}" if attempt == 1 else f"arc:{spec.seed}:attempt{attempt}"
        return self.model.complete(
            prompt,
            schema=draft_schema(spec),
            temperature=self.temperature,
            purpose="generate.arc",
            seed_key=seed_key,
            max_tokens=MAX_TOKENS,
        )

    def _prompt(self, spec: ArcSpec) -> tuple[str, str]:
        """The first prompt for ``spec`` and the sha256 of the rubric it comes from."""
        if spec.correction is not None:
            return (
                build_correction_prompt(spec, self.correction_rubric, self.design),
                self.correction_rubric.sha256,
            )
        return build_prompt(spec, self.rubric, self.design), self.prompt_sha256

    def render_one(self, spec: ArcSpec) -> Arc | RenderFailure:
        base, sha = self._prompt(spec)
        prompt, problems = base, []
        for attempt in range(1, self.max_attempts + 1):
            try:
                resp = self._ask(spec, prompt, attempt)
            except CallFailed as e:
                if e.kind != "invalid_output":
                    return RenderFailure(spec_id=spec.id, reason=str(e), attempts=attempt)
                problems = [e.problem]
            else:
                arc, problems = to_arc(
                    spec,
                    resp.parsed,
                    generator=self.name,
                    prompt_sha256=sha,
                    kind=self.kind,
                    structured_output=resp.strategy,
                    design=self.design,
                )
                if arc is not None and not problems:
                    return arc
            prompt = with_feedback(base, problems)
        return RenderFailure(
            spec_id=spec.id,
            attempts=self.max_attempts,
            reason=f"failed checks after {self.max_attempts} attempts: " + "; ".join(problems),
        )

    def render(self, spec: ArcSpec) -> Arc:
        result = self.render_one(spec)
        if isinstance(result, RenderFailure):
            raise RenderError(result.reason, result.attempts)
        return result

    def render_many(self, specs: Iterable[ArcSpec]) -> Iterator[Arc | RenderFailure]:
        """Yield each arc as it finishes (the caller stores it at once and draws the progress)."""
        yield from run_concurrent(
            self.render_one,
            specs,
            concurrency=self.concurrency,
            description=f"render ({self.model.display})",
            usage=self.model.usage,
            progress=False,
        )

    def planned_calls(self, specs: list[ArcSpec]) -> int:
        """First-attempt calls not already in the cache (re-asks after failed checks come extra)."""
        return sum(
            self.model.plan(
                self._prompt(s)[0],
                schema=draft_schema(s),
                temperature=self.temperature,
                seed_key=f"arc:{s.seed}",
                max_tokens=MAX_TOKENS,
            )
            for s in specs
        )

    def usage(self) -> dict[str, int]:
        d = self.model.usage.live()
        return {
            k: d[k]
            for k in (
                "calls",
                "in_flight",
                "cache_hits",
                "failures",
                "input_tokens",
                "output_tokens",
            )
        }


def make_llm_renderer(
    spec: str,
    *,
    workspace=None,
    base_url: str | None = None,
    concurrency: int = 4,
    max_attempts: int = 3,
    design=None,
    **model_options: Any,
) -> LlmRenderer:
    """The registered factory: ``get_renderer("openai:gpt-4o-mini", workspace=ws, design=...)``
    (the design's definitions, notes and checks; the paper's by default)."""
    try:
        model = get_model(spec, workspace=workspace, base_url=base_url, **model_options)
    except MissingApiKey as e:
        raise e.for_flag("--generator") from None
    return LlmRenderer(model, concurrency=concurrency, max_attempts=max_attempts, design=design)


for _provider in ("openai", "anthropic", "scripted"):
    register_renderer(
        _provider, make_llm_renderer, user_pickable=_provider != "scripted", builtin=True
    )


# -- a known-good reply, for the scripted model and the throughput benchmark ----------------------
_BRIEF_LINE = re.compile(r"^Specification as data: (\{.*\})\s*$", re.M)


def reference_responder(request: Request) -> dict[str, Any]:
    """Answer a generation prompt with ``reference_draft`` of the spec it carries."""
    m = _BRIEF_LINE.search(request.prompt)
    if not m:
        raise ValueError("not an arc-generation prompt")
    return reference_draft(json.loads(m.group(1)))


def reference_draft(brief: dict[str, Any]) -> dict[str, Any]:
    """A plain, check-passing ``ArcDraft`` for a ``spec_brief``: a fixture, not a generator."""
    if brief["structure"] == "correction":
        return reference_correction_draft(brief)
    cur, new = brief["current_value"], brief["new_value"]
    noun = re.sub(r"^the user's current |\.$", "", brief["field"], flags=re.I) or "setup"
    dates = brief["session_dates"]
    plan_text = {
        "strongly_hedged": f"Honestly I'm torn between staying with {cur} and trying {new}.",
        "weakly_hedged": f"I'm leaning toward {new}, though nothing is decided yet.",
        "confident_no_date": f"I've decided I'm going to switch to {new}.",
        "scheduled_with_date": f"I'm set to switch to {new} on the first of next month.",
    }.get(brief["plan_wording"], f"I'm thinking about {new}.")
    outcome_text = {
        "came_true": {
            "verbatim": f"Update: the switch to {new} went through.",
            "paraphrase": f"Good news, {new} is what I use now, it's official.",
            "oblique": "I went ahead with that change I mentioned, no regrets so far.",
            "situational": "Spent the whole weekend getting used to the new routine.",
        }.get(
            brief.get("confirmation_wording") or "verbatim", f"The switch to {new} went through."
        ),
        "abandoned": f"About {new}: I dropped that idea, I'm staying with {cur}.",
        "open": f"Still haven't made up my mind about {new}, it's on the maybe list.",
    }.get(brief["outcome"], "")
    ok = "Got it, thanks for telling me."
    chat = (
        "Can you suggest a quick dinner idea for tonight?",
        "Sure: a vegetable stir-fry with rice takes about twenty minutes.",
    )
    initial = (f"Some context first: my {noun} right now is {cur}.", "Thanks, that helps.")
    sessions: list[list[str]] = [[] for _ in dates]
    if brief["structure"] == "completed_change":
        sessions[0] += initial
        sessions[1] += (
            f"Small update: I changed from {cur} to {new} the other day, and it's going well.",
            ok,
        )
        plan = outcome = {"session": 1, "turn": 0}
        later = None
    elif brief["structure"] == "pending_window":
        sessions[0] += (*initial, plan_text, ok, *chat)
        plan = {"session": 0, "turn": 2}
        later = {"session": len(dates) - 1, "turn": 0}
        sessions[-1] += (outcome_text, ok)
    else:  # next_session_outcome: the plan ends session 0, the outcome opens session 1
        sessions[0] += (*initial, plan_text, ok)
        sessions[1] += (outcome_text, ok)
        plan = {"session": 0, "turn": 2}
        later = {"session": 1, "turn": 0}
    if brief["structure"] != "completed_change":
        outcome = None if brief["outcome"] == "open" else later
    for turns in sessions:
        if not turns:
            turns += chat
    return {
        "sessions": [
            {
                "date": d,
                "turns": [
                    {"role": "user" if i % 2 == 0 else "assistant", "text": t}
                    for i, t in enumerate(turns)
                ],
            }
            for d, turns in zip(dates, sessions)
        ],
        "initial_turn": {"session": 0, "turn": 0},
        "plan_turn": plan,
        "outcome_turn": outcome,
        "pending_turn": later if brief["outcome"] == "open" else None,
    }


def reference_correction_draft(brief: dict[str, Any]) -> dict[str, Any]:
    """A plain, check-passing ``CorrectionDraft`` for a correction ``spec_brief`` (a fixture)."""
    first, wrong, right = brief["first_value"], brief["wrong_value"], brief["right_value"]
    noun = re.sub(r"^the user's current |\.$", "", brief["field"], flags=re.I) or "setup"
    dates, change = brief["session_dates"], brief["corrected_statement"] == "change"
    ok = "Got it, thanks for telling me."
    chat = (
        "Can you suggest a quick dinner idea for tonight?",
        "Sure: a vegetable stir-fry with rice takes about twenty minutes.",
    )
    said = 1 if change else 0
    where = said if brief["timing"] == "same" else said + 1
    when = "earlier" if where == said else "last time"
    if brief["marker"] == "marked":
        fix = f"Sorry, I said {wrong} {when}, but I meant {right}. My {noun} is {right}."
    else:
        fix = f"I told you {wrong} {when}, and that was wrong. My {noun} is {right}."
    sessions: list[list[str]] = [[] for _ in dates]
    sessions[0] += (f"Some context first: my {noun} is {first}.", "Thanks, that helps.")
    if change:
        sessions[1] += (f"Small update: I changed from {first} to {wrong} the other day.", ok)
    if where == said:
        sessions[where] += chat
    sessions[where] += (fix, f"Thanks for correcting that: {right}, not {wrong}.")
    for turns in sessions:
        if not turns:
            turns += chat
    return {
        "sessions": [
            {
                "date": d,
                "turns": [
                    {"role": "user" if i % 2 == 0 else "assistant", "text": t}
                    for i, t in enumerate(turns)
                ],
            }
            for d, turns in zip(dates, sessions)
        ],
        "initial_turn": {"session": 0, "turn": 0},
        "change_turn": {"session": 1, "turn": 0} if change else None,
        "correction_turn": {"session": where, "turn": len(sessions[where]) - 2},
    }
