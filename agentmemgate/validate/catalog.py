"""Every rule of the domain catalog (``catalog/README.md``), as problems naming file, key and rule.

The offline renderer trusts a domain file blindly, so ``amg catalog check`` and ``amg build``
run these rules before any plan is made, and the catalog tests call the same code. Each rule is
a reason a rendered arc could mislead a judge: a value inside the field text leaks the label
(paper, A.6), a value another domain also has makes the extractor's gazetteer ambiguous, a hedge
word inside small talk blurs the arc's hedge level.

Every problem is one line, ``FILE: KEY (line N): what is wrong [rule]``, and all of a file's
problems are reported at once: a key that is missing or of the wrong type is reported as such
and the other rules still run on the keys that are there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from ..design.bundle import BUILTIN_CATALOG, CATALOG_DIR, NamedFile, catalog_files_in
from ..design.catalog import Domain, Exchange, second_person
from ..design.load import Problem, parse_toml
from ..design.model import CatalogKey
from ..schema import normalize_text
from .judges._realism import qa_overlap

STRING_KEYS = (
    "noun",
    "probe_question",
    "change",
    "stay",
    "switch",
    "switching",
    "switched",
    "oblique_thing",
)
LIST_MINIMUMS = {
    "current": 3,
    "doing": 3,
    "reasons": 4,
    "reasons_done": 3,
    "weigh": 3,
    "steps": 3,
    "settle": 3,
    "tips": 3,
    "stay_tips": 2,
    "exchanges": 10,
    "values": 8,
    "long_values": 8,
}
KNOWN_KEYS = (*STRING_KEYS, *LIST_MINIMUMS)
SLOTTED = ("current", "stay", "switch", "switching", "switched", "doing")
CLAUSES = ("reasons", "reasons_done", "weigh", "steps", "settle", "tips", "stay_tips")
UNSLOTTED = ("noun", "probe_question", "change", "oblique_thing", *CLAUSES, "values", "long_values")
# Words that signal a hedge level or an outcome; a judge must never meet them where the arc does
# not intend them (values, statements of fact, small talk, reasons).
LEVEL_WORDS = (
    "maybe",
    "might",
    "plan",
    "plans",
    "planned",
    "planning",
    "switch",
    "switched",
    "switching",
    "decide",
    "decided",
    "deciding",
    "considering",
    "torn",
    "undecided",
)
VALUE_BANNED_WORDS = LEVEL_WORDS + (
    "new",
    "old",
    "current",
    "currently",
    "former",
    "previous",
    "still",
    "soon",
)
VALUE_HISTORY_WORDS = ("ago", "since", "years", "decades", "last", "used")
DOING_BANNED_WORDS = LEVEL_WORDS + (
    "change",
    "changed",
    "moved",
    "new",
    "first",
    "yesterday",
    "today",
    "tonight",
    "morning",
    "week",
    "ago",
)
SMALL_TALK_BANNED = LEVEL_WORDS + (
    "move",
    "moving",
    "moved",
    "changing",
    "changed",
    "will",
    "i'll",
    "probably",
    "perhaps",
    "finally",
    "anymore",
    "already",
    "decision",
)
SMALL_TALK_BANNED_PHRASES = (
    "going to",
    "no longer",
    "keep my",
    "keep the",
    "stick with",
    "stay with",
    "sticking with",
    "staying with",
    "thinking about",
    "not sure",
)
IRREGULAR_PAST = {
    "did",
    "ran",
    "took",
    "got",
    "had",
    "made",
    "sat",
    "sent",
    "wrote",
    "met",
    "fell",
    "found",
    "paid",
    "went",
    "kept",
    "bought",
    "drove",
    "rode",
    "spent",
    "left",
    "ate",
    "read",
    "heard",
    "caught",
    "was",
    "were",
    "i'd",
    "wanted",
    "felt",
    "flew",
    "swam",
    "wore",
    "brought",
    "began",
    "chose",
    "saw",
    "gave",
    "sold",
    "told",
    "won",
    "threw",
    "grew",
    "built",
    "stood",
    "woke",
    "rang",
    "sang",
}
VOWEL_OK = ("one", "uni", "use", "usu", "eu", "ur")  # "a one-pan", "a unique", "a usual"
NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
MIN_FILLINGS, MAX_FILLINGS = 4, 8


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _has_word(text: str, words) -> list[str]:
    return sorted(set(_words(text)) & set(words))


class _Report:
    """Collects one file's problems, with the line the key (or the item) is on where the file
    shows it; ``body`` holds only the keys of the right type, so a rule never meets a key that is
    missing or malformed (those are shape problems, already reported)."""

    def __init__(self, f: NamedFile):
        self.origin = f.origin
        self.lines = f.data.decode("utf-8", "replace").splitlines()
        self.problems: list[Problem] = []
        self.body: dict = {}
        self.declared: dict[str, CatalogKey] = {}  # a design's own keys the file may hold

    def strings(self, key: str) -> list[str]:
        value = self.body.get(key)
        return [] if value is None else value if isinstance(value, list) else [value]

    def line_of(self, key: str, item: str | None = None) -> int | None:
        if "#" in key:  # exchanges#3: the third [[exchanges]] table
            name, n = key.split("#")
            pat = re.compile(rf"^\s*\[\[\s*{re.escape(name)}\s*\]\]")
            hits = [i + 1 for i, line in enumerate(self.lines) if pat.match(line)]
            return hits[int(n) - 1] if int(n) <= len(hits) else None
        pat = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=|^\s*\[\[?\s*{re.escape(key)}\s*\]\]?")
        start = next((i for i, line in enumerate(self.lines) if pat.match(line)), None)
        if start is None or item is None:
            return None if start is None else start + 1
        for i in range(start, len(self.lines)):  # the item's own line, in the key's list
            if item in self.lines[i]:
                return i + 1
            if i > start and re.match(r"^\s*(\[|[A-Za-z_\"]+\s*=)", self.lines[i]):
                break
        return start + 1

    def add(self, key: str, rule: str, message: str, item: str | None = None) -> None:
        line = self.line_of(key, item) if key else None
        where = f"{key} (line {line})" if line else key
        self.problems.append(Problem(self.origin, where, f"{message} [{rule}]"))


def domain_problems(
    name: str, f: NamedFile, declared: Mapping[str, CatalogKey] | None = None
) -> tuple[Domain | None, list[Problem]]:
    """One domain file's problems: syntax, shape, slots, value-free text, frames, small talk.
    The domain is returned when the file has none. ``declared``: catalog keys a design declares,
    which the file may hold besides the built-in ones."""
    r = _checked(name, f, declared or {})
    if r.problems:
        return None, r.problems
    extra = {k: r.body.pop(k) for k in list(r.body) if k not in KNOWN_KEYS}
    return Domain(attribute=name, extra=extra, **r.body), []


def _checked(name: str, f: NamedFile, declared: Mapping[str, CatalogKey] | None = None) -> _Report:
    r = _Report(f)
    r.declared = dict(declared or {})
    if not NAME.fullmatch(name):
        r.add(
            "",
            "name",
            f"the file name {name!r} must be a snake_case attribute (e.g. preferred_airline.toml)",
        )
    body, syntax = parse_toml(f.data, f.origin)
    if syntax:
        r.problems.append(Problem(syntax.file, syntax.key, f"{syntax.message} [syntax]"))
        return r
    assert body is not None
    r.body = _shape(body, r)
    _declared(r)
    exchanges = _parse_exchanges(r)
    fillings = _fillings(exchanges)
    _slots(r)
    _value_free(name, r, fillings)
    _values(r)
    _probe(r)
    _frames(r)
    _clauses(r)
    _exchanges(r, exchanges, fillings)
    _fills(r)
    return r


def _shape(body: dict, r: _Report) -> dict:
    """Report unknown, missing and malformed keys and short lists; the well-formed keys."""
    ok: dict = {}
    for key in sorted(set(body) - set(KNOWN_KEYS) - set(r.declared)):
        mine = f"; the design declares: {', '.join(r.declared)}" if r.declared else ""
        r.add(
            key,
            "shape",
            f"unknown key: nothing reads it (known keys: {', '.join(KNOWN_KEYS)}{mine}; a "
            "design may declare keys of its own under [catalog_keys])",
        )
    for key in set(body) & set(r.declared):
        ok[key] = body[key]
    for key in [k for k in KNOWN_KEYS if k not in body]:
        r.add(key, "shape", "missing key")
    for key in STRING_KEYS:
        if key not in body:
            continue
        v = body[key]
        if isinstance(v, str) and v.strip() == v != "":
            ok[key] = v
        else:
            r.add(key, "shape", "must be a non-empty string with no surrounding spaces")
    for key, minimum in LIST_MINIMUMS.items():
        if key not in body:
            continue
        items = body[key]
        if not isinstance(items, list):
            r.add(
                key,
                "shape",
                "must be a list"
                + (" of [[exchanges]] tables" if key == "exchanges" else " of strings"),
            )
            continue
        if len(items) < minimum:
            r.add(
                key,
                "enough",
                f"has {len(items)} item{'s' if len(items) != 1 else ''}; at least "
                f"{minimum} are needed",
            )
        if key == "exchanges":
            ok[key] = items
        elif not all(isinstance(s, str) and s.strip() == s != "" for s in items):
            r.add(key, "shape", "every item must be a non-empty string with no surrounding spaces")
        else:
            ok[key] = items
            seen: set[str] = set()
            for s in items:
                if s.lower() in seen:
                    r.add(key, "distinct", f"{s!r} is listed twice", s)
                seen.add(s.lower())
    return ok


def declared_items_problems(
    items, key: str, ck: CatalogKey, values: Sequence[str]
) -> list[tuple[str, str]]:
    """(rule, message) for one domain's items of a declared catalog key: a list of at least
    ``least`` distinct non-empty strings, none naming a value of the domain (a value would leak
    into text that must not give it)."""
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        return [("shape", "must be a list of strings")]
    out = []
    if len(items) < ck.least:
        out.append(
            (
                "enough",
                f"has {len(items)} item{'s' if len(items) != 1 else ''}; "
                f"the design declares at least {ck.least}",
            )
        )
    seen: set[str] = set()
    for x in items:
        if x.strip() != x or not x:
            out.append(
                ("shape", "every item must be a non-empty string with no surrounding spaces")
            )
        if x.lower() in seen:
            out.append(("distinct", f"{x!r} is listed twice"))
        seen.add(x.lower())
        for v in values:
            if normalize_text(v) and f" {normalize_text(v)} " in f" {normalize_text(x)} ":
                out.append(("value-free", f"{x!r} names the value {v!r}"))
    return out


def _declared(r: _Report) -> None:
    """A design's own keys, where the domain file gives them (a design file may give them too)."""
    values = [v for _, v in _all_values(r)]
    for key, ck in r.declared.items():
        if key in r.body:
            for rule, message in declared_items_problems(r.body[key], key, ck, values):
                r.add(key, rule, message)


