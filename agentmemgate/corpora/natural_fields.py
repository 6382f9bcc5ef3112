"""One value-free field per natural question, by a documented rule (``natural-field.v1``).

Component systems track one frozen field per conversation (the paper fixes fields before each
run); a natural question has none, so one is derived from the question's words alone:

1. Lower-case the question; for LoCoMo drop the name of the person it asks about (and its "'s"):
   that person plays the user's part.
2. Cut it at the first clause marker after its second word ("since", "when", "before", "after",
   "during", "while", "if", "compared", "than", "so far"): what follows dates the question, it
   does not name the attribute.
3. The question form gives the head: "how many" -> "number of", "how much" -> "amount of",
   "how long" -> "duration of", "how often" -> "frequency of", "what time" -> "time of",
   "what day" -> "day of", "where" -> "place of", "when" -> "date of", "who" -> "person";
   "what"/"which", and yes/no questions ("do I ...", "is my ..."), give no head.
4. The remaining words minus stop words (pronouns, auxiliaries, articles, "current", "now",
   ...), at most six, joined with "_" after the head: "Where do I currently keep my old
   sneakers?" -> ``place_of_keep_old_sneakers``.
5. Description "The user's " + the attribute in words; probe question "What is the user's
   current " + the same words + "?". Nothing else is read: not the answer, not the sessions.

An LLM fielder (``LLMFielder``, ``--fielder provider:model``, rubric ``natural_field``) may name
the attribute instead of steps 1-4; it sees the question (and who it is about) only, never the
answer or the sessions. Its name is normalized to snake_case; the description and probe question
come from that name alone as in step 5, and the same refusal applies.

Refusal (the paper's value-free check, made strict for sentence-like gold answers): the field is
refused when its text contains the gold answer as a phrase (``FieldSpec.leaked_values``) or any
content word of the gold answer (the same stop words removed, a plural "s" ignored), or when the
rule leaves no content word. A refused item keeps ``field = None`` and the reason; component
systems do not run on it (reports count them), answering systems still get the question.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..schema import FieldSpec, normalize_text

if TYPE_CHECKING:
    from ..llm.ref import ModelRef

FIELD_RULE = "natural-field.v1"
MAX_WORDS = 6
_HEADS = (  # (leading words, head), longest first
    ("how many", "number of"),
    ("how much", "amount of"),
    ("how long", "duration of"),
    ("how often", "frequency of"),
    ("what time", "time of"),
    ("what day", "day of"),
    ("where", "place of"),
    ("when", "date of"),
    ("who", "person"),
    ("whom", "person"),
)
_MARKERS = (
    "since",
    "when",
    "before",
    "after",
    "during",
    "while",
    "if",
    "compared",
    "than",
    "so far",
    "until",
)
STOP = frozenset(
    """
a an the of to in on at for from with by about as into over and or but not no
i me my mine myself we our us you your yours he him his she her they them their it its
do does did doing done is am are was were be been being have has had having will would shall
should can could may might must get got getting go going
what which who whom whose where when why how that this these those there here
current currently now still today presently anymore again ever yet so far just really
answer yes
""".split()
)


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def content_words(text: str) -> list[str]:
    return [w for w in normalize_text(text).replace("'", " ").split() if w not in STOP]


def field_words(question: str, subject: str | None = None) -> list[str]:
    """Steps 1-4: the attribute's words (head words first); empty when nothing is left."""
    q = " " + normalize_text(question).replace("'", " ' ") + " "
    if subject:
        for part in normalize_text(subject).split():
            q = re.sub(rf" {re.escape(part)}(?: ' s| s)? ", " ", q)
    q = re.sub(r" ' ", " ", q)
    words = q.split()
    for i, w in enumerate(words):
        if i >= 2 and (w in _MARKERS or " ".join(words[i : i + 2]) in _MARKERS):
            words = words[:i]
            break
    text = " ".join(words)
    head: list[str] = []
    for lead, h in _HEADS:
        if text == lead or text.startswith(lead + " "):
            head, text = h.split(), text[len(lead) :]
            break
    rest = [w for w in text.split() if w not in STOP and not w.isdigit()]
    if not rest and head[-1:] == ["of"]:
        head = head[:-1]
    return (head + rest[:MAX_WORDS]) if (rest or head) else []


