"""Steps 2 and 3 of the version 2 rules: labelled values found as tokens, then sentences and
clauses (see the rule file's header for what each step reads)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._tokens import PUNCT_BREAK, Tok, past_form, tok_str, tokenize, value_token
from .cues import Cues

Forms = list[list[tuple[list[str], str]]]  # per value: (words, "full" | "short")


@dataclass
class Reading:
    """How one occurrence of labelled value ``value`` is read (steps 5-6): its frame, role, the
    cue that decided, and whether it asserts the value."""

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
class Clause:
    toks: list[Tok]
    sentence: int
    question: bool
    index: int = 0  # position in the sentence
    lead: str = ""  # the punctuation that ended the clause before it
    readings: list[Reading] = field(default_factory=list)

    def s(self, a: int = 0, b: int | None = None) -> str:
        return " ".join(tok_str(t) for t in self.toks[a:b])


# -- step 2: values -----------------------------------------------------------------------------
def value_forms(c: Cues, values: tuple[str, ...]) -> Forms:
    """Each value's full form and, for three words or more, the shorter forms that find it."""
    canon = []
    for v in values:
        toks = [t for t in tokenize(v, c.contractions) if t.kind == "w"]
        words = [c.person.get(t.word, t.word) for t in toks]
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


def mark_values(c: Cues, toks: list[Tok], forms: Forms) -> list[Tok]:
    """Each value occurrence (longest form first) becomes one placeholder token."""
    words = [(i, c.person.get(t.word, t.word)) for i, t in enumerate(toks) if t.kind == "w"]
    taken: set[int] = set()
    spans: list[tuple[int, int, int]] = []
    flat = []
    for vi, fs in enumerate(forms):
        for ws, kind in fs:
            flat.append((len(ws), kind == "full", vi, ws, kind))
    flat.sort(key=lambda x: (-x[1], -x[0]))
    for n, _, vi, ws, kind in flat:
        plurals = {ws[-1] + e for e in c.plural_endings}
        for k in range(len(words) - n + 1):
            cand = [w for _, w in words[k : k + n]]
            if cand[:-1] != ws[:-1] or (cand[-1] != ws[-1] and cand[-1] not in plurals):
                continue
            idx = [i for i, _ in words[k : k + n]]
            if any(i in taken for i in idx):
                continue
            if kind == "short" and not toks[idx[0]].orig[:1].isupper() and n < 4:
                continue
            spans.append((idx[0], idx[-1], vi))
            taken.update(range(idx[0], idx[-1] + 1))
    if not spans:
        return toks
    if c.split_name_gap:
        spans = _join_split_names(c, toks, sorted(spans))
    out: list[Tok] = []
    i = 0
    starts = {a: (b, vi) for a, b, vi in spans}
    while i < len(toks):
        if i in starts:
            b, vi = starts[i]
            out.append(Tok(value_token(vi), " ".join(t.orig for t in toks[i : b + 1]), "v", vi))
            i = b + 1
        else:
            out.append(toks[i])
            i += 1
    return out


def _join_split_names(
    c: Cues, toks: list[Tok], spans: list[tuple[int, int, int]]
) -> list[tuple[int, int, int]]:
    """Version 6 on: two occurrences of one value, different parts of its name, with at most
    [match] split_name_gap words between them, none a verb form, a coordinator, a break word or
    a subject word, and no punctuation but a comma, are one occurrence: the value's own name split by other words ("Okafor Dental on Elm
    Street" for "Okafor Dental, Elm Street"; "Tiny Trees, the outdoor preschool in Frick
    Park"). Read apart, the second part would be framed by the first part's words alone."""
    out = [spans[0]]
    for a, b, vi in spans[1:]:
        pa, pb, pvi = out[-1]
        between = toks[pb + 1 : a]
        words = [t.word for t in between if t.kind == "w"]
        first = {t.word for t in toks[pa : pb + 1]}
        if (
            vi == pvi
            and not first & {t.word for t in toks[a : b + 1]}  # parts, not a repetition
            and len(words) <= c.split_name_gap
            and all(t.kind == "w" or t.word == "," for t in between)
            and not any(
                w in c.verb_forms
                or past_form(w)
                or w.endswith("ing")
                or w in c.sets["coordinators"]
                or w in c.sets["break_words"]
                or w in c.sets["subject_words"]
                or w in c.sets["be_present"]
                or w in c.sets["have"]
                or w in c.sets["aux_past"]
                for w in words
            )
        ):
            out[-1] = (pa, b, vi)
        else:
            out.append((a, b, vi))
    return out


# -- step 3: sentences and clauses --------------------------------------------------------------
def sentences(c: Cues, text: str, forms: Forms) -> list[tuple[list[Tok], bool]]:
    """Each sentence's tokens (values marked) and whether it is a question back to the user."""
    out = []
    for sent in split_sentences(c, text):
        toks = mark_values(c, tokenize(sent, c.contractions), forms)
        for i, t in enumerate(toks):  # "in May", "May 3": the month, not the modal
            if t.word in c.sets["modal_months"] and (
                i
                and toks[i - 1].word in c.sets["month_may_before"]
                or i + 1 < len(toks)
                and toks[i + 1].word[:1].isdigit()
            ):
                t.word = f"{t.word}_month"
        s = " ".join(tok_str(t) for t in toks if t.kind != "p")
        question = False
        if sent.rstrip().endswith("?"):
            # a tag question states what comes before the tag
            tagged = re.search(r"(?:^|\s)(?:" + c.rx["tag"].pattern + r")\s*$", s) is not None
            question = not tagged
            if tagged:
                toks = _strip_tag(toks)
            elif (
                (first := next((t.word for t in toks if t.kind == "w"), ""))
                and first not in c.sets["interrogative"]
                and c.rx["hedges"].search(s)
            ):
                question = False  # "Probably X?": a hedged statement
                if cut := _asked_from(c, toks):  # "X, I think - unless Y has happened?"
                    out += [(toks[:cut], False), (toks[cut:], True)]
                    continue
        out.append((toks, question))
    return out