def _parse_exchanges(r: _Report) -> list[tuple[int, Exchange]]:
    """The exchanges that are well-formed, by their number (1-based)."""
    out = []
    for i, raw in enumerate(r.body.get("exchanges", []), 1):
        key = f"exchanges#{i}"
        if not isinstance(raw, dict):
            r.add(key, "shape", "must be a table with q, a and slots")
            continue
        try:
            out.append((i, Exchange(**raw)))
        except ValidationError as e:
            for err in e.errors():
                where = ".".join(str(p) for p in err["loc"])
                what = (
                    "missing key"
                    if err["type"] == "missing"
                    else (
                        "unknown key (known keys: q, a, slots)"
                        if err["type"] == "extra_forbidden"
                        else err["msg"].removeprefix("Value error, ")
                    )
                )
                r.add(key, "shape", f"{where + ': ' if where else ''}{what}")
    return out


def _slots(r: _Report) -> None:
    for key in SLOTTED:
        for s in r.strings(key):
            if re.findall(r"\{[^}]*\}", s) != ["{value}"] or s.count("{") != 1 or s.count("}") != 1:
                r.add(
                    key,
                    "slots",
                    f"{s!r} must have exactly one {{value}} slot and no other braces",
                    s,
                )
    for key in UNSLOTTED:
        for s in r.strings(key):
            if "{" in s or "}" in s:
                r.add(key, "slots", f"{s!r} must have no slot or brace", s)


