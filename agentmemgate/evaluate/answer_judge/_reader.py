"""The offline answer judge from version 2 on: each labelled value read in its own scope.

v1 (``judges.OfflineAnswerJudge``) reads one cue list around each value. v2 reads the answer's
structure first (memory lists, Mem0 JSON, Graphiti facts with their validity, prose), then each
occurrence of each labelled value in its clause: the frame that governs it (plan, wish, offer,
pending order, future start, dropped idea, past or replaced value, negation, choice, question) and
its role in a change (the value left, the value moved to). The rules are code; every cue is data in
``answer_cues.v2.toml``, whose header documents the steps in the order this module applies them.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path


# -- tokens -------------------------------------------------------------------------------------
_TOK = re.compile(r"(?<![A-Za-z0-9])'(?:s|re|ve|d|ll|m|t)(?![A-Za-z0-9])|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?:'[A-Za-z]+)*\+*"
                  r"|[^\sA-Za-z0-9]", re.I)
_CLITICS = ("n't", "'s", "'re", "'ve", "'d", "'ll", "'m")
_PUNCT_BREAK = {",", ";", ":", "(", ")", "\u2014", "\u2013", "[", "]", "{", "}", "\u2022", "|"}


@dataclass
class Tok:
    word: str      # normalized form
    orig: str      # surface form (capitalization)
    kind: str = "w"  # w word, p punctuation, v value placeholder
    value: int = -1  # index of the value (kind v)


def _split_word(w: str, contractions: dict[str, str]) -> list[str]:
    low = w.lower()
    if low in contractions:
        return contractions[low].split()
    for c in _CLITICS:
        if low.endswith(c) and len(low) > len(c):
            return [low[: -len(c)], c]
    if low.endswith("'") and len(low) > 1:
        return [low[:-1]]
    return [low]


def tokenize(text: str, contractions: dict[str, str]) -> list[Tok]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    out: list[Tok] = []
    for m in _TOK.finditer(text):
        s = m.group(0)
        if s[0].isalnum() or (s[0] == "'" and len(s) > 1):
            parts = _split_word(s, contractions)
            for i, p in enumerate(parts):
                out.append(Tok(p, s if i == 0 else p))
        elif s == "'":
            continue
        else:
            out.append(Tok(s, s, "p"))
    return out


# -- the rules file -----------------------------------------------------------------------------
class Cues:
    """Cue lists compiled to whole-token regular expressions over space-joined tokens."""

    def __init__(self, raw: bytes):
        data = tomllib.loads(raw.decode("utf-8"))
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.version = int(data["version"])
        m = data["match"]
        self.contractions = {k: v for k, v in m["contractions"].items()}
        self.person = dict(m["person"])
        self.articles = set(m["articles"])
        st = data["structure"]
        self.open_dates = {_norm(x) for x in st["open_dates"]}
        self.line_prefixes = [re.compile(p, re.I) for p in st["line_prefixes"]]
        self.boilerplate = [re.compile(p, re.I) for p in st["boilerplate"]]
        self.date_range = re.compile(st["date_range"])
        sc = data["scope"]
        self.sets = {k: set(self._words(v)) for k, v in sc.items() if isinstance(v, list)}
        self.rx: dict[str, re.Pattern] = {}
        self.sets["source_needs_change"] = set(self._words(data["roles"]["source_needs_change"]))
        self.sets["past_verbs"] = set(self._words(data["frames"]["past_verbs"]))
        self.sets["subject_words"] = set(self._words(sc["subjects"])) | {"i"}
        self.sets["clause_subjects"] = self.sets["subject_words"] | {"it", "there", "that", "this",
                                                                     "nothing", "no", "one"}
        for k in ("tag", "subjects"):
            self.rx[k] = self._rx(sc[k])
        for table in ("roles", "frames"):
            for k, v in data[table].items():
                if isinstance(v, list):
                    self.rx[k] = self._rx(v)
        self.neg_reach = int(data["frames"]["neg_reach"])
        dets = sorted(self.sets["determiners"] - {"of"})
        self.rx["past_setting"] = re.compile(
            r"(?<!\S)(?:" + "|".join(re.escape(w) for w in sorted(self.sets["setting_preps"], key=len, reverse=True))
            + r")(?: (?:" + "|".join(map(re.escape, dets)) + r"))+ (?:"
            + "|".join(map(re.escape, self._words(data["frames"]["past_adjectives"]))) + r")(?!\S)")
        self.change_past = set(self._words(data["roles"]["change_past"]))
        self.change_ing = set(self._words(data["roles"]["change_ing"]))
        self.sets["change_present"] = set(self._words(data["roles"]["change_present"]))
        self.sets["temporal"] = set(self._words(data["frames"]["temporal"]))
        for k in ("span_openers", "time_units", "near_miss"):
            self.sets[k] = set(self._words(data["frames"][k]))
        self.sets["aux_past"] = set(self._words(sc["auxiliaries"]))
        self.sets["sentence_adverbs"] = set(self._words(sc["sentence_adverbs"]))
        self.sets["declined_adjacent"] = set(self._words(data["frames"]["declined_adjacent"]))
        roles, frames = data["roles"], data["frames"]
        self.verb_forms = {w for k in ("change_past", "change_ing", "change_present")
                           for w in self._words(roles[k]) if " " not in w}
        self.verb_forms |= {w.rstrip("*") for k in ("past_verbs",) for w in self._words(frames[k])
                            if " " not in w}


    def _words(self, cues: list[str]) -> list[str]:
        return [" ".join(t.word for t in tokenize(c, self.contractions)) for c in cues]

    def _rx(self, cues: list[str]) -> re.Pattern:
        """Whole-token alternatives; a word ending in "*" matches any ending of that word."""
        alts = []
        for c in cues:
            parts = []
            for raw in c.split():
                words = " ".join(t.word for t in tokenize(raw.rstrip("*"), self.contractions))
                if words:
                    parts.append(re.escape(words) + (r"\S*" if raw.endswith("*") else ""))
            if parts:
                alts.append(" ".join(parts))
        alts.sort(key=len, reverse=True)
        return re.compile(r"(?<!\S)(?:" + "|".join(alts) + r")(?!\S)")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(s).lower())).strip()


@lru_cache(maxsize=None)
def load_cues(path: Path) -> Cues:
    return Cues(path.read_bytes())


# -- step 1: structure --------------------------------------------------------------------------
@dataclass
class Unit:
    text: str
    kind: str            # memory, fact, relation, prose
    valid: bool = True
    why: str = ""        # why it is invalid


def _json_values(text: str) -> tuple[list, str]:
    """Every top-level JSON array/object in the text, and the text left around them."""
    dec = json.JSONDecoder()
    found, rest, i = [], [], 0
    while i < len(text):
        if text[i] in "[{":
            try:
                obj, end = dec.raw_decode(text, i)
            except ValueError:
                rest.append(text[i])
                i += 1
                continue
            if isinstance(obj, (list, dict)) and obj:
                found.append(obj)
            i = end
        else:
            rest.append(text[i])
            i += 1
    return found, "".join(rest)


def _is_open(cues: Cues, v) -> bool:
    return v is None or _norm(v) in cues.open_dates


def _records_from_json(cues: Cues, obj) -> list[Unit]:
    out: list[Unit] = []
    if isinstance(obj, dict):
        items = None
        for key in ("results", "memories", "facts", "edges", "data"):
            if isinstance(obj.get(key), list):
                items = obj[key]
                out += _records_from_json(cues, items)
        for rel in obj.get("relations") or []:
            if isinstance(rel, dict) and rel.get("target"):
                words = " ".join(str(rel.get(k, "")).replace("_", " ")
                                 for k in ("source", "relationship", "target"))
                out.append(Unit(words, "relation"))
        if items is None and not obj.get("relations"):
            if any(k in obj for k in ("fact", "memory", "event")):
                out += _records_from_json(cues, [obj])
            else:  # an unknown wrapper: read what it holds
                for v in obj.values():
                    if isinstance(v, (list, dict)):
                        out += _records_from_json(cues, v)
        return out
    if not isinstance(obj, list):
        return out
    history: dict[str, list[dict]] = {}
    for it in obj:
        if isinstance(it, str):
            out.append(Unit(_strip_prefix(cues, it), "memory"))
        elif isinstance(it, dict):
            if "event" in it and ("new_memory" in it or "old_memory" in it):
                history.setdefault(str(it.get("memory_id") or it.get("id")), []).append(it)
            elif "fact" in it:
                inv, exp = it.get("invalid_at"), it.get("expired_at")
                if not _is_open(cues, exp):
                    out.append(Unit(str(it["fact"]), "fact", False, f"expired_at {exp}"))
                elif not _is_open(cues, inv):
                    out.append(Unit(str(it["fact"]), "fact", False, f"invalid_at {inv}"))
                else:
                    out.append(Unit(str(it["fact"]), "fact"))
            elif isinstance(it.get("memory"), str):
                out.append(Unit(it["memory"], "memory"))
            else:
                for v in it.values():
                    if isinstance(v, (list, dict)):
                        out += _records_from_json(cues, v)
        elif isinstance(it, list):
            out += _records_from_json(cues, it)
    for events in history.values():
        last = events[-1]
        for e in events:
            for t in (e.get("old_memory"), e.get("new_memory")):
                if t and not (e is last and t == last.get("new_memory")):
                    if not any(u.text == t and not u.valid for u in out):
                        out.append(Unit(str(t), "memory", False, "a superseded or deleted memory"))
        if str(last.get("event", "")).upper() != "DELETE" and last.get("new_memory") \
                and not last.get("is_deleted"):
            out.append(Unit(str(last["new_memory"]), "memory"))
    return out


def _strip_prefix(cues: Cues, line: str) -> str:
    for rx in cues.line_prefixes:
        line = rx.sub("", line, count=1)
    return line.strip()


def read_structure(cues: Cues, answer: str) -> tuple[list[Unit], bool]:
    """The answer's units and whether it is made of records (step 1)."""
    units: list[Unit] = []
    objs, rest = _json_values(answer) if re.search(r"[\[{]\s*[\"{\[]", answer) else ([], answer)
    for obj in objs:
        units += _records_from_json(cues, obj)
    lines = rest.splitlines()
    prose: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or any(rx.search(line) for rx in cues.boilerplate):
            i += 1
            continue
        m = re.match(r"\s*fact:\s*(.*)$", line, re.I)
        if m:
            fact, until = m.group(1), None
            j = i + 1
            while j < len(lines) and re.match(r"\s*valid (from|until|to|at)\s*:", lines[j], re.I):
                k = re.match(r"\s*valid (until|to)\s*:\s*(.*)$", lines[j], re.I)
                if k:
                    until = k.group(2).strip()
                j += 1
            units.append(Unit(fact, "fact", _is_open(cues, until), f"valid until {until}"))
            i = j
            continue
        stripped = _strip_prefix(cues, line)
        if stripped != line.strip():
            dr = cues.date_range.search(stripped)
            if dr and re.search(r"\d{4}|present|unknown", dr.group(0), re.I):
                fact = stripped[:dr.start()].strip()
                units.append(Unit(fact, "fact", _is_open(cues, dr.group(2)),
                                  f"a date range ending {dr.group(2)}"))
            else:
                units.append(Unit(stripped, "memory"))
        else:
            prose.append(line)
        i += 1
    records = bool(units)
    text = "\n".join(prose).strip()
    if text:
        units.append(Unit(text, "prose"))
    return units, records


