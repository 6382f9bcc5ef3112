"""Every rule of the domain catalog (``catalog/README.md``), as problems naming file, key and rule.

The offline renderer trusts a domain file blindly, so ``amg catalog check`` and ``amg build``
run these rules before any plan is made, and the catalog tests call the same code. Each rule is
a reason a rendered arc could mislead a judge: a value inside the field text leaks the label
(paper, A.6), a value another domain also has makes the extractor's gazetteer ambiguous, a hedge
word inside small talk blurs the arc's hedge level.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import ValidationError

from ..design.bundle import NamedFile
from ..design.catalog import Domain, second_person
from ..design.load import Problem, parse_toml, schema_problems
from ..schema import contains_value
from .judges._realism import qa_overlap

STRING_KEYS = ("noun", "probe_question", "change", "stay", "switch", "switching", "switched",
               "oblique_thing")
LIST_MINIMUMS = {"current": 3, "doing": 3, "reasons": 4, "reasons_done": 3, "weigh": 3, "steps": 3,
                 "settle": 3, "tips": 3, "stay_tips": 2, "exchanges": 10, "values": 8,
                 "long_values": 8}
SLOTTED = ("current", "stay", "switch", "switching", "switched", "doing")
CLAUSES = ("reasons", "reasons_done", "weigh", "steps", "settle", "tips", "stay_tips")
UNSLOTTED = ("noun", "probe_question", "change", "oblique_thing", *CLAUSES, "values", "long_values")
# Words that signal a hedge level or an outcome; a judge must never meet them where the arc does
# not intend them (values, statements of fact, small talk, reasons).
LEVEL_WORDS = ("maybe", "might", "plan", "plans", "planned", "planning", "switch", "switched",
               "switching", "decide", "decided", "deciding", "considering", "torn", "undecided")
VALUE_BANNED_WORDS = LEVEL_WORDS + ("new", "old", "current", "currently", "former", "previous",
                                    "still", "soon")
DOING_BANNED_WORDS = LEVEL_WORDS + ("change", "changed", "moved", "new", "first", "yesterday",
                                    "today", "tonight", "morning", "week", "ago")
SMALL_TALK_BANNED = LEVEL_WORDS + ("move", "moving", "moved", "changing", "changed", "will", "i'll",
                                   "probably", "perhaps", "finally", "anymore", "already", "decision")
SMALL_TALK_BANNED_PHRASES = ("going to", "no longer", "keep my", "keep the", "stick with",
                             "stay with", "sticking with", "staying with", "thinking about",
                             "not sure")
IRREGULAR_PAST = {"did", "ran", "took", "got", "had", "made", "sat", "sent", "wrote", "met",
                  "fell", "found", "paid", "went", "kept", "bought", "drove", "rode",
                  "spent", "left", "ate", "read", "heard", "caught", "was", "were", "i'd", "wanted",
                  "felt"}
VOWEL_OK = ("one", "uni", "use", "usu", "eu", "ur")  # "a one-pan", "a unique", "a usual"
MIN_DOMAINS = 1


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _has_word(text: str, words) -> list[str]:
    return sorted(set(_words(text)) & set(words))


def _strings(body: dict, key: str) -> list[str]:
    value = body[key]
    return value if isinstance(value, list) else [value]


class _Report:
    """Collects the problems of one file, with the line of the key where the file shows it."""

    def __init__(self, f: NamedFile):
        self.origin = f.origin
        self.lines = f.data.decode("utf-8", "replace").splitlines()
        self.problems: list[Problem] = []

    def line_of(self, key: str) -> int | None:
        pat = re.compile(rf"^\s*{re.escape(key)}\s*=|^\s*\[\[?{re.escape(key)}\]?\]")
        return next((i + 1 for i, line in enumerate(self.lines) if pat.match(line)), None)

    def add(self, key: str, rule: str, message: str) -> None:
        line = self.line_of(key.split("#")[0].split(".")[0]) if key else None
        where = f"{key} (line {line})" if line else key
        self.problems.append(Problem(self.origin, where, f"{message} [{rule}]"))


def domain_problems(name: str, f: NamedFile) -> tuple[Domain | None, list[Problem]]:
    """One domain file's problems: syntax, shape, slots, value-free text, frames, small talk."""
    r = _Report(f)
    if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", name):
        r.add("", "name", f"the file name {name!r} must be a snake_case attribute (e.g. preferred_airline.toml)")
    body, syntax = parse_toml(f.data, f.origin)
    if syntax:
        return None, [syntax]
    assert body is not None
    shape_ok = _shape(body, r)
    domain = None
    if shape_ok:
        try:
            domain = Domain(attribute=name, **body)
        except ValidationError as e:
            r.problems += [Problem(p.file, p.key, f"{p.message} [shape]")
                           for p in schema_problems(e, f.origin)]
    if domain is not None and re.fullmatch(r"[a-z][a-z0-9_]*", name):
        _slots(body, r)
        _value_free(name, body, domain, r)
        _values(body, r)
        _probe(body, r)
        _frames(body, r)
        _clauses(body, r)
        _exchanges(domain, r)
        _fills(body, r)
    return (domain if not r.problems else None), r.problems