def _fillings(exchanges: list[tuple[int, Exchange]]) -> list[tuple[int, str, str]]:
    out = []
    for n, e in exchanges:
        if e.slots and not _bad_slots(e):
            out += [(n, *e.fill(i)) for i in range(e.fillings)]
    return out


def _bad_slots(e: Exchange) -> bool:
    """Whether filling would fail (a brace that is not a ``{name}`` slot)."""
    try:
        e.fill(0)
        return False
    except (KeyError, ValueError, IndexError):
        return True


def _all_values(r: _Report) -> list[tuple[str, str]]:
    return [(g, v) for g in ("values", "long_values") for v in r.strings(g)]


def _value_free(name: str, r: _Report, fillings: list[tuple[int, str, str]]) -> None:
    texts = [
        ("noun", r.body.get("noun")),
        ("probe_question", r.body.get("probe_question")),
        ("the file name", name.replace("_", " ")),
        ("oblique_thing", r.body.get("oblique_thing")),
    ]
    texts += [(k, s) for k in CLAUSES for s in r.strings(k)]
    texts += [(f"exchanges#{n}", t) for n, q, a in fillings for t in (q, a)]
    texts += [(k, s.replace("{value}", " | ")) for k in SLOTTED for s in r.strings(k)]
    # ``schema.contains_value`` with each text normalized once, not once per value
    padded = [(k, t, f" {normalize_text(t)} ") for k, t in texts if t]
    for group, value in _all_values(r):
        needle = f" {normalize_text(value)} "
        for key, text, hay in padded:
            if needle in hay:
                r.add(
                    group,
                    "value-free",
                    f"value {value!r} appears in the {key} text {text!r}: "
                    "it could never be a clean label (remove it from one of them)",
                    value,
                )


