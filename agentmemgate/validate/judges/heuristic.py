"""The offline heuristic judges (family ``offline-heuristic``): cue lexicon and string rules.

They are a real, deterministic mechanism, not a language model, and reports mark them heuristic:

- recovery: find the user's plan statement by its cues, classify it (hedge strength) or the later
  statement about it (confirmation wording, outcome) with the judges' own lexicon
  (``lexicon.v1.toml``), which shares nothing with the renderer's phrase bank. It sees exactly
  what an LLM judge sees: the dated sessions and the shuffled options. With no cue at all it picks
  the first option in the shuffled order and says so (a recorded guess).
- realism: no "natural" verdict (a lexicon cannot read for naturalness: that needs an LLM judge or
  a human audit). Instead the named checks of ``_realism.OFFLINE_REALISM_CHECKS``: reply-question
  relevance, true cross-session and date references, repetition across the dataset, contradictory
  frames, tense agreement, chat form; and ``motivated`` (an earlier statement of the current state
  plus a reason cue or shared topic near the plan statement).
- equivalence: normalized-string equality (case, punctuation, articles, word order).
"""

from __future__ import annotations

import hashlib
import re

from ...schema import (
    CONFIRMATION_LEVELS,
    CONTROL_LEVEL,
    CORRECTION_FACTOR,
    CORRECTION_MARKER_PHRASES,
    FACTOR_LEVELS,
    normalize_text,
)
from ._lexicon import Lexicon, load_lexicon, normalize
from ._realism import OFFLINE_REALISM_CHECKS, REALISM_LEXICON_PATH, RealismCorpus, check_realism
from .base import OFFLINE_JUDGE, OFFLINE_JUDGE_FAMILY, Judge
from .questions import (
    ChatSession,
    EquivalenceQuestion,
    Question,
    RealismQuestion,
    RecoveryQuestion,
)
from .verdicts import CriterionVerdict, EquivalenceVerdict, RealismVerdict, RecoveryVerdict

_ARTICLES = {"a", "an", "the", "my", "our", "your"}
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


class HeuristicJudge(Judge):
    spec = OFFLINE_JUDGE
    family = OFFLINE_JUDGE_FAMILY
    heuristic = True

    realism_criteria = OFFLINE_REALISM_CHECKS

    def __init__(self) -> None:
        self.lexicon = load_lexicon()
        self.realism_lexicon = load_lexicon(REALISM_LEXICON_PATH)
        sha = self.lexicon.sha256
        self._realism_sha = sha256_text(sha, self.realism_lexicon.sha256)
        self.corpus: RealismCorpus | None = None
        self.rubric_sha256 = {"recovery": sha, "realism": self._realism_sha,
                              "equivalence": "normalized-string-v1"}

    def rubric_ref(self, task: str) -> str:
        if task == "equivalence":
            return "normalized-string.v1"
        if task == "realism":
            return f"{self.lexicon.path.stem}+{self.realism_lexicon.path.stem}"
        return self.lexicon.path.stem

    def prepare(self, questions: list[Question]) -> None:
        """Count turns and sentences over every conversation judged together (the repetition
        check); the count's digest joins the realism 'rubric' hash, so a changed dataset is
        judged again."""
        realism_qs = [q for q in questions if isinstance(q, RealismQuestion)]
        if realism_qs:
            self.corpus = RealismCorpus.of(q.sessions for q in realism_qs)
            self.rubric_sha256["realism"] = sha256_text(self._realism_sha, self.corpus.digest)

    def ask(self, question: Question):
        if isinstance(question, RecoveryQuestion):
            return recover(question, self.lexicon)
        if isinstance(question, RealismQuestion):
            return realism(question, self.lexicon, self.corpus)
        return equivalence(question)


