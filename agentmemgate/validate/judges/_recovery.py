"""The offline recovery judge's rules, read from a design's recovery file (``files.recovery``).

The file's own header comment (the paper's: ``design/paper/recovery.toml``) is the format's
reference. Here it is parsed into ``RecoveryRules`` and checked: ``rule_problems`` names, one line
each, what would stop the judge (TOML syntax, unknown keys, readings, tests, cue categories,
regular expressions, slots) and every level of a factor used in the design's cells that no rule
can give.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from ...design import Design, Problem
from ...design.load import key_path, parse_toml
from ...design.model import CORRECTION_PARTS
from ._lexicon import Lexicon, _compile, load_lexicon

Reading = Literal["plan", "outcome", "confirmation", "structure", "correction"]
READINGS: tuple[str, ...] = ("plan", "outcome", "confirmation", "structure", "correction")
# The built-in tests of the confirmation reading (see the recovery file's header).
TESTS: tuple[str, ...] = ("no_later_turn", "no_completion", "value_unnamed", "repeats_plan_wording")
# What a rule's ``say`` may fill, by what the rule reads.
SLOTS: dict[str, frozenset[str]] = {
    "plan": frozenset({"cue"}),
    "later": frozenset({"cue", "session"}),
    "confirmation": frozenset({"cue", "session", "where", "named", "run"}),
    "structure": frozenset({"cue", "session", "where", "between"}),
}
CUES_KEY = "cues"
# The digest of the rules the judge was written with, before they were data (the paper's
# recovery file): verdicts made with them keep the lexicon's hash alone as their rubric hash.
PAPER_RULES_DIGEST = "796fd4baa6e121b9731d0de2720957082ccd897338a1c7c99e8889009408a1fb"


class Rule(BaseModel):
    """One rule: the level it gives when its conditions hold, and the rationale it gives."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    level: str
    reads: Literal["plan", "later"] | None = None  # plan and outcome readings: which turns
    any: tuple[str, ...] = ()
    with_: tuple[str, ...] = Field(default=(), alias="with")
    none: tuple[str, ...] = ()
    test: str | None = None
    sessions_between: tuple[int, ...] | None = None
    say: str = ""
    _at: int = PrivateAttr(default=0)  # its place in the file's list (1-based), for messages

    @field_validator("sessions_between", mode="before")
    @classmethod
    def _one_or_many(cls, v):
        return [v] if isinstance(v, int) else v

    @property
    def categories(self) -> tuple[str, ...]:
        return self.any + self.with_ + self.none


class Default(BaseModel):
    """What a factor's verdict is when no rule holds (no level: a recorded guess)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    level: str | None = None
    say: str = ""


class FactorRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reads: Reading
    rules: tuple[Rule, ...] = ()
    default: Default | None = None

    def reads_of(self, rule: Rule) -> str:
        """What ``rule`` looks at: plan, later, confirmation or structure."""
        if self.reads in ("plan", "outcome"):
            return rule.reads or ("plan" if self.reads == "plan" else "later")
        return self.reads

    def levels(self) -> set[str]:
        """The levels these rules can give (the correction reading gives its own)."""
        return {r.level for r in self.rules} | (
            {self.default.level} if self.default and self.default.level else set()
        )


@dataclass
class RecoveryRules:
    """A design's recovery rules, its cue categories, and the lexicon they extend."""

    factors: dict[str, FactorRules]
    cues: dict[str, tuple[str, ...]]
    lexicon: Lexicon
    digest: str  # of the file's content (not its comments): part of the judge's rubric hash
    origin: str = ""
    problems: list[Problem] = field(default_factory=list)  # what stops the judge
    unreadable: bool = False  # not TOML at all

    @property
    def plan_cues(self) -> tuple[str, ...]:
        """The design's own categories that plan rules read: they count as plan cues."""
        used = {
            c
            for f in self.factors.values()
            for r in f.rules
            if f.reads_of(r) == "plan"
            for c in r.categories
        }
        return tuple(c for c in self.cues if c in used)


