"""The systems the evaluation runs, by name: ``get_system(name) -> (SystemInfo, factory)``.

Names (Sections 4, 6 and Appendix A.1):

==============================  ==========================================================
``literal-ungated``             literal extraction, every match committed
``literal-gated``               literal extraction, AgentMemGate (Algorithm 1)
``cautious-ungated``            cautious extraction, every match committed (prompt-only baseline)
``cautious-gated``              cautious extraction, AgentMemGate, plan-frame retry on
``plan-typed-literal``          literal, speculation committed as masked plans, refresh-confirm
``plan-typed-cautious``         cautious (retry on), masked plans, refresh-confirm reading
``plan-typed-literal-strict``   as ``plan-typed-literal`` under the strict reading
``plan-typed-cautious-strict``  as ``plan-typed-cautious`` under the strict reading
==============================  ==========================================================

Variants as bracketed options, combinable: ``[retry]`` / ``[no-retry]`` (the plan-frame retry on
or off: ``cautious-gated[no-retry]``, ``cautious-ungated[retry]``), ``[permissive]`` (the
Section 6.3 second matcher call after a decline), ``[oracle]`` (extractor and matcher read the
truth values; the factory then needs ``truth=``). ``SystemInfo.name`` is the canonical spelling
(options in a fixed order, defaults dropped: ``cautious-gated[retry]`` is ``cautious-gated``).

``model="offline"`` gives the offline rule components; ``model="provider:model"`` the LLM
components on that model through the LLM layer (workspace cache and call log, so a re-run
repeats no answered call), the classifier being ``classify``'s ModelClassifier on the same model
unless ``classifier=`` names another (``"offline"`` for the lexicon). ``concurrency`` bounds the
model calls in flight across every system made for the same model, however many conversations
the caller runs at once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BadInput
from ..llm.ref import ModelRef
from ..registry import Registry

if TYPE_CHECKING:  # the components are imported when a system is built: names cost nothing
    from ..workspace import Workspace
    from .system import MemorySystem, SystemInfo


@dataclass(frozen=True)
class _Base:
    style: str
    routing: str  # "ungated", "gated", "plan-typed"
    reading: str = ""  # plan-typed: "refresh" or "strict"
    retry: bool = False  # the default

    def describe(self) -> str:
        style = {
            "literal": "literal extraction (records stated values, after Graphiti)",
            "cautious": "cautious extraction (records plans as plans, after Mem0)",
        }[self.style]
        routing = {
            "ungated": "gate off: every matched tuple is committed",
            "gated": "AgentMemGate (Algorithm 1): speculation staged with resolution predicates, "
            "promoted or discarded by the checker; completed events, corrections and "
            "other statements committed",
            "plan-typed": f"plan-typed baseline (A.1): speculation committed as a masked plan, "
            f"{'refresh-confirm' if self.reading == 'refresh' else 'strict'} reading",
        }[self.routing]
        return f"{style}; {routing}"


BASES: Registry[_Base] = Registry("memory system")
BASES.update(
    {
        "literal-ungated": _Base("literal", "ungated"),
        "literal-gated": _Base("literal", "gated"),
        "cautious-ungated": _Base("cautious", "ungated"),
        "cautious-gated": _Base("cautious", "gated", retry=True),
        "plan-typed-literal": _Base("literal", "plan-typed", "refresh"),
        "plan-typed-cautious": _Base("cautious", "plan-typed", "refresh", retry=True),
        "plan-typed-literal-strict": _Base("literal", "plan-typed", "strict"),
        "plan-typed-cautious-strict": _Base("cautious", "plan-typed", "strict", retry=True),
    }
)
OPTIONS = ("retry", "no-retry", "permissive", "oracle")
DEFAULT_CONCURRENCY = 16
_NAME = re.compile(r"^\s*([a-z][a-z\-]*)\s*(?:\[([^\]]*)\])?\s*$")


def system_names() -> list[str]:
    """The base names; each takes the bracketed options of ``OPTIONS``."""
    return list(BASES)


def parse_name(name: str) -> tuple[str, bool, bool, bool]:
    """``"cautious-gated[no-retry,oracle]"`` -> (base, retry, permissive, oracle); one-line errors."""
    m = _NAME.match(name or "")
    choices = (
        f"choose one of: {', '.join(BASES)} (options: [{', '.join(OPTIONS)}], e.g. "
        f"literal-gated[oracle,permissive])"
    )
    if not m or m.group(1) not in BASES:
        raise BASES.unknown(name, choices)
    base = BASES[m.group(1)]
    opts = [o.strip() for o in (m.group(2) or "").split(",") if o.strip()]
    bad = [o for o in opts if o not in OPTIONS]
    if bad:
        raise BadInput(f"Unknown option {bad[0]!r} in {name!r}; options: {', '.join(OPTIONS)}")
    if "retry" in opts and "no-retry" in opts:
        raise BadInput(
            f"{name!r} asks for the retry both on and off; pick one of [retry], [no-retry]"
        )
    retry = True if "retry" in opts else False if "no-retry" in opts else base.retry
    return m.group(1), retry, "permissive" in opts, "oracle" in opts


def canonical(base: str, retry: bool, permissive: bool, oracle: bool) -> str:
    opts = []
    if retry != BASES[base].retry:
        opts.append("retry" if retry else "no-retry")
    if permissive:
        opts.append("permissive")
    if oracle:
        opts.append("oracle")
    return base + (f"[{','.join(opts)}]" if opts else "")


def twin_of(base: str, permissive: bool, oracle: bool) -> str | None:
    """The same pipeline with the gate off: the ungated system of the same style (no retry)."""
    b = BASES[base]
    if b.routing == "ungated":
        return None
    return canonical(f"{b.style}-ungated", False, permissive, oracle)


# -- model wiring -------------------------------------------------------------------------------
_SEMAPHORES: dict[tuple, threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()


class BoundedModel:
    """A model whose ``complete`` waits for one of ``concurrency`` slots shared per model spec."""

    def __init__(self, model, concurrency: int):
        self._model = model
        key = (model.spec, getattr(model, "base_url", None), id(model.workspace), concurrency)
        with _SEM_LOCK:
            self._sem = _SEMAPHORES.setdefault(key, threading.BoundedSemaphore(concurrency))

    def complete(self, prompt: str, **kwargs: Any):
        with self._sem:
            return self._model.complete(prompt, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class Factory:
    """``factory()`` -> a fresh system for one conversation (``factory(truth=...)`` for oracles)."""

    def __init__(
        self, info: SystemInfo, build: Callable[[dict | None], MemorySystem], models: list
    ):
        self.info = info
        self._build = build
        self.models = models

    def __call__(self, *, truth: dict | None = None) -> MemorySystem:
        if self.info.oracle:
            if truth is None:
                raise BadInput(
                    f"{self.info.name} is an oracle ablation: call its factory with "
                    "truth={attribute: [initial value, plan value]}"
                )
            from .oracle import check_truth

            try:
                truth = check_truth(truth)
            except ValueError as e:
                raise BadInput(f"{self.info.name}: {e}") from None
        elif truth is not None:
            raise BadInput(
                f"{self.info.name} is not an oracle: it must not be given the truth values"
            )
        return self._build(truth)

    @property
    def usage(self) -> dict[str, int]:
        """Model-call totals so far (calls, cache hits, tokens) over this factory's models."""
        total: dict[str, int] = {}
        seen = set()
        for m in self.models:
            u = m.usage
            if id(u) in seen:
                continue
            seen.add(id(u))
            for k, v in u.as_dict().items():
                total[k] = total.get(k, 0) + v
        return total