def _shape(body: dict, r: _Report) -> bool:
    ok = True
    known = set(STRING_KEYS) | set(LIST_MINIMUMS)
    for key in sorted(set(body) - known):
        r.add(key, "shape", "unknown key: nothing reads it (known keys: "
                            f"{', '.join([*STRING_KEYS, *LIST_MINIMUMS])})")
        ok = False
    for key in [k for k in (*STRING_KEYS, *LIST_MINIMUMS) if k not in body]:
        r.add(key, "shape", "missing key")
        ok = False
    for key in STRING_KEYS:
        v = body.get(key)
        if key in body and not (isinstance(v, str) and v.strip() == v != ""):
            r.add(key, "shape", "must be a non-empty string with no surrounding spaces")
            ok = False
    for key, minimum in LIST_MINIMUMS.items():
        items = body.get(key)
        if key not in body:
            continue
        if not isinstance(items, list):
            r.add(key, "shape", "must be a list")
            ok = False
            continue
        if len(items) < minimum:
            r.add(key, "enough", f"has {len(items)} item(s); at least {minimum} are needed")
        if key != "exchanges":
            if not all(isinstance(s, str) and s.strip() == s != "" for s in items):
                r.add(key, "shape", "every item must be a non-empty string with no surrounding spaces")
                ok = False
            elif len({s.lower() for s in items}) != len(items):
                r.add(key, "distinct", "has duplicate items")
    return ok


def _slots(body: dict, r: _Report) -> None:
    for key in SLOTTED:
        for s in _strings(body, key):
            if re.findall(r"\{[^}]*\}", s) != ["{value}"] or s.count("{") != 1 or s.count("}") != 1:
                r.add(key, "slots", f"{s!r} must have exactly one {{value}} slot and no other braces")
    for key in UNSLOTTED:
        for s in _strings(body, key):
            if "{" in s or "}" in s:
                r.add(key, "slots", f"{s!r} must have no slot or brace")


def _fillings(domain: Domain) -> list[tuple[str, str]]:
    return [e.fill(i) for e in domain.exchanges for i in range(e.fillings)]


def _value_free(name: str, body: dict, domain: Domain, r: _Report) -> None:
    every_value = body["values"] + body["long_values"]
    texts = [("noun", body["noun"]), ("probe_question", body["probe_question"]),
             ("file name", name.replace("_", " ")), ("oblique_thing", body["oblique_thing"])]
    texts += [(k, s) for k in CLAUSES for s in body[k]]
    texts += [("exchanges", t) for pair in _fillings(domain) for t in pair]
    texts += [(k, s.replace("{value}", " | ")) for k in SLOTTED for s in _strings(body, k)]
    for value in every_value:
        for key, text in texts:
            if contains_value(text, value):
                r.add("values" if value in body["values"] else "long_values", "value-free",
                      f"value {value!r} appears in {key} text {text!r}: it would never be a "
                      "clean label (and could leak it)")


