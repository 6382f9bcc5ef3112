"""The LLM classifier: one rubric (``evidence_type``, ``truth_now`` or ``should_store``) and a way
to turn a model's answer into probabilities, recorded with every distribution:

* ``logprobs``: ask for the class name as the first word and read the top token log-probabilities
  of that first answer token; each token's mass goes to the class whose answer word it begins
  (``spec`` -> speculative), then the mapped mass is renormalized (the unmapped share is recorded).
  The reply itself must be a class name, and most of the mass must sit on class tokens, or the
  answer is invalid (re-asked with the problem sent back).
* ``votes``: ``samples`` answers sampled at temperature 1 with distinct seed keys; the
  probabilities are the vote shares over the valid votes, whose number is recorded beside every
  distribution; fewer than ``min_valid_votes`` valid votes is a failure, not a distribution.
* ``auto``: logprobs when the provider returns them, else votes (Anthropic returns none; some
  servers reject the request field, which also switches this classifier to votes), said once.

A valid answer is the reply itself (its first line, or a JSON field), never a class name found
somewhere in it: a reply that echoes the rubric's list ("- speculative: asserts ...") is invalid.
Every call states its output budget: a class name needs a handful of tokens.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable

from .. import rubrics
from ..corpora.context import format_context
from ..corpora.statements import Statement
from ..errors import ProviderError
from ..llm import CallFailed, Failed, Model, ModelRef, get_model, run_concurrent
from ..llm.batch import independent
from ..workspace import Workspace
from .classes import Distribution

TOP_LOGPROBS = 20  # the most OpenAI's API returns
VOTE_TEMPERATURE = 1.0
LOGPROB_TOKENS = 8  # logprobs are read from the first answer tokens only
ANSWER_TOKENS = 12  # a class name, perhaps with a full stop or a few words after it
MIN_MAPPED_MASS = 0.5  # of the first answer token's top-k mass, on class tokens
# rubric -> {answer word the prompt asks for: class stored}
ANSWERS: dict[str, dict[str, str]] = {
    "evidence_type": {
        "speculative": "speculation",
        "completed_event": "completed_event",
        "explicit_correction": "explicit_correction",
        "other": "other",
    },
    "truth_now": {"yes": "commit", "no": "hold"},
    "should_store": {"yes": "commit", "no": "hold"},
}
# Further words a free-text answer may use for a class (parsing votes only).
_ALSO = {
    "speculation": "speculation",
    "completed event": "completed_event",
    "explicit correction": "explicit_correction",
    "correction": "explicit_correction",
}
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_PREFIX = re.compile(
    r"^(?:(?:the|my)\s+)?(?:final\s+)?(?:answer|class(?:ification)?|label|"
    r"evidence[ _]type|category)(?:\s+is)?\s*[:=\-\u2013\u2014]?\s*",
    re.I,
)
_JSON_KEYS = ("answer", "label", "class", "evidence_type", "category", "type")


def _vocabulary(answers: dict[str, str]) -> dict[str, str]:
    words = {w.replace("_", " "): c for w, c in answers.items()} | dict(answers)
    if "speculative" in answers:
        words.update(_ALSO)
    return words


def read_answer(text: str, answers: dict[str, str]) -> str:
    """The class the reply answers, or ValueError saying why it is not an answer.

    Only the reply's first line counts (or the value of an ``answer``/``label`` JSON field): a
    class word that starts it, alone or followed by punctuation or a short explanation. A list
    item, a word followed by a colon (a definition), or a line naming two classes is no answer.
    """
    words = _vocabulary(answers)
    expected = ", ".join(answers)
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"the reply is empty; answer with one of: {expected}")
    line = stripped.splitlines()[0].strip()
    if line.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            value = next((obj[k] for k in _JSON_KEYS if isinstance(obj.get(k), str)), None)
            if value is None:
                raise ValueError(
                    f"the JSON reply has no answer field; answer with one of: {expected}"
                )
            line = value
    if _LIST_ITEM.match(line):
        raise ValueError(
            "the reply is a list item (a copy of the rubric's options?), not an "
            f"answer; answer with one word: {expected}"
        )
    low = line.lower().replace("\u2019", "'").strip(" \t*_`#>\"'")
    low = _PREFIX.sub("", low).strip(" \t*_`\"'")
    found = None
    for word in sorted(words, key=len, reverse=True):
        if re.match(rf"{re.escape(word)}(?![a-z_])", low):
            found = word
            break
    if found is None:
        token = low.split()[0] if low.split() else ""
        prefixes = {c for w, c in words.items() if len(token) >= 4 and w.startswith(token)}
        if token == low and len(prefixes) == 1:  # cut off by the output budget mid-word
            return prefixes.pop()
        raise ValueError(f"the reply {shown(line)} is not one of: {expected}")
    rest = low[len(found) :]
    if re.match(r"\s*[:=]", rest):
        raise ValueError(
            f"the reply {shown(line)} reads like a definition from the rubric, not an "
            f"answer; answer with one word: {expected}"
        )
    others = {
        c
        for w, c in words.items()
        if c != words[found] and re.search(rf"(?<![a-z_]){re.escape(w)}(?![a-z_])", rest)
    }
    if others:
        raise ValueError(
            f"the reply {shown(line)} names more than one class; answer with one word: {expected}"
        )
    return words[found]


def shown(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " ...")


def parse_answer(text: str, answers: dict[str, str]) -> str | None:
    """The class a reply answers, or None when it is not an answer (see ``read_answer``)."""
    try:
        return read_answer(text, answers)
    except ValueError:
        return None


def token_class(token: str, answers: dict[str, str]) -> str | None:
    """Which class an answer's first token starts (``spec`` -> speculation); None if none or many."""
    t = token.strip().lower().lstrip("\"'`*([").replace("\u2019", "'")
    if not t:
        return None
    hits = {
        cls
        for word, cls in answers.items()
        if word.startswith(t) or (t.startswith(word) and not t[len(word) : len(word) + 1].isalnum())
    }
    return hits.pop() if len(hits) == 1 else None