def _values(r: _Report) -> None:
    every = _all_values(r)
    short = {v.lower() for v in r.strings("values")}
    for group, value in every:
        if group == "long_values" and value.lower() in short:
            r.add(group, "distinct", f"value {value!r} is both a short and a long value", value)
    for group in ("values", "long_values"):
        items = r.strings(group)
        for a in items:
            for b in items:
                if a.lower() != b.lower() and a.lower() in b.lower():
                    r.add(group, "distinct", f"value {a!r} is inside value {b!r}", b)
    for group, value in every:
        if _has_word(value, VALUE_BANNED_WORDS) or any(
            w in value.lower() for w in ("maybe", "plan", "switch", "decided")
        ):
            r.add(group, "unambiguous", f"value {value!r} holds a hedge, plan or time word", value)
        if bad := _has_word(value, VALUE_HISTORY_WORDS):
            r.add(
                group,
                "unambiguous",
                f"value {value!r} carries its own history "
                f"({', '.join(bad)}): it may become the new value",
                value,
            )
    for value in r.strings("values"):
        if len(value.split()) > 4 or value.lower().startswith("the "):
            r.add(
                "values",
                "short",
                f"value {value!r}: short values have at most 4 words and no leading 'the'",
                value,
            )
    for value in r.strings("long_values"):
        if not (value.startswith("the ") and 6 <= len(value.split()) <= 14):
            r.add(
                "long_values",
                "long",
                f"value {value!r}: long values start with 'the' and have 6 to 14 words",
                value,
            )


def _probe(r: _Report) -> None:
    probe = r.body.get("probe_question")
    if probe and (
        probe.split()[0] not in {"What", "Which", "Where", "How"}
        or "currently" not in _words(probe)
        or not probe.endswith("?")
    ):
        r.add(
            "probe_question",
            "probe",
            f"{probe!r} must read What/Which/Where/How ... currently ...?",
        )