def _values(body: dict, r: _Report) -> None:
    every_value = body["values"] + body["long_values"]
    if len({v.lower() for v in every_value}) != len(every_value):
        r.add("values", "distinct", "a value is both a short and a long value")
    for group in ("values", "long_values"):
        lowered = [v.lower() for v in body[group]]
        for a in lowered:
            for b in lowered:
                if a != b and a in b:
                    r.add(group, "distinct", f"value {a!r} is inside value {b!r}")
        for value in body[group]:
            if _has_word(value, VALUE_BANNED_WORDS) or any(
                    w in value.lower() for w in ("maybe", "plan", "switch", "decided")):
                r.add(group, "unambiguous", f"value {value!r} holds a hedge, plan or time word")
    for value in body["values"]:
        if len(value.split()) > 4 or value.lower().startswith("the "):
            r.add("values", "short", f"value {value!r}: short values have at most 4 words and no leading 'the'")
    for value in body["long_values"]:
        if not (value.startswith("the ") and 6 <= len(value.split()) <= 14):
            r.add("long_values", "long", f"value {value!r}: long values start with 'the' and have 6 to 14 words")
        elif _has_word(value, ("ago", "since", "years", "decades", "last", "used")):
            r.add("long_values", "long", f"value {value!r} carries its own history (since, used, last...)")


def _probe(body: dict, r: _Report) -> None:
    probe = body["probe_question"]
    if probe.split()[0] not in {"What", "Which", "Where", "How"} or "currently" not in _words(probe) \
            or not probe.endswith("?"):
        r.add("probe_question", "probe", f"{probe!r} must read What/Which/Where/How ... currently ...?")


def _frames(body: dict, r: _Report) -> None:
    if body["noun"] != body["noun"].lower():
        r.add("noun", "frame", "must be lower case")
    if not re.fullmatch(r"[b-df-hj-np-tv-z][a-z]+", body["change"]):
        r.add("change", "article", f"{body['change']!r} must be one word starting with a consonant ('a {{change}}')")
    for s in body["current"]:
        if s.split()[0] not in {"I", "I'm"} or not s.endswith("{value}"):
            r.add("current", "frame", f"{s!r} must start with 'I' and end with {{value}}")
        elif bad := _has_word(s, LEVEL_WORDS + ("been", "since", "now", "new", "days", "years")):
            r.add("current", "frame", f"{s!r} holds {', '.join(bad)} (plain present, no time words)")
    for key, want in (("stay", "gerund"), ("switching", "gerund")):
        if not body[key].split()[0].endswith("ing"):
            r.add(key, "frame", f"{body[key]!r} must be a {want} phrase ('...ing')")
    if body["switch"].split()[0].endswith(("ing", "ed")):
        r.add("switch", "frame", f"{body['switch']!r} must start with a base-form verb")
    if not body["switched"].split()[0].endswith("ed"):
        r.add("switched", "frame", f"{body['switched']!r} must start with a regular past verb ('...ed')")
    for s in body["doing"]:
        first = s.split()[0]
        if not (first.endswith("ed") or first in IRREGULAR_PAST):
            r.add("doing", "frame", f"{s!r} must start with a simple-past verb")
        elif not s.endswith("{value}") or _has_word(s, DOING_BANNED_WORDS):
            r.add("doing", "frame", f"{s!r} must end with {{value}} and hold no change or time word")
    if not body["oblique_thing"].startswith(("the ", "my ")):
        r.add("oblique_thing", "frame", f"{body['oblique_thing']!r} must start with 'the' or 'my'")


