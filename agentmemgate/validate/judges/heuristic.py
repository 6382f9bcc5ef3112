"""The offline heuristic judges (family ``offline-heuristic``): cue lexicon and string rules.

They are a real, deterministic mechanism, not a language model, and reports mark them heuristic:

- recovery: find the user's plan statement by its cues, then read the factor's level by the
  design's recovery rules (``files.recovery``; the paper's: ``design/paper/recovery.toml``): from
  the plan statement (hedge strength), the later statements about it (outcome, confirmation
  wording), where they fall (a structure factor), or the built-in reading of corrections. Cues
  come from the judges' own lexicon (``lexicon.v1.toml``), which shares nothing with the
  renderer's phrase bank, and from categories the rules add. It sees exactly what an LLM judge
  sees: the dated sessions and the shuffled options; the options tell it the factor. With no cue
  at all it picks the first option in the shuffled order and says so (a recorded guess).
- realism: no "natural" verdict (a lexicon cannot read for naturalness: that needs an LLM judge or
  a human audit). Instead the named checks of ``_realism.OFFLINE_REALISM_CHECKS``: reply-question
  relevance, true cross-session and date references, repetition across the dataset, contradictory
  frames, tense agreement, chat form; and ``motivated`` (an earlier statement of the current state
  plus a reason cue or shared topic near the plan statement).
- equivalence: normalized-string equality (case, punctuation, articles, word order).
"""

from __future__ import annotations

import re

from ...design import Design, DesignError, Problem, paper_design
from ...hashing import sha256_joined
from ...schema import CORRECTION_MARKER_PHRASES, normalize_text
from ._lexicon import Lexicon, load_lexicon, normalize
from ._realism import OFFLINE_REALISM_CHECKS, REALISM_LEXICON_PATH, RealismCorpus, check_realism
from ._recovery import (
    PAPER_RULES_DIGEST,
    FactorRules,
    RecoveryRules,
    Rule,
    read_rules,
    rule_problems,
)
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

    def __init__(self, design: Design | None = None) -> None:
        """``design``: whose recovery rules to read (default: the paper's); a recovery file
        the judge cannot run is refused with its first problem."""
        self.design = design or paper_design()
        self.rules = read_rules(self.design)
        if self.rules.problems:
            more = len(self.rules.problems) - 1
            raise DesignError(
                f"{self.rules.problems[0]}"
                + (f" (and {more} more: amg design check)" if more else "")
            )
        self.lexicon = load_lexicon()
        self.realism_lexicon = load_lexicon(REALISM_LEXICON_PATH)
        sha = self.lexicon.sha256
        self._realism_sha = sha256_joined(sha, self.realism_lexicon.sha256)
        self.corpus: RealismCorpus | None = None
        # The recovery verdicts depend on the lexicon and the rules; rules equal to those the
        # judge was written with keep the lexicon's hash alone, so their verdicts stay current.
        self._paper_rules = self.rules.digest == PAPER_RULES_DIGEST
        self.rubric_sha256 = {
            "recovery": sha if self._paper_rules else sha256_joined(sha, self.rules.digest),
            "realism": self._realism_sha,
            "equivalence": "normalized-string-v1",
        }

    def rubric_ref(self, task: str) -> str:
        if task == "equivalence":
            return "normalized-string.v1"
        if task == "realism":
            return f"{self.lexicon.path.stem}+{self.realism_lexicon.path.stem}"
        if self._paper_rules:
            return self.lexicon.path.stem
        return f"{self.lexicon.path.stem}+{self.rules.origin.rsplit('/', 1)[-1]}"

    def prepare(self, questions: list[Question]) -> None:
        """Count turns and sentences over every conversation judged together (the repetition
        check); the count's digest joins the realism 'rubric' hash, so a changed dataset is
        judged again."""
        realism_qs = [q for q in questions if isinstance(q, RealismQuestion)]
        if realism_qs:
            self.corpus = RealismCorpus.of(q.sessions for q in realism_qs)
            self.rubric_sha256["realism"] = sha256_joined(self._realism_sha, self.corpus.digest)

    def ask(self, question: Question):
        if isinstance(question, RecoveryQuestion):
            return recover(question, self.design, self.rules)
        if isinstance(question, RealismQuestion):
            return realism(question, self.lexicon, self.corpus)
        return equivalence(question)


def design_problems(design: Design) -> list[Problem]:
    """What the offline recovery judge cannot do with ``design``, one line each naming the
    recovery file and key: a malformed file, unknown cue categories, tests or slots, and every
    level the design's cells use that no rule can give (``amg design check``)."""
    return rule_problems(design)


