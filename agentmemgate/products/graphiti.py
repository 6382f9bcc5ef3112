"""``graphiti``: the Graphiti product (PyPI ``graphiti-core`` 0.31) run by the answering protocol
(paper, Appendix A.7), configured and never patched.

- Store: an embedded FalkorDB (``falkordblite``, Python 3.12+) in a fresh directory per
  conversation under the workspace's ``products/graphiti/``, shut down and removed when it ends
  (a killed run's are swept by the next: ``_embedded_falkordb``); or ``--graph-url`` for a FalkorDB
  (``falkor://host:6379``) or Neo4j (``bolt://``/``neo4j://``) server. The conversation's opaque
  namespace is its Graphiti ``group_id`` (on FalkorDB, its own graph), so nothing of another
  conversation can be retrieved.
- Ingestion: one ``add_episode`` per session, in order, ``source=EpisodeType.message``, the body
  one ``role: text`` line per turn (Graphiti's format for message episodes), ``reference_time``
  the session's date (00:00 UTC). Graphiti's own extraction, deduplication, invalidation and
  summaries run unchanged.
- Retrieval: after every session ``Graphiti.search(question, group_ids=[namespace])`` (its
  out-of-the-box hybrid search, RRF), the facts kept with ``valid_at``/``invalid_at``; then the
  one answer call of ``products.answer`` (the same model, the fixed versioned prompt) sees those
  facts, the question and the date only. Then every edge of the group is read
  (``EntityEdge.get_by_group_ids``, no model call) for the evaluation's store reader.
- Models: Graphiti's ``OpenAIGenericClient`` (chat completions with a ``json_schema`` response
  format, or ``json_object`` with the schema in the prompt where the server refuses
  ``json_schema``: ``structured_mode``; its ``OpenAIClient`` needs the Responses API, which
  OpenAI-compatible servers mostly lack), ``OpenAIEmbedder`` and ``OpenAIRerankerClient`` all point at ``llm.serve.LLMEndpoint``:
  our LLM layer served on 127.0.0.1 for the run, so every product call is cached, logged and
  replayed on a re-run (the prompts carry no namespace, ids or clock). ``search`` does not call the
  reranker (RRF); it is configured so nothing defaults to api.openai.com.
- Telemetry off (``GRAPHITI_TELEMETRY_ENABLED=false``, set before Graphiti is imported).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import AmgError, BadInput, MissingExtra
from ..llm import CallFailed, FatalProviderError
from ..memory.answering import AnsweringSystem, ProbeAnswer, Retrieved, SessionInput
from ..memory.system import SystemInfo
from ._base import make_model, provenance
from ._embedded_falkordb import new_workdir, record_owner, stop_server, sweep_orphans
from .answer import answer_probe, answer_provenance
from .contract import Answering, AnsweringOptions, library_version

os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # before graphiti_core is imported

INSTALL = "pip install 'agentmemgate[graphiti]'"
NUM_RESULTS = 10  # Graphiti.search's own default (DEFAULT_SEARCH_LIMIT)
EMBEDDING_DIM = 1024  # Graphiti's default EmbedderConfig.embedding_dim (vectors are cut to it)
SOURCE_DESCRIPTION = "conversation between the user and the assistant"
FALKOR_SCHEMES = ("falkor", "falkordb", "redis", "rediss")
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
EMBEDDED_NEEDS = (
    "graphiti's embedded FalkorDB (falkordblite) needs Python 3.12+ (this is "
    "{v}): run on Python 3.12+ with {install}, or give --graph-url for a FalkorDB "
    "or Neo4j server"
)


def episode_body(session: SessionInput) -> str:
    """A session as a Graphiti message episode: one ``role: text`` line per turn, in order."""
    return "\n".join(f"{t.role}: {' '.join(t.text.split())}" for t in session.turns)


def reference_time(date: dt.date) -> dt.datetime:
    return dt.datetime.combine(date, dt.time(0), tzinfo=dt.UTC)


def group_id(namespace: str) -> str:
    """The namespace as a Graphiti group id: letters, digits and ``_`` only. Graphiti accepts
    ``-`` too, but on FalkorDB its full-text (BM25) search filters on the group id as a RediSearch
    term, and RediSearch splits indexed text at ``-``: a hyphenated group id matches nothing, and
    search silently falls back to embeddings alone (getzep/graphiti#1269, #1483; fix proposed in
    #1845, not in 0.31)."""
    gid = re.sub(r"[^A-Za-z0-9_]", "_", namespace)
    if not gid:
        raise BadInput("graphiti needs a non-empty namespace")
    return gid


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def retrieved_of(edges: list[Any]) -> list[Retrieved]:
    """Graphiti's ``EntityEdge`` results as the protocol keeps them: the fact, its validity."""
    out = []
    for e in edges:
        meta = {"relation": e.name}
        if getattr(e, "expired_at", None) is not None:
            meta["expired_at"] = _iso(e.expired_at)
        out.append(
            Retrieved(
                text=e.fact, valid_at=_iso(e.valid_at), invalid_at=_iso(e.invalid_at), meta=meta
            )
        )
    return out


def structured_mode(model: Any, options: AnsweringOptions) -> str:
    """Graphiti's ``structured_output_mode`` for this server: ``json_schema`` where the server takes
    a ``json_schema`` response format, else ``json_object`` (Graphiti then puts the schema in the
    prompt). ``--structured-output`` decides when given; otherwise the LLM layer's own negotiation
    does, once per server and remembered in the workspace: one small structured call (cached, so
    a re-run makes none). llama-cpp-python's server, for one, refuses ``json_schema``."""
    forced = options.llm_options.get("structured_output", "auto")
    if forced != "auto":
        return "json_schema" if forced == "json_schema" else "json_object"
    from pydantic import BaseModel

    class ServerCheck(BaseModel):
        ok: bool

    try:
        model.complete(
            'Reply with the JSON object {"ok": true} and nothing else.',
            schema=ServerCheck,
            purpose="product.graphiti.structured_check",
            max_tokens=20,
        )
    except CallFailed:
        pass  # the strategy the server refused is remembered all the same
    return "json_schema" if model.strategy() == "json_schema" else "json_object"


def embedding_dimensions(embedder: Any, spec: str) -> int:
    """The vector size Graphiti stores: the embedder's (one cached call), cut to Graphiti's
    ``embedding_dim``. An embedder that cannot embed stops the run here, in one line."""
    try:
        vec = embedder.embed(["dimension check"], purpose="product.graphiti.embed")[0]
    except (CallFailed, FatalProviderError) as e:
        raise FatalProviderError(
            f"graphiti needs embeddings from {spec} (--embedder, --embedder-base-url): {e}"
        ) from None
    if not vec:
        raise FatalProviderError(f"{spec} returned an empty embedding")
    return min(len(vec), EMBEDDING_DIM)


# --------------------------------------------------------------------------- the store


class GraphStore:
    """Where a conversation's graph lives: ``embedded`` or a server URL (``--graph-url``)."""

    def __init__(self, graph_url: str | None):
        self.url = graph_url
        if graph_url is None:
            self.kind = "embedded"
            return
        parts = urlsplit(graph_url)
        scheme = parts.scheme.lower()
        if scheme in FALKOR_SCHEMES:
            self.kind = "falkordb"
        elif scheme in NEO4J_SCHEMES:
            self.kind = "neo4j"
        else:
            raise BadInput(
                f"--graph-url must be a FalkorDB (falkor://host:6379) or Neo4j "
                f"(bolt://host:7687, neo4j://...) URL, not {self.safe_url(graph_url)!r}"
            )
        if not parts.hostname:
            raise BadInput(f"--graph-url {self.safe_url(graph_url)!r} names no host")
        try:
            parts.port  # noqa: B018 (reading it validates the port)
        except ValueError:
            raise BadInput(f"--graph-url {self.safe_url(graph_url)!r} has a bad port") from None

    @staticmethod
    def safe_url(url: str) -> str:
        """The URL without its credentials (for messages; never stored)."""
        parts = urlsplit(url)
        if parts.username is None and parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = host + (f":{parts.port}" if parts.port else "")
        return parts._replace(netloc=netloc).geturl()

    def describe(self) -> str:
        """For provenance and reports: what the store is, never where or with which password."""
        if self.kind == "embedded":
            return (
                f"embedded FalkorDB (falkordblite {library_version('falkordblite')}), a fresh "
                "database per conversation"
            )
        return (
            f"{'FalkorDB' if self.kind == 'falkordb' else 'Neo4j'} server (--graph-url), one "
            "group per conversation"
        )

    def check_available(self, version: tuple[int, ...] = tuple(sys.version_info[:2])) -> None:
        """A one-line ``MissingExtra`` when this store cannot run here (``version``: Python's)."""
        if self.kind == "embedded":
            if tuple(version[:2]) < (3, 12):
                raise MissingExtra(
                    EMBEDDED_NEEDS.format(v=".".join(map(str, version[:2])), install=INSTALL)
                )
            _require("redislite", "falkordblite")
        if self.kind in ("embedded", "falkordb"):
            _require("falkordb", "falkordb")
        if self.kind == "neo4j":
            _require("neo4j", "neo4j")

    def open(self, gid: str, workdir: Path | None) -> tuple[Any, Any]:
        """(Graphiti graph driver, embedded database or None). Call outside the event loop."""
        if self.kind == "embedded":
            from graphiti_core.driver.falkordb_driver import FalkorDriver
            from redislite.async_falkordb_client import AsyncFalkorDB

            assert workdir is not None
            db = AsyncFalkorDB(str(workdir / "graph.db"))
            return FalkorDriver(falkor_db=db, database=gid), db
        parts = urlsplit(self.url or "")
        user = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
        if self.kind == "falkordb":
            from graphiti_core.driver.falkordb_driver import FalkorDriver

            return FalkorDriver(
                host=parts.hostname,
                port=parts.port or 6379,
                username=user,
                password=password,
                database=gid,
            ), None
        from graphiti_core.driver.neo4j_driver import Neo4jDriver

        netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
        uri = parts._replace(netloc=netloc).geturl()
        return Neo4jDriver(
            uri,
            user or os.environ.get("NEO4J_USER", "neo4j"),
            password if password is not None else os.environ.get("NEO4J_PASSWORD"),
        ), None


def _require(module: str, distribution: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingExtra(f"graphiti needs {distribution!r}, which is not installed: {INSTALL}")


# --------------------------------------------------------------------------- the system


class SharedEndpoint:
    """The LLM-layer endpoint of one run, open while any conversation is (each gets its URL and
    per-run key at ``begin``)."""

    def __init__(self, chat: Any, embedder: Any):
        self.chat, self.embedder = chat, embedder
        self._endpoint: Any = None
        self._open = 0
        self._lock = threading.Lock()

    def acquire(self) -> Any:
        from ..llm.serve import LLMEndpoint

        with self._lock:
            if self._endpoint is None:
                self._endpoint = LLMEndpoint(
                    self.chat, self.embedder, purpose="product.graphiti"
                ).start()
            self._open += 1
            return self._endpoint

    def release(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open == 0 and self._endpoint is not None:
                self._endpoint.stop()
                self._endpoint = None


class GraphitiSystem(AnsweringSystem):
    """One conversation in its own Graphiti memory, driven from the calling thread's event loop."""

    def __init__(
        self,
        info: SystemInfo,
        *,
        store: GraphStore,
        endpoint: Any,
        chat_name: str,
        embed_name: str,
        answer: Callable[[str, dt.date, list[Retrieved]], str],
        num_results: int = NUM_RESULTS,
        embedding_dim: int = EMBEDDING_DIM,
        structured: str = "json_schema",
        root: Path | None = None,
    ):
        self.info = info
        self.root = root if root is not None else Path(tempfile.gettempdir())
        self.structured = structured
        self.store, self.shared = store, endpoint
        self.endpoint: Any = None  # the run's LLMEndpoint while this conversation is open
        self.chat_name, self.embed_name = chat_name, embed_name
        self._answer = answer
        self.num_results, self.embedding_dim = num_results, embedding_dim
        self.group: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._graphiti: Any = None
        self._db: Any = None
        self._clients: list[Any] = []
        self._workdir: Path | None = None
        self._calls = 0
        self.episodes: list[str] = []  # uuids of the episodes added, in order

    # -- running Graphiti's coroutines
    def _run(self, coro: Any) -> Any:
        assert self._loop is not None, "begin() first"
        try:
            return self._loop.run_until_complete(coro)
        except (AmgError, CallFailed):
            raise
        except Exception:
            if self.endpoint is not None:
                self.endpoint.raise_fatal()  # a bad key or an unreachable model: stop, one line
            raise

    def begin(self, namespace: str) -> None:
        try:
            self._begin(namespace)
        except BaseException:
            self.close()  # the protocol closes only what began
            raise

    def _begin(self, namespace: str) -> None:
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
        from openai import AsyncOpenAI

        self.group = group_id(namespace)
        self._loop = asyncio.new_event_loop()
        self.endpoint = self.shared.acquire()
        if self.store.kind == "embedded":
            self._workdir = new_workdir(self.root)
        driver, self._db = self.store.open(self.group, self._workdir)
        if self._db is not None:
            record_owner(self._workdir, self._db)
        url, key = self.endpoint.url, self.endpoint.api_key
        self._clients = [AsyncOpenAI(base_url=url, api_key=key) for _ in range(3)]
        config = LLMConfig(
            api_key=key, base_url=url, model=self.chat_name, small_model=self.chat_name
        )
        self._graphiti = Graphiti(
            graph_driver=driver,
            llm_client=OpenAIGenericClient(
                config, client=self._clients[0], structured_output_mode=self.structured
            ),
            embedder=OpenAIEmbedder(
                OpenAIEmbedderConfig(
                    api_key=key,
                    base_url=url,
                    embedding_model=self.embed_name,
                    embedding_dim=self.embedding_dim,
                ),
                client=self._clients[1],
            ),
            cross_encoder=OpenAIRerankerClient(config=config, client=self._clients[2]),
        )
        self._run(self._graphiti.build_indices_and_constraints())

    def ingest(self, session: SessionInput) -> None:
        from graphiti_core.nodes import EpisodeType

        result = self._run(
            self._graphiti.add_episode(
                name=f"session {session.index + 1}",
                episode_body=episode_body(session),
                source_description=SOURCE_DESCRIPTION,
                reference_time=reference_time(session.date),
                source=EpisodeType.message,
                group_id=self.group,
            )
        )
        self.episodes.append(result.episode.uuid)

    def search(self, question: str) -> list[Retrieved]:
        edges = self._run(
            self._graphiti.search(question, group_ids=[self.group], num_results=self.num_results)
        )
        return retrieved_of(edges)

    def answer(self, question: str, date: dt.date) -> ProbeAnswer:
        retrieved = self.search(question)
        self._calls += 1
        return ProbeAnswer(answer=self._answer(question, date, retrieved), retrieved=retrieved)

    def store_snapshot(self) -> list[dict[str, Any]]:
        """Every entity edge of this conversation's group now, with its relation name and
        validity (``EntityEdge.get_by_group_ids``; no model call), oldest first. The store
        reader keeps those valid at the probe."""
        from graphiti_core.edges import EntityEdge
        from graphiti_core.errors import GroupsEdgesNotFoundError

        try:
            edges = self._run(EntityEdge.get_by_group_ids(self._graphiti.driver, [self.group]))
        except GroupsEdgesNotFoundError:
            return []
        rows = [
            {
                "name": e.name,
                "fact": e.fact,
                "valid_at": _iso(e.valid_at),
                "invalid_at": _iso(e.invalid_at),
                "expired_at": _iso(e.expired_at),
                "created_at": _iso(e.created_at),
            }
            for e in edges
        ]
        return sorted(rows, key=lambda r: (r["created_at"] or "", r["fact"]))

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:

            async def shut() -> None:
                if self._graphiti is not None:
                    try:
                        await self._graphiti.close()
                    except Exception:
                        pass
                for c in self._clients:
                    await c.close()
                if self._db is not None:
                    await stop_server(self._db)

            loop.run_until_complete(shut())
        finally:
            loop.close()
            self._graphiti = self._db = None
            self._clients = []
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None
            if self.endpoint is not None:
                self.endpoint = None
                self.shared.release()

    @property
    def calls(self) -> int:
        """The answer calls of this conversation (Graphiti's own calls go through the endpoint
        and are in the call log under ``product.graphiti.chat`` / ``.embed``)."""
        return self._calls


def build(options: AnsweringOptions) -> Answering:
    from ..llm import get_model

    store = GraphStore(getattr(options, "graph_url", None))
    store.check_available()
    root = (
        Path(options.workspace.path) / "products" / "graphiti"
        if options.workspace is not None
        else Path(tempfile.gettempdir())
    )
    if store.kind == "embedded":
        sweep_orphans(root)  # servers a killed run left behind
    model = make_model(options)
    embed_spec = options.embedder or options.model
    if options.embedder:
        embedder = get_model(
            options.embedder,
            workspace=options.workspace,
            base_url=options.embedder_base_url or options.base_url,
            **options.llm_options,
        )
    else:
        embedder = model
    structured = structured_mode(model, options)
    dimensions = embedding_dimensions(embedder, embed_spec)
    endpoint = SharedEndpoint(model, embedder)
    version = library_version("graphiti-core")
    prompt = answer_provenance()
    info = SystemInfo(
        name="graphiti",
        description="Graphiti (graphiti-core): a temporal knowledge graph built from each session "
        "by the product's own extraction; its hybrid search answers each probe",
        gated=False,
        components={
            "product": f"graphiti-core {version}",
            "llm": options.model,
            "embedder": embed_spec,
            "store": store.describe(),
            "answerer": f"{prompt['answer_prompt']} on {options.model}",
        },
        offline=False,
    )

    def answer(question: str, date: dt.date, retrieved: list[Retrieved]) -> str:
        return answer_probe(model, question, date, retrieved)

    def factory() -> GraphitiSystem:
        return GraphitiSystem(
            info,
            store=store,
            endpoint=endpoint,
            chat_name=model.name,
            embed_name=embedder.name,
            answer=answer,
            structured=structured,
            root=root,
        )

    def usage() -> dict[str, int]:
        totals = dict(model.usage.as_dict())
        if embedder is not model:
            for k, v in embedder.usage.as_dict().items():
                totals[k] = totals.get(k, 0) + v
        return totals

    prov = provenance(
        "graphiti",
        library="graphiti-core",
        model=options.model,
        embedder=embed_spec,
        dimensions=dimensions,
        store=store.describe(),
        falkordb_client=library_version("falkordb") if store.kind != "neo4j" else None,
        falkordblite=library_version("falkordblite") if store.kind == "embedded" else None,
        llm_client=f"OpenAIGenericClient (chat completions, structured_output_mode={structured})",
        embedder_client="OpenAIEmbedder",
        cross_encoder="OpenAIRerankerClient (search uses RRF)",
        ingestion="one EpisodeType.message episode per session, 'role: text' per turn, "
        "reference_time = session date 00:00 UTC",
        retrieval=f"Graphiti.search(question, group_ids=[namespace], num_results={NUM_RESULTS})",
        telemetry="off",
        **prompt,
    )
    return Answering(
        info=info,
        factory=factory,
        provenance=prov,
        model=options.model,
        source=Path(__file__),
        usage=usage,
    )


__all__ = [
    "EMBEDDING_DIM",
    "GraphStore",
    "GraphitiSystem",
    "INSTALL",
    "NUM_RESULTS",
    "SharedEndpoint",
    "build",
    "embedding_dimensions",
    "episode_body",
    "group_id",
    "reference_time",
    "retrieved_of",
    "sweep_orphans",
]