def _clauses(body: dict, r: _Report) -> None:
    for key in CLAUSES:
        for s in body[key]:
            first = s.split()[0]
            if not (s[0].islower() or first in {"I", "I've", "I'm"} or first.isupper()) or s[-1] in ".!?":
                r.add(key, "clause", f"{s!r} must be a lower-case clause with no final stop")
    for key in ("reasons", "reasons_done"):
        for s in body[key]:
            if bad := _has_word(s, LEVEL_WORDS):
                r.add(key, "clause", f"{s!r} holds {', '.join(bad)}")
            elif re.search(r"somewhere else|elsewhere|another (place|chain|one)|the other", s):
                r.add(key, "clause", f"{s!r} is a vague pull elsewhere, not a reason about the current situation")
    for s in body["reasons_done"]:
        if not any(w.endswith("ed") or w in IRREGULAR_PAST for w in _words(s)):
            r.add("reasons_done", "clause", f"{s!r} must be in the past tense")
    for s in body["weigh"]:
        if "," not in s and " and " not in s:
            r.add("weigh", "clause", f"{s!r} must list things to compare ('a, b and c')")
    for key in ("steps", "settle", "tips", "stay_tips"):
        for s in body[key]:
            first = s.split()[0]
            if first in {"you", "your", "it", "the", "a", "i", "my"} or (
                    first not in {"bring"} and first.endswith(("ing", "ed"))):
                r.add(key, "clause", f"{s!r} must start with a base-form verb (an imperative)")


def small_talk_problems(q: str, a: str) -> list[str]:
    """Why one filled question-answer pair is not small talk (empty: it is)."""
    out = []
    if "?" not in q or "{" in q + a:
        out.append(f"{q!r} must be a question with every slot filled")
    if not (q[0].isupper() and a[0].isupper() and a.endswith(".")):
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


def _exchanges(domain: Domain, r: _Report) -> None:
    for ex in domain.exchanges:
        if not ex.slots or not 4 <= ex.fillings <= 8:
            r.add("exchanges", "small talk", f"{ex.q!r} needs slots with 4 to 8 fillings")
        if not (re.search(r"\{\w+\}", ex.q) and re.search(r"\{\w+\}", ex.a)):
            r.add("exchanges", "small talk", f"{ex.q!r}: question and answer each need a slot")
    fillings = _fillings(domain)
    if len({q for q, _ in fillings}) != len(fillings):
        r.add("exchanges", "small talk", "two fillings give the same question")
    if len({a for _, a in fillings}) != len(fillings):
        r.add("exchanges", "small talk", "two fillings give the same answer")
    for q, a in fillings:
        for msg in small_talk_problems(q, a):
            r.add("exchanges", "small talk", msg)


def _fills(body: dict, r: _Report) -> None:
    for value in body["values"] + body["long_values"]:
        for key in SLOTTED:
            for s in _strings(body, key):
                filled = s.format(value=value)
                if "the the " in filled.lower():
                    r.add(key, "article", f"{s!r} with {value!r} reads 'the the'")
                elif _has_word(second_person(filled), ("i", "i'm", "i've", "my", "me", "mine")):
                    r.add(key, "second person", f"{filled!r} keeps a first person when the assistant quotes it")


def catalog_problems(files: Mapping[str, NamedFile], domains=None) -> list[Problem]:
    """Every problem of the catalog ``files`` (by domain), and of the values they share.

    ``domains`` limits the check to the files a design draws from (all of them by default);
    values shared across domains are checked among those."""
    names = sorted(files) if domains is None else [d for d in domains if d in files]
    out: list[Problem] = []
    parsed: dict[str, Domain] = {}
    for name in names:
        domain, problems = domain_problems(name, files[name])
        out += problems
        if domain is not None:
            parsed[name] = domain
    owners: dict[str, list[str]] = {}
    for name, d in parsed.items():
        for v in {x.lower() for x in d.values + d.long_values}:
            owners.setdefault(v, []).append(name)
    for v, where in sorted(owners.items()):
        if len(where) > 1:
            for name in where:
                others = ", ".join(w for w in where if w != name)
                r = _Report(files[name])
                r.add("values", "shared value", f"value {v!r} is also a value of {others}: the "
                                                "offline extractor could not tell the fields apart")
                out += r.problems
    if len(names) < MIN_DOMAINS:
        out.append(Problem("catalog", "", "holds no domain file"))
    return out
