"""``mem0``: the Mem0 product (PyPI ``mem0ai`` 2.2.x) as released, run by the A.7 protocol.

Each conversation gets a fresh, isolated Mem0: ``Memory.from_config`` with its own embedded
Qdrant on disk and its own history database in a directory of the workspace (removed when the
conversation ends), and the protocol's opaque namespace as Mem0's ``user_id``. Every session goes
in with one ``Memory.add(messages, user_id=..., metadata=...)`` call: the session's turns in
order, each with its role, and the session's date as the memories' time -- Mem0 2.2's open-source
``add`` refuses its ``timestamp`` argument ("platform-only"), so the date goes where that version
takes a time: ``metadata["created_at"]`` (the stored memories' ``created_at``/``updated_at``,
returned by ``search``) and ``metadata["session_date"]``. After every session, Mem0's own
``Memory.search(question, filters={"user_id": ...})`` with its default limits, then the one
answer call every product makes (``products.answer``: the retrieved memories, the question and
the date only); then the whole store is read (``Memory.get_all`` for the user, no model call)
for the evaluation's store reader.

Mem0 is configured, never patched: its extraction prompt, update logic and retrieval run
unchanged. Its model calls go through our LLM layer: ``llm.serve.LLMEndpoint`` serves the chat
model and the embedder as a local OpenAI-compatible endpoint for as long as any conversation is
open, and Mem0's own OpenAI clients are pointed at it (``openai_base_url``, a per-run key), so
every call Mem0 makes is cached, logged (purpose ``product.mem0.chat`` / ``product.mem0.embed``),
counted on the progress bar and replayed from the cache on a re-run. Telemetry is off
(``MEM0_TELEMETRY=False`` before Mem0 is imported); ``MEM0_DIR`` (where Mem0 writes its own
config at import) defaults to ``.mem0`` in the workspace.

Known differences from Mem0's hosted platform, all of which provenance records: the extraction
prompt's "Observation Date" is the day of the run (the open-source ``add`` sets no other), so a
resume on a later UTC day re-asks that arc's extraction calls; BM25 keyword scoring and entity
boosts need ``fastembed`` and spaCy's ``en_core_web_sm``, which download models at run time, so
unless they are installed search is Mem0's semantic search alone.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

from ..atomic import process_alive
from ..errors import BadInput
from ..llm import CallFailed, FatalProviderError, get_model
from ..llm._errors import scrub, shorten
from ..llm.serve import LLMEndpoint
from ..memory.answering import AnsweringSystem, ProbeAnswer, Retrieved, SessionInput
from ..memory.system import SystemInfo
from ..progress import say
from ._base import make_model, provenance
from .answer import answer_probe, answer_provenance
from .contract import Answering, AnsweringOptions

NAME = "mem0"
PURPOSE = "product.mem0"
COLLECTION = "amg_mem0"
DIMENSION_PROBE = "dimension probe"  # embedded once per embedder (cached) to size the store
STORE_LIMIT = 1000  # memories read per store snapshot (a conversation holds far fewer)


def _import_mem0(workspace: Any) -> Any:
    """Mem0's ``Memory`` with telemetry off (it reads ``MEM0_TELEMETRY`` at import)."""
    os.environ["MEM0_TELEMETRY"] = "False"
    if workspace is not None:
        os.environ.setdefault("MEM0_DIR", str(Path(workspace.path) / ".mem0"))
    from mem0 import Memory
    from mem0.memory import telemetry

    if telemetry.MEM0_TELEMETRY:  # imported earlier in this process with telemetry on
        raise BadInput(
            "mem0 was imported with telemetry on before this run: set "
            "MEM0_TELEMETRY=False in the environment"
        )
    _quiet_logs()
    return Memory