def _frames(r: _Report) -> None:
    b = r.body
    if "noun" in b and b["noun"] != b["noun"].lower():
        r.add("noun", "frame", f"{b['noun']!r} must be lower case")
    if "change" in b and not re.fullmatch(r"[b-df-hj-np-tv-z][a-z]+", b["change"]):
        r.add(
            "change",
            "article",
            f"{b['change']!r} must be one word starting with a consonant "
            "('a {change}'), e.g. switch or move",
        )
    for s in r.strings("current"):
        if s.split()[0] not in {"I", "I'm"} or not s.endswith("{value}"):
            r.add("current", "frame", f"{s!r} must start with 'I' and end with {{value}}", s)
        elif bad := _has_word(s, LEVEL_WORDS + ("been", "since", "now", "new", "days", "years")):
            r.add(
                "current",
                "frame",
                f"{s!r} holds {', '.join(bad)} (plain present, no time words)",
                s,
            )
    for key in ("stay", "switching"):
        if key in b and not b[key].split()[0].endswith("ing"):
            r.add(key, "frame", f"{b[key]!r} must be a gerund phrase ('...ing')")
    if "switch" in b and b["switch"].split()[0].endswith(("ing", "ed")):
        r.add("switch", "frame", f"{b['switch']!r} must start with a base-form verb")
    if "switched" in b and not b["switched"].split()[0].endswith("ed"):
        r.add(
            "switched",
            "frame",
            f"{b['switched']!r} must start with a regular past verb "
            "('...ed': its past tense is its participle)",
        )
    for s in r.strings("doing"):
        first = s.split()[0]
        if not (first.endswith("ed") or first in IRREGULAR_PAST):
            r.add("doing", "frame", f"{s!r} must start with a simple-past verb", s)
        elif not s.endswith("{value}") or _has_word(s, DOING_BANNED_WORDS):
            r.add(
                "doing",
                "frame",
                f"{s!r} must end with {{value}} and hold no change or time word",
                s,
            )
    if "oblique_thing" in b and not b["oblique_thing"].startswith(("the ", "my ")):
        r.add("oblique_thing", "frame", f"{b['oblique_thing']!r} must start with 'the' or 'my'")


def _clauses(r: _Report) -> None:
    for key in CLAUSES:
        for s in r.strings(key):
            first = s.split()[0]
            if (
                not (s[0].islower() or first in {"I", "I've", "I'm"} or first.isupper())
                or s[-1] in ".!?"
            ):
                r.add(key, "clause", f"{s!r} must be a lower-case clause with no final stop", s)
    for key in ("reasons", "reasons_done"):
        for s in r.strings(key):
            if bad := _has_word(s, LEVEL_WORDS):
                r.add(key, "clause", f"{s!r} holds {', '.join(bad)} (a hedge or plan word)", s)
            elif re.search(r"somewhere else|elsewhere|another (place|chain|one)|the other", s):
                r.add(
                    key,
                    "clause",
                    f"{s!r} is a vague pull elsewhere, not a reason about the current situation",
                    s,
                )
    for s in r.strings("reasons_done"):
        if not any(w.endswith("ed") or w in IRREGULAR_PAST for w in _words(s)):
            r.add("reasons_done", "clause", f"{s!r} must be in the past tense", s)
    for s in r.strings("weigh"):
        if "," not in s and " and " not in s:
            r.add("weigh", "clause", f"{s!r} must list things to compare ('a, b and c')", s)
    for key in ("steps", "settle", "tips", "stay_tips"):
        for s in r.strings(key):
            first = s.split()[0]
            if first in {"you", "your", "it", "the", "a", "i", "my"} or (
                first not in {"bring"} and first.endswith(("ing", "ed"))
            ):
                r.add(key, "clause", f"{s!r} must start with a base-form verb (an imperative)", s)


def small_talk_problems(q: str, a: str) -> list[str]:
    """Why one filled question-answer pair is not small talk (empty: it is)."""
    out = []
    if "?" not in q or "{" in q + a:
        out.append(f"{q!r} must be a question with every slot filled")
    if not (q[:1].isupper() and a[:1].isupper() and a.endswith(".")):
        out.append(f"{q!r} -> {a!r}: both start upper case and the answer ends with a full stop")
    if not 1 <= len(re.findall(r"[.!?](?:\s|$)", a)) <= 3:
        out.append(f"answer {a!r} must have one to three sentences")
    if bad := _has_word(q, SMALL_TALK_BANNED):
        out.append(f"{q!r} holds {', '.join(bad)} (a hedge, plan or outcome word)")
    low = q.lower()
    if bad := [p for p in SMALL_TALK_BANNED_PHRASES if p in low]:
        out.append(f"{q!r} holds {', '.join(bad)} (a hedge, plan or outcome phrase)")
    for text in (q, a):
        for m in re.finditer(r"\b[Aa] ([a-z]+)", text):
            word = m.group(1)
            if word[0] in "aeiou" and not word.startswith(VOWEL_OK):
                out.append(f"'a {word}' in {text!r} (write 'an')")
    if not qa_overlap(q, a):
        out.append(f"the answer shares no content word with its question: {q!r} -> {a!r}")
    return out


