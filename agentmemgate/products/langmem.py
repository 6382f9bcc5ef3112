"""``langmem``: LangMem (PyPI ``langmem`` 0.0.x) with LangGraph's in-memory store, run by the A.7
protocol, configured and never patched.

What many LangChain and LangGraph users run for long-term memory: a memory store manager
(``langmem.create_memory_store_manager``, its defaults: unstructured string memories, inserts on,
deletes off, its own extraction instructions and search) over a LangGraph ``InMemoryStore`` with a
vector index, one fresh store per conversation.

- Ingestion: after every session, ``manager.invoke({"messages": the session's turns with their
  roles}, config={"configurable": {"langgraph_user_id": namespace}})``: LangMem searches the store
  for memories related to the session, asks the model (trustcall tool calls) to create or update
  memories, and writes them under ``("memories", namespace)``. LangMem takes no message time, so
  the session date does not reach it (provenance records this).
- Retrieval: ``manager.search(query=question, config=...)`` (LangMem's own search over the
  store's index, its default limit), then the one answer call of ``products.answer``.
- The store after each session (``store.search(("memories", namespace))``, every item, no model
  call) is kept for the evaluation's store reader, which reads each memory as Mem0's are read.
- Models: LangChain's ``ChatOpenAI`` and ``OpenAIEmbeddings`` pointed at ``llm.serve.LLMEndpoint``,
  our LLM layer served on 127.0.0.1 for the run: every call LangMem makes is cached, logged
  (``product.langmem.chat`` / ``.embed``) and replayed on a re-run. Token counting against
  tiktoken's downloaded tables is off (``check_embedding_ctx_length=False``); LangSmith tracing is
  off for the run (``LANGSMITH_TRACING=false``), so no conversation leaves the machine.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import BadInput
from ..llm import CallFailed, FatalProviderError, get_model
from ..llm._errors import scrub, shorten
from ..memory.answering import AnsweringSystem, ProbeAnswer, Retrieved, SessionInput
from ..memory.system import SystemInfo
from ._base import make_model, provenance
from .answer import answer_probe, answer_provenance
from .contract import Answering, AnsweringOptions, library_version

NAME = "langmem"
PURPOSE = "product.langmem"
NAMESPACE = ("memories", "{langgraph_user_id}")
STORE_LIMIT = 1000  # items read per store snapshot (a conversation holds far fewer)


def _quiet() -> None:
    """LangSmith tracing off for the run: a conversation never leaves the machine."""
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        os.environ[var] = "false"


class LangMemProduct:
    """What every conversation of one run shares: the models and the endpoint."""

    def __init__(self, options: AnsweringOptions):
        if options.workspace is None:
            raise BadInput("langmem needs a workspace (the LLM cache lives there)")
        _quiet()
        self.options = options
        llm_options = dict(options.llm_options)
        self.chat = get_model(
            options.model, workspace=options.workspace, base_url=options.base_url, **llm_options
        )
        self.embedder_spec = options.embedder or options.model
        if options.embedder:
            llm_options.pop("structured_output", None)
            self.embedder = get_model(
                options.embedder,
                workspace=options.workspace,
                base_url=options.embedder_base_url or options.base_url,
                **llm_options,
            )
        else:
            self.embedder = self.chat
        self.answerer = make_model(options)
        self.dimensions = self._dimensions()
        self._lock = threading.Lock()
        self._open = 0
        self._endpoint: Any = None

    def _dimensions(self) -> int:
        try:
            vec = self.embedder.embed(["dimension check"], purpose=f"{PURPOSE}.embed")[0]
        except (CallFailed, FatalProviderError) as e:
            raise FatalProviderError(
                f"langmem needs embeddings from {self.embedder.label} (--embedder): {e}"
            ) from None
        if not vec:
            raise FatalProviderError(f"{self.embedder.label} returned an empty embedding")
        return len(vec)

    def acquire(self) -> Any:
        from ..llm.serve import LLMEndpoint

        with self._lock:
            if self._endpoint is None:
                self._endpoint = LLMEndpoint(self.chat, self.embedder, purpose=PURPOSE).start()
            self._open += 1
            return self._endpoint

    def release(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open == 0 and self._endpoint is not None:
                self._endpoint.stop()
                self._endpoint = None

    @property
    def usage(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in {id(m): m for m in (self.chat, self.embedder, self.answerer)}.values():
            for k, v in m.usage.as_dict().items():
                out[k] = out.get(k, 0) + v
        return out

    def provenance(self) -> dict[str, Any]:
        return provenance(
            "LangMem",
            library="langmem",
            model=self.options.model,
            embedder=self.embedder_spec,
            dimensions=self.dimensions,
            store="LangGraph InMemoryStore with a vector index, fresh per conversation",
            langgraph=library_version("langgraph"),
            langchain_openai=library_version("langchain-openai"),
            manager="create_memory_store_manager(model, namespace=('memories', "
            "'{langgraph_user_id}'), store=store) with its defaults",
            ingest="manager.invoke({messages: session turns with roles}) after every session; "
            "no message time (LangMem takes none)",
            retrieval="manager.search(query=question) with its defaults",
            tracing="LangSmith off (LANGSMITH_TRACING=false)",
            models_via="agentmemgate LLM endpoint (llm.serve): cached, logged",
            **answer_provenance(),
        )


class LangMemSystem(AnsweringSystem):
    """One conversation's LangMem."""

    def __init__(self, product: LangMemProduct, info: SystemInfo):
        self.product, self.info = product, info
        self.namespace = ""
        self.endpoint: Any = None
        self.store: Any = None
        self.manager: Any = None
        self._calls = 0

    @property
    def config(self) -> dict:
        return {"configurable": {"langgraph_user_id": self.namespace}}

    def begin(self, namespace: str) -> None:
        from langchain_openai import ChatOpenAI, OpenAIEmbeddings
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager

        self.namespace = namespace
        self.endpoint = self.product.acquire()
        try:
            url, key = self.endpoint.url, self.endpoint.api_key
            chat = ChatOpenAI(model=self.product.chat.name, base_url=url, api_key=key)
            embeddings = OpenAIEmbeddings(
                model=self.product.embedder.name,
                base_url=url,
                api_key=key,
                check_embedding_ctx_length=False,  # no tiktoken tables to download
            )
            self.store = InMemoryStore(index={"dims": self.product.dimensions, "embed": embeddings})
            self.manager = create_memory_store_manager(chat, namespace=NAMESPACE, store=self.store)
        except BaseException:
            self.close()
            raise

    def _product(self, what: str, fn: Any) -> Any:
        """Run one LangMem call; its failures become ours (fatal when the endpoint met one)."""
        try:
            return fn()
        except Exception as e:
            if self.endpoint is not None:
                self.endpoint.raise_fatal()
            raise CallFailed(
                f"langmem {what} failed: {shorten(scrub(f'{type(e).__name__}: {e}'))}",
                kind="product_error",
            ) from None

    def ingest(self, session: SessionInput) -> None:
        messages = [{"role": t.role, "content": t.text} for t in session.turns]
        if messages:
            self._product(
                "invoke", lambda: self.manager.invoke({"messages": messages}, config=self.config)
            )

    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        found = self._product(
            "search", lambda: self.manager.search(query=question, config=self.config)
        )
        retrieved = [_retrieved(it) for it in found or []]
        self._calls += 1
        return ProbeAnswer(
            answer=answer_probe(self.product.answerer, question, date, retrieved),
            retrieved=retrieved,
        )

    def store_snapshot(self) -> list[dict[str, Any]]:
        """Every memory in this conversation's namespace now, oldest first (no model call)."""
        items = self._product(
            "store read",
            lambda: self.store.search(("memories", self.namespace), limit=STORE_LIMIT),
        )
        rows = [
            {
                "memory": _content(it.value),
                "created_at": it.created_at.isoformat() if it.created_at else None,
                "updated_at": it.updated_at.isoformat() if it.updated_at else None,
            }
            for it in items or []
        ]
        return sorted(rows, key=lambda r: (r["created_at"] or "", r["memory"]))

    def close(self) -> None:
        self.manager = self.store = None
        if self.endpoint is not None:
            self.endpoint = None
            self.product.release()

    @property
    def calls(self) -> int:
        """The answer calls (LangMem's own are in the call log under ``product.langmem.*``)."""
        return self._calls