def sha256_text(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


# -- recovery ----------------------------------------------------------------------------------
def _user_turns(sessions: tuple[ChatSession, ...]) -> list[tuple[int, int, str]]:
    return [(si, ti, t.text) for si, s in enumerate(sessions) for ti, t in enumerate(s.turns)
            if t.role == "user"]


def _snippet(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


_PLAN_CUES = ("strong_hedge", "weak_hedge", "confident_plan", "done", "future")


def _plan_cues(lex: Lexicon, text: str) -> dict[str, list[str]]:
    dated = lex.hits("date_or_schedule", text) if lex.has("future", text) else []
    return {"strong_hedge": lex.hits("strong_hedge", text), "weak_hedge": lex.hits("weak_hedge", text),
            "date": dated, "confident_plan": lex.hits("confident_plan", text),
            "done": lex.hits("done", text)}


def _find_plan(lex: Lexicon, users: list[tuple[int, int, str]]) -> int | None:
    """Index (into ``users``) of the likeliest plan statement: change talk with plan cues."""
    best, best_score = None, 0
    for i, (_, _, text) in enumerate(users):
        if not lex.has_any(_PLAN_CUES, text):
            continue  # no cue of any kind: score 0 (a date counts only with 'future')
        cues = _plan_cues(lex, text)
        planning = sum(len(cues[k]) for k in ("strong_hedge", "weak_hedge", "date", "confident_plan"))
        score = 2 * min(planning, 3) + min(len(cues["done"]), 2)
        if score == 0:
            continue
        score += 2 * lex.has("change_talk", text) - 3 * lex.has("pending", text)
        if score > best_score:
            best, best_score = i, score
    return best


def _hedge_level(cues: dict[str, list[str]]) -> tuple[str | None, str]:
    if cues["strong_hedge"]:
        return "strongly_hedged", f"strong-hedge cue '{cues['strong_hedge'][0]}'"
    if cues["weak_hedge"]:
        return "weakly_hedged", f"weak-hedge cue '{cues['weak_hedge'][0]}'"
    if cues["date"] and not cues["done"]:
        return "scheduled_with_date", f"date cue '{cues['date'][0]}' with a future plan"
    if cues["done"]:
        return CONTROL_LEVEL, f"completed-change cue '{cues['done'][0]}'"
    if cues["date"]:
        return "scheduled_with_date", f"date cue '{cues['date'][0]}' with a future plan"
    if cues["confident_plan"]:
        return "confident_no_date", f"firm-plan cue '{cues['confident_plan'][0]}' and no date"
    return None, "no hedge, plan or completion cue"


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalize(text))


def _new_words(lex: Lexicon, sessions: tuple[ChatSession, ...], si: int, ti: int) -> set[str]:
    """Content words the plan statement introduces (not said before it): the likely new value."""
    before: set[str] = set()
    for s_i, s in enumerate(sessions):
        for t_i, t in enumerate(s.turns):
            if (s_i, t_i) >= (si, ti):
                break
            before.update(lex.content_words(t.text))
    return set(lex.content_words(sessions[si].turns[ti].text)) - before


def _stem(word: str) -> str:
    """Crude suffix stripping so 'switch', 'switched' and 'switching' count as the same word."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _shares_wording(plan: str, later: str, value_words: set[str]) -> str | None:
    """A 3-word run of the plan statement repeated later (up to inflection), with a word beyond
    the value itself."""
    p, q = _tokens(plan), _tokens(later)
    grams = {tuple(_stem(w) for w in p[i:i + 3]) for i in range(len(p) - 2)}
    for i in range(len(q) - 2):
        g = q[i:i + 3]
        if tuple(_stem(w) for w in g) in grams and any(
                w not in value_words and w not in _ARTICLES and w != "to" for w in g):
            return " ".join(g)
    return None


def _confirmation(lex: Lexicon, sessions, users, p: int) -> tuple[str, str]:
    si, ti, plan = users[p]
    value = _new_words(lex, sessions, si, ti)
    later = users[p + 1:]
    if not later:
        return CONFIRMATION_LEVELS[-1], "no user turn follows the plan statement"

    def rank(u):
        return (len(lex.hits("done", u[2])) > 0, len(value & set(lex.content_words(u[2]))))

    c_si, _, text = max(later, key=rank)  # max keeps the earliest of equals
    done = lex.hits("done", text)
    named = sorted(value & set(lex.content_words(text)))
    where = f"the later user turn in session {c_si + 1} ('{_snippet(text)}')"
    if not done:
        return "situational", f"{where} reports no change (no completion cue), only what the user does"
    if not named:
        return "oblique", f"{where} reports the change ('{done[0]}') without naming what the plan introduced"
    if run := _shares_wording(plan, text, value):
        return "verbatim", f"{where} repeats the plan's words ('{run}') and names '{named[0]}'"
    return "paraphrase", f"{where} names '{named[0]}' but reports the change in other words ('{done[0]}')"


def _outcome(lex: Lexicon, users, p: int, cues) -> tuple[str, str]:
    planning = any(cues[k] for k in ("strong_hedge", "weak_hedge", "confident_plan"))
    if cues["done"] and not planning:
        return CONTROL_LEVEL, f"the statement itself reports a completed change ('{cues['done'][0]}')"
    for cat, level in (("abandon", "abandoned"), ("pending", "open"), ("done", "came_true")):
        for s_i, _, text in users[p + 1:]:
            if hits := lex.hits(cat, text):
                return level, f"a later user turn in session {s_i + 1} has {cat} cue '{hits[0]}'"
    return "open", "no later user turn resolves the plan"


_WRONG = ("wrong", "mistake", "mix-up", "mixed up", "misremembered", "not true", "wasn't right",
          "misspoke", "confusing it")


def _correction(lex: Lexicon, users) -> tuple[str | None, str]:
    """Correction cells: the correction is the last user turn with a corrective marker or a
    'that was wrong' phrase; it corrects a reported change when an earlier user turn has a
    completed-change cue (else the initial statement, the first user turn); same session or
    later by where the two fall; marked when it has one of the schema's corrective markers."""
    def has(text: str, phrases) -> str | None:
        norm = f" {normalize_text(text)} "
        return next((p for p in phrases if f" {normalize_text(p)} " in norm), None)

    idx = next((i for i in range(len(users) - 1, -1, -1)
                if has(users[i][2], CORRECTION_MARKER_PHRASES + _WRONG)), None)
    if idx is None:
        return None, "no user turn has a corrective marker or says something was wrong"
    cs, _, text = users[idx]
    done = next((j for j in range(idx) if lex.hits("done", users[j][2])), None)
    target, said = ("change", users[done][0]) if done is not None else ("initial", users[0][0])
    marker = has(text, CORRECTION_MARKER_PHRASES)
    why = (f"Took the user turn in session {cs + 1} ('{_snippet(text)}') as the correction; "
           + (f"an earlier turn in session {said + 1} reports a completed change" if done is not None
              else "no earlier turn reports a change, so it corrects the first statement")
           + f"; {'same' if cs == said else 'a later'} session; "
           + (f"marker '{marker}'" if marker else "no corrective marker"))
    return f"{target}_{'same' if cs == said else 'later'}_{'marked' if marker else 'unmarked'}", why


def recover(q: RecoveryQuestion, lex: Lexicon | None = None) -> RecoveryVerdict:
    lex = lex or load_lexicon()
    options = [o.level for o in q.options]
    scale = next((f for f, lv in FACTOR_LEVELS.items() if set(lv) == set(options)), None)
    users = _user_turns(q.sessions)
    if scale == CORRECTION_FACTOR:
        level, why = _correction(lex, users)
        if level not in options:
            return RecoveryVerdict(level=options[0],
                                   rationale=f"{why}; no cue decides, so the first listed option is a guess.")
        return RecoveryVerdict(level=level, rationale=why + ".")
    p = _find_plan(lex, users)
    level: str | None = None
    why = "no user turn has a plan or change cue"
    if p is not None:
        si, _, text = users[p]
        cues = _plan_cues(lex, text)
        found = f"Took the user turn in session {si + 1} ('{_snippet(text)}') as the plan statement"
        if scale == "confirmation_wording":
            level, why = _confirmation(lex, q.sessions, users, p)
            why = f"{found}; {why}"
        elif scale == "outcome":
            level, why = _outcome(lex, users, p, cues)
            why = f"{found}; {why}"
        else:
            level, why = _hedge_level(cues)
            why = f"{found}; it has {why}"
    if level not in options:
        return RecoveryVerdict(level=options[0],
                               rationale=f"{why}; no cue decides, so the first listed option is a guess.")
    return RecoveryVerdict(level=level, rationale=why + ".")


# -- realism -----------------------------------------------------------------------------------
def _motivated(lex: Lexicon, q: RealismQuestion) -> CriterionVerdict:
    flat = [(si, ti, t) for si, s in enumerate(q.sessions) for ti, t in enumerate(s.turns)]
    pos = next((i for i, (si, ti, _) in enumerate(flat) if (si, ti) == (q.plan_session, q.plan_turn)), None)
    if pos is None:
        return CriterionVerdict(passed=False, rationale="The plan statement is not in the conversation.")
    plan = flat[pos][2].text
    earlier_user = [t.text for _, _, t in flat[:pos] if t.role == "user"]
    if not earlier_user:
        return CriterionVerdict(passed=False, rationale="The plan statement opens the conversation, with no context before it.")
    near = " ".join([t.text for _, _, t in flat[max(0, pos - 2):pos]] + [plan])
    if hits := lex.hits("reason", near):
        return CriterionVerdict(passed=True, rationale=f"Context precedes the plan and a reason is given nearby ('{hits[0]}').")
    shared = set(lex.content_words(plan)) & set(w for x in earlier_user for w in lex.content_words(x))
    if shared:
        return CriterionVerdict(passed=True, rationale=f"The plan continues a topic the user raised earlier ('{sorted(shared)[0]}').")
    return CriterionVerdict(passed=False, rationale="No reason cue near the plan and no topic shared with the user's earlier turns.")


def realism(q: RealismQuestion, lex: Lexicon | None = None,
            corpus: RealismCorpus | None = None) -> RealismVerdict:
    """The named offline checks (``OFFLINE_REALISM_CHECKS``); never a 'natural' verdict."""
    lex = lex or load_lexicon()
    criteria = check_realism(q, corpus)
    criteria["motivated"] = _motivated(lex, q)
    return RealismVerdict(criteria={k: criteria[k] for k in OFFLINE_REALISM_CHECKS})


# -- equivalence -------------------------------------------------------------------------------
def _canon(value: str) -> list[str]:
    words = normalize_text(value).split()
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return words


def equivalence(q: EquivalenceQuestion) -> EquivalenceVerdict:
    a, b = _canon(q.first), _canon(q.second)
    if a == b and a:
        return EquivalenceVerdict(equivalent=True, confidence=0.95, rationale=(
            "The values are identical after normalizing case, punctuation and leading articles."))
    if a and sorted(a) == sorted(b):
        return EquivalenceVerdict(equivalent=True, confidence=0.8,
                                  rationale="The values have the same words in another order.")
    sa, sb = set(a), set(b)
    overlap = len(sa & sb) / len(sa | sb) if sa | sb else 0.0
    return EquivalenceVerdict(equivalent=False, confidence=round(0.9 - 0.4 * overlap, 2), rationale=(
        f"The normalized values differ (word overlap {overlap:.0%})."))
