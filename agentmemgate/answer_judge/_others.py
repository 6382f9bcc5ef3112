"""Step 9 of the version 2 rules: values the answer names that are neither labelled value.

``beside_names``: a capitalized name joined to a labelled value stated as current. ``other_value``:
with no labelled value asserted, the first current clause of the user's own state that names
something else (the target of a change made, or a capitalized name)."""

from __future__ import annotations

import re

from ._clauses import Clause, Forms, Reading, clauses, drop_ignored, sentences
from ._structure import Unit
from ._tokens import Tok, is_value_token, tok_str
from .cues import Cues
from .frames import governing_verb, past_cue


def stems(text: str) -> set[str]:
    """Content words by their first five letters."""
    return {w[:5] for w in re.findall(r"[a-z]{3,}", text.lower())}


def beside_names(c: Cues, readings: list[Reading]) -> list[str]:
    """A capitalized name joined by "and" to a labelled value stated as current, in the same
    verb phrase ("shop at X and sometimes at Y"): another current value."""
    glue = c.sets["adverbs"] | c.sets["skip"] | c.sets["determiners"] | c.sets["name_glue"]
    joins = c.sets["name_joins"]
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
            while (
                0 <= j < len(toks)
                and toks[j].kind == "w"
                and (toks[j].word in glue or toks[j].word in joins)
                and not toks[j].orig[:1].isupper()
            ):
                seen_join = seen_join or toks[j].word in joins
                j += step
            if not seen_join or not (0 <= j < len(toks)):
                continue
            t = toks[j]
            if (
                t.kind != "w"
                or not t.orig[:1].isupper()
                or t.word in c.sets["first_person"]
                or t.word in c.sets["time_names"]
                or t.word in c.sets["not_names"]
                or (j and toks[j - 1].word in c.sets["other_people"])
            ):
                continue
            k = j
            while (
                0 <= k + step < len(toks)
                and toks[k + step].kind == "w"
                and toks[k + step].orig[:1].isupper()
            ):
                k += step
            a, b = sorted((j, k))
            if a == 0 and step == -1 and b == a:
                continue  # a capitalized sentence opener, not a name
            out.append(" ".join(x.orig for x in toks[a : b + 1]).replace(" 's", "'s"))
    return list(dict.fromkeys(out))


def other_value(
    c: Cues,
    units: list[Unit],
    records: bool,
    forms: Forms,
    field_words: frozenset[str] = frozenset(),
) -> str | None:
    """The name of another current value, or None."""
    n_records = sum(1 for u in units if u.kind != "prose")
    for unit in units:
        if not unit.valid or (records and unit.kind == "prose"):
            continue
        if n_records >= 3 and field_words and not field_words & stems(unit.text):
            continue  # a list of memories about many things: only lines about the field
        for toks, question in sentences(c, unit.text, forms):
            if question:
                continue
            toks = drop_ignored(c, toks)
            if c.rx["no_answer"].search(" ".join(tok_str(t) for t in toks)):
                continue  # "Sorry, I couldn't find ...", "Unknown."
            cls = clauses(c, toks, 0, question)
            subject = unit.kind != "prose" or bool(cls and c.rx["subjects"].search(cls[0].s()))
            said = ""
            for cl in cls:
                name = _other_in(c, cl, unit.kind != "prose")
                if name:
                    return name
                piece = _predicate_after(c, cl)
                if piece is not None and subject:
                    before = f"{said} {cl.s(0, len(cl.toks) - len(piece.toks))}"
                    before = c.rx["abandoned"].sub(" ", before)  # "dropped the idea of X"
                    verb = next(
                        (
                            t.word
                            for t in piece.toks[1:]
                            if t.kind == "w" and t.word not in c.sets["adverbs"]
                        ),
                        "",
                    )
                    past = (
                        verb in c.change_past or verb in c.sets["past_verbs"] or verb.endswith("ed")
                    )
                    if not c.rx["negation"].search(before) and (
                        past or not c.rx["plan"].search(before)
                    ):
                        name = _other_in(c, piece, True)
                        if name:
                            return name
                said = f"{said} {cl.s()}"
    return None


