"""Load ``rules.vN.toml``: the offline stage-2 rules and the outcome cues, compiled once."""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import BadInput
from ..text import PhraseMatcher, tokens
from ..versioned import versioned_file

RULES_DIR = Path(__file__).parent
# The hedge levels the rules label with are the paper's, by name: a ``[hedge_levels]`` list's key
# is its level (the first list that matches wins, in the file's order); a plan with no hedge cue
# is one of these two, by whether it names a date. A design's own plan-wording levels change
# nothing here (the offline rules know no cues for them).
DATED_LEVEL = "scheduled_with_date"
UNDATED_LEVEL = "confident_no_date"


@dataclass(frozen=True)
class PlanChecks:
    """v3's checks of a candidate plan (``[plans]`` in rules.v3.toml): each list names what makes a
    matched plan not the speaker's own lasting change, and the reason it is rejected with."""

    one_off: PhraseMatcher  # a trip, an outing, a show, a meeting: no lasting change
    not_plans: PhraseMatcher  # the value is small talk, an offer or a vague wish
    completed: PhraseMatcher  # the clause tells of a change already made
    under_way: PhraseMatcher  # the change is already happening
    subject_skip: frozenset[str]  # words between a subject and its plan cue ("I really might")
    empty_words: frozenset[str]  # words that name no object ("head out", "fix it", "pass")

    def object_words(self, value: str) -> list[str]:
        """The words of a plan's value after its first (its verb) that name something."""
        return [w for _, w in tokens(value)[1:] if w not in self.empty_words and len(w) > 1]


@dataclass(frozen=True)
class Rules:
    version: int
    sha256: str
    hedge_levels: PhraseMatcher = field(repr=False)  # categories: strongly_hedged, weakly_hedged
    dates: list[re.Pattern] = field(repr=False)
    negated: PhraseMatcher = field(repr=False)
    attributes: list[tuple[str, re.Pattern]] = field(repr=False)
    outcome: PhraseMatcher = field(repr=False)  # categories: abandonment, confirmation
    negations: frozenset[str] = frozenset()
    reject_first_words: frozenset[str] = frozenset()
    reject_values: frozenset[str] = frozenset()
    reject_words: frozenset[str] = frozenset()  # anywhere in a value: past time ("yesterday")
    pronouns: dict[str, bool] = field(default_factory=dict)  # subject word -> is the speaker
    # v1: None (every question is rejected); v2: requests and questions opening with these are
    question_openers: PhraseMatcher | None = field(default=None, repr=False)
    speaker_only: frozenset[int] = (
        frozenset()
    )  # attribute patterns (by index) needing the speaker as subject
    # v2: a cue sentence with one of these also reads the sentence before it ("that's an option")
    antecedents: PhraseMatcher | None = field(default=None, repr=False)
    hedge_order: tuple[str, ...] = ()  # the [hedge_levels] keys, in the file's order
    # v3 ([plans]): what a kept statement must not be, checked on the clause it was read from
    checks: PlanChecks | None = field(default=None, repr=False)
    # v3 ([names]): the attribute of a plan no pattern could name, by the words of its value
    names: PhraseMatcher | None = field(default=None, repr=False)
    names_order: tuple[str, ...] = ()
    # v3 ([values] empty_words): a plan read by a pattern marked ``verb_first`` whose value names
    # nothing after its verb ("head out", "join you", "give it a try") is kept with no value
    # rather than a bare verb
    empty_words: frozenset[str] = frozenset()
    verb_first: frozenset[int] = (
        frozenset()
    )  # attribute patterns (by index) whose value opens with its verb
    # v5 ([[attribute]] renames): a pattern's attribute when one of its named groups took part in
    # the match (by pattern index: group -> attribute), so one pattern can tell its frames apart
    renames: dict[int, dict[str, str]] = field(default_factory=dict)
    # v6 ([values] of_heads, request_heads, swap_frames): a value read fuller from the words after
    # it ("a pair" -> "pair of running shoes"; "recommendations" on X -> X; replacing A with B -> B)
    of_heads: frozenset[str] = frozenset()
    request_heads: frozenset[str] = frozenset()
    swap_frames: tuple[str, ...] = ()
    after_of: re.Pattern | None = field(default=None, repr=False)
    after_request: re.Pattern | None = field(default=None, repr=False)
    after_swap: re.Pattern | None = field(default=None, repr=False)

    def names_no_object(self, value: str) -> bool:
        """Whether a verb-first value has no word after its verb that names something."""
        return bool(self.empty_words) and not any(
            w not in self.empty_words and len(w) > 1 for _, w in tokens(value)[1:]
        )

    def hedge_level(self, sentence: str) -> str:
        """The level of a kept plan: the first ``[hedge_levels]`` list with a cue in it, else
        the dated or the undated level."""
        cues = self.hedge_levels.matches(sentence)
        for level in self.hedge_order:
            if level in cues:
                return level
        return DATED_LEVEL if self.has_date(sentence) else UNDATED_LEVEL

    @property
    def ref(self) -> str:
        return f"rules.v{self.version}"

    def has_date(self, text: str) -> bool:
        return any(p.search(text) for p in self.dates)

    def outcome_cues(self, sentence: str) -> set[str]:
        """'abandonment' / 'confirmation' cues in a sentence, ignoring negated ones."""
        toks = tokens(sentence)
        words = [w for _, w in toks]
        found = set()
        for a, _, cat, _ in self.outcome.find(toks):
            if not self.negations.intersection(words[max(0, a - 3) : a]):
                found.add(cat)
        return found

    def acceptable_value(self, value: str) -> bool:
        words = value.lower().split()
        return (
            bool(words)
            and words[0] not in self.reject_first_words
            and value.lower() not in self.reject_values
            and not self.has_date(value)
            and self.reject_words.isdisjoint(w for _, w in tokens(value))
        )

    def opens_request(self, sentence: str) -> bool:
        """Whether a question opens with a request or question word ("Can you ...", "What ...")."""
        toks = tokens(sentence)
        return self.question_openers is not None and any(
            a == 0 for a, _, _, _ in self.question_openers.find(toks[:3])
        )

    def speaker_subject(self, before: str) -> bool:
        """Whether the nearest subject pronoun before a match is the speaker (within 8 words; v3:
        within 14, so "I'm gonna keep learning more about it, maybe even build ..." counts)."""
        for _, w in reversed(tokens(before)[-(14 if self.checks else 8) :]):
            if w in self.pronouns:
                return self.pronouns[w]
        return False

    def about_someone_else(self, before: str) -> bool:
        """Whether the nearest subject pronoun before a match is not the speaker ("you'd be
        getting a third turtle", "once you start")."""
        for _, w in reversed(tokens(before)[-6:]):
            if w in self.pronouns:
                return not self.pronouns[w]
        return False


