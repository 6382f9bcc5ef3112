"""Measured diversity of a set of arcs: how often turns and sentences repeat, and how well
assistant replies take up their questions.

Turns are compared after normalizing case and punctuation, so "Got it!" and "got it." are one
text. User small talk is every user turn that is none of the arc's key turns (initial, plan,
outcome, pending). Relevance is the offline judge's measure (``qa_overlap``): content-word stems a
reply shares with the question it follows. ``benchmarks/offline_diversity.py`` prints these
figures; the dataset card reports them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from ..schema import Arc, normalize_text
from ..stats import Proportion, wilson
from .judges._realism import (
    SENTENCE_LIMIT,
    SENTENCE_MIN_WORDS,
    qa_overlap,
    question_part,
    realism_lexicon,
    sentences,
)

# Goals for a full default build.
ASSISTANT_DISTINCT_GOAL = 0.85
SMALL_TALK_DISTINCT_GOAL = 0.90


class Repeated(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    count: int


class Diversity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arcs: int
    assistant_turns: int
    assistant_distinct: Proportion  # distinct texts / turns
    small_talk_turns: int
    small_talk_distinct: Proportion
    sentence_limit: int
    assistant_sentences: int
    sentences_over_limit: int  # distinct assistant sentences occurring more than the limit
    top_sentences: list[Repeated]
    top_turns: list[Repeated]
    qa_pairs: int  # assistant replies that follow a user question
    qa_overlap_histogram: dict[str, int]  # "0", "1", "2", "3+" shared content words -> replies
    qa_no_overlap: Proportion


_norm = lru_cache(maxsize=65536)(normalize_text)


@lru_cache(maxsize=65536)
def _counted_sentences(text: str) -> tuple[tuple[str, str], ...]:
    """(sentence, normalized key) for the sentences long enough to count as repeats."""
    pairs = ((s, normalize_text(s)) for s in sentences(text))
    return tuple((s, k) for s, k in pairs if len(k.split()) >= SENTENCE_MIN_WORDS)


def _distinct(texts: list[str]) -> Proportion:
    return wilson(len(set(texts)), len(texts))


def key_turns(arc: Arc) -> set[tuple[int, int]]:
    refs = (arc.initial_turn, arc.plan_turn, arc.outcome_turn, arc.pending_turn)
    return {(r.session, r.turn) for r in refs if r is not None}


def measure(
    arcs: Iterable[Arc], top: int = 10, groups: Iterable[Iterable[str]] | None = None
) -> Diversity:
    """Repetition and reply relevance over ``arcs``. ``groups``: the sets of split names whose
    arcs the repetition check counts together (``judging.judged_together``); sentence repeats
    are counted within each, as that check counts them, so the card gives one figure."""
    arcs = list(arcs)
    group_of = {s: i for i, g in enumerate(groups or ()) for s in g}
    lex = realism_lexicon()
    assistant, small_talk = [], []
    sent_counts: Counter = Counter()
    display: dict[str, str] = {}
    hist = Counter({"0": 0, "1": 0, "2": 0, "3+": 0})
    for arc in arcs:
        keys = key_turns(arc)
        for si, s in enumerate(arc.sessions):
            for ti, t in enumerate(s.turns):
                norm = _norm(t.text)
                if t.role == "assistant":
                    assistant.append(norm)
                    display.setdefault(norm, t.text)
                    for sent, k in _counted_sentences(t.text):
                        sent_counts[(group_of.get(arc.spec.split, -1), k)] += 1
                        display.setdefault(k, sent)
                    prev = s.turns[ti - 1] if ti else None
                    if prev is not None and prev.role == "user" and question_part(prev.text):
                        n = len(qa_overlap(prev.text, t.text, lex))
                        hist["3+" if n >= 3 else str(n)] += 1
                elif (si, ti) not in keys:
                    small_talk.append(norm)
    turn_counts = Counter(assistant)
    pairs = sum(hist.values())
    return Diversity(
        arcs=len(arcs),
        assistant_turns=len(assistant),
        assistant_distinct=_distinct(assistant),
        small_talk_turns=len(small_talk),
        small_talk_distinct=_distinct(small_talk),
        sentence_limit=SENTENCE_LIMIT,
        assistant_sentences=sum(sent_counts.values()),
        sentences_over_limit=sum(1 for c in sent_counts.values() if c > SENTENCE_LIMIT),
        top_sentences=[
            Repeated(text=display[k], count=c) for (_, k), c in sent_counts.most_common(top)
        ],
        top_turns=[
            Repeated(text=display[k], count=c) for k, c in turn_counts.most_common(top) if c > 1
        ],
        qa_pairs=pairs,
        qa_overlap_histogram=dict(hist),
        qa_no_overlap=wilson(hist["0"], pairs),
    )


def card_lines(d: Diversity) -> list[str]:
    """The diversity block of the dataset card (markdown lines)."""
    top = d.top_sentences[0] if d.top_sentences else None
    out = [
        f"- Assistant turns distinct: {d.assistant_distinct.fmt()} (goal for a full build: "
        f"at least {ASSISTANT_DISTINCT_GOAL:.0%})",
        f"- User small-talk turns distinct: {d.small_talk_distinct.fmt()} (goal: at least "
        f"{SMALL_TALK_DISTINCT_GOAL:.0%})",
        f"- Assistant sentences occurring more than {d.sentence_limit} "
        f"times: {d.sentences_over_limit}"
        + (f"; most repeated: \"{top.text}\" ({top.count} times)" if top else ""),
        f"- Replies to a question sharing no content word with it: {d.qa_no_overlap.fmt()}; shared "
        "words per reply: " + ", ".join(f"{k}: {v}" for k, v in d.qa_overlap_histogram.items()),
    ]
    return out