class _Notices(logging.Handler):
    """Mem0's warnings and errors (e.g. an extraction reply it could not parse) as one notice
    each above the progress bar instead of a log line per arc."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = shorten(scrub(record.getMessage()), 200)
        except Exception:  # a malformed record must not break the run
            return
        if "spaCy" in text or "fastembed" in text:
            return  # optional parts not installed: provenance records them (keyword_search, entities)
        head = text[:60]
        if head in self.seen or len(self.seen) >= 20:
            return
        self.seen.add(head)
        say(f"mem0 {record.levelname.lower()}: {text}")


_NOTICES = _Notices()


def _quiet_logs() -> None:
    log = logging.getLogger("mem0")
    if _NOTICES not in log.handlers:
        log.addHandler(_NOTICES)
        log.propagate = False


def _optional(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


class Mem0Product:
    """What every conversation of one run shares: the models, the endpoint, the store root."""

    def __init__(self, options: AnsweringOptions):
        if os.environ.get("OPENROUTER_API_KEY"):
            raise BadInput(
                "OPENROUTER_API_KEY is set: Mem0 would send its model calls to "
                "OpenRouter instead of through agentmemgate; unset it for this run"
            )
        if options.workspace is None:
            raise BadInput("mem0 needs a workspace (its stores and the LLM cache live there)")
        self.options = options
        self.workspace = options.workspace
        self.Memory = _import_mem0(self.workspace)
        llm_options = dict(options.llm_options)
        self.chat = get_model(
            options.model, workspace=self.workspace, base_url=options.base_url, **llm_options
        )
        self.embedder_spec = options.embedder or options.model
        if options.embedder:
            llm_options.pop("structured_output", None)
            self.embedder = get_model(
                options.embedder,
                workspace=self.workspace,
                base_url=options.embedder_base_url or options.base_url,
                **llm_options,
            )
        else:
            self.embedder = self.chat
        self.answerer = make_model(options)
        self.dimensions = self._dimensions()
        self.root = Path(self.workspace.path) / "products" / NAME
        self._lock = threading.Lock()
        self._open = 0
        self._endpoint: LLMEndpoint | None = None
        self.sweep()

    def _dimensions(self) -> int:
        try:
            vec = self.embedder.embed([DIMENSION_PROBE], purpose=f"{PURPOSE}.embed")[0]
        except (CallFailed, FatalProviderError) as e:
            raise FatalProviderError(
                f"mem0 needs embeddings from {self.embedder.label} (--embedder): {e}"
            ) from None
        if not vec:
            raise FatalProviderError(f"{self.embedder.label} returned an empty embedding")
        return len(vec)

    # -- the endpoint, open while any conversation is --------------------------------------------
    def acquire(self) -> LLMEndpoint:
        with self._lock:
            if self._endpoint is None:
                self._endpoint = LLMEndpoint(self.chat, self.embedder, purpose=PURPOSE).start()
            self._open += 1
            return self._endpoint

    def release(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open == 0 and self._endpoint is not None:
                endpoint, self._endpoint = self._endpoint, None
                endpoint.stop()

    # -- per-conversation stores ---------------------------------------------------------------
    def sweep(self) -> None:
        """Remove stores left by killed processes (their directories carry the owner's pid)."""
        if not self.root.is_dir():
            return
        for d in self.root.iterdir():
            pid = d.name.split("-", 1)[0]
            if (
                d.is_dir()
                and pid.isdigit()
                and int(pid) != os.getpid()
                and not process_alive(int(pid))
            ):
                shutil.rmtree(d, ignore_errors=True)

    def config(self, directory: Path, url: str, api_key: str) -> dict[str, Any]:
        """Mem0's configuration for one conversation: everything Mem0's own defaults would be,
        except where its models are and where its stores live."""
        return {
            "llm": {
                "provider": "openai",
                "config": {"model": self.chat.name, "api_key": api_key, "openai_base_url": url},
            },
            "embedder": {
                "provider": "openai",
                "config": {"model": self.embedder.name, "api_key": api_key, "openai_base_url": url},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": COLLECTION,
                    "path": str(directory / "qdrant"),
                    "embedding_model_dims": self.dimensions,
                    "on_disk": True,
                },
            },
            "history_db_path": str(directory / "history.db"),
        }

    @property
    def usage(self) -> dict[str, int]:
        out: dict[str, int] = {}
        models = list({id(m): m for m in (self.chat, self.embedder, self.answerer)}.values())
        for m in models:
            for k, v in m.usage.as_dict().items():
                out[k] = out.get(k, 0) + v
        return out

    def provenance(self) -> dict[str, Any]:
        return provenance(
            "Mem0",
            library="mem0ai",
            model=self.options.model,
            embedder=self.embedder_spec,
            dimensions=self.dimensions,
            store="qdrant embedded on disk + sqlite history, fresh per conversation",
            mem0_llm={"provider": "openai", "model": self.chat.name, **_llm_defaults()},
            mem0_embedder={"provider": "openai", "model": self.embedder.name},
            ingest="Memory.add(session turns with roles, user_id=namespace, "
            "metadata={created_at, session_date}: session date), infer=True",
            retrieval="Memory.search(question, filters={user_id}) with Mem0's defaults "
            "(top_k 20, threshold 0.1)",
            keyword_search="bm25 (fastembed)" if _optional("fastembed") else "off (no fastembed)",
            entities="spaCy" if _optional("spacy") else "off (no spaCy)",
            telemetry="off (MEM0_TELEMETRY=False)",
            models_via="agentmemgate LLM endpoint (llm.serve): cached, logged",
            **answer_provenance(),
        )


def _llm_defaults() -> dict[str, Any]:
    """The sampling parameters Mem0 sends by default (we set none of them)."""
    from mem0.configs.llms.openai import OpenAIConfig

    c = OpenAIConfig()
    return {"temperature": c.temperature, "max_tokens": c.max_tokens, "top_p": c.top_p}


