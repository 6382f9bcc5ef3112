"""Which memory systems an evaluation runs, and the run key that says when one must be re-run.

Names resolve through ``agentmemgate.memory.get_system`` (the memory room's registry), then
``agentmemgate.products`` (answering baselines, products, plug-ins of either contract); a test
or a notebook can also hand ``system_spec`` any factory that meets the contract.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..llm.ref import ModelRef
from ..memory.system import SystemFactory, SystemInfo
from ..suggest import did_you_mean
from ..workspace import Workspace

# The paper's component systems (Section 4, Appendix A.1) and the retry ablation (Section 6.3).
DEFAULT_SYSTEMS = (
    "literal-ungated",
    "literal-gated",
    "cautious-ungated",
    "cautious-gated",
    "plan-typed-literal",
    "plan-typed-cautious",
    "plan-typed-literal-strict",
    "plan-typed-cautious-strict",
    "cautious-gated[no-retry]",
)
PAPER_SYSTEMS = ("cautious-ungated", "cautious-gated", "literal-ungated", "literal-gated")

_PACKAGE = Path(__file__).resolve().parent.parent
# What a component system is made of: a change to any of these files re-runs it.
_SOURCE_DIRS = ("memory", "classify", "rubrics")


@dataclass
class SystemSpec:
    name: str
    factory: SystemFactory
    info: SystemInfo
    model: str = "offline"
    options: dict[str, Any] = field(default_factory=dict)
    source_sha: str = ""
    kind: str = "component"  # "component" (memory.system) | "answering" (memory.answering)

    @property
    def run_key(self) -> str:
        h = hashlib.sha256()
        for part in (
            self.name,
            json.dumps(self.options, sort_keys=True, default=str),
            self.model,
            self.info.model_dump_json(),
            self.source_sha,
        ):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()[:32]


@cache
def _sha_of_files(paths: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def source_sha(extra: Path | None = None) -> str:
    """sha256 over the memory, classifier and rubric files (and ``extra``, a factory's module)."""
    files: list[Path] = []
    for d in _SOURCE_DIRS:
        files += sorted(
            p
            for p in (_PACKAGE / d).rglob("*")
            if p.is_file() and p.suffix in (".py", ".toml", ".txt", ".json")
        )
    if extra is not None and extra.is_file() and not any(extra == f for f in files):
        files.append(extra)
    return _sha_of_files(tuple(files))


def system_spec(
    factory: SystemFactory,
    *,
    name: str | None = None,
    model: str = "offline",
    options: dict[str, Any] | None = None,
    info: SystemInfo | None = None,
) -> SystemSpec:
    """A spec for any factory: its info comes from ``factory.info`` or from one fresh instance."""
    info = info or getattr(factory, "info", None)
    if info is None:
        info = factory().info
    try:
        module = Path(inspect.getsourcefile(factory) or "")
    except TypeError:
        module = None
    return SystemSpec(
        name=name or info.name,
        factory=factory,
        info=info,
        model=model,
        options=dict(options or {}),
        source_sha=source_sha(module),
    )


REPEAT_MARK = "#"  # run k >= 2 of a repeated evaluation is named NAME#k


def repeat_spec(spec: SystemSpec, k: int) -> SystemSpec:
    """Run ``k`` (2 and up) of a model-backed system in ``amg eval run --repeat``: its own name
    (``NAME#k``), run key and LLM cache entries (the model option ``repeat``), so it asks every
    model call anew rather than reading the first run's answers."""
    return SystemSpec(
        name=f"{spec.name}{REPEAT_MARK}{k}",
        factory=spec.factory,
        info=spec.info,
        model=spec.model,
        options={**spec.options, "repeat": k},
        source_sha=spec.source_sha,
        kind=spec.kind,
    )


def repeat_of(name: str) -> tuple[str, int] | None:
    """``("NAME", k)`` for a repeated run's name ``NAME#k`` (k >= 2), else None."""
    base, mark, k = name.rpartition(REPEAT_MARK)
    return (base, int(k)) if mark and base and k.isdigit() and int(k) >= 2 else None


def with_variants(name: str, variants: list[str]) -> str:
    """``cautious-gated`` + ``["no-retry"]`` -> ``cautious-gated[no-retry]`` (merged into an
    existing bracket), the memory registry's spelling of options."""
    if not variants:
        return name
    if name.endswith("]") and "[" in name:
        base, opts = name[:-1].split("[", 1)
        have = [o.strip() for o in opts.split(",") if o.strip()]
    else:
        base, have = name, []
    return f"{base}[{','.join(dict.fromkeys(have + variants))}]"


def resolve_system(
    name: str,
    *,
    model: str | ModelRef = "offline",
    workspace: Any = None,
    variants: list[str] | None = None,
    concurrency: int | None = None,
    embedder: str | ModelRef | None = None,
    graph_url: str | None = None,
) -> SystemSpec:
    """``name`` against the component systems (the memory room's registry, e.g.
    ``cautious-gated[no-retry]``; the spec carries the canonical name), then the answering
    systems (baselines, products, plug-ins of either contract); unknown names list what exists.
    ``model`` and ``embedder``: specs or ``ModelRef``s (base URL and model options with them)."""
    ref = ModelRef.parse(model)
    emb = ModelRef.parse(embedder) if embedder is not None else None
    model, base_url = ref.spec, ref.base_url
    from ..memory import get_system
    from ..memory.registry import system_names

    base = name.split("[", 1)[0].strip()
    if base not in system_names():
        if variants:
            raise BadInput(
                f"--no-retry and --permissive-matcher apply to component systems, not to {name!r}"
            )
        return _resolve_other(
            name,
            model=ref,
            workspace=workspace,
            concurrency=concurrency,
            embedder=emb,
            graph_url=graph_url,
        )
    # --timeout, --max-tokens ... go to model components only
    kwargs: dict[str, Any] = {
        "model": ref.replace(options=ref.model_options()),
        "workspace": workspace,
    }
    if concurrency:
        kwargs["concurrency"] = concurrency
    info, factory = get_system(with_variants(name, list(variants or [])), **kwargs)
    return system_spec(
        factory,
        name=display_name(info.name, model),
        model=model,
        info=info,
        options={"base_url": bool(base_url)} if base_url else {},
    )


_PRODUCTS_DIR = _PACKAGE / "products"


class _AnsweringFactory:
    """An answering system's factory with the usage its progress bar reads."""

    def __init__(self, answering: Any):
        self._a = answering
        self.info = answering.info

    def __call__(self):
        return self._a.factory()

    @property
    def usage(self) -> dict[str, int]:
        return self._a.usage() if self._a.usage else {}


def _answering_sha(source: Path | None, provenance: dict[str, Any]) -> str:
    """What an answering system is made of: the shared answer call, its own module and the
    rubrics its provenance names."""
    from .. import rubrics

    files = [_PRODUCTS_DIR / "answer.py", _PRODUCTS_DIR / "_base.py"]
    if source is not None and source.is_file():
        files.append(source)
    for key, ref in sorted(provenance.items()):
        if key.endswith("prompt") and isinstance(ref, str) and ".v" in ref:
            n, v = ref.rsplit(".v", 1)
            if v.isdigit() and (p := rubrics.RUBRIC_DIR / f"{n}.v{v}.txt").is_file():
                files.append(p)
    return _sha_of_files(tuple(dict.fromkeys(f for f in files if f.is_file())))


def _resolve_other(
    name: str,
    *,
    model: ModelRef,
    workspace: Any,
    concurrency: int | None,
    embedder: ModelRef | None,
    graph_url: str | None = None,
) -> SystemSpec:
    from ..products import AnsweringOptions, answering_names
    from ..products.plugins import find, plugin_component
    from ..products.registry import BASELINE_NAMES, PRODUCTS, get_answering

    if name not in BASELINE_NAMES and name not in PRODUCTS:
        plugin = find(name)
        if plugin is None:
            from ..memory.registry import OPTIONS, system_names

            plugins = [p.name for p in _plugin_list()]
            known = system_names() + answering_names() + plugins
            raise BadInput(
                f"Unknown memory system {name!r}{did_you_mean(name, known)}; systems: "
                f"{', '.join(known)} (component options [{', '.join(OPTIONS)}]; see "
                "`amg eval systems`)"
            )
        if plugin.contract == "component":
            info, factory, _ = plugin_component(name)
            return system_spec(
                factory,
                name=name,
                info=info,
                options={"plugin": plugin.package, "entry_point": plugin.value},
            )
    if workspace is not None and not isinstance(workspace, Workspace):
        workspace = Workspace(workspace, create=False)
    base_url = model.base_url
    embedder_base_url = embedder.base_url if embedder else None
    opts = AnsweringOptions(
        model=model.spec,
        workspace=workspace,
        base_url=base_url,
        embedder=(embedder.spec or None) if embedder else None,
        embedder_base_url=embedder_base_url,
        graph_url=graph_url,
        llm_options=model.model_options(),
        concurrency=concurrency or 16,
    )
    a = get_answering(name, opts)
    options = {k: v for k, v in a.provenance.items()}
    if base_url:
        options["base_url"] = True  # where, not which model: URLs stay out of the run key
    if embedder_base_url:
        options["embedder_base_url"] = True
    if graph_url:
        options["graph_url"] = True  # where the graph lives stays out of the key
    return SystemSpec(
        name=display_name(a.info.name, a.model),
        factory=_AnsweringFactory(a),
        info=a.info,
        model=a.model,
        options=options,
        source_sha=_answering_sha(a.source, a.provenance),
        kind="answering",
    )


def answering_spec(
    factory: Any,
    *,
    name: str | None = None,
    model: str = "offline",
    provenance: dict[str, Any] | None = None,
    info: SystemInfo | None = None,
) -> SystemSpec:
    """A spec for any answering factory (``factory()`` -> a ``memory.answering.AnsweringSystem``),
    as ``system_spec`` is for component ones: tests and notebooks hand it to ``run_eval``."""
    info = info or getattr(factory, "info", None) or factory().info
    try:
        module = Path(inspect.getsourcefile(factory) or "")
    except TypeError:
        module = None
    prov = dict(provenance or {})
    return SystemSpec(
        name=display_name(name or info.name, model),
        factory=factory,
        info=info,
        model=model,
        options=prov,
        source_sha=_answering_sha(module, prov),
        kind="answering",
    )


def _plugin_list():
    from ..products.plugins import plugins

    return plugins()


class SystemLine(BaseModel):
    """One line of ``amg eval systems``."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: str  # component | baseline | product | plug-in
    contract: str  # component | answering
    available: bool
    note: str  # what it is, or why it cannot run


def available_systems() -> list[SystemLine]:
    """Every system ``amg eval run --system`` can name: built-in component systems, answering
    baselines, products (installed or not) and plug-ins (a broken one says why, one line)."""
    from ..memory.registry import BASES
    from ..products.registry import BASELINE_NAMES, PRODUCTS, library_version, product_missing

    out = [
        SystemLine(
            name=n, kind="component", contract="component", available=True, note=b.describe()
        )
        for n, b in BASES.items()
    ]
    notes = {
        "full-context": "long-context baseline: answers from the whole conversation so far "
        "(needs --model)",
        "no-memory": "floor baseline: answers with no memories (needs --model)",
    }
    out += [
        SystemLine(name=n, kind="baseline", contract="answering", available=True, note=notes[n])
        for n in BASELINE_NAMES
    ]
    for p in PRODUCTS.values():
        why = product_missing(p)
        out.append(
            SystemLine(
                name=p.name,
                kind="product",
                contract="answering",
                available=why is None,
                note=why
                or f"{p.description} ({p.distribution} "
                f"{library_version(p.distribution)}; needs --model)",
            )
        )
    builtin = {line.name for line in out}
    for pl in _plugin_list():
        if pl.error:
            out.append(
                SystemLine(
                    name=pl.name, kind="plug-in", contract="?", available=False, note=pl.error
                )
            )
            continue
        note = f"{pl.contract} system from package {pl.package}: {pl.info.description}"
        if pl.name in builtin:
            note = f"shadowed by the built-in {pl.name} ({note})"
        out.append(
            SystemLine(
                name=pl.name,
                kind="plug-in",
                contract=pl.contract,
                available=pl.name not in builtin,
                note=note,
            )
        )
    return out


def display_name(name: str, model: str) -> str:
    """How results name a system: ``literal-gated`` offline, ``literal-gated@openai:gpt-4o``
    with model components (so runs of one system on two models sit side by side)."""
    return name if ModelRef.parse(model).offline else f"{name}@{model}"


def twin_name(display: str, twin: str | None) -> str | None:
    """The ungated twin's display name, on the same model as ``display``."""
    if twin is None:
        return None
    _, sep, model = display.partition("@")
    return f"{twin}@{model}" if sep else twin


def variant_base(name: str) -> str | None:
    """``cautious-gated[no-retry]`` -> ``cautious-gated`` (``...@model`` kept): the system a
    bracketed variant varies."""
    core, sep, model = name.partition("@")
    if core.endswith("]") and "[" in core:
        return core[: core.index("[")] + (sep + model)
    return None