def _slots(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError:
        return {"{"}  # an unbalanced brace


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def read_rules(design: Design) -> RecoveryRules:
    """The rules of ``design`` (none when it names no recovery file), with their problems."""
    rel = design.files.recovery
    f = design.source.files.get(rel) if rel else None
    return _read(f.origin if f else (rel or ""), f.data if f else None)


@lru_cache(maxsize=16)
def _read(origin: str, data: bytes | None) -> RecoveryRules:
    base = load_lexicon()
    if data is None:
        return RecoveryRules({}, {}, base, _digest({}), origin)
    raw, syntax = parse_toml(data, origin)
    if syntax:
        return RecoveryRules({}, {}, base, _digest({}), origin, [syntax], unreadable=True)
    problems: list[Problem] = []
    cues_raw = raw.get(CUES_KEY, {})
    cues: dict[str, tuple[str, ...]] = {}
    compiled: dict[str, re.Pattern] = {}
    if not isinstance(cues_raw, dict):
        problems.append(
            Problem(origin, CUES_KEY, "must be a table: category = [regular expressions]")
        )
        cues_raw = {}
    for name, pats in cues_raw.items():
        key = f"{CUES_KEY}.{name}"
        if name in base.categories:
            problems.append(
                Problem(
                    origin,
                    key,
                    f"the judge's lexicon ({base.path.name}) already has "
                    f"category {name!r}; give yours another name",
                )
            )
            continue
        if not isinstance(pats, list) or not pats or not all(isinstance(p, str) for p in pats):
            problems.append(Problem(origin, key, "must be a non-empty list of regular expressions"))
            continue
        bad = False
        for i, p in enumerate(pats):
            try:
                re.compile(p)
            except re.error as e:
                problems.append(Problem(origin, f"{key}#{i + 1}", f"not a regular expression: {e}"))
                bad = True
        if not bad:
            cues[name] = tuple(pats)
            compiled[name] = _compile(list(pats))
    factors: dict[str, FactorRules] = {}
    for name, table in raw.items():
        if name != CUES_KEY:
            fr, found = _factor_rules(table, origin, name)
            problems += found
            if fr is not None:
                factors[name] = fr
    lexicon = (
        base
        if not compiled
        else Lexicon(
            path=base.path,
            sha256=base.sha256,
            categories={**base.categories, **compiled},
            stopwords=base.stopwords,
            patterns={**base.patterns, **cues},
        )
    )
    rules = RecoveryRules(factors, cues, lexicon, _digest(raw), origin)
    rules.problems = problems + _rule_problems(rules, broken=set(cues_raw) - set(cues))
    return rules


def _factor_rules(table, origin: str, name: str) -> tuple[FactorRules | None, list[Problem]]:
    """A factor's table, each rule checked on its own so that one bad rule hides no other
    problem; the table without its bad rules (None when the table itself is bad)."""
    if not isinstance(table, dict):
        return None, [Problem(origin, name, "must be a table (reads, rules, default)")]
    problems: list[Problem] = []
    rules = []
    raw_rules = table.get("rules", [])
    for i, r in enumerate(raw_rules if isinstance(raw_rules, list) else []):
        try:
            rule = Rule.model_validate(r)
        except ValidationError as e:
            problems += _schema_problems(e, origin, name, ("rules", i))
            extra = {err["loc"][0] for err in e.errors() if err["type"] == "extra_forbidden"}
            if len(extra) < len(e.errors()) or not isinstance(r, dict):
                continue
            rule = Rule.model_validate({k: v for k, v in r.items() if k not in extra})
        rule._at = i + 1
        rules.append(rule)
    try:
        fr = FactorRules.model_validate({**table, "rules": []})
    except ValidationError as e:
        return None, problems + _schema_problems(e, origin, name)
    if not isinstance(raw_rules, list):
        problems.append(Problem(origin, f"{name}.rules", "must be a list of rules ([[...rules]])"))
    return fr.model_copy(update={"rules": tuple(rules)}), problems


def _schema_problems(e: ValidationError, origin: str, factor: str, at: tuple = ()) -> list[Problem]:
    out = []
    for err in e.errors():
        loc = (*at, *err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            parent = [p for p in loc[:-1] if not isinstance(p, int)]
            model = {(): FactorRules, ("rules",): Rule, ("default",): Default}.get(tuple(parent))
            known = ", ".join(f.alias or k for k, f in model.model_fields.items()) if model else ""
            msg = f"unknown key{f' (known keys: {known})' if known else ''}"
        elif err["type"] == "missing":
            msg = "missing key"
        out.append(Problem(origin, key_path((factor, *loc)), msg))
    return out


def _rule_problems(rules: RecoveryRules, broken: set[str]) -> list[Problem]:
    """What in well-formed rules the judge cannot run: unknown categories, tests, slots.
    ``broken``: categories [cues] declares but could not compile (named there already)."""
    out: list[Problem] = []
    known = set(rules.lexicon.categories) | broken
    for fname, fr in rules.factors.items():
        for r in fr.rules:
            key = f"{fname}.rules#{r._at}"
            reads = fr.reads_of(r)
            if fr.reads == "correction":
                out.append(
                    Problem(
                        rules.origin, key, "the correction reading is built in and takes no rules"
                    )
                )
                continue
            if r.reads is not None and fr.reads not in ("plan", "outcome"):
                out.append(
                    Problem(
                        rules.origin,
                        f"{key}.reads",
                        f"only rules of a plan or outcome "
                        f"reading choose what they read, "
                        f"not of {fr.reads!r}",
                    )
                )
            for c in r.categories:
                if c not in known:
                    out.append(
                        Problem(
                            rules.origin,
                            key,
                            f"unknown cue category {c!r}; add it under "
                            f"[{CUES_KEY}] or use one of the judge's: "
                            f"{', '.join(sorted(known))}",
                        )
                    )
            if r.test is not None and (fr.reads != "confirmation" or r.test not in TESTS):
                out.append(
                    Problem(
                        rules.origin,
                        f"{key}.test",
                        f"unknown test {r.test!r}; the confirmation reading has: {', '.join(TESTS)}"
                        if fr.reads == "confirmation"
                        else f"tests belong to the confirmation reading, not {fr.reads!r}",
                    )
                )
            if r.sessions_between is not None and fr.reads != "structure":
                out.append(
                    Problem(
                        rules.origin,
                        f"{key}.sessions_between",
                        f"sessions_between belongs to the structure reading, not {fr.reads!r}",
                    )
                )
            if r.sessions_between is not None and any(n < 0 for n in r.sessions_between):
                out.append(Problem(rules.origin, f"{key}.sessions_between", "must be 0 or more"))
            for say_key, template in ((f"{key}.say", r.say),):
                if bad := sorted(_slots(template) - SLOTS[reads]):
                    out.append(
                        Problem(
                            rules.origin,
                            say_key,
                            f"unknown slot {{{bad[0]}}}; a rule that "
                            f"reads {reads} fills: "
                            f"{', '.join(sorted(SLOTS[reads]))}",
                        )
                    )
        if fr.default and fr.default.say and _slots(fr.default.say):
            out.append(Problem(rules.origin, f"{fname}.default.say", "a default fills no slot"))
    return out


def _correction_level(name: str) -> bool:
    parts = name.split("_")
    return len(parts) == 3 and all(p in opts for p, opts in zip(parts, CORRECTION_PARTS))


def rule_problems(design: Design) -> list[Problem]:
    """Every problem of ``design``'s recovery rules, one line each (``amg design check``)."""
    design_file = design.source.design.origin
    rules = read_rules(design)
    if design.files.recovery is None:
        return [
            Problem(
                design_file,
                "files.recovery",
                "no recovery file: the offline judge has no "
                "rules and can only guess (copy the paper's "
                "recovery.toml beside the design and name it)",
            )
        ]
    if design.files.recovery not in design.source.files:
        return []  # the design's own check names the missing file
    out = list(rules.problems)
    if rules.unreadable:  # a TOML syntax error: nothing more can be read
        return out
    origin = rules.origin
    for fname in rules.factors:
        if fname not in design.factors:
            out.append(
                Problem(
                    origin,
                    fname,
                    f"unknown factor {fname!r}; the design declares: {', '.join(design.factors)}",
                )
            )
    for fname, fr in rules.factors.items():
        fac = design.factors.get(fname)
        if fac is None:
            continue
        for r in fr.rules:
            if not fac.has(r.level):
                out.append(
                    Problem(
                        origin,
                        f"{fname}.rules#{r._at}.level",
                        f"unknown level {r.level!r} of factor {fname!r}; choose one of: "
                        f"{', '.join(fac.level_names)}",
                    )
                )
        if fr.default and fr.default.level and not fac.has(fr.default.level):
            out.append(
                Problem(
                    origin,
                    f"{fname}.default.level",
                    f"unknown level {fr.default.level!r} of factor {fname!r}",
                )
            )
    used: dict[str, list[str]] = {}
    for split in design.splits.values():
        for cell in split.cells:
            if cell.factor in design.factors and cell.level not in used.setdefault(cell.factor, []):
                used[cell.factor].append(cell.level)
    for fname, levels in used.items():
        fr = rules.factors.get(fname)
        if fr is None:
            if not any(p.key == fname or p.key.startswith(f"{fname}.") for p in out):
                out.append(
                    Problem(
                        origin,
                        fname,
                        f"no rules for factor {fname!r}, whose levels cells "
                        f"use ({', '.join(levels)}): add a [{fname}] table",
                    )
                )
            continue
        can = (
            {lv for lv in levels if _correction_level(lv)}
            if fr.reads == "correction"
            else fr.levels()
        )
        for lv in levels:
            if lv not in can:
                out.append(
                    Problem(
                        origin,
                        f"{fname}.rules",
                        f"no rule gives level {lv!r}, which cells use: add "
                        f"a [[{fname}.rules]] with level = {lv!r}"
                        if fr.reads != "correction"
                        else f"the correction reading cannot give level {lv!r} "
                        f"(TARGET_TIMING_MARKER)",
                    )
                )
    return out
