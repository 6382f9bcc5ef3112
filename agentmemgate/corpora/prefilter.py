"""Stage 1: a cheap, offline, high-recall cue filter that decides which turns an LLM ever sees.

The cue lexicon is data (``cues.vN.toml``, documented there); this module only compiles it and
applies the rule: a sentence qualifies when it has a first-person marker (or opens with a cue) and
a hedge, intention or future-time cue, after request phrases addressed to the assistant are
blanked out. From v2 a [weak] cue (a bare modal) qualifies only beside a change cue where the
speaker talks to an assistant, and a one-off [event] without a change cue never qualifies.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import BadInput
from ..text import PhraseMatcher, sentence_spans, tokens
from ..versioned import versioned_file
from .model import Candidate, ContextTurn, Conversation, CorpusSession
from .turn_model import TurnModel, load_turn_model

LEXICON_DIR = Path(__file__).parent
QUALIFYING = ("hedge", "intention", "future_time")
RECORDED = QUALIFYING + ("change",)
WEAK = "weak"  # optional (v2 on): qualifies only beside a change cue, and never in a question
EVENT = "event"  # optional (v2 on): a one-off event disqualifies a sentence (see cues.v2.toml)
STOP = "__stop__"
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Lexicon:
    """A compiled cue lexicon; ``ref`` (e.g. 'cues.v1') and ``sha256`` go into provenance."""

    version: int
    sha256: str
    cues: dict[str, list[str]]
    stop: list[str]
    matcher: PhraseMatcher = field(repr=False)  # cues and stop phrases (category STOP), one pass
    # A sentence may drop its subject when it opens with a cue of these categories ("Thinking
    # about moving."; from v2 also "Joining a new class might be a good option.")
    opening: frozenset[str] = frozenset(QUALIFYING)
    clause_opening: bool = (
        False  # from v2: also at a clause start ("..., and joining a class might")
    )
    opening_in_questions: bool = True  # v2: no ("Maybe it's a special deal?" plans nothing)
    # v2: corpora where a weak cue needs a change cue (a user talking to an assistant); elsewhere
    # (LoCoMo's peer chat) a weak cue counts like any other, as in v1
    weak_needs_change: frozenset[str] = frozenset()
    # v3: a learned turn model ([model] in the TOML) that also passes turns the cue rule misses,
    # in the corpora it names
    model: TurnModel | None = field(default=None, repr=False)

    @property
    def ref(self) -> str:
        return f"cues.v{self.version}"


@cache
def load_lexicon(version: int | None = None, path: str | None = None) -> Lexicon:
    """The packaged lexicon (highest version unless pinned), or a user's TOML file."""
    if path is None:
        v, file = versioned_file(LEXICON_DIR, "cues", "toml", version, "cue lexicon")
    else:
        file = Path(path)
    try:
        raw = file.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
        cues = {name: list(data[name]["cues"]) for name in ("first_person",) + RECORDED}
        for optional in (WEAK, EVENT):
            if optional in data:
                cues[optional] = list(data[optional]["cues"])
        stop = list(data.get("stop", {}).get("phrases", []))
        opening = frozenset(data.get("rule", {}).get("opening", QUALIFYING))
        clause_opening = bool(data.get("rule", {}).get("clause_opening", False))
        opening_in_questions = bool(data.get("rule", {}).get("opening_in_questions", True))
        weak_needs_change = frozenset(data.get("rule", {}).get("weak_needs_change", []))
        model = None
        if "model" in data:
            named = data["model"]
            if not isinstance(named, dict) or not {"file", "sha256"} <= set(named):
                raise BadInput(
                    f"{file.name}: [model] needs file and sha256 (the turn model and its hash)"
                )
            model = load_turn_model(str(named["file"]), str(named["sha256"]), file.parent)
        if not opening <= set(cues):
            raise KeyError(f"rule.opening names unknown categories {sorted(opening - set(cues))}")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise BadInput(f"{file.name}: not a cue lexicon ({type(e).__name__}: {e})") from None
    return Lexicon(
        version=int(data.get("version", version or 0)),
        sha256=hashlib.sha256(raw).hexdigest(),
        cues=cues,
        stop=stop,
        matcher=PhraseMatcher({**cues, STOP: stop}),
        opening=opening,
        clause_opening=clause_opening,
        opening_in_questions=opening_in_questions,
        weak_needs_change=weak_needs_change,
        model=model,
    )


