"""What the corpus loaders produce and what mining hands on: conversations, candidates, statements.

Both public corpora are read into one shape (``Conversation``) so the prefilter, the extractors and
outcome linking never care where a turn came from. ``MinedStatement`` is the contract with the
statement sets, the classifier and the ``--out`` export.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..llm.ref import ModelRef
from ..stats import Proportion, wilson

CORPORA = ("longmemeval", "locomo")
LICENSES = {
    "longmemeval": "MIT (LongMemEval, Wu et al. 2024)",
    "locomo": "CC BY-NC 4.0 (LoCoMo, Maharana et al. 2024); non-commercial use, attribution required",
}
OUTCOMES = ("came_true", "abandoned", "unresolved")
# LongMemEval_s (longmemeval_s_cleaned.json): 500 questions averaging 47.7 sessions and 493.5 turns
# (246,750 turns, the "~250k"), user and assistant alternating: about 123,375 user turns.
# Sessions recur across questions and mining scans a recurring session once, so a projection from
# this count is an upper bound.
LONGMEMEVAL_S_USER_TURNS = 123_375


class CorpusTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0)
    speaker: str  # "user"/"assistant" in LongMemEval; the person's name in LoCoMo
    text: str
    ref: str  # dia_id (LoCoMo) or question_id/session_id/turn (LongMemEval)
    mined: bool  # whether this speaker's turns are scanned for hedges


class CorpusSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0)
    session_id: str
    date: str | None  # ISO 8601 when the source date parses, else the raw string
    turns: list[CorpusTurn]  # may be empty: LoCoMo lists dates of sessions it never released


class Conversation(BaseModel):
    """One conversation history: a LoCoMo sample or a LongMemEval question's haystack."""

    model_config = ConfigDict(extra="forbid")
    corpus: Literal["longmemeval", "locomo"]
    conversation_id: str
    speakers: list[str]
    sessions: list[CorpusSession]
    variant: str = ""  # longmemeval: oracle / s / m when the file name says so

    @property
    def license(self) -> str:
        return LICENSES[self.corpus]

    def chronological(self) -> list[CorpusSession]:
        """Sessions by date when all dates are ISO, else in file order (LongMemEval _s shuffles)."""
        if all(s.date and s.date[:4].isdigit() for s in self.sessions):
            return sorted(self.sessions, key=lambda s: (s.date, s.index))
        return list(self.sessions)


class ContextTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    speaker: str
    text: str


class Candidate(BaseModel):
    """A stage-1 prefilter hit: one turn of a mined speaker with at least one cue sentence, or one
    the lexicon's turn model passed (``model_only``)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    corpus: Literal["longmemeval", "locomo"]
    conversation_id: str
    source_ref: str
    session_index: int
    turn_index: int
    speaker: str
    date: str | None
    turn_text: str
    context: list[ContextTurn]  # up to two preceding turns, oldest first
    prefilter_cues: list[str]  # "category:cue" for every cue in a qualifying sentence
    cue_spans: list[tuple[int, int]]  # character spans of qualifying sentences in turn_text
    context_refs: list[str] = Field(default_factory=list)  # refs of the context turns (storage)

    def cue_sentences(self) -> list[str]:
        return [self.turn_text[a:b] for a, b in self.cue_spans]

    @property
    def model_only(self) -> bool:
        """Passed by the lexicon's turn model alone (cue ``model:turns.vN``): no cue phrase in it."""
        return bool(self.prefilter_cues) and all(
            c.startswith("model:") for c in self.prefilter_cues
        )


class Extraction(BaseModel):
    """Stage 2's verdict on one candidate (rule-based or LLM)."""

    model_config = ConfigDict(extra="forbid")
    kept: bool
    text: str  # the statement span, verbatim from the turn (the best cue sentence if rejected)
    attribute: str | None = None
    plan_value: str | None = None
    hedge_level: str | None = None
    reject_reason: str | None = None
    llm_calls: int = 0
    cached_calls: int = 0
    strategy: str | None = None  # the LLM miner's structured-output strategy (provenance)


