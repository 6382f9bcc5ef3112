"""A model's view of the workspace's answer cache: what a call's key is made of, and its rows.

Content-addressed: the key hashes everything that changes the answer (the model, the request's
prompt, system, schema, sampling and seed, the provider's own settings), so a re-run after a kill
repeats no answered call, and anything else (the purpose, the output budget, the strategy) leaves
it unchanged. A product's chat call is keyed by the whole body it sent, an embedding by its text
(``forwarding``). The rows live in ``llm_cache`` through the store (``_store``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ._store import CACHE_VERSION
from .request import RawReply, Request
from .structured import schema_json


class Cache:
    """The cache entries of one model (``model.cache``); without a workspace, nothing is kept."""

    def __init__(self, model: Any):
        self.model = model

    def key(self, request: Request) -> str:
        """The cache key of ``request`` for this model."""
        model, schema = self.model, request.schema
        payload = {
            "v": CACHE_VERSION,
            "family": model.family,
            "model": model.name,
            "system": request.system,
            "prompt": request.prompt,
            "schema": schema_json(schema) if schema else None,
            "schema_name": schema.__name__ if schema else None,
            "temperature": request.temperature,
            "logprobs": request.logprobs,
            "top_logprobs": request.top_logprobs,
            "seed_key": request.seed_key,
            "params": model.cache_params(),
        }
        if model.options.repeat > 1:  # a repeated run's own entries; the first run's keys unchanged
            payload["repeat"] = model.options.repeat
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def has(self, key: str) -> bool:
        store = self.model._store
        return store is not None and store.has(key)

    def get(self, key: str) -> dict[str, Any] | None:
        store = self.model._store
        return None if store is None else store.get(key)

    def put(self, key: str, req: Request, raw: RawReply, latency: float) -> None:
        """Keep a validated answer to ``req`` (as sent: its prompt, its strategy)."""
        model = self.model
        if model._store is None:
            return
        model._store.put(
            {
                "key": key,
                "family": model.family,
                "requested_model": model.name,
                "resolved_model": raw.resolved_model or model.name,
                "purpose": req.purpose,
                "system": req.system,
                "prompt": req.prompt,
                "schema_name": req.schema.__name__ if req.schema else None,
                "response_text": raw.text,
                "logprobs_json": json.dumps(raw.logprobs) if raw.logprobs is not None else None,
                "input_tokens": raw.input_tokens,
                "output_tokens": raw.output_tokens,
                "cached_tokens": raw.cached_tokens,
                "latency_s": latency,
                "strategy": req.strategy,
            }
        )

    # -- products' calls (``forwarding``) --------------------------------------------------------
    def chat_key(self, body: dict[str, Any]) -> str:
        model = self.model
        payload = {
            "v": CACHE_VERSION,
            "kind": "chat",
            "family": model.family,
            "model": model.name,
            "body": body,
            "params": model.cache_params(),
        }
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def embed_key(self, text: str, dimensions: int | None) -> str:
        model = self.model
        payload = {
            "v": CACHE_VERSION,
            "kind": "embedding",
            "family": model.family,
            "model": model.name,
            "dimensions": dimensions,
            "text": text,
        }
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(raw.encode()).hexdigest()

    def put_chat(
        self,
        key: str,
        body: dict[str, Any],
        completion: dict[str, Any],
        raw: RawReply,
        purpose: str,
        latency: float,
    ) -> None:
        """Keep a product's chat completion, under the body it sent (system messages apart)."""
        model = self.model
        if model._store is None:
            return
        system = (
            "\n\n".join(
                str(m.get("content") or "")
                for m in body.get("messages", [])
                if isinstance(m, dict) and m.get("role") == "system"
            )
            or None
        )
        model._store.put(
            {
                "key": key,
                "family": model.family,
                "requested_model": model.name,
                "resolved_model": raw.resolved_model or model.name,
                "purpose": purpose,
                "system": system,
                "prompt": json.dumps(
                    {k: v for k, v in body.items() if k != "model"},
                    ensure_ascii=False,
                    sort_keys=True,
                ),
                "schema_name": None,
                "response_text": json.dumps(completion, ensure_ascii=False),
                "logprobs_json": None,
                "input_tokens": raw.input_tokens,
                "output_tokens": raw.output_tokens,
                "cached_tokens": raw.cached_tokens,
                "latency_s": latency,
                "strategy": None,
            }
        )

    def put_embedding(
        self, key: str, text: str, vector: list[float], purpose: str, latency: float
    ) -> None:
        """Keep one text's embedding (its tokens are counted on the request, not per text)."""
        model = self.model
        if model._store is None:
            return
        model._store.put(
            {
                "key": key,
                "family": model.family,
                "requested_model": model.name,
                "resolved_model": model.name,
                "purpose": purpose,
                "system": None,
                "prompt": text,
                "schema_name": "embedding",
                "response_text": json.dumps(vector),
                "logprobs_json": None,
                "input_tokens": None,
                "output_tokens": None,
                "cached_tokens": None,
                "latency_s": latency,
                "strategy": None,
            }
        )