def _predicate_after(c: Cues, cl: Clause) -> Clause | None:
    """A new predicate after "and"/"or" (a lower-case word, not a determiner, follows) and
    after the clause's last value: it shares the sentence's subject ("You gave up on X and
    shop at Y now")."""
    vpos = [i for i, t in enumerate(cl.toks) if t.kind == "v"]
    for k in range((vpos[-1] + 1) if vpos else 1, len(cl.toks) - 1):
        t, n = cl.toks[k], cl.toks[k + 1]
        if (
            t.word in c.sets["coordinators"]
            and n.kind == "w"
            and not n.orig[:1].isupper()
            and n.word not in c.sets["determiners"]
            and n.word not in c.sets["clause_subjects"]
        ):
            return Clause(cl.toks[k:], cl.sentence, cl.question, cl.index)
    return None


def _other_in(c: Cues, cl: Clause, record: bool) -> str | None:
    """The name of another current value in one clause, or None."""
    rx = c.rx
    words = [t for t in cl.toks if t.kind != "p"]
    if not words:
        return None
    joined = [tok_str(t) for t in words]
    found = _other_name(c, words, joined, record) or _other_target(c, words, joined)
    if not found:
        return None
    at, name = found
    before = " ".join(joined[:at])
    if any(
        rx[k].search(before)
        for k in (
            "plan",
            "negation",
            "offer",
            "pending",
            "abandoned",
            "choice",
            "mention",
            "future_start",
            "no_answer",
            "ended",
            "declined",
            "question_words",
        )
    ):
        return None
    after = " ".join(joined[at + len(name.split()) :])
    pa = rx["plan_after"].search(" ".join(after.split()[:3]))
    if pa and not (
        rx["service_nouns"].fullmatch(pa.group(0)) and after.split()[:1] == [pa.group(0)]
    ):
        return None
    if past_cue(c, before, "", False) and governing_verb(c, before)[0] not in c.change_past:
        return None
    return name


def _other_target(c: Cues, words: list[Tok], joined: list[str]):
    """The target of a change made: "moved your savings to a local bank"."""
    for i, w in enumerate(joined):
        if w in c.change_past:
            # "left X for Y": after a verb of leaving only "for" brings the target
            preps = (
                c.sets["left_target_preps"] if w in c.sets["left_verbs"] else c.sets["target_preps"]
            )
            for j in range(i + 1, len(joined)):
                if joined[j] in preps:
                    k = j + 1
                    while k < len(joined) and joined[k] in c.sets["determiners"]:
                        k += 1
                    np = []
                    while (
                        k < len(joined)
                        and joined[k] not in c.sets["np_stop"]
                        and not is_value_token(joined[k])
                    ):
                        np.append(words[k].orig)
                        k += 1
                    if np:
                        return k - len(np), " ".join(np)
                    break
    return None


def _other_name(c: Cues, words: list[Tok], joined: list[str], record: bool):
    """A capitalized name after the verb of a current clause about the user, or a bare
    capitalized answer ("Tidal.")."""
    s = " ".join(joined)
    links = c.sets["name_links"]
    bare = len(words) <= 5 and all(
        t.kind == "w" and (t.orig[:1].isupper() or t.orig[:1].isdigit() or t.word in links)
        for t in words
    )
    if not (bare or record or c.rx["subjects"].search(s)):
        return None
    start = 0 if bare else 1
    i = start
    while i < len(words):
        t = words[i]
        if t.kind == "v":
            return None  # only before the labelled values of the clause: the object slot
        if (
            t.kind == "w"
            and t.orig[:1].isupper()
            and t.word not in c.sets["first_person"]
            and t.word not in c.sets["time_names"]
            and t.word not in c.sets["not_names"]
            and not (i and words[i - 1].word in c.sets["other_people"])
        ):
            j = i
            while (
                j + 1 < len(words)
                and words[j + 1].kind == "w"
                and (
                    words[j + 1].orig[:1].isupper()
                    or words[j + 1].word in links
                    and j + 2 < len(words)
                    and words[j + 2].orig[:1].isupper()
                    or words[j + 1].orig[:1].isdigit()
                )
            ):
                j += 1
            return i, " ".join(w.orig for w in words[i : j + 1]).replace(" 's", "'s")
        i += 1
    return None
