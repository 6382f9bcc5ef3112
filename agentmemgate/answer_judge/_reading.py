"""Steps 4 to 7 over a whole answer: every occurrence of every labelled value read in its scope
(``frames``), the purpose phrase after it, and the anaphors and "both" that point back to it."""

from __future__ import annotations

from ._clauses import Clause, Forms, Reading, clauses, drop_ignored, sentences
from ._structure import Unit
from ._tokens import Tok, value_token
from .cues import Cues
from .frames import read_frame, scope_of


def read_units(c: Cues, units: list[Unit], forms: Forms) -> list[Reading]:
    """Every occurrence's reading, in the order the answer names them."""
    readings: list[Reading] = []
    order = 0
    for ui, unit in enumerate(units):
        all_clauses: list[list[Clause]] = []
        for k, (toks, question) in enumerate(sentences(c, unit.text, forms)):
            all_clauses.append(clauses(c, drop_ignored(c, toks), k, question))
        for k, sentence in enumerate(all_clauses):
            sentence_tail = [cl.s() for cl in sentence]
            for ci, cl in enumerate(sentence):
                prev_vi = None
                for ti, t in enumerate(cl.toks):
                    if t.kind != "v":
                        continue
                    order += 1
                    if not unit.valid:
                        r = Reading(t.value, "invalid", "state", unit.why, False, ui, order)
                    else:
                        r = read_frame(
                            scope_of(c, cl, ti, sentence, ci, sentence_tail, prev_vi, cl.readings)
                        )
                        r.unit, r.order = ui, order
                        r.conclusion = c.rx["conclusion"].match(cl.s()) is not None
                        r.purpose = purpose(c, cl, ti)
                        r.where = (cl, ti)
                    cl.readings.append(r)
                    readings.append(r)
                    prev_vi = ti
            # step 7: anaphors and "both"
            if unit.valid:
                _anaphors(c, all_clauses, k, readings, ui)
    return readings


def purpose(c: Cues, cl: Clause, ti: int) -> frozenset | None:
    """Step 8: the stems of a purpose phrase right after the value ("X for work")."""
    words = []
    for t in cl.toks[ti + 1 :]:
        if t.kind == "v" or t.word in c.sets["coordinators"]:
            break
        if t.kind == "w":
            words.append(t.word)
    while words and words[0] in c.sets["adverbs"]:
        words.pop(0)
    if not words or words[0] not in c.sets["purpose_words"]:
        return None
    stems = frozenset(
        w[:5]
        for w in words[1:]
        if len(w) >= 3 and w.isalpha() and w not in c.sets["field_stopwords"]
    )
    return stems or None


def _anaphors(c: Cues, all_clauses: list[list[Clause]], k: int, readings: list[Reading], ui: int):
    """Step 7 for sentence ``k``: "it"/"them"/"there" read in their clause for the last value
    named before them; "both" makes the values of this sentence and the one before current."""
    sentence = all_clauses[k]
    pool = [cl for cl in (all_clauses[k - 1] if k else []) + sentence]
    pieces: list[tuple[Clause, Clause]] = []  # (clause read, clause it stands in)
    for cl in sentence:
        vpos = [i for i, t in enumerate(cl.toks) if t.kind == "v"]
        if not vpos:
            pieces.append((cl, cl))
            continue
        # a coordinated verb phrase after the clause's last value ("gave X a try and stuck
        # with it") is read on its own
        co = next(
            (
                i
                for i in range(vpos[-1] + 1, len(cl.toks))
                if cl.toks[i].word in c.sets["coordinators"]
            ),
            None,
        )
        if co is not None:
            pieces.append((Clause(cl.toks[co:], cl.sentence, cl.question, cl.index), cl))
    for cl, home in pieces:
        words = [t.word for t in cl.toks]
        s = " ".join(words)
        if any(w in c.sets["both"] for w in words) and not any(x in s for x in c.not_both):
            blockers = ("plan", "negation", "past") + (
                ("mention", "mentioned_after", "no_answer") if c.both_needs_statement else ()
            )
            if not any(c.rx[k].search(s) for k in blockers):
                for p in pool:
                    for r in p.readings:
                        if not r.asserted:
                            readings.append(
                                Reading(
                                    r.value, "current", r.role, f"'both' ('{s}')", True, ui, 10**6
                                )
                            )
            continue
        idx = [i for i, w in enumerate(words) if w in c.sets["anaphors"] and i > 0]
        if not idx or (c.anaphor_needs_user and not _users_act(c, words[: idx[0]])):
            continue
        prior = [r for p in pool[: pool.index(home) + (home is not cl)] for r in p.readings]
        if not prior:
            continue
        ref = prior[-1]
        fake = Clause(
            [
                Tok(value_token(ref.value), "", "v", ref.value) if i == idx[0] else t
                for i, t in enumerate(cl.toks)
            ],
            cl.sentence,
            cl.question,
            cl.index,
        )
        r = read_frame(scope_of(c, fake, idx[0], [fake], 0, [""], None, []))
        if r.asserted and r.frame in ("current", "done"):
            readings.append(
                Reading(
                    ref.value,
                    r.frame,
                    r.role,
                    f"{r.cue}, through '{words[idx[0]]}' ('{s}')",
                    True,
                    ui,
                    10**6,
                )
            )


def _users_act(c: Cues, before: list[str]) -> bool:
    """Whether the anaphor is the object of the user's act: the words before it open with a
    subject word or a verb ("and now use it"), not with a noun phrase or another person ("the
    landlord rented it"), and it is not itself the subject ("and it's unclear which")."""
    skip = c.sets["coordinators"] | c.sets["break_words"] | c.sets["adverbs"]
    words = [w for w in before if w.isalnum() or w.startswith("'")]
    while words and words[0] in skip:
        words.pop(0)
    if not words:  # the anaphor is the clause's subject ("and it's unclear which")
        return False
    if words[0] in c.sets["subject_words"]:
        return True
    return words[0] not in c.sets["determiners"] and words[0] not in c.sets["other_people"]
