"""A version 2 rule file (``answer_cues.vN.toml``, N >= 2) compiled for the reader.

Cue lists become whole-token regular expressions over space-joined tokens (``rx``) or sets of
token strings (``sets``). Version 2's reader held a few words in its code; they are data now, in
``reader_words.v2.toml``, read with version 2 only (its rule file stays byte for byte as it was
released). A rule file from version 3 on holds those keys itself.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cache
from pathlib import Path

from ..errors import BadInput
from ._tokens import norm, tokenize

READER_WORDS_V2 = Path(__file__).with_name("reader_words.v2.toml")


def _rule_data(raw: bytes, name: str) -> dict:
    """The rule file's tables, with version 2's reader words added where it is version 2."""
    data = tomllib.loads(raw.decode("utf-8"))
    words = tomllib.loads(READER_WORDS_V2.read_text("utf-8"))
    if int(data["version"]) == 2:
        for table, keys in words.items():
            data[table] = {
                **data.get(table, {}),
                **{k: v for k, v in keys.items() if k not in data.get(table, {})},
            }
    for table, keys in words.items():
        for k in keys:
            if k not in data.get(table, {}):
                raise BadInput(
                    f"{name} has no [{table}] {k}: from version 3 on a rule file holds "
                    f"every word its reader reads (see {READER_WORDS_V2.name})"
                )
    return data


class Cues:
    """Cue lists compiled to whole-token regular expressions over space-joined tokens."""

    def __init__(self, raw: bytes, name: str = "the rule file"):
        data = _rule_data(raw, name)
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.version = int(data["version"])
        m = data["match"]
        self.contractions = {k: v for k, v in m["contractions"].items()}
        self.person = dict(m["person"])
        self.articles = set(m["articles"])
        self.plural_endings = tuple(m["plural_endings"])
        st = data["structure"]
        self.open_dates = {norm(x) for x in st["open_dates"]}
        self.line_prefixes = [re.compile(p, re.I) for p in st["line_prefixes"]]
        self.boilerplate = [re.compile(p, re.I) for p in st["boilerplate"]]
        self.date_range = re.compile(st["date_range"])
        self.fact_line, self.valid_line, self.valid_until, self.range_end = (
            re.compile(st[k], re.I) for k in ("fact_line", "valid_line", "valid_until", "range_end")
        )
        # version 3 on: records marked invalid since a date, relation lines, plan relations
        # (absent from a version 2 file, whose reading they leave as it was)
        self.invalid_marker = (
            re.compile(st["invalid_marker"], re.I) if "invalid_marker" in st else None
        )
        self.relation_line = re.compile(st["relation_line"]) if "relation_line" in st else None
        self.plan_relations = [re.compile(p) for p in st.get("plan_relations", [])]
        # version 4 on: a self-correction in prose takes back what came before it
        self.retraction = re.compile(st["retraction"], re.I) if "retraction" in st else None
        sc = data["scope"]
        self.sets = {k: set(self._words(v)) for k, v in sc.items() if isinstance(v, list)}
        self.rx: dict[str, re.Pattern] = {}
        roles, frames = data["roles"], data["frames"]
        self.sets["source_needs_change"] = set(self._words(roles["source_needs_change"]))
        self.sets["past_verbs"] = set(self._words(frames["past_verbs"]))
        self.sets["subject_words"] = set(self._words(sc["subjects"])) | self.sets["first_person"]
        self.sets["clause_subjects"] = self.sets["subject_words"] | self.sets["new_clause_words"]
        for k in ("tag", "subjects"):
            self.rx[k] = self._rx(sc[k])
        for table in (roles, frames):
            for k, v in table.items():
                if isinstance(v, list):
                    self.rx[k] = self._rx(v)
        self.neg_reach = int(frames["neg_reach"])
        # version 4 on (0: a version 3 file): how far a plan cue may follow the user in a
        # value's description ("X is where you're thinking of moving")
        self.complement_reach = int(frames.get("complement_reach", 0))
        self.mention_gerund = bool(frames.get("mention_gerund", False))  # version 4 on
        # version 5 on: "both" only in a stated clause; anaphors only in the user's own acts
        self.both_needs_statement = bool(frames.get("both_needs_statement", False))
        self.anaphor_needs_user = bool(frames.get("anaphor_needs_user", False))
        self.sets.setdefault("embedding_verbs", set())  # version 5 on ([scope])
        for k in ("complement_links", "role_links", "relative_links"):  # version 4 on
            self.sets[k] = set(self._words(frames.get(k, [])))
        self.label_line = re.compile(st["label_line"]) if "label_line" in st else None
        # version 6 on (absent: as version 5): a value's name split by its own words is one
        # occurrence; a possessive before a pending noun is not a habit's subject ("your
        # application"); a subject-predicate-object triple is a record read by its predicate
        self.split_name_gap = int(m.get("split_name_gap", 0))
        self.sets.setdefault("pending_possessives", set())
        self.sets.setdefault("title_breakers", set())
        self.triple_repr = re.compile(st["triple_repr"]) if "triple_repr" in st else None
        self.triple_keys = tuple(st.get("triple_keys", ()))
        # version 7 on: a "Label: value" line read as its label's words in lists too
        self.label_in_lines = bool(st.get("label_in_lines", False)) and self.label_line is not None
        # version 9 on: BEYOND reaches the clauses up to the next value; a list nested under a
        # "key:" line reads as the key's words before each item (YAML: "researching:\n  - X")
        self.beyond_to_next_value = bool(frames.get("beyond_to_next_value", False))
        self.pending_target = bool(frames.get("pending_target", False))
        self.came_true_negated = bool(frames.get("came_true_negated", False))
        self.list_headers = re.compile(st["list_header"]) if "list_header" in st else None
        self.json_keys = bool(st.get("json_keys", False))
        dets = sorted(self.sets["noun_determiners"])
        self.rx["past_setting"] = re.compile(
            r"(?<!\S)(?:"
            + "|".join(
                re.escape(w) for w in sorted(self.sets["setting_preps"], key=len, reverse=True)
            )
            + r")(?: (?:"
            + "|".join(map(re.escape, dets))
            + r"))+ (?:"
            + "|".join(map(re.escape, self._words(frames["past_adjectives"])))
            + r")(?!\S)"
        )
        # "X or Y": the words between two values (NEAR of the second), and after the first
        joins = "|".join(map(re.escape, self._words(frames["choice_joins"])))
        dets = "|".join(map(re.escape, self._words(frames["choice_determiners"])))
        self.rx["or_before"] = re.compile(rf"(?:\S+ )?(?:{joins})(?: (?:{dets}))?")
        self.rx["or_after"] = re.compile(rf"(?:{joins})(?: (?:{dets}))?")
        self.rx["pending_passive"] = re.compile(
            r"(?<!\S)(?:"
            + "|".join(map(re.escape, self._words(frames["pending_passive"])))
            + r") \S+ed(?!\S)"
        )
        self.change_past = set(self._words(roles["change_past"]))
        self.change_ing = set(self._words(roles["change_ing"]))
        for k in (
            "change_present",
            "source_then_target",
            "change_present_subjects",
            "service_articles",
            "service_preps",
        ):
            self.sets[k] = set(self._words(roles[k]))
        for k in (
            "temporal",
            "span_openers",
            "time_units",
            "near_miss",
            "declined_adjacent",
            "choice_joins",
            "choice_with_decision",
            "dating_past",
            "then_words",
            "not_completed_words",
        ):
            self.sets[k] = set(self._words(frames[k]))
        self.sets["aux_past"] = set(self._words(sc["auxiliaries"]))
        self.not_both = self._words(sc["not_both"])
        self.verb_forms = {
            w
            for k in ("change_past", "change_ing", "change_present")
            for w in self._words(roles[k])
            if " " not in w
        }
        self.verb_forms |= {
            w.rstrip("*") for w in self._words(frames["past_verbs"]) if " " not in w
        }

    def plan_relation(self, name: str) -> bool:
        """Whether a graph relation's name names a plan (version 3 on)."""
        padded = f"_{name.upper()}_"
        return any(p.search(padded) for p in self.plan_relations)

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


@cache
def load_cues(path: Path) -> Cues:
    return Cues(path.read_bytes(), path.name)