def _asked_from(c: Cues, toks: list[Tok]) -> int | None:
    """In a hedged statement ending in "?", where a condition after a break starts ("X, I think
    - unless Y has happened?"): that part is asked, not stated (version 4 on: [scope]
    asked_openers)."""
    openers = c.sets.get("asked_openers")
    for i in range(1, len(toks)) if openers else ():
        if toks[i].kind == "w" and toks[i].word in openers and toks[i - 1].kind == "p":
            return i
    return None


def split_sentences(c: Cues, text: str) -> list[str]:
    """Sentences: split after . ! ? before a space, and at newlines; not after a [scope]
    title ("Dr.") or a lone initial inside a name ("J. Smith"), but after a name that ends in
    a capital ("You're on AT&T. Visible ...")."""
    out: list[str] = []
    for line in text.splitlines():
        pieces = re.split(r"(?<=[.!?])\s+", line.strip())
        cur = ""
        for i, p in enumerate(pieces):
            cur = f"{cur} {p}" if cur else p
            last = cur.rstrip(".!?").split()[-1:] if cur.rstrip(".!?") else []
            w = last[0].lower() if last else ""
            nxt = pieces[i + 1].split()[:1] if i + 1 < len(pieces) else []
            if (
                cur.endswith(".")
                and (w in c.sets["titles"] or re.fullmatch(r"[A-Z]", last[0] if last else ""))
                # version 6 on: "... on Congress Ave. Your application ...": a title before a
                # capitalized [scope] title_breakers word ends its sentence
                and not (
                    nxt and nxt[0][:1].isupper() and nxt[0].lower() in c.sets["title_breakers"]
                )
            ):
                continue
            out.append(cur)
            cur = ""
        if cur:
            out.append(cur)
    return [x for x in out if x.strip()]


def _strip_tag(toks: list[Tok]) -> list[Tok]:
    # drop everything after the last comma or dash before the final "?"
    for i in range(len(toks) - 1, -1, -1):
        if toks[i].kind == "p" and toks[i].word in {",", "\u2014", "\u2013", "-"}:
            return toks[:i]
    return [t for t in toks if t.word != "?"]


def drop_ignored(c: Cues, toks: list[Tok]) -> list[Tok]:
    """Without the [frames] ignore asides ("I think", "if I recall")."""
    joined = " ".join(tok_str(t) for t in toks)
    drop: set[int] = set()
    for m in c.rx["ignore"].finditer(joined):
        a = joined[: m.start()].count(" ") if m.start() else 0
        n = m.group(0).count(" ") + 1
        drop.update(range(a, a + n))
    return [t for i, t in enumerate(toks) if i not in drop]


def clauses(c: Cues, toks: list[Tok], k: int, question: bool) -> list[Clause]:
    """One sentence's clauses (``k``: the sentence's index in its unit)."""
    out: list[Clause] = []
    cur: list[Tok] = []

    lead = [""]

    def flush():
        if cur:
            out.append(Clause(list(cur), k, question, len(out), lead[0]))
            cur.clear()
            lead[0] = ""

    for i, t in enumerate(toks):
        if t.kind == "p" and (t.word in PUNCT_BREAK or (t.word == "-" and 0 < i < len(toks) - 1)):
            flush()
            lead[0] = lead[0] or t.word
            continue
        if t.kind == "p":
            continue
        if t.kind == "w" and cur and t.word in c.sets["break_words"]:
            flush()
        elif t.kind == "v" and _embedded_subject(c, cur, toks[i + 1 : i + 3]):
            # "decided X wasn't worth it": the value is the subject of a negated clause
            flush()
        elif (
            t.kind == "w"
            and len(cur) >= 3
            and cur[0].word in c.sets["subordinators"]
            and t.word in c.sets["main_subjects"]
            and i + 1 < len(toks)
            and toks[i + 1].word in c.sets["main_aux"]
            and not any(x.word in c.sets["main_subjects"] for x in cur[2:])
        ):
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


def _embedded_subject(c: Cues, cur: list[Tok], after: list[Tok]) -> bool:
    """A value after a [scope] embedding_verbs verb (determiners between) and before a form of
    "be", "have" or an auxiliary with a negation ("decided X wasn't worth it"; version 5 on)."""
    if not c.sets["embedding_verbs"] or len(after) < 2:
        return False
    if after[0].word not in c.sets["be_present"] | c.sets["aux_past"] | c.sets["have"]:
        return False
    if not c.rx["negation"].fullmatch(after[1].word):
        return False
    words = [t.word for t in cur if t.kind == "w"]
    while words and words[-1] in c.sets["noun_determiners"]:
        words.pop()
    return bool(words) and words[-1] in c.sets["embedding_verbs"]