def _exchanges(
    r: _Report, exchanges: list[tuple[int, Exchange]], fillings: list[tuple[int, str, str]]
) -> None:
    for n, ex in exchanges:
        key = f"exchanges#{n}"
        if not ex.slots or not MIN_FILLINGS <= ex.fillings <= MAX_FILLINGS:
            r.add(
                key,
                "small talk",
                f"{ex.q!r} needs slots with {MIN_FILLINGS} to {MAX_FILLINGS} "
                f"fillings (has {ex.fillings if ex.slots else 0})",
            )
        if not (re.search(r"\{\w+\}", ex.q) and re.search(r"\{\w+\}", ex.a)):
            r.add(key, "small talk", f"{ex.q!r}: question and answer each need a slot")
        if ex.slots and _bad_slots(ex):
            r.add(key, "slots", f"{ex.q!r}: a brace that is not a {{slot}}")
    seen_q: dict[str, int] = {}
    seen_a: dict[str, int] = {}
    for n, q, a in fillings:
        key = f"exchanges#{n}"
        if q in seen_q:
            r.add(
                key, "small talk", f"the question {q!r} is also a filling of exchanges#{seen_q[q]}"
            )
        if a in seen_a:
            r.add(key, "small talk", f"the answer {a!r} is also a filling of exchanges#{seen_a[a]}")
        seen_q.setdefault(q, n)
        seen_a.setdefault(a, n)
        for msg in small_talk_problems(q, a):
            r.add(key, "small talk", msg)


FIRST_PERSON = frozenset({"i", "i'm", "i've", "my", "me", "mine"})


def _fills(r: _Report) -> None:
    values = [v for _, v in _all_values(r)]
    # The assistant quotes a filled frame in the second person: no first person may be left.
    # ``second_person`` works word by word, so a frame whose slot stands between non-word
    # characters is converted once and each value once (not every pair).
    quoted_values = {v: set(_words(second_person(v))) & FIRST_PERSON for v in values}
    for key in SLOTTED:
        for s in r.strings(key):
            if s.count("{value}") != 1 or re.findall(r"\{[^}]*\}", s) != ["{value}"]:
                continue  # a slots problem, reported already
            before, after = s.split("{value}")
            apart = not re.search(r"[\w']$", before) and not re.match(r"[\w']", after)
            frame_left = set(_words(second_person(s.replace("{value}", " ")))) & FIRST_PERSON
            for value in values:
                filled = before + value + after
                if "the the " in filled.lower():
                    r.add(key, "article", f"{s!r} with {value!r} reads 'the the'", s)
                    continue
                left = (
                    frame_left | quoted_values[value]
                    if apart
                    else set(_words(second_person(filled))) & FIRST_PERSON
                )
                if left:
                    r.add(
                        key,
                        "second person",
                        f"{filled!r} keeps a first person when the assistant quotes it",
                        s,
                    )


def catalog_problems(
    files: Mapping[str, NamedFile],
    domains: Sequence[str] | None = None,
    declared: Mapping[str, CatalogKey] | None = None,
) -> list[Problem]:
    """Every problem of the catalog ``files`` (by domain), and of the values they share.

    ``domains`` limits the check to the files a design draws from (all of them by default);
    values shared across domains are checked among those. ``declared``: the design's own
    catalog keys, which the files may hold."""
    names = sorted(files) if domains is None else [d for d in domains if d in files]
    out: list[Problem] = []
    reports = {name: _checked(name, files[name], declared) for name in names}
    owners: dict[str, list[tuple[str, str, str]]] = {}
    for name, r in reports.items():
        out += r.problems
        seen = set()
        for group, v in _all_values(r):  # the well-formed values, whatever else is wrong
            if v.lower() not in seen:
                seen.add(v.lower())
                owners.setdefault(v.lower(), []).append((name, group, v))
    for _, where in sorted(owners.items()):
        if len(where) > 1:
            for name, group, v in where:
                others = ", ".join(w for w, _, _ in where if w != name)
                r = reports[name]
                before = len(r.problems)
                r.add(
                    group,
                    "shared value",
                    f"value {v!r} is also a value of {others}: the "
                    "offline extractor could not tell the fields apart",
                    v,
                )
                out += r.problems[before:]
    if not names:
        out.append(Problem("catalog", "", "holds no domain file [shape]"))
    return out