# -- recovery ----------------------------------------------------------------------------------
def _user_turns(sessions: tuple[ChatSession, ...]) -> list[tuple[int, int, str]]:
    return [
        (si, ti, t.text)
        for si, s in enumerate(sessions)
        for ti, t in enumerate(s.turns)
        if t.role == "user"
    ]


def _snippet(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


_PLAN_CUES = ("strong_hedge", "weak_hedge", "confident_plan", "done", "future")
_PLANNING = ("strong_hedge", "weak_hedge", "confident_plan")
# What makes a later user turn one about the plan (the structure reading), besides a word the
# plan statement introduced.
_ABOUT_PLAN = ("done", "abandon", "pending")


def _find_plan(
    lex: Lexicon, users: list[tuple[int, int, str]], extra: tuple[str, ...] = ()
) -> int | None:
    """Index (into ``users``) of the likeliest plan statement: change talk with plan cues.
    ``extra``: a design's own cue categories that its plan rules read (they count as planning)."""
    best, best_score = None, 0
    cues_of = _PLAN_CUES + extra
    for i, (_, _, text) in enumerate(users):
        if not lex.has_any(cues_of, text):
            continue  # no cue of any kind: score 0 (a date counts only with 'future')
        dated = lex.hits("date_or_schedule", text) if lex.has("future", text) else []
        planning = len(dated) + sum(len(lex.hits(c, text)) for c in _PLANNING + extra)
        score = 2 * min(planning, 3) + min(len(lex.hits("done", text)), 2)
        if score == 0:
            continue
        score += 2 * lex.has("change_talk", text) - 3 * lex.has("pending", text)
        if score > best_score:
            best, best_score = i, score
    return best


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
    grams = {tuple(_stem(w) for w in p[i : i + 3]) for i in range(len(p) - 2)}
    for i in range(len(q) - 2):
        g = q[i : i + 3]
        if tuple(_stem(w) for w in g) in grams and any(
            w not in value_words and w not in _ARTICLES and w != "to" for w in g
        ):
            return " ".join(g)
    return None


class _Slots(dict):
    def __missing__(self, key: str) -> str:
        return ""


def _holds(lex: Lexicon, rule: Rule, text: str) -> str | None:
    """``rule``'s categories on ``text``: None when they fail, else the cue ('' with no ``any``)."""
    cue = ""
    if rule.any:
        cue = next((hits[0] for c in rule.any if (hits := lex.hits(c, text))), None)
        if cue is None:
            return None
    if any(not lex.has(c, text) for c in rule.with_) or any(lex.has(c, text) for c in rule.none):
        return None
    return cue


_Found = tuple[str | None, str]  # (level or None for a guess, rationale)


def _by_rules(fr: FactorRules, rules: tuple[Rule, ...], ok) -> _Found | None:
    """The first rule that ``ok(rule)`` holds for (slots or None): its level and rationale."""
    for rule in rules:
        slots = ok(rule)
        if slots is not None:
            return rule.level, rule.say.format_map(_Slots(slots))
    return None


def _default(fr: FactorRules) -> _Found:
    d = fr.default
    return (d.level, d.say) if d else (None, "no rule holds")


def _read_plan(lex: Lexicon, fr: FactorRules, users, p: int) -> _Found:
    """Plan and outcome readings: rules on the plan statement or on each later user turn."""
    plan = users[p][2]

    def ok(rule: Rule):
        if fr.reads_of(rule) == "plan":
            cue = _holds(lex, rule, plan)
            return None if cue is None else {"cue": cue}
        for s_i, _, text in users[p + 1 :]:
            if (cue := _holds(lex, rule, text)) is not None:
                return {"cue": cue, "session": s_i + 1}
        return None

    return _by_rules(fr, fr.rules, ok) or _default(fr)


def _read_confirmation(lex: Lexicon, fr: FactorRules, sessions, users, p: int) -> _Found:
    """The later user turn likeliest to report the change, with the built-in tests."""
    si, ti, plan = users[p]
    later = users[p + 1 :]
    if not later:
        return _by_rules(
            fr, fr.rules, lambda r: {} if r.test == "no_later_turn" else None
        ) or _default(fr)
    value = _new_words(lex, sessions, si, ti)

    def rank(u):
        return (len(lex.hits("done", u[2])) > 0, len(value & set(lex.content_words(u[2]))))

    c_si, _, text = max(later, key=rank)  # max keeps the earliest of equals
    done = lex.hits("done", text)
    named = sorted(value & set(lex.content_words(text)))
    run: list[str | None] = []  # the repeated words, found when a rule asks

    def repeats() -> str | None:
        if not run:
            run.append(_shares_wording(plan, text, value))
        return run[0]

    tests = {
        "no_later_turn": lambda: False,
        "no_completion": lambda: not done,
        "value_unnamed": lambda: not named,
        "repeats_plan_wording": lambda: repeats() is not None,
    }

    def ok(rule: Rule):
        if rule.test is not None and not tests[rule.test]():
            return None
        cue = _holds(lex, rule, text)
        if cue is None:
            return None
        return {
            "cue": cue or (done[0] if done else ""),
            "session": c_si + 1,
            "where": f"the later user turn in session {c_si + 1} ('{_snippet(text)}')",
            "named": named[0] if named else "",
            "run": (repeats() or "") if "{run}" in rule.say else "",
        }

    return _by_rules(fr, fr.rules, ok) or _default(fr)


def _read_structure(lex: Lexicon, fr: FactorRules, sessions, users, p: int) -> tuple[_Found, int]:
    """How many sessions lie between the plan statement and the user turn of a later session
    that reports on it, and the plan statement taken (``p`` unless it was the report itself).

    The report is the later-session user turn ranked first by: a statement over a question (the
    user's questions to the assistant are small talk), then how many words the plan introduced
    it repeats (twice over) plus how many outcome cues (done, abandon, pending) it has; the
    earliest of equals. With no later user turn, the likeliest plan statement may be the report
    itself: the plan is then the likeliest plan statement of the sessions before it, or with no
    plan cue there, the first turn to say a word the report repeats."""
    si, ti, _ = users[p]
    value = _new_words(lex, sessions, si, ti)

    def score(text: str) -> int:
        return 2 * len(value & set(lex.content_words(text))) + sum(
            len(lex.hits(c, text)) for c in _ABOUT_PLAN
        )

    later = [
        (k, s_i, text)
        for k, (s_i, _, text) in enumerate(users)
        if k > p and s_i > si and ("?" not in text or score(text) > 0)
    ]
    if later:
        _, s_i, text = max(later, key=lambda x: ("?" not in x[2], score(x[2]), -x[0]))
    else:
        earlier = [u for u in users if u[0] < si]
        q = _find_plan(lex, earlier) if earlier else None
        if q is None:  # the earliest turn to say a word the report repeats
            said = set(lex.content_words(users[p][2]))
            q = next(
                (
                    k
                    for k, (s_k, t_k, _) in enumerate(earlier)
                    if _new_words(lex, sessions, s_k, t_k) & said
                ),
                None,
            )
        if q is None:
            return _default(fr), p
        (s_i, _, text), p = users[p], q
        si = earlier[q][0]
    between = s_i - si - 1

    def ok(rule: Rule):
        if rule.sessions_between is not None and between not in rule.sessions_between:
            return None
        cue = _holds(lex, rule, text)
        return (
            None
            if cue is None
            else {
                "cue": cue,
                "session": s_i + 1,
                "between": between,
                "where": f"the later user turn in session {s_i + 1} ('{_snippet(text)}')",
            }
        )

    return _by_rules(fr, fr.rules, ok) or _default(fr), p


_WRONG = (
    "wrong",
    "mistake",
    "mix-up",
    "mixed up",
    "misremembered",
    "not true",
    "wasn't right",
    "misspoke",
    "confusing it",
)


def _correction(lex: Lexicon, users) -> tuple[str | None, str]:
    """Correction cells: the correction is the last user turn with a corrective marker or a
    'that was wrong' phrase; it corrects a reported change when an earlier user turn has a
    completed-change cue (else the initial statement, the first user turn); same session or
    later by where the two fall; marked when it has one of the schema's corrective markers."""

    def has(text: str, phrases) -> str | None:
        norm = f" {normalize_text(text)} "
        return next((p for p in phrases if f" {normalize_text(p)} " in norm), None)

    idx = next(
        (
            i
            for i in range(len(users) - 1, -1, -1)
            if has(users[i][2], CORRECTION_MARKER_PHRASES + _WRONG)
        ),
        None,
    )
    if idx is None:
        return None, "no user turn has a corrective marker or says something was wrong"
    cs, _, text = users[idx]
    done = next((j for j in range(idx) if lex.hits("done", users[j][2])), None)
    target, said = ("change", users[done][0]) if done is not None else ("initial", users[0][0])
    marker = has(text, CORRECTION_MARKER_PHRASES)
    why = (
        f"Took the user turn in session {cs + 1} ('{_snippet(text)}') as the correction; "
        + (
            f"an earlier turn in session {said + 1} reports a completed change"
            if done is not None
            else "no earlier turn reports a change, so it corrects the first statement"
        )
        + f"; {'same' if cs == said else 'a later'} session; "
        + (f"marker '{marker}'" if marker else "no corrective marker")
    )
    return f"{target}_{'same' if cs == said else 'later'}_{'marked' if marker else 'unmarked'}", why


def _verdict(level: str | None, why: str, options: list[str]) -> RecoveryVerdict:
    if level not in options:
        return RecoveryVerdict(
            level=options[0],
            rationale=f"{why}; no cue decides, so the first listed option is a guess.",
        )
    return RecoveryVerdict(level=level, rationale=why + ".")


def recover(
    q: RecoveryQuestion, design: Design | None = None, rules: RecoveryRules | None = None
) -> RecoveryVerdict:
    """Blind recovery by ``design``'s rules (default: the paper's): the options tell the factor
    (``Design.factor_of_levels``), its rules the level; nothing else about the arc is known."""
    design = design or paper_design()
    rules = rules or read_rules(design)
    lex = rules.lexicon
    options = [o.level for o in q.options]
    factor = design.factor_of_levels(options)
    fr = rules.factors.get(factor.name) if factor else None
    if fr is None:
        what = (
            "no factor of the design has these options"
            if factor is None
            else f"the recovery rules have no table for factor {factor.name!r}"
        )
        return _verdict(None, what, options)
    users = _user_turns(q.sessions)
    if fr.reads == "correction":
        return _verdict(*_correction(lex, users), options)
    p = _find_plan(lex, users, rules.plan_cues)
    if p is None:
        return _verdict(None, "no user turn has a plan or change cue", options)
    if fr.reads == "confirmation":
        level, why = _read_confirmation(lex, fr, q.sessions, users, p)
    elif fr.reads == "structure":
        (level, why), p = _read_structure(lex, fr, q.sessions, users, p)
    else:
        level, why = _read_plan(lex, fr, users, p)
    si, _, text = users[p]
    found = f"Took the user turn in session {si + 1} ('{_snippet(text)}') as the plan statement"
    return _verdict(level, f"{found}; {why}", options)


# -- realism -----------------------------------------------------------------------------------
def _motivated(lex: Lexicon, q: RealismQuestion) -> CriterionVerdict:
    flat = [(si, ti, t) for si, s in enumerate(q.sessions) for ti, t in enumerate(s.turns)]
    pos = next(
        (i for i, (si, ti, _) in enumerate(flat) if (si, ti) == (q.plan_session, q.plan_turn)), None
    )
    if pos is None:
        return CriterionVerdict(
            passed=False, rationale="The plan statement is not in the conversation."
        )
    plan = flat[pos][2].text
    earlier_user = [t.text for _, _, t in flat[:pos] if t.role == "user"]
    if not earlier_user:
        return CriterionVerdict(
            passed=False,
            rationale="The plan statement opens the conversation, with no context before it.",
        )
    near = " ".join([t.text for _, _, t in flat[max(0, pos - 2) : pos]] + [plan])
    if hits := lex.hits("reason", near):
        return CriterionVerdict(
            passed=True,
            rationale=f"Context precedes the plan and a reason is given nearby ('{hits[0]}').",
        )
    shared = set(lex.content_words(plan)) & set(
        w for x in earlier_user for w in lex.content_words(x)
    )
    if shared:
        return CriterionVerdict(
            passed=True,
            rationale=f"The plan continues a topic the user raised earlier ('{sorted(shared)[0]}').",
        )
    return CriterionVerdict(
        passed=False,
        rationale="No reason cue near the plan and no topic shared with the user's earlier turns.",
    )


def realism(
    q: RealismQuestion, lex: Lexicon | None = None, corpus: RealismCorpus | None = None
) -> RealismVerdict:
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
        return EquivalenceVerdict(
            equivalent=True,
            confidence=0.95,
            rationale=(
                "The values are identical after normalizing case, punctuation and leading articles."
            ),
        )
    if a and sorted(a) == sorted(b):
        return EquivalenceVerdict(
            equivalent=True,
            confidence=0.8,
            rationale="The values have the same words in another order.",
        )
    sa, sb = set(a), set(b)
    overlap = len(sa & sb) / len(sa | sb) if sa | sb else 0.0
    return EquivalenceVerdict(
        equivalent=False,
        confidence=round(0.9 - 0.4 * overlap, 2),
        rationale=(f"The normalized values differ (word overlap {overlap:.0%})."),
    )
