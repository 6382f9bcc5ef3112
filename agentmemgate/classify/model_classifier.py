"""The LLM classifier: one rubric (``evidence_type``, ``truth_now`` or ``should_store``) and a way
to turn a model's answer into probabilities, recorded with every distribution:

* ``logprobs``: ask for the class name as the first word and read the top token log-probabilities
  of that first answer token; each token's mass goes to the class whose answer word it begins
  (``spec`` -> speculative), then the mapped mass is renormalized (the unmapped share is recorded).
* ``votes``: ``samples`` answers sampled at temperature 1 with distinct seed keys; the
  probabilities are the vote shares.
* ``auto``: logprobs when the provider returns them, else votes (Anthropic returns none; some
  OpenAI models reject the request, which also switches this classifier to votes).
"""

from __future__ import annotations

import math
import re
import threading
from typing import Callable

from .. import rubrics
from ..corpora._prompt import fill, format_context
from ..corpora.statements import Statement
from ..errors import ProviderError
from ..llm import CallFailed, Failed, Model, get_model, run_concurrent
from ..workspace import Workspace
from .classes import Distribution

TOP_LOGPROBS = 20  # the most OpenAI's API returns
VOTE_TEMPERATURE = 1.0
# rubric -> {answer word the prompt asks for: class stored}
ANSWERS: dict[str, dict[str, str]] = {
    "evidence_type": {"speculative": "speculation", "completed_event": "completed_event",
                      "explicit_correction": "explicit_correction", "other": "other"},
    "truth_now": {"yes": "commit", "no": "hold"},
    "should_store": {"yes": "commit", "no": "hold"},
}
# Further words a free-text answer may use for a class (parsing votes only).
_ALSO = {"speculation": "speculation", "completed event": "completed_event",
         "explicit correction": "explicit_correction", "correction": "explicit_correction"}


def parse_answer(text: str, answers: dict[str, str]) -> str | None:
    """The class of the first answer word in ``text`` (case, markdown and quotes ignored)."""
    low = text.lower().replace("\u2019", "'")
    words = dict(answers)
    if "speculative" in answers:
        words.update(_ALSO)
    best = None
    for word, cls in words.items():
        variants = {word, word.replace("_", " ")}
        for v in variants:
            m = re.search(rf"(?<![a-z_]){re.escape(v)}(?![a-z_])", low)
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), cls)
    return best[1] if best else None


def token_class(token: str, answers: dict[str, str]) -> str | None:
    """Which class an answer's first token starts (``spec`` -> speculation); None if none or many."""
    t = token.strip().lower().lstrip("\"'`*([").replace("\u2019", "'")
    if not t:
        return None
    hits = {cls for word, cls in answers.items()
            if word.startswith(t) or (t.startswith(word) and not t[len(word):len(word) + 1].isalnum())}
    return hits.pop() if len(hits) == 1 else None


def distribution_from_logprobs(logprobs: list[dict[str, float]], answers: dict[str, str]) -> Distribution | None:
    """From the first answer position whose top tokens name a class; None if none does."""
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
        if mass:
            mapped = sum(mass.values())
            probs = {cls: mass.get(cls, 0.0) for cls in dict.fromkeys(answers.values())}
            return Distribution(probs=probs, method=f"logprobs(top={TOP_LOGPROBS})",
                                detail=f"mapped mass {mapped:.3f} of {total:.3f}")
        return None  # the answer starts with a word that is not a class name
    return None


class ModelClassifier:
    kind = "evidence_type"
    shows_progress = True  # run_concurrent draws the bar (with cache hits and tokens)

    def __init__(self, spec: str, *, workspace: Workspace | None = None, rubric: str = "evidence_type",
                 method: str = "auto", samples: int = 5, base_url: str | None = None,
                 model: Model | None = None, progress: bool = True):
        self.model = model or get_model(spec, workspace=workspace, base_url=base_url)
        self.rubric = rubrics.load(rubric)
        self.answers = ANSWERS[rubric]
        self.kind = "evidence_type" if rubric == "evidence_type" else "binary"
        self.method = method
        self.samples = samples
        self.progress = progress
        self.family = self.model.family
        self.rubric_ref = self.rubric.ref
        self.sha256 = self.rubric.sha256
        tag = method if method == "logprobs" else f"{method}:k={samples}"
        self.name = f"{self.model.spec}|{self.rubric.ref}|{tag}"
        self._no_logprobs = False
        self._lock = threading.Lock()

    def prompt(self, st: Statement) -> str:
        return fill(self.rubric, context=format_context(st.context), statement=st.text,
                    speaker=st.speaker or "user")

    def _by_logprobs(self, prompt: str, run: int) -> Distribution | None:
        try:
            resp = self.model.complete(prompt, temperature=0.0, logprobs=True,
                                       top_logprobs=TOP_LOGPROBS, purpose=f"classify.{self.rubric.name}",
                                       seed_key=f"run{run}" if run else "")
        except CallFailed as e:
            if self.method == "auto" and e.kind == "bad_request":  # e.g. a model without logprobs
                with self._lock:
                    self._no_logprobs = True
                return None
            raise
        if not resp.logprobs:
            with self._lock:
                self._no_logprobs = True
            if self.method == "logprobs":
                raise ProviderError(f"{self.model.spec} returned no token logprobs; "
                                    "use --method votes (or auto)")
            return None
        dist = distribution_from_logprobs(resp.logprobs, self.answers)
        if dist is None:
            raise CallFailed(f"{self.model.spec} answered {resp.text[:60]!r}, not a class name",
                             kind="invalid_output")
        return dist

    def _by_votes(self, prompt: str, run: int) -> Distribution:
        counts: dict[str, int] = {}
        bad: list[str] = []
        for i in range(self.samples):
            resp = self.model.complete(prompt, temperature=VOTE_TEMPERATURE,
                                       purpose=f"classify.{self.rubric.name}",
                                       seed_key=f"run{run}:vote{i}")
            cls = parse_answer(resp.text, self.answers)
            if cls is None:
                bad.append(resp.text[:40])
            else:
                counts[cls] = counts.get(cls, 0) + 1
        if not counts:
            raise CallFailed(f"{self.model.spec} gave no class name in {self.samples} votes "
                             f"(e.g. {bad[0]!r})", kind="invalid_output")
        probs = {cls: counts.get(cls, 0) for cls in dict.fromkeys(self.answers.values())}
        detail = f"{len(bad)} of {self.samples} votes unparsable" if bad else ""
        return Distribution(probs=probs, method=f"votes(k={self.samples})", detail=detail)

    def classify(self, statement: Statement, run: int = 0) -> Distribution:
        prompt = self.prompt(statement)
        if self.method in ("auto", "logprobs") and not (self.method == "auto" and self._no_logprobs):
            dist = self._by_logprobs(prompt, run)
            if dist is not None:
                return dist
        return self._by_votes(prompt, run)

    def classify_many(self, items: list[tuple[Statement, int]],
                      on_result: Callable[[Statement, int, Distribution | None, str | None], None],
                      concurrency: int = 4) -> None:
        for result in run_concurrent(lambda it: (it, self.classify(*it)), items,
                                     concurrency=concurrency, description=f"Classify {self.name}",
                                     usage=self.model.usage, progress=self.progress):
            if isinstance(result, Failed):
                st, run = result.item
                on_result(st, run, None, result.error)
            else:
                (st, run), dist = result
                on_result(st, run, dist, None)