@cache
def load_rules(version: int | None = None, path: str | None = None) -> Rules:
    """The packaged rules (highest version unless pinned), or a rules file of your own (``path``:
    how a candidate is measured before it is released, ``devsets/hedges/measure.py --rules-file``)."""
    if path is None:
        v, file = versioned_file(RULES_DIR, "rules", "toml", version, "stage-2 rules")
    else:
        file = Path(path)
    try:
        raw = file.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BadInput(f"{file.name}: not a rules file ({type(e).__name__}: {e})") from None
    if path is not None:
        v = int(data.get("version", 0))
    macros = data.get("macros", {})

    def expand(pattern: str) -> str:
        return re.sub(r"<<(\w+)>>", lambda m: macros[m.group(1)], pattern)

    openers = data["reject"].get("question_openers")
    back = data.get("antecedents", {}).get("words")
    plans = data.get("plans")
    checks = None
    if plans is not None:
        checks = PlanChecks(
            one_off=PhraseMatcher({"one_off": plans["one_off"]}),
            not_plans=PhraseMatcher({"not_plan": plans["not_plans"]}),
            completed=PhraseMatcher({"completed": plans["completed"]}),
            under_way=PhraseMatcher({"under_way": plans["under_way"]}),
            subject_skip=frozenset(w.lower() for w in plans["subject_skip"]),
            empty_words=frozenset(w.lower() for w in plans["empty_words"]),
        )
    names = data.get("names")
    values = data.get("values", {})
    return Rules(
        version=v,
        sha256=hashlib.sha256(raw).hexdigest(),
        hedge_levels=PhraseMatcher(dict(data["hedge_levels"])),
        dates=[re.compile(p, re.IGNORECASE) for p in data["dates"]["patterns"]],
        negated=PhraseMatcher({"negated": data["reject"]["negated"]}),
        attributes=[
            (a["name"], re.compile(expand(a["pattern"]), re.IGNORECASE)) for a in data["attribute"]
        ],
        speaker_only=frozenset(i for i, a in enumerate(data["attribute"]) if a.get("speaker")),
        outcome=PhraseMatcher({k: v for k, v in data["outcome"].items() if k != "negations"}),
        negations=frozenset(data["outcome"].get("negations", [])),
        reject_first_words=frozenset(
            w.lower() for w in data.get("values", {}).get("reject_first_words", [])
        ),
        reject_values=frozenset(w.lower() for w in data.get("values", {}).get("reject_values", [])),
        reject_words=frozenset(w.lower() for w in data.get("values", {}).get("reject_words", [])),
        pronouns={
            **dict.fromkeys(data.get("subjects", {}).get("speaker", []), True),
            **dict.fromkeys(data.get("subjects", {}).get("others", []), False),
        },
        question_openers=PhraseMatcher({"opener": openers}) if openers is not None else None,
        antecedents=PhraseMatcher({"back": back}) if back is not None else None,
        hedge_order=tuple(data["hedge_levels"]),
        checks=checks,
        names=PhraseMatcher(dict(names)) if names else None,
        names_order=tuple(names or ()),
        empty_words=frozenset(w.lower() for w in data.get("values", {}).get("empty_words", [])),
        verb_first=frozenset(i for i, a in enumerate(data["attribute"]) if a.get("verb_first")),
        renames={i: dict(a["renames"]) for i, a in enumerate(data["attribute"]) if "renames" in a},
        of_heads=frozenset(values.get("of_heads", [])),
        request_heads=frozenset(values.get("request_heads", [])),
        swap_frames=tuple(values.get("swap_frames", [])),
        after_of=re.compile(expand(values["after_of"]), re.I) if "after_of" in values else None,
        after_request=(
            re.compile(expand(values["after_request"]), re.I) if "after_request" in values else None
        ),
        after_swap=(
            re.compile(expand(values["after_swap"]), re.I) if "after_swap" in values else None
        ),
    )