_CLAUSE_START = re.compile(
    r"(?:[,;:\u2013\u2014]|\s-)\s*(?:(?:and|but|so|or|then)\s+)?$", re.IGNORECASE
)


def _opens(text: str, start: int, pos: int, clauses: bool) -> bool:
    """Whether nothing but punctuation precedes ``pos`` in its sentence (or, with ``clauses``, in
    its clause)."""
    if not _WORD.search(text, start, pos):
        return True
    return clauses and _CLAUSE_START.search(text, start, pos) is not None


def _is_question(text: str, span: tuple[int, int]) -> bool:
    return text[span[0] : span[1]].rstrip(" \t\"')\u201d\u2019").endswith("?")


@dataclass
class TurnScan:
    sentences: int
    spans: list[tuple[int, int]]  # qualifying sentences
    cues: list[str]  # "category:surface" in qualifying sentences, sorted, unique

    @property
    def hit(self) -> bool:
        return bool(self.spans)


def scan_turn(text: str, lexicon: Lexicon | None = None, corpus: str = "longmemeval") -> TurnScan:
    """Apply the stage-1 rule to one turn of ``corpus`` (which decides how weak cues count); a
    turn the rule does not pass may still pass the lexicon's turn model (``_model_scan``)."""
    lex = lexicon or load_lexicon()
    scan = _rule_scan(text, lex, corpus)
    if scan.hit or lex.model is None or not scan.sentences:
        return scan
    return _model_scan(text, lex, corpus, scan)


def _model_scan(text: str, lex: Lexicon, corpus: str, scan: TurnScan) -> TurnScan:
    """A turn the model passes: its sentences in the first person (where the speaker's own plan
    is stated), or all of them if none is, with the cue ``model:turns.vN``."""
    model = lex.model
    if model is None or not model.passes(text, corpus):
        return scan
    first = frozenset(lex.cues["first_person"])
    sentences = sentence_spans(text)
    mine = [
        span
        for span in sentences
        if not first.isdisjoint(
            _WORDS.findall(text[span[0] : span[1]].lower().replace("\u2019", "'"))
        )
    ]
    return TurnScan(scan.sentences, mine or sentences, [f"model:{model.ref}"])


_WORDS = re.compile(r"[a-z']+")


def _rule_scan(text: str, lex: Lexicon, corpus: str) -> TurnScan:
    strict = corpus in lex.weak_needs_change
    sentences = sentence_spans(text)
    if not sentences:
        return TurnScan(0, [], [])
    toks = tokens(text)
    hits = lex.matcher.find(toks)
    blocked = set()
    for a, b, category, _ in hits:
        if category == STOP:
            blocked.update(range(a, b))
    starts = [a for a, _ in sentences]
    found: dict[int, list[tuple[str, str]]] = {}
    opening: set[int] = set()  # sentences that open with a qualifying cue ("Thinking of moving")
    for a, b, category, surface in hits:
        if category == STOP or (blocked and not blocked.isdisjoint(range(a, b))):
            continue
        i = bisect.bisect_right(starts, toks[a][0]) - 1
        if i >= 0:
            found.setdefault(i, []).append((category, surface))
            if category in lex.opening and _opens(text, starts[i], toks[a][0], lex.clause_opening):
                opening.add(i)
    spans, cues = [], set()
    for i, hits in sorted(found.items()):
        kinds = {k for k, _ in hits}
        question = _is_question(text, sentences[i])
        if not (
            "first_person" in kinds or (i in opening and (lex.opening_in_questions or not question))
        ):
            continue
        event, change = EVENT in kinds, "change" in kinds
        strong = not kinds.isdisjoint(QUALIFYING)
        if event and not change:
            continue
        if strict:
            weak = WEAK in kinds and change and not event and not question
        else:
            weak = WEAK in kinds
        if strong or weak:
            spans.append(sentences[i])
            cues.update(f"{k}:{s}" for k, s in hits if k not in ("first_person", EVENT))
    return TurnScan(len(sentences), spans, sorted(cues))