# -- steps 2-7: values in scope -----------------------------------------------------------------
@dataclass
class Reading:
    value: int
    frame: str
    role: str
    cue: str
    asserted: bool
    unit: int
    order: int
    conclusion: bool = False  # in a clause that draws the answer's conclusion ("so X")
    purpose: frozenset | None = None  # stems of a "for ..." purpose right after the value
    where: tuple | None = None  # (clause, token index) of the occurrence


@dataclass
class _Clause:
    toks: list[Tok]
    sentence: int
    question: bool
    index: int = 0  # position in the sentence
    lead: str = ""  # the punctuation that ended the clause before it
    readings: list[Reading] = field(default_factory=list)

    def s(self, a: int = 0, b: int | None = None) -> str:
        return " ".join(_tok_str(t) for t in self.toks[a:b])


def _tok_str(t: Tok) -> str:
    return f"qqv{t.value}qq" if t.kind == "v" else t.word


class ScopedAnswerReader:
    def __init__(self, cues: Cues):
        self.c = cues

    # step 2
    def _value_forms(self, values: tuple[str, ...]) -> list[list[tuple[list[str], str]]]:
        c = self.c
        canon = []
        for v in values:
            toks = [t for t in tokenize(v, c.contractions) if t.kind == "w"]
            words = [self._pmap(t.word) for t in toks]
            origs = [t.orig for t in toks]
            while words and words[0] in c.articles:
                words, origs = words[1:], origs[1:]
            canon.append((words, origs))
        forms = []
        for i, (words, origs) in enumerate(canon):
            fs = [(words, "full")] if words else []
            others = {w for j, (ws, _) in enumerate(canon) if j != i for w in ws}
            if len(words) >= 3:
                subs = []
                for a in range(len(words)):
                    if not origs[a][:1].isupper():
                        continue
                    for b in range(len(words), a + 1, -1):
                        if b - a < len(words):
                            subs.append(words[a:b])
                    if len(words) >= 5 and len(words[a]) >= 4 and words[a] not in others:
                        subs.append([words[a]])
                if len(words) >= 5:  # a long run of its words, capitalized or not
                    n = max(4, (len(words) + 1) // 2)
                    for a in range(len(words) - n + 1):
                        if words[a] not in c.sets["determiners"]:
                            for b in range(len(words), a + n - 1, -1):
                                if b - a < len(words):
                                    subs.append(words[a:b])
                seen = set()
                for s in sorted(subs, key=len, reverse=True):
                    key = tuple(s)
                    if key in seen or (len(s) == 1 and s[0] in others):
                        continue
                    if any(" ".join(s) in " ".join(ws) for j, (ws, _) in enumerate(canon) if j != i):
                        continue
                    seen.add(key)
                    fs.append((s, "short"))
            forms.append(fs)
        return forms

    def _pmap(self, w: str) -> str:
        return self.c.person.get(w, w)

    def _mark_values(self, toks: list[Tok], forms) -> list[Tok]:
        """Step 2: each value occurrence (longest form first) becomes one placeholder token."""
        words = [(i, self._pmap(t.word)) for i, t in enumerate(toks) if t.kind == "w"]
        taken: set[int] = set()
        spans: list[tuple[int, int, int]] = []
        flat = []
        for vi, fs in enumerate(forms):
            for ws, kind in fs:
                flat.append((len(ws), kind == "full", vi, ws, kind))
        flat.sort(key=lambda x: (-x[1], -x[0]))
        for n, _, vi, ws, kind in flat:
            for k in range(len(words) - n + 1):
                cand = [w for _, w in words[k:k + n]]
                if cand[:-1] != ws[:-1] or cand[-1] not in (ws[-1], ws[-1] + "s", ws[-1] + "es"):
                    continue
                idx = [i for i, _ in words[k:k + n]]
                if any(i in taken for i in idx):
                    continue
                if kind == "short" and not toks[idx[0]].orig[:1].isupper() and n < 4:
                    continue
                spans.append((idx[0], idx[-1], vi))
                taken.update(range(idx[0], idx[-1] + 1))
        if not spans:
            return toks
        out: list[Tok] = []
        i = 0
        starts = {a: (b, vi) for a, b, vi in spans}
        while i < len(toks):
            if i in starts:
                b, vi = starts[i]
                out.append(Tok(f"qqv{vi}qq", " ".join(t.orig for t in toks[i:b + 1]), "v", vi))
                i = b + 1
            else:
                out.append(toks[i])
                i += 1
        return out

    # step 3
    def _sentences(self, text: str, forms) -> list[tuple[list[Tok], bool]]:
        c = self.c
        out = []
        for sent in self._split_sentences(text):
            toks = self._mark_values(tokenize(sent, c.contractions), forms)
            for i, t in enumerate(toks):  # "in May", "May 3": the month, not the modal
                if t.word == "may" and (i and toks[i - 1].word in c.sets["month_may_before"]
                                        or i + 1 < len(toks) and toks[i + 1].word[:1].isdigit()):
                    t.word = "may_month"
            s = " ".join(_tok_str(t) for t in toks if t.kind != "p")
            question = False
            if sent.rstrip().endswith("?"):
                # a tag question states what comes before the tag
                tagged = re.search(r"(?:^|\s)(?:" + c.rx["tag"].pattern + r")\s*$", s) is not None
                question = not tagged
                if tagged:
                    toks = _strip_tag(toks)
                elif (first := next((t.word for t in toks if t.kind == "w"), "")) \
                        and first not in c.sets["interrogative"] and c.rx["hedges"].search(s):
                    question = False  # "Probably X?": a hedged statement
            out.append((toks, question))
        return out

    def _split_sentences(self, text: str) -> list[str]:
        """Sentences: split after . ! ? before a space, and at newlines; not after a [scope]
        title ("Dr.") or a lone initial inside a name ("J. Smith"), but after a name that ends in
        a capital ("You're on AT&T. Visible ...")."""
        out: list[str] = []
        for line in text.splitlines():
            pieces = re.split(r"(?<=[.!?])\s+", line.strip())
            cur = ""
            for p in pieces:
                cur = f"{cur} {p}" if cur else p
                last = cur.rstrip(".!?").split()[-1:] if cur.rstrip(".!?") else []
                w = last[0].lower() if last else ""
                if cur.endswith(".") and (w in self.c.sets["titles"] or re.fullmatch(r"[A-Z]", last[0] if last else "")):
                    continue
                out.append(cur)
                cur = ""
            if cur:
                out.append(cur)
        return [x for x in out if x.strip()]

    def _clauses(self, toks: list[Tok], k: int, question: bool) -> list[_Clause]:
        c = self.c
        out: list[_Clause] = []
        cur: list[Tok] = []

        lead = [""]

        def flush():
            if cur:
                out.append(_Clause(list(cur), k, question, len(out), lead[0]))
                cur.clear()
                lead[0] = ""

        for i, t in enumerate(toks):
            if t.kind == "p" and (t.word in _PUNCT_BREAK or (t.word == "-" and 0 < i < len(toks) - 1)):
                flush()
                lead[0] = lead[0] or t.word
                continue
            if t.kind == "p":
                continue
            if t.kind == "w" and cur and t.word in c.sets["break_words"]:
                flush()
            elif t.kind == "w" and len(cur) >= 3 and cur[0].word in c.sets["subordinators"] \
                    and t.word in c.sets["main_subjects"] and i + 1 < len(toks) \
                    and toks[i + 1].word in c.sets["main_aux"] \
                    and not any(x.word in c.sets["main_subjects"] for x in cur[2:]):
                # "until it comes you're eating X": the main clause starts at its subject
                flush()
            elif t.kind == "w" and cur and t.word in c.sets["coordinators"]:
                # a coordinator opens a clause only before a new subject ("and you ..."); joined
                # values ("X and Y") and verb phrases ("stay in X or move to Y") stay together
                j = i + 1
                while j < len(toks) and toks[j].kind == "p":
                    j += 1
                if j < len(toks) and toks[j].kind == "w" and toks[j].word in c.sets["clause_subjects"]:
                    flush()
            cur.append(t)
        flush()
        return out

    # steps 4-6
    def read(self, units: list[Unit], values: tuple[str, ...], records: bool):
        c = self.c
        forms = self._value_forms(values)
        readings: list[Reading] = []
        order = 0
        for ui, unit in enumerate(units):
            text = unit.text
            sents = self._sentences(text, forms)
            all_clauses: list[list[_Clause]] = []
            for k, (toks, question) in enumerate(sents):
                toks = self._drop_ignored(toks)
                all_clauses.append(self._clauses(toks, k, question))
            for k, clauses in enumerate(all_clauses):
                sentence_tail = [cl.s() for cl in clauses]
                for ci, cl in enumerate(clauses):
                    prev_vi = None
                    for ti, t in enumerate(cl.toks):
                        if t.kind != "v":
                            continue
                        order += 1
                        if not unit.valid:
                            r = Reading(t.value, "invalid", "state", unit.why, False, ui, order)
                        else:
                            r = self._read_one(cl, ti, clauses, ci, sentence_tail, prev_vi, cl.readings)
                            r.unit, r.order = ui, order
                            r.conclusion = c.rx["conclusion"].match(cl.s()) is not None
                            r.purpose = self._purpose(cl, ti)
                            r.where = (cl, ti)
                        cl.readings.append(r)
                        readings.append(r)
                        prev_vi = ti
                # step 7: anaphors and "both"
                if unit.valid:
                    self._anaphors(all_clauses, k, readings, ui)
        return readings

    def _purpose(self, cl: _Clause, ti: int) -> frozenset | None:
        """Step 8: the stems of a purpose phrase right after the value ("X for work")."""
        c = self.c
        words = []
        for t in cl.toks[ti + 1:]:
            if t.kind == "v" or t.word in c.sets["coordinators"]:
                break
            if t.kind == "w":
                words.append(t.word)
        while words and words[0] in c.sets["adverbs"]:
            words.pop(0)
        if not words or words[0] != "for":
            return None
        stems = frozenset(w[:5] for w in words[1:] if len(w) >= 3 and w.isalpha()
                          and w not in c.sets["field_stopwords"])
        return stems or None

    def beside_names(self, readings: list[Reading]) -> list[str]:
        """Step 9: a capitalized name joined by "and" to a labelled value stated as current, in
        the same verb phrase ("shop at X and sometimes at Y"): another current value."""
        c = self.c
        glue = c.sets["adverbs"] | c.sets["skip"] | c.sets["determiners"] | {"occasionally"}
        joins = {"and", "&", "plus"}
        out: list[str] = []
        for r in readings:
            if not (r.asserted and r.frame in ("current", "done") and r.role != "source" and r.where):
                continue
            cl, ti = r.where
            toks = [t for t in cl.toks if t.kind != "p"]
            if cl.toks[ti] not in toks:
                continue
            at = toks.index(cl.toks[ti])
            for step in (1, -1):
                j = at + step
                seen_join = False
                while 0 <= j < len(toks) and toks[j].kind == "w" and (
                        toks[j].word in glue or toks[j].word in joins) and not toks[j].orig[:1].isupper():
                    seen_join = seen_join or toks[j].word in joins
                    j += step
                if not seen_join or not (0 <= j < len(toks)):
                    continue
                t = toks[j]
                if t.kind != "w" or not t.orig[:1].isupper() or t.word == "i" \
                        or t.word in c.sets["time_names"] or t.word in c.sets["not_names"] \
                        or (j and toks[j - 1].word in c.sets["other_people"]):
                    continue
                k = j
                while 0 <= k + step < len(toks) and toks[k + step].kind == "w" and \
                        toks[k + step].orig[:1].isupper():
                    k += step
                a, b = sorted((j, k))
                if a == 0 and step == -1 and b == a:
                    continue  # a capitalized sentence opener, not a name
                out.append(" ".join(x.orig for x in toks[a:b + 1]).replace(" 's", "'s"))
        return list(dict.fromkeys(out))

    def _drop_ignored(self, toks: list[Tok]) -> list[Tok]:
        s = [_tok_str(t) for t in toks]
        joined = " ".join(s)
        rx = self.c.rx["ignore"]
        drop: set[int] = set()
        for m in rx.finditer(joined):
            a = joined[:m.start()].count(" ") if m.start() else 0
            n = m.group(0).count(" ") + 1
            drop.update(range(a, a + n))
        return [t for i, t in enumerate(toks) if i not in drop]

    def _read_one(self, cl: _Clause, ti: int, clauses: list[_Clause], ci: int,
                  sentence_tail: list[str], prev_vi: int | None, earlier: list[Reading]) -> Reading:
        """Steps 4-6 for the value at token ``ti`` of clause ``cl``."""
        c = self.c
        rx = c.rx
        vi = cl.toks[ti].value
        left = cl.s(0, ti)
        near_start = (prev_vi + 1) if prev_vi is not None else 0
        near = cl.s(near_start, ti)
        # a coordinator with words between it and the value opens a new predicate ("declined
        # the X trial and kept going with Y"): what stands before it frames the earlier value
        nw = near.split()
        co = max((k for k, w in enumerate(nw[:-1]) if w in c.sets["coordinators"]), default=None)
        if co is not None and prev_vi is not None:
            near = " ".join(nw[co + 1:])
        vpos = [j for j, t in enumerate(cl.toks) if t.kind == "v"]
        nxt = next_value = next((j for j in vpos if j > ti), len(cl.toks))
        right = cl.s(ti + 1, nxt)
        # coordinated subjects ("X and Y were both cancelled"): the predicate after the last one
        glue = c.sets["coordinators"] | c.sets["determiners"]
        j = ti
        while right and all(w in glue for w in right.split()) and nxt < len(cl.toks):
            j = nxt
            nxt = next((k for k in vpos if k > j), len(cl.toks))
            right = cl.s(j + 1, nxt)
        # a coordinator after the value opens another predicate ("X and plan to try Y")
        rw = right.split()
        cut = next((k for k, w in enumerate(rw) if w in c.sets["coordinators"]), None)
        if cut is not None:
            right = " ".join(rw[:cut])
        whole = cl.s()
        later = " ".join(sentence_tail[ci + 1:])
        # the rest of the sentence after the value, when no other value is named there
        beyond = "" if any(j > ti for j in vpos) or "qqv" in later else f"{cl.s(ti + 1)} {later}"
        opens = all(t.word in glue | c.sets["openers"] | c.sets["break_words"]
                    for t in cl.toks[:ti] if t.kind == "w")
        if opens and not right:
            # a subject before an appositive or a relative clause: its predicate is further on
            rel = None
            for nc in clauses[ci + 1:]:
                first = nc.toks[0].word if nc.toks else ""
                if first in c.sets["relative"]:
                    rel = rel or nc.s()
                    continue
                if any(t.kind == "v" for t in nc.toks) or first in c.sets["coordinators"] or (
                        first in c.sets["break_words"] and first not in c.sets["time_subordinators"]):
                    break
                right = nc.s()
                break
            if not right and rel:
                right = rel

        def R(frame, cue, asserted, role="state"):
            return Reading(vi, frame, role, cue, asserted, 0, 0)

        # question, choice
        if cl.question:
            return R("question", "a question back to the user", False)
        if prev_vi is not None and re.fullmatch(r"(?:(?:either|neither|\S+) )?or(?: (?:the|a|an|your))?",
                                                near.strip()) and "or" in near.split():
            return R("choice", "one side of 'X or Y'", False)
        if next_value < len(cl.toks) and re.fullmatch(r"or(?: (?:the|a|an|your))?",
                                                      cl.s(ti + 1, next_value).strip()):
            return R("choice", "one side of 'X or Y'", False)
        m = rx["choice"].search(left)
        if m and (m.group(0) != "between" or rx["decision"].search(whole)):
            return R("choice", f"'{m.group(0)}'", False)
        if not left.strip() and not right.strip() and any(rx["conflict"].search(o.s()) for o in clauses):
            return R("choice", f"'{rx['conflict'].search(' '.join(o.s() for o in clauses)).group(0)}'", False)
        if rx["possibility"].match(left) and any(
                rx["possibility"].match(o.s()) and any(t.kind == "v" and t.value != vi for t in o.toks)
                for o in clauses if o is not cl):
            return R("choice", f"one of several possibilities ('{rx['possibility'].match(left).group(0)}')", False)
        # a value that opens its clause as the subject of "replaced" (active or passive)
        if opens and prev_vi is None:
            if (m := rx["replaced_by"].search(right)) and prev_vi is None:
                return R("done", f"left ('{m.group(0)}')", False, "source")
            if (m := rx["replaces"].search(right)) and prev_vi is None and next_value < len(cl.toks):
                return R("done", f"a change made ('{m.group(0)}')", True, "target")
        # role
        role = "state"
        near_tail = near.split()
        if prev_vi is not None and near.strip() in c.sets["target_preps"] | {"by"} \
                and earlier and earlier[-1].role == "source":
            role = "target"
        else:
            core = list(near_tail)
            while core and core[-1] in c.sets["determiners"] - {"of"}:
                core.pop()
            last3 = " ".join(core[-3:])
            sm = [x for x in rx["source"].finditer(last3) if last3.endswith(x.group(0))]
            if [x for x in rx["replaced_by"].finditer(" ".join(core)) if " ".join(core).endswith(x.group(0))]:
                role = "target"  # "X was replaced by Y"
            elif sm and (sm[-1].group(0) not in c.sets["source_needs_change"]
                       or rx["change_words"].search(left)):
                role = "source"
            elif rx["target"].search(near):
                role = "target"
        coord = prev_vi is not None and near.strip() in c.sets["coordinators"] and earlier
        if coord and earlier[-1].frame != "invalid":
            e = earlier[-1]
            return Reading(vi, e.frame, e.role, e.cue + " (coordinated)", e.asserted, 0, 0)

        def verdict(frame, cue):
            # a change not made leaves its source current ("wants to move from X", "never left X")
            return R(frame, cue, role == "source", role)

        verb = self._verb(near)[0]
        if rx["continuation"].fullmatch(verb or "-"):
            return R("current", f"kept ('{verb}')", True, "state")
        lw = left.split()
        vp_start = max((i + 1 for i, w in enumerate(lw) if w in c.sets["coordinators"]
                        and not (i + 1 < len(lw) and lw[i + 1].startswith("qqv"))), default=0)
        if (m := rx["abandoned"].search(" ".join(lw[vp_start:]))
                or rx["abandoned"].search(f"{near} qqv{vi}qq {right}")):
            return verdict("abandoned", f"'{m.group(0)}'")
        m = rx["declined"].search(near)
        if not m and near_tail and near_tail[-1] in c.sets["declined_adjacent"]:
            m = re.search(re.escape(near_tail[-1]) + "$", near)
        if m and role != "source":
            if (p := self._plan_cue(left, near)):
                # "you wish you had Y instead of X": only wished, so X stays current
                return R("plan", f"'{p}' ... '{m.group(0)}': the value a wished change would leave",
                         True, "source")
            return R("declined", f"'{m.group(0)}'", False)
        if (who := self._someone_else(left)):
            return R("someone_else", f"'{who}'", False, role)
        neg_window = " ".join(left.split()[-c.neg_reach:])
        m = rx["negation"].search(neg_window)
        if not m and opens:
            m = rx["negation"].search(" ".join(right.split()[:3]))
        if m:
            return verdict("negated", f"'{m.group(0)}'")
        if opens and (m := rx["joined_by"].search(right)):
            upto = []
            for nc in clauses[ci + 1:]:
                if any(t.kind == "v" for t in nc.toks):
                    break
                upto.append(nc.s())
            if (f := rx["future_start"].search(" ".join([right] + upto))):
                # "X hired you, but your start date is next month"
                return R("future_start", f"'{m.group(0)}', then '{f.group(0)}'", False, "target")
            return R("done", f"a change made ('{m.group(0)}')", True, "target")
        local = f"{near} {right}"
        head = " ".join(right.split()[:3])
        if (m := rx["offer"].search(local)):
            if role == "source" and rx["offer"].search(head):
                # "cancelled a X trial": what was left is the offer, not a value the user had
                return R("offer", f"'{m.group(0)}' (the offer itself was left)", False, role)
            return verdict("offer", f"'{m.group(0)}'")
        if (m := self._pending(local, near) or (
                (pp := re.search(r"(?<!\S)(?:is|are|'s|'re) being \S+ed(?!\S)", right)) and pp.group(0))):
            if role == "source" and rx["pending"].search(head):
                return R("pending", f"'{m}' (the order itself was left)", False, role)
            return verdict("pending", f"'{m}'")
        m = rx["future_start"].search(local)
        if not m and (d := rx["dated_start"].search(right)):
            after = " ".join(right[d.end():].split()[:3])
            if (ft := rx["future_time"].search(after)):
                m = re.search(re.escape(f"{d.group(0)}"), right)  # "enrolled in X starting January"
        if not m and verb in c.sets["change_present"] and (
                rx["future_time"].search(whole) or near_tail[-2:-1] == ["you"]):
            m = re.search(re.escape(verb), near)
        if not m and verb in c.change_past and role != "source":
            m = rx["future_start"].search(beyond)  # "signed with X ... and start on Monday"
            bw = beyond.split()
            if not m and any(w in c.sets["change_present"] for w in bw) and rx["future_time"].search(beyond):
                m = rx["future_time"].search(beyond)  # "closed on a house in X and move in next week"
        if m:
            return verdict("future_start", f"'{m.group(0)}'")
        if opens and (m := rx["future_end"].match(
                " ".join(w for w in right.split() if w not in c.sets["skip"]))):
            # "when the X policy renews", "until X expires": X is current until then
            return R("current", f"current until it ends ('{m.group(0)}')", True, "source")
        m = self._plan_cue(left, near)
        if not m and role != "source" and (m2 := rx["plan_after"].search(right)):
            m = m2.group(0)
            # "switched to a Mint plan", "on a Kaiser plan": the product's plan, not an intention
            if rx["service_nouns"].fullmatch(m) and right.split()[:1] == [m] and (
                    verb in c.change_past or near_tail[-1:] in (["a"], ["an"]) or near_tail[-1:] in (["on"], ["onto"])
                    or (near_tail[-2:-1] in (["on"], ["onto"]) and near_tail[-1] in c.sets["determiners"])):
                m = None
        subject = all(w in glue | c.sets["break_words"] | c.sets["sentence_adverbs"]
                      for w in left.split())
        rfirst = right.split()[0] if right else ""
        predicate = rfirst in c.sets["be_present"] | c.sets["have"] | c.sets["aux_past"] \
            or (rfirst.endswith("s") and len(rfirst) > 3 and rfirst not in c.sets["skip"])
        if not m and subject and predicate and role == "state" \
                and not rx["user_complement"].search(right) \
                and not rx["continuation"].search(right) and not self._past(near, right, opens):
            return R("described", f"'{right}'", False, role)
        rk = [w for w in right.split() if w not in c.sets["skip"]]
        if not m and opens and rk[:1] and rk[0] not in c.sets["clause_subjects"] and (
                ap := rx["appraisal"].search(" ".join(rk[:5]))):
            m = ap.group(0)  # "X looks good to you", "X's free tier sounds good"
        if not m:
            lw2 = left.split()
            for k, w in enumerate(lw2[:-1]):
                nx = lw2[k + 1]
                if w in c.sets["near_miss"] and (nx in c.change_past or nx in c.sets["past_verbs"]
                                                 or (nx.endswith("ed") and len(nx) > 4)):
                    m = f"{w} {nx}"  # "almost bought X": it did not happen
        m = m or self._futurate(left) or self._next_step(clauses, ci, left, right)
        if m:
            if (done := rx["came_true"].search(later) or rx["came_true"].search(right)):
                cue = f"a plan ('{m}') that came true ('{done.group(0)}')"
                return R("done", cue, role != "source", role)
            if (ab := rx["abandoned"].search(right) or rx["abandoned"].search(later)):
                return verdict("abandoned", f"a plan ('{m}') dropped ('{ab.group(0)}')")
            return verdict("plan", f"'{m}'")
        if opens and rx["user_complement"].search(right):
            rw2 = right.split()
            for k in range(len(rw2) - 1):
                if rw2[k] in c.sets["subject_words"] and (rw2[k + 1] in c.sets["past_verbs"]
                                                          or rw2[k + 1] in {"grew", "were", "was"}):
                    return R("past", f"'{' '.join(rw2[k:k + 3])}'", False, role)  # "where you were born"
        if (m := self._mention(near)):
            return R("mention", f"'{m}'", False, role)
        if opens and (m := rx["mentioned_after"].match(right)):
            return R("mention", f"'{m.group(0)}'", False, role)  # "X keeps coming up"
        m = rx["ended"].search(right) or rx["ended"].search(" ".join(near_tail[-3:]))
        if m:
            return R("ended", f"'{m.group(0)}'", False, role)
        last_known = rx["last_known"].search(left)
        m = self._past(near, right, opens)
        if m and not last_known:
            if role == "source":
                return R("done", f"left ('{m}')", False, role)
            return R("past", f"'{m}'", False, role)
        if verb in c.change_past:
            if role == "source":
                return R("done", f"left ('{verb}')", False, role)
            if (m := self._not_completed(beyond)):
                return R("pending", f"a change not completed ('{m}')", False, role)
            return R("done", f"a change made ('{verb}')", True, role)
        if role == "source":
            return R("done", f"left ('{near_tail[-1] if near_tail else ''}')", False, role)
        return R("current", "stated as current" + (" (last known)" if last_known else ""), True, role)

    def _pending(self, local: str, near: str) -> str | None:
        """A [frames] pending cue, unless it is a present-tense verb of the user's habit ("you
        order from X", a memory line "Ships with X"): a cue word not ending in -ed/-ing right
        after a subject word (adverbs between) or opening the clause."""
        c = self.c
        for m in c.rx["pending"].finditer(local):
            g = m.group(0)
            if " " not in g and not g.endswith(("ed", "ing")):
                before = local[:m.start()].split()
                while before and before[-1] in c.sets["adverbs"]:
                    before.pop()
                if not before or before[-1] in c.sets["subject_words"]:
                    continue
            return g
        return None

    def _plan_cue(self, left: str, near: str) -> str | None:
        """A plan cue before the value; a temporal subordinator ("when", "once") over a past
        form is a time, not a condition ("when you got X")."""
        c = self.c
        for m in reversed(list(c.rx["plan"].finditer(left))):
            if m.group(0) in c.sets["temporal"]:
                after = left[m.end():].split()
                if any(w in c.change_past or w in c.sets["past_verbs"]
                       or (w.endswith("ed") and len(w) > 4) for w in after):
                    continue
            return m.group(0)
        return None

    def _next_step(self, clauses: list[_Clause], ci: int, left: str, right: str) -> str | None:
        """A bare value after "then" that follows a clause opened by a [frames] temporal word
        with no past form in the sentence so far ("X until the lease ends, then Y"): the step
        after the current one."""
        c = self.c
        c = self.c
        if (right.strip() and right.strip() not in [o.s() for o in clauses[ci + 1:ci + 2]]) or not all(
                w in c.sets["determiners"] | c.sets["sentence_adverbs"] | {"then"} for w in left.split()):
            return None
        for oi, o in enumerate(clauses):  # "If the price drops, X." / "X, once your boss agrees."
            if oi == ci or any(t.kind == "v" for t in o.toks) or any(
                    x.lead == ";" for x in clauses[min(oi, ci) + 1:max(oi, ci) + 1]):
                continue
            ow = o.s()
            if (cm := c.rx["condition"].match(ow)) and not any(
                    w in c.sets["past_verbs"] or (w.endswith("ed") and len(w) > 4) for w in ow.split()):
                return f"'{cm.group(0)}' ('{ow}')"
        if left.strip() != "then" or right.strip():
            return None
        earlier = [cl.s() for cl in clauses[:ci]]
        if not any(e.split()[:1] and e.split()[0] in c.sets["temporal"] for e in earlier):
            return None
        if any(w in c.sets["past_verbs"] or (w.endswith("ed") and len(w) > 4)
               for e in earlier for w in e.split()):
            return None
        return "then, after 'until'/'when'"

    def _futurate(self, left: str) -> str | None:
        """A futurate progressive of a change verb: "you're moving out of", "is switching to"."""
        w = left.split()
        for i in range(len(w) - 1):
            if w[i] in self.c.sets["be_present"] - {"been", "being"} and w[i + 1] in self.c.change_ing:
                return f"{w[i]} {w[i + 1]}"
        if w and w[0] in self.c.change_ing:  # a memory line "Moving to X in June"
            return w[0]
        return None

    def _mention(self, near: str) -> str | None:
        """A [frames] mention verb whose direct object is the value ("talked about X")."""
        words = near.split()
        j = len(words)
        while j > 0 and words[j - 1] in self.c.sets["determiners"]:
            j -= 1
        for n in (3, 2, 1):
            if j >= n and self.c.rx["mention"].fullmatch(tail := " ".join(words[j - n:j])):
                return tail
        return None

    def _someone_else(self, left: str) -> str | None:
        """The clause's subject is another person ("your partner is with X"), with no "you"
        between it and the value."""
        words = left.split()
        for i, w in enumerate(words):
            if w in self.c.sets["other_people"] and not any(
                    x in self.c.sets["subject_words"] | {"your"} for x in words[i + 1:]):
                if i == 0 or words[i - 1] in {"your", "the", "a", "my", "his", "her", "their"}:
                    return " ".join(words[max(0, i - 1):i + 1])
        return None

    def _verb(self, near: str) -> tuple[str, str]:
        """The verb governing a value and the auxiliary before it. From the value back to the
        last subject or coordinator in NEAR: the nearest known verb form (a form in the verb
        lists, "-ed", "-ing"), skipping [scope] skip words and unknown words (nouns: "tried a
        class at X"); with none known, the first word after that boundary ("Picks up ... at X").
        A form of "be"/"have" before a preposition or determiner is itself the verb ("were with
        X"); before another verb it is that verb's auxiliary ("'ve been at X")."""
        c = self.c
        words = near.split()
        def known(w: str) -> bool:
            return w in c.verb_forms or (len(w) > 4 and w.endswith("ed"))
        # "you" right after a verb is its object ("your company switched you to X")
        start = max((i + 1 for i, w in enumerate(words)
                     if (w in c.sets["subject_words"] and not (w == "you" and i and known(words[i - 1])))
                     or w in c.sets["coordinators"]), default=0)
        span = words[start:]
        aux_words = c.sets["be_present"] | c.sets["have"] | c.sets["aux_past"]

        def aux_of(i: int) -> str:
            k = i - 1
            while k >= 0 and span[k] in c.sets["adverbs"]:
                k -= 1
            return span[k] if k >= 0 and span[k] in aux_words else ""

        for i in range(len(span) - 1, -1, -1):
            w = span[i]
            if w in c.sets["skip"] or w in c.sets["adverbs"]:
                continue
            if w in aux_words:
                nxt = span[i + 1] if i + 1 < len(span) else ""
                if not nxt or nxt in c.sets["skip"]:
                    return w, aux_of(i)
                continue
            if w in c.verb_forms or c.rx["continuation"].fullmatch(w) \
                    or (len(w) > 4 and (w.endswith("ed") or w.endswith("ing"))):
                return w, aux_of(i)
        for i, w in enumerate(span):
            if w in c.sets["adverbs"] or w in aux_words:
                continue
            return w, aux_of(i)
        return "", ""

    def _not_completed(self, beyond: str) -> str | None:
        """A later clause saying the change is not complete: a negation with "yet", or with a
        change verb ("but hasn't ordered yet", "but haven't funded it")."""
        c = self.c
        m = c.rx["negation"].search(beyond)
        if not m:
            return None
        rest = beyond[m.end():].split()[:4]
        if "yet" in beyond.split() or any(w in c.change_past or w in c.sets["change_present"]
                                          or (w.endswith("ed") and len(w) > 4) for w in rest):
            return " ".join(beyond.split()[:6])
        return None

    def _past(self, near: str, right: str, opens: bool) -> str | None:
        """A past value: a [frames] past cue before the value (or, for a value that opens its
        clause, after it), or a past form of a non-change verb governing it."""
        c = self.c
        pv = c.sets["past_verbs"]
        nw = near.split()
        if len(nw) == 1 and nw[0] in c.sets["span_openers"] and not right.strip():
            return nw[0]  # "you joined Y after X"
        m = c.rx["past"].search(" ".join(nw[-4:]))
        if m and m.group(0) == "before" and any(w in c.change_ing for w in nw[nw.index("before") + 1:]
                                                if "before" in nw):
            m = None  # "before joining X": the time of a change made, not a past X
        if m:
            return m.group(0)
        for k in range(max(0, len(nw) - 6), len(nw)):
            if nw[k] in c.sets["span_openers"]:
                rest = nw[k + 1:]
                u = next((i for i, w in enumerate(rest[:4]) if w in c.sets["time_units"]), None)
                if u is not None and len(rest) - u - 1 <= 1:
                    return " ".join(nw[k:])  # "after four years at X": a span that has ended
        if (m := c.rx["past_setting"].search(right)):
            return m.group(0)  # "X outages at the old apartment"
        if opens or not near.strip():
            r = right.split()
            m2 = c.rx["past"].search(" ".join(r[:4]))
            if m2:
                return m2.group(0)
            j = 0
            while j < len(r) and r[j] in c.sets["skip"]:
                j += 1
            if j < len(r) and (r[j] in pv or (r[j].endswith("ed") and len(r[j]) > 4)) \
                    and (r[j] not in c.change_past or r[j] in c.sets["left_verbs"]):
                return r[j]  # "X was your old app"; "X dropped you", "X stopped serving ..."
        verb, aux = self._verb(near)
        words = near.split()
        if verb:
            j = words.index(verb)
            k = j - 1
            while k >= 0 and words[k] in c.sets["adverbs"]:
                k -= 1
            before = words[k] if k >= 0 else ""
            if aux in c.sets["be_present"]:
                return None
            if aux in c.sets["have"] and verb in c.sets["perfect_state"]:
                return None
            if verb in c.change_past or c.rx["continuation"].fullmatch(verb):
                return None
            # a regular past form is a past event only with its subject (or an auxiliary)
            # before it ("you visited X"); a memory line's opening participle is a state
            # ("Insured with X")
            if verb in pv or (verb.endswith("ed") and len(verb) > 4
                              and (before in c.sets["subject_words"] or aux)):
                return verb
        return None

    def _anaphors(self, all_clauses: list[list[_Clause]], k: int, readings: list[Reading], ui: int):
        c = self.c
        clauses = all_clauses[k]
        pool = [cl for cl in (all_clauses[k - 1] if k else []) + clauses]
        pieces: list[tuple[_Clause, _Clause]] = []  # (clause read, clause it stands in)
        for cl in clauses:
            vpos = [i for i, t in enumerate(cl.toks) if t.kind == "v"]
            if not vpos:
                pieces.append((cl, cl))
                continue
            # a coordinated verb phrase after the clause's last value ("gave X a try and stuck
            # with it") is read on its own
            co = next((i for i in range(vpos[-1] + 1, len(cl.toks))
                       if cl.toks[i].word in c.sets["coordinators"]), None)
            if co is not None:
                pieces.append((_Clause(cl.toks[co:], cl.sentence, cl.question, cl.index), cl))
        for cl, home in pieces:
            words = [t.word for t in cl.toks]
            s = " ".join(words)
            if any(w in c.sets["both"] for w in words) and "you both" not in s and "both of" not in s:
                if not (c.rx["plan"].search(s) or c.rx["negation"].search(s) or c.rx["past"].search(s)):
                    for p in pool:
                        for r in p.readings:
                            if not r.asserted:
                                readings.append(Reading(r.value, "current", r.role,
                                                        f"'both' ('{s}')", True, ui, 10**6))
                continue
            idx = [i for i, w in enumerate(words) if w in c.sets["anaphors"] and i > 0]
            if not idx:
                continue
            prior = [r for p in pool[:pool.index(home) + (home is not cl)] for r in p.readings]
            if not prior:
                continue
            ref = prior[-1]
            fake = _Clause([Tok(f"qqv{ref.value}qq", "", "v", ref.value) if i == idx[0] else t
                            for i, t in enumerate(cl.toks)], cl.sentence, cl.question, cl.index)
            r = self._read_one(fake, idx[0], [fake], 0, [""], None, [])
            if r.asserted and r.frame in ("current", "done"):
                readings.append(Reading(ref.value, r.frame, r.role,
                                        f"{r.cue}, through '{words[idx[0]]}' ('{s}')", True, ui,
                                        10**6))

    # step 8
    def other_value(self, units: list[Unit], records: bool, forms,
                    field_words: frozenset[str] = frozenset()) -> str | None:
        c = self.c
        n_records = sum(1 for u in units if u.kind != "prose")
        for unit in units:
            if not unit.valid or (records and unit.kind == "prose"):
                continue
            if n_records >= 3 and field_words and not field_words & _stems(unit.text):
                continue  # a list of memories about many things: only lines about the field
            for toks, question in self._sentences(unit.text, forms):
                if question:
                    continue
                toks = self._drop_ignored(toks)
                if c.rx["no_answer"].search(" ".join(_tok_str(t) for t in toks)):
                    continue  # "Sorry, I couldn't find ...", "Unknown."
                clauses = self._clauses(toks, 0, question)
                subject = unit.kind != "prose" or bool(clauses and c.rx["subjects"].search(clauses[0].s()))
                said = ""
                for cl in clauses:
                    name = self._other_in(cl, unit.kind != "prose")
                    if name:
                        return name
                    piece = self._predicate_after(cl)
                    if piece is not None and subject:
                        before = f"{said} {cl.s(0, len(cl.toks) - len(piece.toks))}"
                        before = c.rx["abandoned"].sub(" ", before)  # "dropped the idea of X"
                        verb = next((t.word for t in piece.toks[1:] if t.kind == "w"
                                     and t.word not in c.sets["adverbs"]), "")
                        past = verb in c.change_past or verb in c.sets["past_verbs"] or verb.endswith("ed")
                        if not c.rx["negation"].search(before) and (past or not c.rx["plan"].search(before)):
                            name = self._other_in(piece, True)
                            if name:
                                return name
                    said = f"{said} {cl.s()}"
        return None

    def _predicate_after(self, cl: _Clause) -> _Clause | None:
        """A new predicate after "and"/"or" (a lower-case word, not a determiner, follows) and
        after the clause's last value: it shares the sentence's subject ("You gave up on X and
        shop at Y now")."""
        c = self.c
        vpos = [i for i, t in enumerate(cl.toks) if t.kind == "v"]
        for k in range((vpos[-1] + 1) if vpos else 1, len(cl.toks) - 1):
            t, n = cl.toks[k], cl.toks[k + 1]
            if t.word in c.sets["coordinators"] and n.kind == "w" and not n.orig[:1].isupper() \
                    and n.word not in c.sets["determiners"] and n.word not in c.sets["clause_subjects"]:
                return _Clause(cl.toks[k:], cl.sentence, cl.question, cl.index)
        return None

    def _other_in(self, cl: _Clause, record: bool) -> str | None:
        """Step 8 in one clause: the name of another current value, or None."""
        c = self.c
        rx = c.rx
        words = [t for t in cl.toks if t.kind != "p"]
        if not words:
            return None
        joined = [_tok_str(t) for t in words]
        found = self._other_name(words, joined, record) or self._other_target(words, joined)
        if not found:
            return None
        at, name = found
        before = " ".join(joined[:at])
        if any(rx[k].search(before) for k in ("plan", "negation", "offer", "pending", "abandoned",
                                                "choice", "mention", "future_start", "no_answer",
                                                "ended", "declined", "question_words")):
            return None
        after = " ".join(joined[at + len(name.split()):])
        pa = rx["plan_after"].search(" ".join(after.split()[:3]))
        if pa and not (rx["service_nouns"].fullmatch(pa.group(0)) and after.split()[:1] == [pa.group(0)]):
            return None
        if self._past(before, "", False) and self._verb(before)[0] not in c.change_past:
            return None
        return name

    def _other_target(self, words: list[Tok], joined: list[str]):
        """The target of a change made: "moved your savings to a local bank"."""
        c = self.c
        for i, w in enumerate(joined):
            if w in c.change_past:
                # "left X for Y": after a verb of leaving only "for" brings the target
                preps = {"for"} if w in c.sets["left_verbs"] else c.sets["target_preps"]
                for j in range(i + 1, len(joined)):
                    if joined[j] in preps:
                        k = j + 1
                        while k < len(joined) and joined[k] in c.sets["determiners"]:
                            k += 1
                        np = []
                        while k < len(joined) and joined[k] not in c.sets["np_stop"] \
                                and not joined[k].startswith("qqv"):
                            np.append(words[k].orig)
                            k += 1
                        if np:
                            return k - len(np), " ".join(np)
                        break
        return None

    def _other_name(self, words: list[Tok], joined: list[str], record: bool):
        """A capitalized name after the verb of a current clause about the user, or a bare
        capitalized answer ("Tidal.")."""
        c = self.c
        s = " ".join(joined)
        bare = len(words) <= 5 and all(
            t.kind == "w" and (t.orig[:1].isupper() or t.orig[:1].isdigit()
                               or t.word in {"'s", "of", "and", "&"}) for t in words)
        if not (bare or record or c.rx["subjects"].search(s)):
            return None
        start = 0 if bare else 1
        i = start
        while i < len(words):
            t = words[i]
            if t.kind == "v":
                return None  # only before the labelled values of the clause: the object slot
            if t.kind == "w" and t.orig[:1].isupper() and t.word != "i" \
                    and t.word not in c.sets["time_names"] and t.word not in c.sets["not_names"] \
                    and not (i and words[i - 1].word in c.sets["other_people"]):
                j = i
                while j + 1 < len(words) and words[j + 1].kind == "w" and (
                        words[j + 1].orig[:1].isupper() or words[j + 1].word in {"'s", "of", "and", "&"}
                        and j + 2 < len(words) and words[j + 2].orig[:1].isupper()
                        or words[j + 1].orig[:1].isdigit()):
                    j += 1
                return i, " ".join(w.orig for w in words[i:j + 1]).replace(" 's", "'s")
            i += 1
        return None


def _strip_tag(toks: list[Tok]) -> list[Tok]:
    # drop everything after the last comma or dash before the final "?"
    for i in range(len(toks) - 1, -1, -1):
        if toks[i].kind == "p" and toks[i].word in {",", "\u2014", "\u2013", "-"}:
            return toks[:i]
    return [t for t in toks if t.word != "?"]


# -- the verdict ----------------------------------------------------------------------------------
_FRAME_WORDS = {
    "invalid": "in a record marked no longer valid ({cue})",
    "question": "only inside a question back to the user",
    "choice": "one side of a choice ({cue})",
    "abandoned": "a dropped or declined idea ({cue})",
    "declined": "the value not chosen ({cue})",
    "someone_else": "someone else's ({cue})",
    "described": "described, not stated as the user's ({cue})",
    "other_purpose": "{cue}",
    "negated": "negated ({cue})",
    "offer": "an offer ({cue})",
    "pending": "pending, not yet arrived or started ({cue})",
    "future_start": "a future start ({cue})",
    "plan": "a plan, wish or option ({cue})",
    "mention": "only mentioned ({cue})",
    "ended": "ended ({cue})",
    "past": "a past value ({cue})",
    "done": "{cue}",
    "current": "{cue}",
}


def describe(r: Reading, value: str, unit_kind: str) -> str:
    where = {"memory": "a memory line", "fact": "a graph fact", "relation": "a graph relation",
             "prose": "the answer"}[unit_kind]
    what = _FRAME_WORDS[r.frame].format(cue=r.cue)
    if r.role == "source" and r.asserted:
        what = f"the value a {r.frame} change would leave, so still current ({r.cue})"
    elif r.role == "source" and r.frame == "done":
        what = f"the value left ({r.cue})"
    verdict = "asserted" if r.asserted else "not asserted"
    return f"'{value}' in {where}: {what} -> {verdict}"


def _stems(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{3,}", text.lower())}


def field_stems(cues: Cues, *texts: str) -> frozenset[str]:
    """Content words of the field's name, description and question (step 8)."""
    words = set()
    for t in texts:
        words |= {w[:5] for w in re.findall(r"[a-z]{3,}", t.replace("_", " ").lower())
                  if w not in cues.sets["field_stopwords"]}
    return frozenset(words)


def _bare_head_left(cues: Cues, units: list[Unit], readings: list[Reading]) -> None:
    """Step 8: a bare value opening a prose sentence ("X (you moved to Y in March).", "X - you
    switched to Y") is the value left when a later clause of that sentence reports a change made
    to another value, and no [frames] also cue says both are held."""
    glue = cues.sets["determiners"] | cues.sets["openers"]
    for r in readings:
        if not (r.asserted and r.frame == "current" and r.where and units[r.unit].kind == "prose"):
            continue
        cl, ti = r.where
        if cl.index != 0 or any(t.kind == "w" and t.word not in glue for t in cl.toks) \
                or sum(t.kind == "v" for t in cl.toks) != 1:
            continue
        for r2 in readings:
            if r2.value == r.value or r2.unit != r.unit or not r2.where or not r2.asserted:
                continue
            cl2, _ = r2.where
            if cl2.sentence == cl.sentence and cl2.index > 0 and r2.frame == "done" \
                    and r2.role == "target" and not cues.rx["also"].search(cl2.s()):
                r.asserted, r.frame = False, "past"
                r.cue = f"the value left by the change the answer reports ({r2.cue})"
                break


def judge_answer(cues: Cues, answer: str, values: tuple[str, ...],
                 field_words: frozenset[str] = frozenset()) -> tuple[list[str], str]:
    """(asserted values, rationale): steps 1-8 of the rules file."""
    reader = ScopedAnswerReader(cues)
    values = tuple(dict.fromkeys(v for v in values if v.strip()))
    units, records = read_structure(cues, answer)
    readings = reader.read(units, values, records)
    asserted: list[str] = []
    reasons: list[str] = []
    if field_words:  # step 8: a value for another purpose than the field's, beside one for it
        fits = {r.value for r in readings if r.purpose and r.purpose & field_words}
        elsewhere = {r.value for r in readings if r.purpose and not r.purpose & field_words} - fits
        if fits and elsewhere:
            for r in readings:
                if r.value in elsewhere and r.asserted and not (r.frame == "done" and r.role == "target"):
                    r.asserted, r.frame = False, "other_purpose"
                    r.cue = "a purpose other than the field's, beside a value for it"
    _bare_head_left(cues, units, readings)
    drawn = {r.value for r in readings if r.conclusion and r.asserted and units[r.unit].kind == "prose"}
    if drawn:  # the answer draws its own conclusion: only what it concludes is asserted
        for r in readings:
            if units[r.unit].kind == "prose" and r.asserted and r.value not in drawn:
                r.asserted, r.frame, r.cue = False, "past", "not what the answer concludes"
    for vi, value in enumerate(values):
        mine = sorted((r for r in readings if r.value == vi), key=lambda r: r.order)
        if not mine:
            continue
        decided = None
        for r in mine:
            kind = units[r.unit].kind
            if kind != "prose":
                if r.asserted:
                    decided = decided or r
                continue
            if r.asserted:
                decided = r
            elif decided is not None and units[decided.unit].kind == "prose" and \
                    r.order > decided.order and (r.frame == "ended" or
                                                 (r.frame == "done" and r.role == "source")):
                decided = None  # the narrative itself ends it later on
        shown = decided or mine[-1]
        if decided is None:
            # the reading that decided: the first one that is not merely a mention
            shown = next((r for r in mine if r.frame not in ("mention",)), mine[0])
        reasons.append(describe(shown, value, units[shown.unit].kind))
        if decided is not None:
            asserted.append(value)
    if asserted:  # step 9: a name joined to a value stated as current
        for name in reader.beside_names([r for r in readings if r.asserted]):
            asserted.append(name)
            reasons.append(f"'{name}' is stated as current beside it and is neither labelled value")
    if not asserted:
        other = reader.other_value(units, records, reader._value_forms(values), field_words)
        if other:
            asserted.append(other)
            reasons.append(f"'{other}' is stated as current and is neither labelled value")
    if not reasons:
        toks = " ".join(t.word for t in tokenize(answer, cues.contractions))
        m = cues.rx["no_answer"].search(toks)
        return [], (f"Says it does not know ('{m.group(0)}')." if m else
                    "Names none of the arc's values and no other current value the rules can find.")
    return asserted, "; ".join(dict.fromkeys(reasons)) + "."