def get_system(
    name: str,
    *,
    model: str | ModelRef = "offline",
    workspace: Workspace | str | None = None,
    classifier: str | ModelRef | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    **llm_options: Any,
) -> tuple[SystemInfo, Factory]:
    """The named system's description and a factory of fresh instances (one per conversation).
    ``model``: a spec or a ``ModelRef`` (its base URL and options; ``llm_options`` add to them).
    ``classifier``: the gate's classifier, a spec (an ``openai:`` one at the model's base URL) or
    a ``ModelRef``; default: the system's model (offline: the offline classifier)."""
    from ..workspace import Workspace
    from .extract import LLMExtractor, OfflineExtractor
    from .gate import Gate
    from .match import RETRY_NAME, LLMMatcher, PermissiveMatcher, WordOverlapMatcher
    from .oracle import OracleExtractor, OracleMatcher, oracle_extractor_name
    from .plan_typed import PlanTypedMemory
    from .resolve import CueChecker, LLMChecker, LLMPredicateWriter, TemplatePredicateWriter
    from .system import SystemInfo

    base_name, retry, permissive, oracle = parse_name(name)
    base = BASES[base_name]
    if concurrency < 1:
        raise BadInput(f"concurrency must be at least 1, got {concurrency}")
    ref = ModelRef.parse(model)
    model, base_url, llm_options = ref.spec, ref.base_url, {**ref.options, **llm_options}
    offline = ref.offline
    if offline and (base_url or llm_options):
        what = "--base-url" if base_url else ", ".join(sorted(llm_options))
        raise BadInput(
            f"{what} needs a model: pass provider:model (e.g. openai:gpt-4o-mini), not offline"
        )
    if workspace is not None and not isinstance(workspace, Workspace):
        workspace = Workspace(workspace, create=False)
    models: list = []
    if offline:
        lm = None
        make_extractor: Callable[[], Any] = lambda: OfflineExtractor(base.style)
        matcher = WordOverlapMatcher()
        permissive_matcher = PermissiveMatcher()
        predicates = TemplatePredicateWriter()
        checker = CueChecker()
    else:
        from ..llm import get_model

        lm = BoundedModel(
            get_model(model, workspace=workspace, base_url=base_url, **llm_options), concurrency
        )
        models.append(lm)
        make_extractor = lambda: LLMExtractor(lm, base.style)
        matcher = LLMMatcher(lm)
        permissive_matcher = LLMMatcher(lm, permissive=True)
        predicates = LLMPredicateWriter(lm)
        checker = LLMChecker(lm)
    needs_classifier = base.routing != "ungated"
    if isinstance(classifier, str):  # the system's server serves an openai: classifier too
        classifier = ModelRef(classifier, base_url if classifier.startswith("openai:") else None)
    clf = _classifier(classifier, lm, workspace, concurrency, models) if needs_classifier else None

    components: dict[str, str] = {}
    extractor_proto = None if oracle else make_extractor()
    components["extractor"] = oracle_extractor_name(base.style) if oracle else extractor_proto.name
    components["matcher"] = "oracle-match.v1" if oracle else matcher.name
    components["retry"] = RETRY_NAME if retry else "off"
    if permissive:
        components["permissive_matcher"] = "oracle-match.v1" if oracle else permissive_matcher.name
    if clf is not None:
        components["classifier"] = clf.name
    if base.routing == "gated":
        components["predicates"] = predicates.name
        components["checker"] = checker.name
    components["routing"] = {
        "ungated": "gate-off",
        "gated": "gate-on (Algorithm 1)",
        "plan-typed": f"plan-typed ({base.reading} reading)",
    }[base.routing]
    components["store"] = "profile-store.v1"
    llm_parts = []
    if not offline:
        llm_parts += (
            []
            if oracle
            else ["extractor", "matcher"] + (["permissive_matcher"] if permissive else [])
        )
        llm_parts += ["predicates", "checker"] if base.routing == "gated" else []
    if clf is not None and getattr(clf, "family", "offline") != "offline":
        llm_parts.append("classifier")
    uses_model = bool(llm_parts)
    canon = canonical(base_name, retry, permissive, oracle)
    parts = "components: " + ("offline rules" if not uses_model else f"LLM ({model})")
    if oracle:
        parts += "; ORACLE extractor and matcher (read the ground-truth values)"
    info = SystemInfo(
        name=canon,
        description=f"{base.describe()}; {parts}",
        gated=base.routing == "gated",
        ungated_twin=twin_of(base_name, permissive, oracle),
        components=components,
        offline=not uses_model,
        oracle=oracle,
    )

    def build(truth: dict | None) -> MemorySystem:
        if oracle:
            extractor, match, perm = (
                OracleExtractor(truth, base.style),
                OracleMatcher(truth),
                OracleMatcher(truth),
            )
        else:
            extractor, match, perm = make_extractor(), matcher, permissive_matcher
        common = dict(
            extractor=extractor, matcher=match, retry=retry, permissive=perm if permissive else None
        )
        if base.routing == "plan-typed":
            return PlanTypedMemory(info, classifier=clf, reading=base.reading, **common)
        return Gate(
            info,
            classifier=clf,
            predicates=predicates,
            checker=checker,
            gated=base.routing == "gated",
            **common,
        )

    return info, Factory(info, build, models)


def _classifier(ref: ModelRef | None, lm, workspace, concurrency: int, models: list):
    """The gate's classifier: ``ref``'s, or the system's own model's (offline for an offline
    system), bounded to ``concurrency`` like the system's model."""
    from ..classify import get_classifier

    if ref is None and lm is None:
        ref = ModelRef()
    if ref is None:
        from ..classify.model_classifier import ModelClassifier

        return ModelClassifier(lm.spec, model=lm, progress=False)
    clf = get_classifier(ref, workspace=workspace)
    inner = getattr(clf, "model", None)
    if inner is not None:
        clf.model = BoundedModel(inner, concurrency)
        models.append(clf.model)
    return clf