def catalog_files(dirs: Sequence[Path] = ()) -> dict[str, NamedFile]:
    """The built-in domain files with each folder of ``dirs`` on top (a file of the same name
    replaces the built-in one), by domain. A folder that holds no domain file is refused."""
    from ..errors import BadInput

    files = catalog_files_in(CATALOG_DIR, BUILTIN_CATALOG)
    for d in dirs:
        mine = catalog_files_in(Path(d), str(d))
        if not mine:
            raise BadInput(
                f"No domain file in {str(d)!r} (expected DOMAIN.toml files, e.g. "
                "preferred_airline.toml)"
            )
        files.update(mine)
    return files


def check_catalog(dirs: Sequence[Path] = ()) -> list[Problem]:
    """``amg catalog check``: every problem of the built-in catalog with ``dirs`` on top."""
    return catalog_problems(catalog_files(dirs))


def declared_key_problems(design) -> list[Problem]:
    """Every domain the design draws from supplies each catalog key the design declares, in its
    own file or in the design's ``catalog_keys`` file; that file names only drawn domains and
    declared keys. One problem per missing or malformed list, naming the file and key."""
    import tomllib

    from ..design.catalog import design_key_items

    declared = design.catalog_keys
    rel = design.files.catalog_keys
    overlay_file = design.source.files.get(rel) if rel else None
    out: list[Problem] = []
    origin = overlay_file.origin if overlay_file else design.source.design.origin
    if overlay_file is not None:
        try:
            tomllib.loads(overlay_file.text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            return [Problem(overlay_file.origin, "", f"TOML syntax error: {e} [syntax]")]
    overlay = design_key_items(design)
    names = sorted(design.source.catalog) if design.domains == "all" else list(design.domains)
    for d in sorted(set(overlay) - set(names)):
        out.append(Problem(origin, d, "the design draws from no domain of that name [shape]"))
    for d in names:
        f = design.source.catalog.get(d)
        if f is None:
            continue  # an unknown domain: the design's own check names it
        body, _ = parse_toml(f.data, f.origin)
        body = body or {}
        for key in sorted(set(overlay.get(d, {})) - set(declared)):
            out.append(
                Problem(
                    origin,
                    f"{d}.{key}",
                    "the design declares no such catalog key"
                    + (f" (it declares: {', '.join(declared)})" if declared else "")
                    + " [shape]",
                )
            )
        values = [
            v for g in ("values", "long_values") for v in body.get(g, []) if isinstance(v, str)
        ]
        for key, ck in declared.items():
            if key in body:
                continue  # the domain file gives it; its own check reads it
            items = overlay.get(d, {}).get(key)
            if items is None:
                out.append(
                    Problem(
                        origin,
                        f"{d}.{key}",
                        f"missing: the design declares catalog key {key!r} ({ck.description}) "
                        f"and draws from domain {d!r}; give it in {d}.toml or under [{d}] in "
                        f"{rel or 'a file named by [files] catalog_keys'} [declared key]",
                    )
                )
                continue
            for rule, message in declared_items_problems(items, key, ck, values):
                out.append(Problem(origin, f"{d}.{key}", f"{message} [{rule}]"))
    return out


def check_catalog_for(dirs: Sequence[Path] = (), design_ref=None):
    """``amg catalog check [DIR] [--design D]``: the files checked and their problems; with a
    design, the files may hold its own catalog keys, and every domain it draws from must supply
    them (in its file or the design's ``catalog_keys`` file)."""
    files = catalog_files(dirs)
    if design_ref is None:
        return files, catalog_problems(files)
    from ..design.load import load_design

    design = load_design(design_ref, tuple(dirs))
    return files, catalog_problems(files, None, design.catalog_keys) + declared_key_problems(design)