def distribution_from_logprobs(
    logprobs: list[dict[str, float]], answers: dict[str, str]
) -> Distribution | None:
    """From the first answer position whose top tokens name a class; None if none does, or if
    class tokens hold less than ``MIN_MAPPED_MASS`` of that position's mass (renormalizing a
    sliver would report near-certainty from a reply that was mostly something else)."""
    for position in logprobs:
        if not position:
            continue
        top = max(position, key=position.get)
        if not any(ch.isalnum() for ch in top):
            continue  # whitespace, a quote or markdown before the answer word
        mass: dict[str, float] = {}
        total = 0.0
        for token, lp in position.items():
            p = math.exp(lp)
            total += p
            cls = token_class(token, answers)
            if cls is not None:
                mass[cls] = mass.get(cls, 0.0) + p
        mapped = sum(mass.values())
        if not mass or mapped < MIN_MAPPED_MASS * total:
            return None
        probs = {cls: mass.get(cls, 0.0) for cls in dict.fromkeys(answers.values())}
        return Distribution(
            probs=probs,
            method=f"logprobs(top={TOP_LOGPROBS})",
            detail=f"mapped mass {mapped:.3f} of {total:.3f}",
        )
    return None


class ModelClassifier:
    kind = "evidence_type"
    shows_progress = True  # run_concurrent draws the bar (with cache hits and tokens)

    def __init__(
        self,
        ref: str | ModelRef,
        *,
        workspace: Workspace | None = None,
        rubric: str = "evidence_type",
        method: str = "auto",
        samples: int = 5,
        model: Model | None = None,
        progress: bool = True,
        min_valid_votes: int | None = None,
    ):
        """``ref``: the model, a spec or a ``ModelRef`` (its base URL and options go to the
        model); ``model``: one already made for it (a bounded or shared one)."""
        self.model = model or get_model(ref, workspace=workspace)
        self.rubric = rubrics.load(rubric)
        self.answers = ANSWERS[rubric]
        self.kind = "evidence_type" if rubric == "evidence_type" else "binary"
        self.method = method
        self.samples = samples
        self.min_valid_votes = min_valid_votes or max(1, math.ceil(samples / 2))
        self.progress = progress
        self.family = self.model.family
        self.rubric_ref = self.rubric.ref
        self.sha256 = self.rubric.sha256
        tag = method if method == "logprobs" else f"{method}:k={samples}"
        self.name = f"{self.model.spec}|{self.rubric.ref}|{tag}"
        self._no_logprobs = False
        self._lock = threading.Lock()

    def prompt(self, st: Statement) -> str:
        return self.rubric.fill(
            context=format_context(st.context), statement=st.text, speaker=st.speaker or "user"
        )

    def _read(self, text: str) -> str:
        return read_answer(text, self.answers)

    def _votes_instead(self, why: str) -> None:
        with self._lock:
            self._no_logprobs = True
        self.model.say(
            f"{self.model.label} {why}: classifying by votes (k={self.samples}) instead "
            "of token logprobs (--method votes avoids the attempt)"
        )

    def _by_logprobs(self, prompt: str, run: int) -> Distribution | None:
        try:
            resp = self.model.complete(
                prompt,
                temperature=0.0,
                logprobs=True,
                top_logprobs=TOP_LOGPROBS,
                purpose=f"classify.{self.rubric.name}",
                seed_key=f"run{run}" if run else "",
                max_tokens=LOGPROB_TOKENS,
                parse=self._read,
            )
        except CallFailed as e:
            rejects = (e.kind == "unsupported" and e.field in ("logprobs", "top_logprobs")) or (
                e.kind == "bad_request" and "logprob" in str(e).lower()
            )
            if rejects and self.method == "auto":
                self._votes_instead(f"rejects the logprobs request field ({e.field or 'logprobs'})")
                return None
            if rejects:
                raise ProviderError(
                    f"{self.model.label} rejects token logprobs: {e}; use --method votes (or auto)"
                ) from None
            raise
        if not resp.logprobs:
            if self.method == "logprobs":
                raise ProviderError(
                    f"{self.model.label} returned no token logprobs; use --method votes (or auto)"
                )
            self._votes_instead("returned no token logprobs")
            return None
        dist = distribution_from_logprobs(resp.logprobs, self.answers)
        if dist is None:
            raise CallFailed(
                f"{self.model.label} answered {shown(resp.text)}, but its first answer "
                "token's probability mass is mostly on tokens that start no class name",
                kind="invalid_output",
            )
        return dist

    def _by_votes(self, prompt: str, run: int) -> Distribution:
        counts: dict[str, int] = {}
        bad: list[str] = []

        def vote(i: int) -> None:
            try:
                resp = self.model.complete(
                    prompt,
                    temperature=VOTE_TEMPERATURE,
                    purpose=f"classify.{self.rubric.name}",
                    seed_key=f"run{run}:vote{i}",
                    max_tokens=ANSWER_TOKENS,
                    parse=self._read,
                )
            except CallFailed as e:
                if e.kind != "invalid_output" or self.samples == 1:
                    raise
                bad.append(e.problem)
                return
            counts[resp.parsed] = counts.get(resp.parsed, 0) + 1

        independent(vote, range(self.samples))  # --batch: all votes in one batch
        valid = self.samples - len(bad)
        if valid < self.min_valid_votes:
            raise CallFailed(
                f"{self.model.label}: only {valid} of {self.samples} votes named a "
                f"class (at least {self.min_valid_votes} needed for a probability); "
                f"e.g. {bad[0]}",
                kind="invalid_output",
                problem=bad[0],
            )
        probs = {cls: counts.get(cls, 0) for cls in dict.fromkeys(self.answers.values())}
        return Distribution(
            probs=probs,
            method=f"votes(k={self.samples})",
            detail=f"{valid} of {self.samples} votes valid",
            valid_votes=valid,
        )

    def plan(self, statement: Statement, run: int = 0) -> None:
        """Count the calls ``classify`` would make (dry runs, ``model.planned``): one logprobs
        call (auto, logprobs; with auto a server without logprobs adds the votes), or the votes."""
        prompt = self.prompt(statement)
        kw = dict(purpose=f"classify.{self.rubric.name}", parse=self._read)
        if self.method in ("auto", "logprobs") and not (
            self.method == "auto" and self._no_logprobs
        ):
            self.model.plan(
                prompt,
                temperature=0.0,
                logprobs=True,
                top_logprobs=TOP_LOGPROBS,
                seed_key=f"run{run}" if run else "",
                max_tokens=LOGPROB_TOKENS,
                **kw,
            )
            return
        for i in range(self.samples):
            self.model.plan(
                prompt,
                temperature=VOTE_TEMPERATURE,
                seed_key=f"run{run}:vote{i}",
                max_tokens=ANSWER_TOKENS,
                **kw,
            )

    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        prompt = self.prompt(statement)
        if self.method in ("auto", "logprobs") and not (
            self.method == "auto" and self._no_logprobs
        ):
            dist = self._by_logprobs(prompt, run)
            if dist is not None:
                return dist
        return self._by_votes(prompt, run)

    def classify_many(
        self,
        items: list[tuple[Statement, int]],
        on_result: Callable[[Statement, int, Distribution | None, str | None], None],
        concurrency: int = 4,
    ) -> None:
        for result in run_concurrent(
            lambda it: (it, self.classify(*it)),
            items,
            concurrency=concurrency,
            description=f"Classify ({self.model.display}, {self.rubric.ref})",
            usage=self.model.usage,
            progress=self.progress,
        ):
            if isinstance(result, Failed):
                st, run = result.item
                on_result(st, run, None, result.error, result.kind)
            else:
                (st, run), dist = result
                on_result(st, run, dist, None)
