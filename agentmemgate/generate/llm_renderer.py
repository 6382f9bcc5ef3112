"""LLM generators: ``openai:MODEL`` / ``anthropic:MODEL`` (and a test model registered the same
way, such as the test suite's ``scripted:NAME``).

The prompt is ``rubrics/generator_arc.vN.txt`` filled from the spec; the reply is a structured
``ArcDraft`` validated with pydantic, converted to an ``Arc`` and checked with the structural
checks every arc must pass (``validate.structure.check_arc``) plus checks only generated text
needs (the plan turn of a non-control arc must not already assert the change; no markup or label
leaks). A reply that fails is asked again with the problems appended, up to ``max_attempts``;
an arc that still fails becomes a ``RenderFailure`` and the run goes on. Every call goes through
the LLM layer's cache, so a re-run repeats no answered call.

The prompts are ``llm_prompts``, the reply's schema and its conversion ``llm_drafts``, the
generator-only checks ``llm_checks``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .. import rubrics
from ..design import Design, paper_design
from ..errors import MissingApiKey
from ..llm import CallFailed, Model, get_model, run_concurrent
from ..llm.ref import ModelRef
from ..llm.registry import is_test_double
from ..schema import Arc, ArcSpec
from .llm_drafts import draft_schema, to_arc
from .llm_prompts import (
    CORRECTION_RUBRIC,
    RUBRIC,
    build_correction_prompt,
    build_prompt,
    with_feedback,
)
from .renderer import Renderer, RenderError, RenderFailure, register_renderer

TEMPERATURE = 0.7
MAX_TOKENS = 4096  # a whole multi-session conversation as JSON


# -- the renderer --------------------------------------------------------------------------------
class LlmRenderer(Renderer):
    """Renders specs with a model from the LLM layer, concurrently, cached and resumable."""

    def __init__(
        self,
        model: Model,
        *,
        concurrency: int = 4,
        max_attempts: int = 3,
        temperature: float = TEMPERATURE,
        design: Design | None = None,
    ):
        self.model = model
        self.design = design or paper_design()
        self.name = model.spec
        self.display = model.display  # a GGUF path shortened to its file name
        self.family = model.family
        self.kind = (
            f"{model.provider} test model (canned replies, no LLM)"
            if is_test_double(model.provider)
            else "LLM"
        )
        self.rubric = rubrics.load(RUBRIC)
        self.correction_rubric = rubrics.load(CORRECTION_RUBRIC)
        self.prompt_sha256 = self.rubric.sha256
        self.concurrency = concurrency
        self.max_attempts = max(1, max_attempts)
        self.temperature = temperature

    def _ask(self, spec: ArcSpec, prompt: str, attempt: int = 1):
        # Each attempt is its own cached call: a re-ask whose feedback repeats the last one's
        # would otherwise be answered from the cache with the same rejected draft. A resumed run
        # replays the same attempts from the cache.
        seed_key = f"arc:{spec.seed}" if attempt == 1 else f"arc:{spec.seed}:attempt{attempt}"
        return self.model.complete(
            prompt,
            schema=draft_schema(spec),
            temperature=self.temperature,
            purpose="generate.arc",
            seed_key=seed_key,
            max_tokens=MAX_TOKENS,
        )

    def _prompt(self, spec: ArcSpec) -> tuple[str, str]:
        """The first prompt for ``spec`` and the sha256 of the rubric it comes from."""
        if spec.correction is not None:
            return (
                build_correction_prompt(spec, self.correction_rubric, self.design),
                self.correction_rubric.sha256,
            )
        return build_prompt(spec, self.rubric, self.design), self.prompt_sha256

    def render_one(self, spec: ArcSpec) -> Arc | RenderFailure:
        base, sha = self._prompt(spec)
        prompt, problems = base, []
        for attempt in range(1, self.max_attempts + 1):
            try:
                resp = self._ask(spec, prompt, attempt)
            except CallFailed as e:
                if e.kind != "invalid_output":
                    return RenderFailure(spec_id=spec.id, reason=str(e), attempts=attempt)
                problems = [e.problem]
            else:
                arc, problems = to_arc(
                    spec,
                    resp.parsed,
                    generator=self.name,
                    prompt_sha256=sha,
                    kind=self.kind,
                    structured_output=resp.strategy,
                    design=self.design,
                )
                if arc is not None and not problems:
                    return arc
            prompt = with_feedback(base, problems)
        return RenderFailure(
            spec_id=spec.id,
            attempts=self.max_attempts,
            reason=f"failed checks after {self.max_attempts} attempts: " + "; ".join(problems),
        )

    def render(self, spec: ArcSpec) -> Arc:
        result = self.render_one(spec)
        if isinstance(result, RenderFailure):
            raise RenderError(result.reason, result.attempts)
        return result

    def render_many(self, specs: Iterable[ArcSpec]) -> Iterator[Arc | RenderFailure]:
        """Yield each arc as it finishes (the caller stores it at once and draws the progress)."""
        yield from run_concurrent(
            self.render_one,
            specs,
            concurrency=self.concurrency,
            description=f"render ({self.model.display})",
            usage=self.model.usage,
            progress=False,
        )

    def planned_calls(self, specs: list[ArcSpec]) -> int:
        """First-attempt calls not already in the cache (re-asks after failed checks come extra)."""
        return sum(
            self.model.plan(
                self._prompt(s)[0],
                schema=draft_schema(s),
                temperature=self.temperature,
                seed_key=f"arc:{s.seed}",
                max_tokens=MAX_TOKENS,
            )
            for s in specs
        )

    def usage(self) -> dict[str, int]:
        d = self.model.usage.live()
        return {
            k: d[k]
            for k in (
                "calls",
                "in_flight",
                "cache_hits",
                "failures",
                "input_tokens",
                "output_tokens",
            )
        }


def make_llm_renderer(
    ref: str | ModelRef,
    *,
    workspace=None,
    concurrency: int = 4,
    max_attempts: int = 3,
    design=None,
) -> LlmRenderer:
    """The registered factory: ``get_renderer("openai:gpt-4o-mini", workspace=ws, design=...)``
    (the design's definitions, notes and checks; the paper's by default). ``ref``: a spec or a
    ``ModelRef`` (its base URL and options go to the model)."""
    try:
        model = get_model(ref, workspace=workspace)
    except MissingApiKey as e:
        raise e.for_flag("--generator") from None
    return LlmRenderer(model, concurrency=concurrency, max_attempts=max_attempts, design=design)


for _provider in ("openai", "anthropic"):
    register_renderer(_provider, make_llm_renderer, builtin=True)