def field_from_words(words: list[str]) -> FieldSpec | None:
    """Step 5: the field named by ``words`` (None when they name nothing)."""
    if not [
        w
        for w in words
        if w
        not in (
            "of",
            "number",
            "amount",
            "duration",
            "frequency",
            "time",
            "day",
            "place",
            "date",
            "person",
        )
    ]:
        return None
    attribute = "_".join(re.sub(r"[^a-z0-9]", "", w) for w in words if re.sub(r"[^a-z0-9]", "", w))
    if not attribute or not attribute[0].isalpha():
        attribute = "q_" + attribute
    phrase = attribute.replace("_", " ")
    return FieldSpec(
        attribute=attribute,
        description=f"The user's {phrase}",
        probe_question=f"What is the user's current {phrase}?",
    )


def derive_field(question: str, subject: str | None = None) -> FieldSpec | None:
    """The rule's field for ``question``; None when no word is left to name an attribute."""
    return field_from_words(field_words(question, subject))


TEMPLATE_WORDS = ["snake", "case", "name"]  # the rubric's answer template


class FieldAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    attribute: str


class LLMFielder:
    """The attribute named by a model (rubric ``natural_field``); ``derive`` raises
    ``llm.CallFailed`` when no valid answer could be had."""

    def __init__(self, fielder: str | ModelRef, *, workspace=None, model=None, **model_options):
        """``fielder``: a model spec or a ``ModelRef`` (its base URL and options go to the
        model; ``model_options`` add to them)."""
        from .. import rubrics
        from ..llm import get_model

        self.model = model or get_model(fielder, workspace=workspace, **model_options)
        self.rubric = rubrics.load("natural_field")
        self.name = f"llm:{self.rubric.ref}@{self.model.spec}"

    def prompt(self, question: str, subject: str | None) -> str:
        return self.rubric.render(question=question, subject=subject or "the user")

    def plan(self, question: str, subject: str | None = None) -> bool:
        """``derive`` in a dry run: the call counted on ``model.planned``, not made."""
        return self.model.plan(
            self.prompt(question, subject), schema=FieldAnswer, temperature=0.0, max_tokens=64
        )

    def derive(self, question: str, subject: str | None = None) -> FieldSpec | None:
        """The model's field; None when it names nothing usable (no word, or the template's
        placeholder ``snake_case_name`` echoed back)."""
        resp = self.model.complete(
            self.prompt(question, subject),
            schema=FieldAnswer,
            temperature=0.0,
            purpose="natural.field",
            max_tokens=64,
        )
        words = re.sub(r"[^a-z0-9]+", " ", resp.parsed.attribute.lower()).split()[:MAX_WORDS]
        if words == TEMPLATE_WORDS:  # the rubric's placeholder echoed back (a small model does)
            return None
        return field_from_words(words)


def refusal(field: FieldSpec | None, gold: str, values: list[str] = ()) -> str | None:
    """Why ``field`` may not be used (it names the answer), or None when it is value-free."""
    if field is None:
        return "the rule leaves no word of the question to name an attribute"
    leaked = field.leaked_values([gold, *values])
    if leaked:
        return f"the field contains the answer {leaked[0]!r}"
    gold_words = {_stem(w) for v in (gold, *values) for w in content_words(v)}
    text = " ".join([field.attribute.replace("_", " "), field.description, field.probe_question])
    shared = sorted({w for w in content_words(text) if _stem(w) in gold_words})
    if shared:
        return f"the field contains word(s) of the gold answer: {', '.join(shared)}"
    return None