def _content(value: Any) -> str:
    """A LangMem memory's text: ``{"kind": "Memory", "content": {"content": "..."}}``."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    inner = value.get("content", value) if isinstance(value, dict) else value
    if isinstance(inner, dict):
        inner = inner.get("content", inner)
    return inner if isinstance(inner, str) else str(inner)


def _retrieved(item: Any) -> Retrieved:
    meta = {}
    for k in ("created_at", "updated_at"):
        if (v := getattr(item, k, None)) is not None:
            meta[k] = v.isoformat()
    score = getattr(item, "score", None)
    return Retrieved(
        text=_content(item.value),
        score=float(score) if isinstance(score, (int, float)) else None,
        meta=meta,
    )


def build(options: AnsweringOptions) -> Answering:
    product = LangMemProduct(options)
    prov = product.provenance()
    info = SystemInfo(
        name=NAME,
        description="LangMem (langmem) as released: its memory store manager over LangGraph's "
        "in-memory store, its own search; one answer call over what it retrieved",
        gated=False,
        offline=False,
        components={
            "product": f"langmem {prov['library_version']}",
            "llm": options.model,
            "embedder": product.embedder_spec,
            "store": f"LangGraph InMemoryStore ({product.dimensions} dims)",
            "answerer": f"{answer_provenance()['answer_prompt']} on {options.model}",
        },
    )
    return Answering(
        info=info,
        factory=lambda: LangMemSystem(product, info),
        provenance=prov,
        model=options.model,
        source=Path(__file__),
        usage=lambda: product.usage,
    )


__all__ = ["LangMemProduct", "LangMemSystem", "build"]
