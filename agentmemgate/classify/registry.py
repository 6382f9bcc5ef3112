"""Classifier specs: ``offline`` (the lexicon baseline, newest version; ``offline:lexicon.vN``
pins one) or a model spec ``provider:model``.

Every classifier has a stable ``name`` (what results are stored under), a ``family`` (for the
cross-family relabel rule), a ``kind`` (four evidence types, or binary commit/hold for the two
weaker rubrics) and ``classify_many``, which reports each answer as soon as it exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..corpora.statements import Statement
from ..errors import BadInput
from ..llm.ref import ModelRef
from ..progress import progress_bar
from ..registry import offline_version
from ..workspace import Workspace
from .classes import Distribution

RUBRICS = ("evidence_type", "truth_now", "should_store")
METHODS = ("auto", "logprobs", "votes")
OFFLINE_SPECS = ("offline", "offline:lexicon")  # the newest version; offline:lexicon.vN pins one

OnResult = Callable[[Statement, int, Distribution | None, str | None], None]


class Classifier(Protocol):
    name: str
    kind: str  # "evidence_type" or "binary"
    family: str
    rubric_ref: str
    sha256: str

    def classify(self, statement: Statement, run: int = 0) -> Distribution: ...


def classify_many(
    classifier: Classifier,
    items: list[tuple[Statement, int]],
    on_result: OnResult,
    concurrency: int = 1,
) -> None:
    """Answer (statement, run) pairs, calling ``on_result(statement, run, dist, error)`` for each."""
    many = getattr(classifier, "classify_many", None)
    if many is not None:
        many(items, on_result, concurrency=concurrency)
        return
    for statement, run in items:
        on_result(statement, run, classifier.classify(statement, run), None)


class Failures(list):
    """The error messages of a classify run, with a tally of their kinds (``kinds``)."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: dict[str, int] = {}

    def add(self, message: str, kind: str) -> None:
        self.append(message)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


def classify_and_store(
    classifier: Classifier,
    items: list[tuple[Statement, int]],
    store: Callable[[Statement, int, Distribution], None],
    *,
    description: str,
    concurrency: int = 1,
    progress: bool = False,
) -> Failures:
    """Answer every (statement, run) pair, storing each answer as it lands; return the errors.

    Storing one by one is what makes classify and label runs resumable.
    """
    errors = Failures()
    with progress_bar(
        description,
        len(items),
        enabled=progress and not getattr(classifier, "shows_progress", False),
    ) as advance:

        def on_result(
            st: Statement,
            run: int,
            dist: Distribution | None,
            error: str | None,
            kind: str = "error",
        ) -> None:
            if dist is None:
                errors.add(error or "no answer", kind)
            else:
                store(st, run, dist)
            advance(failed=dist is None)

        classify_many(classifier, items, on_result, concurrency=concurrency)
    return errors


def get_classifier(
    spec: str | ModelRef,
    *,
    workspace: Workspace | None = None,
    rubric: str = "evidence_type",
    method: str = "auto",
    samples: int = 5,
    progress: bool = False,
) -> Classifier:
    """``offline`` or a model classifier, as a spec or a ``ModelRef`` (its base URL, for an
    ``openai:`` classifier, and its model options, ``timeout``, ``max_tokens`` ..., go to the
    model)."""
    ref = ModelRef.parse(spec)
    spec, base_url = ref.spec, ref.base_url
    if rubric not in RUBRICS:
        raise BadInput(f"Unknown rubric {rubric!r}; choose one of: {', '.join(RUBRICS)}")
    if method not in METHODS:
        raise BadInput(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if base_url and not spec.startswith("openai:"):
        raise BadInput(
            f"--classifier-base-url {base_url} is for an openai: classifier (an OpenAI-compatible "
            f"server), not {spec}"
        )
    version = offline_version(spec, "lexicon", also=OFFLINE_SPECS)
    if version is not False:
        if rubric != "evidence_type":
            raise BadInput(
                f"The offline classifier answers the evidence_type rubric only; pass a "
                f"model spec (provider:model) for {rubric}"
            )
        from .lexicon import lexicon_classifier

        return lexicon_classifier(version)
    if samples < 1:
        raise BadInput("--samples must be at least 1")
    from .model_classifier import ModelClassifier

    return ModelClassifier(
        ref, workspace=workspace, rubric=rubric, method=method, samples=samples, progress=progress
    )