class Mem0System(AnsweringSystem):
    """One conversation's Mem0."""

    def __init__(self, product: Mem0Product, info: SystemInfo):
        self.product, self.info = product, info
        self.memory: Any = None
        self.namespace = ""
        self.directory: Path | None = None
        self.endpoint: LLMEndpoint | None = None
        self.tag = ""
        self._calls = 0

    def begin(self, namespace: str) -> None:
        self.namespace = namespace
        self.directory = self.product.root / f"{os.getpid()}-{namespace}"
        shutil.rmtree(self.directory, ignore_errors=True)  # from scratch, whatever was there
        self.directory.mkdir(parents=True)
        self.endpoint = self.product.acquire()
        self.tag = uuid.uuid4().hex[:16]  # this conversation's requests, counted apart
        try:
            self.memory = self._product(
                "setup",
                lambda: self.product.Memory.from_config(
                    self.product.config(
                        self.directory, self.endpoint.url_for(self.tag), self.endpoint.api_key
                    )
                ),
            )
        except BaseException:
            self.close()
            raise

    def _product(self, what: str, fn: Any) -> Any:
        """Run one Mem0 call; its failures become ours (fatal when the endpoint met one)."""
        before = self._endpoint_calls()
        try:
            return fn()
        except Exception as e:
            if self.endpoint is not None:
                self.endpoint.raise_fatal()
            raise CallFailed(
                f"mem0 {what} failed: {shorten(scrub(f'{type(e).__name__}: {e}'))}",
                kind="product_error",
            ) from None
        finally:
            self._calls += self._endpoint_calls() - before

    def _endpoint_calls(self) -> int:
        return 0 if self.endpoint is None else self.endpoint.requests_of(self.tag).get("chat", 0)

    def ingest(self, session: SessionInput) -> None:
        messages = [{"role": t.role, "content": t.text} for t in session.turns]
        if not messages:
            return
        when = dt.datetime.combine(session.date, dt.time(0, 0), tzinfo=dt.UTC)
        self._product(
            "add",
            lambda: self.memory.add(
                messages,
                user_id=self.namespace,
                metadata={"created_at": when.isoformat(), "session_date": session.date.isoformat()},
            ),
        )

    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        found = self._product(
            "search", lambda: self.memory.search(question, filters={"user_id": self.namespace})
        )
        retrieved = [_retrieved(r) for r in (found or {}).get("results", [])]
        self._calls += 1
        text = answer_probe(self.product.answerer, question, date, retrieved)
        return ProbeAnswer(answer=text, retrieved=retrieved)

    def store_snapshot(self) -> list[dict[str, Any]]:
        """Every memory Mem0 holds for this user now (``Memory.get_all``), oldest first."""
        got = self._product(
            "get_all",
            lambda: self.memory.get_all(filters={"user_id": self.namespace}, top_k=STORE_LIMIT),
        )
        rows = [_stored(r) for r in (got or {}).get("results", [])]
        return sorted(rows, key=lambda r: (r.get("created_at") or "", r["memory"]))

    def close(self) -> None:
        memory, self.memory = self.memory, None
        if memory is not None:
            for closing in (
                memory.close,  # Mem0's history database
                getattr(getattr(memory.vector_store, "client", None), "close", None),
            ):
                try:
                    if closing is not None:
                        closing()
                except Exception:  # closing is best effort: the directory goes anyway
                    pass
        if self.endpoint is not None:
            self.endpoint = None
            self.product.release()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    @property
    def calls(self) -> int:
        """Chat calls Mem0 made (cache hits included) plus the answer calls."""
        return self._calls


def _stored(r: dict[str, Any]) -> dict[str, Any]:
    """One memory of ``get_all`` as the store snapshot keeps it (no ids, hashes or scores)."""
    out = {"memory": str(r.get("memory") or "")}
    for k in ("created_at", "updated_at"):
        if r.get(k):
            out[k] = str(r[k])
    if (r.get("metadata") or {}).get("session_date"):
        out["session_date"] = r["metadata"]["session_date"]
    return out


def _retrieved(r: dict[str, Any]) -> Retrieved:
    meta = {k: r[k] for k in ("created_at", "updated_at") if r.get(k)}
    extra = r.get("metadata") or {}
    if extra.get("session_date"):
        meta["session_date"] = extra["session_date"]
    score = r.get("score")
    return Retrieved(
        text=str(r.get("memory") or ""),
        score=float(score) if isinstance(score, (int, float)) else None,
        meta=meta,
    )


def build(options: AnsweringOptions) -> Answering:
    product = Mem0Product(options)
    info = SystemInfo(
        name=NAME,
        description="Mem0 (mem0ai) as released: its own extraction, storage and "
        "search; one answer call over what it retrieved",
        gated=False,
        offline=False,
        components={
            "product": f"mem0ai {product.provenance()['library_version']}",
            "llm": options.model,
            "embedder": product.embedder_spec,
            "store": f"qdrant embedded ({product.dimensions} dims)",
            "answerer": f"{answer_provenance()['answer_prompt']} on {options.model}",
        },
    )
    return Answering(
        info=info,
        factory=lambda: Mem0System(product, info),
        provenance=product.provenance(),
        model=options.model,
        source=Path(__file__),
        usage=lambda: product.usage,
    )


__all__ = ["Mem0Product", "Mem0System", "build"]