@dataclass
class ConversationScan:
    turns_scanned: int = 0
    sentences_scanned: int = 0
    duplicate_sessions: int = 0
    candidates: list[Candidate] = field(default_factory=list)


def turn_key(corpus: str, conversation_id: str, ref: str) -> str:
    """Names a turn within a corpus: LoCoMo dia_ids repeat across samples, LongMemEval refs do not."""
    return f"{corpus}:{conversation_id}:{ref}" if corpus == "locomo" else f"{corpus}:{ref}"


def candidate_id(conv: Conversation, ref: str) -> str:
    return turn_key(conv.corpus, conv.conversation_id, ref)


def _context(session: CorpusSession, k: int) -> list[ContextTurn]:
    return [ContextTurn(speaker=t.speaker, text=t.text) for t in session.turns[max(0, k - 2) : k]]


PREFILTERS = ("lexicon", "none")


def scan_conversation(
    conv: Conversation,
    lexicon: Lexicon | None = None,
    seen_sessions: set[str] | None = None,
    *,
    prefilter: str = "lexicon",
) -> ConversationScan:
    """Prefilter every mined turn; sessions already in ``seen_sessions`` are skipped and added.

    ``prefilter="none"``: every mined turn (every user turn; both speakers of a peer chat) is a
    candidate, with no cue sentences: stage 2 reads the whole turn, as the paper's LLM miner did.
    """
    lex = lexicon or load_lexicon()
    every = prefilter == "none"
    out = ConversationScan()
    for session in conv.sessions:
        if seen_sessions is not None:
            key = session.session_id
            if key in seen_sessions:
                out.duplicate_sessions += 1
                continue
            seen_sessions.add(key)
        for k, turn in enumerate(session.turns):
            if not turn.mined:
                continue
            scan = scan_turn(turn.text, lex, conv.corpus)
            out.turns_scanned += 1
            out.sentences_scanned += scan.sentences
            if every or scan.hit:
                out.candidates.append(
                    Candidate(
                        id=candidate_id(conv, turn.ref),
                        corpus=conv.corpus,
                        conversation_id=conv.conversation_id,
                        source_ref=turn.ref,
                        session_index=session.index,
                        turn_index=k,
                        speaker=turn.speaker,
                        date=session.date,
                        turn_text=turn.text,
                        context=_context(session, k),
                        prefilter_cues=[] if every else scan.cues,
                        cue_spans=[] if every else scan.spans,
                        context_refs=[t.ref for t in session.turns[max(0, k - 2) : k]],
                    )
                )
    return out


def prefilter_line(prefilter: str, lexicon: Lexicon, corpus: str | None = None) -> list[str]:
    """Which prefilter ran (what it misses never reaches stage 2), and the lexicon's turn model
    where it applies to ``corpus`` (any, when not known); its measured recall is among the
    accuracy lines (``accuracy.summary_lines``)."""
    if prefilter == "none":
        return ["Prefilter: none (every turn goes to stage 2: nothing is filtered out)"]
    line = (
        f"Prefilter: lexicon {lexicon.ref} (misses never reach stage 2; --prefilter none sends "
        "every turn)"
    )
    if lexicon.model is None or (corpus and corpus not in lexicon.model.corpora):
        return [line]
    corpora = ", ".join(sorted(lexicon.model.corpora))
    return [line, f"  widened in {corpora} by the turn model {lexicon.model.ref}"]