class OutcomeLink(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outcome: Literal["came_true", "abandoned", "unresolved"]
    outcome_ref: str | None = None  # the later turn that shows the outcome (or that it is pending)
    evidence: str | None = None  # "confirmation", "abandonment", "pending mention"


class MinedStatement(BaseModel):
    """One ``--out`` line: the candidate with its evidence (the whole turn, where it sits, the span
    the statement was read from), stage 2's verdict and the linked outcome. The line alone lets a
    reader check every cue and value it names."""

    model_config = ConfigDict(extra="forbid")
    id: str
    corpus: str
    conversation_id: str
    source_ref: str
    speaker: str
    date: str | None  # the session's date
    text: str
    context: list[ContextTurn]
    turn_text: str = ""  # the whole turn, verbatim
    session_id: str = ""  # LoCoMo session_N; LongMemEval the haystack session id
    session_index: int | None = None  # the session's position in its conversation (from 0)
    turn_index: int | None = None  # the turn's position in its session (from 0)
    text_span: tuple[int, int] | None = (
        None  # where ``text`` sits in ``turn_text``; None if not verbatim
    )
    prefilter_cues: list[str]
    miner: str
    kept: bool | None = None
    attribute: str | None = None
    plan_value: str | None = None
    hedge_level: str | None = None
    reject_reason: str | None = None
    outcome: str | None = None
    outcome_ref: str | None = None
    outcome_evidence: str | None = None
    license: str


class MinePlan(BaseModel):
    """What ``amg mine hedges --dry-run`` found: the turns stage 2 would get (one call each with
    an LLM miner; the model's ``planned`` tally has the calls not already cached)."""

    model_config = ConfigDict(extra="forbid")
    corpus: str
    prefilter: list[str]
    conversations: int = 0
    turns_scanned: int = 0
    stage2: int = 0

    def lines(self) -> list[str]:
        return [
            f"dry run: {self.conversations} conversations ({self.corpus}), {self.turns_scanned} "
            f"turns scanned, {self.stage2} go to stage 2",
            *self.prefilter,
        ]


class MineSummary(BaseModel):
    """The counts ``amg mine hedges`` prints (the paper: 194 hedges, 16 measurable at-risk plans)."""

    model_config = ConfigDict(extra="forbid")
    source: str
    corpus: str
    miner: str
    conversations: int
    duplicate_sessions_skipped: int
    turns_scanned: int
    sentences_scanned: int
    prefilter_hits: int
    llm_calls: int
    llm_cached: int
    hedges: int
    came_true: int
    abandoned: int
    unresolved: int
    at_risk_measurable: int
    errors: int = 0  # candidates whose stage-2 call failed (no verdict; a re-run asks again)
    llm_calls_now: int = 0  # model calls this run made (failed ones included)
    llm_cache_hits_now: int = 0
    failure_kinds: dict[str, int] = {}
    failure_reasons: list[str] = []
    variant: str = ""  # longmemeval: oracle / s / m
    limited: bool = False  # --limit: only the first conversations were mined
    prefilter_lines: list[str] = []  # which prefilter ran
    answered_before: int = 0  # candidates an earlier run of this miner had answered (a resume)
    accuracy_lines: list[str] = []  # the miner's measured held-out precision and recall
    source_lines: list[str] = []  # the file's sha256 against the published one, when it differs
    source_said: bool = False  # source_lines were printed as the run started: not said again

    def stage2_share(self) -> Proportion:
        return wilson(self.prefilter_hits, self.turns_scanned)

    def projected_longmemeval_s_calls(self) -> int | None:
        """Stage-2 calls (one LLM call per prefilter hit) the same share would cost on the full
        LongMemEval_s: share of user turns passed here x its ~123k user turns. None when the
        source is not LongMemEval. Printed for every LongMemEval file, an _s file included (a
        file named _s may hold only some of its questions; on the whole _s file the hits above
        are the count itself)."""
        if self.corpus != "longmemeval" or not self.turns_scanned:
            return None
        return round(self.prefilter_hits / self.turns_scanned * LONGMEMEVAL_S_USER_TURNS)

    def cost_lines(self) -> list[str]:
        """The share of turns stage 1 passes on (each one stage-2 call: one LLM call with an LLM
        miner) and, for LongMemEval, what that share would cost on LongMemEval_s."""
        who = "user turns" if self.corpus == "longmemeval" else "turns"
        out = [
            f"Prefilter hits: {self.stage2_share().fmt().replace(' = ', f' {who} = ')} "
            "(one stage-2 call each)"
        ]
        projected = self.projected_longmemeval_s_calls()
        if projected is not None:
            out.append(
                f"Projected stage-2 calls on LongMemEval_s: ~{projected:,} "
                f"({100 * self.stage2_share().value:.1f}% of ~{LONGMEMEVAL_S_USER_TURNS:,} "
                "user turns; upper bound)"
            )
        return out

    def lines(self) -> list[str]:
        return [
            f"Source: {self.source} ({self.corpus}); miner: {self.miner}",
            *([] if self.source_said else self.source_lines),
            f"Conversations: {self.conversations} (duplicate sessions skipped: {self.duplicate_sessions_skipped})",
            f"Turns scanned: {self.turns_scanned} ({self.sentences_scanned} sentences)",
            *self.prefilter_lines,
            *self.cost_lines(),
            self._llm_line(),
            *(
                [
                    f"Resumed: {self.answered_before} of {self.prefilter_hits} candidates had a stage-2 "
                    "answer from an earlier run of this miner (not asked again)"
                ]
                if self.answered_before
                else []
            ),
            f"Hedges: {self.hedges} (came true {self.came_true}, abandoned {self.abandoned}, "
            f"unresolved {self.unresolved})",
            f"At-risk plans with a measurable outcome: {self.at_risk_measurable}",
            *self.accuracy_lines,
        ] + self._failure_lines()

    def _llm_line(self) -> str:
        if ModelRef.parse(self.miner).offline:
            what = "the offline scorer" if self.miner == "offline-scorer" else "offline rules"
            return f"LLM calls: none (stage 2 by {what})"
        return (
            f"LLM calls: {self.llm_calls_now} this run ({self.llm_cache_hits_now} answered from "
            f"the cache); {self.llm_calls} behind the stage-2 answers stored for this miner"
        )

    def _failure_lines(self) -> list[str]:
        if not self.errors:
            return []
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.failure_kinds.items()))
        return [
            f"Stage-2 failures: {self.errors}{f' ({kinds})' if kinds else ''}: these candidates "
            "have no stage-2 verdict (exported with kept null); a re-run asks again"
        ] + [f"  {r}" for r in self.failure_reasons[:3]]
