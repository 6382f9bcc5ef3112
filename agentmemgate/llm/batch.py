"""``--batch``: the providers' batch APIs (half the price, answers within 24 hours) for any command.

How it works: ``run_batched(ws, fn)`` runs the command's own library function ``fn`` with a
*collector* active. While it is active, ``Model.complete`` answers from the cache as always;
a call the cache cannot answer is not sent: the collector records it (the exact body ``execute``
would send, with its cache key, purpose, schema, strategy and budget) and raises ``Deferred``,
which ``run_concurrent`` treats as "not done yet" (the item is skipped, not failed) and which
passes through the rooms' ``except Exception`` handlers. When ``fn`` returns, the collected
requests go out as one batch per model (OpenAI: an uploaded JSONL file and a batch; Anthropic: a
message batch), stored in the workspace (``llm_batches``, ``llm_batch_requests``) and polled with
a progress bar. Every result passes the checks a live reply passes (``asking``): valid
ones are cached and logged (call-log rows with ``batch = 1``), invalid ones are re-asked with the
problem sent back in a follow-up batch, refusals and expired, cancelled or errored requests are
recorded with their reasons and fail this run's item (a re-run submits them again). Then ``fn``
runs again: everything answered comes from the cache, and work whose next call needed the last
answer (an arc's next turn in ``eval run``) defers its next call: the next wave, one batch for
every item's next step. The loop ends when a pass defers nothing.

A re-run while batches are out (after Ctrl-C, a kill, or ``--no-wait``) defers the same cache keys,
finds them in the stored batches and waits for those instead of submitting again. ``--no-wait``
submits, collects whatever has already ended, and raises ``BatchesPending`` (the CLI exits 2).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import sqlite_utils

from ..errors import AmgError
from ..progress import progress_bar, say
from ..run_context import run_context
from ..workspace import DB_NAME, Workspace, now
from ._batch_state import BatchInfo, Deferred, Outcome, active_collector
from ._errors import CallFailed, FatalProviderError, scrub, shorten
from .asking import Asking, gave_up, read_reply, reask
from .structured import STRATEGY_FIELDS, ask_text, feedback

T = TypeVar("T")
MAX_PER_BATCH = 10_000  # well under both providers' limits (50,000 / 100,000 requests, 200+ MB)
DEFAULT_POLL_S = 30.0
FAILED = ("errored", "expired", "cancelled", "missing", "refused")


class BatchesPending(AmgError):
    """``--no-wait``: batches are submitted (or still running); a re-run collects them."""

    def __init__(self, batches: int, requests: int):
        self.batches, self.requests = batches, requests
        super().__init__(
            f"submitted; re-run to collect ({requests} request"
            f"{'s' if requests != 1 else ''} in {batches} batch"
            f"{'es' if batches != 1 else ''} still running)"
        )


def independent(fn: Callable[[Any], T], items: Any) -> list[T]:
    """``[fn(x) for x in items]`` for calls that do not depend on each other (votes of one item,
    one judge question per session): under ``--batch`` every one that defers is collected before
    ``Deferred`` is raised, so they share a batch instead of going one wave each."""
    out: list[T] = []
    deferred = False
    for x in items:
        try:
            out.append(fn(x))
        except Deferred:
            deferred = True
    if deferred:
        raise Deferred()
    return out


@dataclasses.dataclass(eq=False)
class _Call:
    """One deferred ``complete`` call (``ask``: the question and its tries) and where it stands."""

    model: Any
    ask: Asking
    batch_id: str | None = None  # in flight in this batch
    sent: Any = None  # the Request sent (for the cache row)
    tool: str | None = None
    queued: bool = False
    failure: CallFailed | None = None
    done: bool = False


class _Store:
    """The batch tables, on a connection of their own (worker threads defer calls)."""

    def __init__(self, ws: Workspace):
        conn = sqlite3.connect(ws.path / DB_NAME, timeout=30, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        self.db = sqlite_utils.Database(conn)
        self.lock = threading.RLock()

    def rows(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        with self.lock:
            cur = self.db.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    def latest(self, key: str) -> dict[str, Any] | None:
        rows = self.rows(
            "select r.*, b.ended, b.collected_at, b.state as batch_state from "
            "llm_batch_requests r join llm_batches b on b.id = r.batch_id where "
            "r.cache_key = ? order by r.created_at desc, r.try desc, r.rowid desc "
            "limit 1",
            [key],
        )
        return rows[0] if rows else None

    def write(self, sql: str, params: list[Any] | list[list[Any]], many: bool = False) -> None:
        with self.lock, self.db.conn:
            (self.db.conn.executemany if many else self.db.conn.execute)(sql, params)

    def close(self) -> None:
        self.db.conn.close()


class Collector:
    """Collects deferred calls, submits them as batches, polls, and settles their results."""

    def __init__(
        self,
        ws: Workspace,
        *,
        show_progress: bool = True,
        poll_interval: float = DEFAULT_POLL_S,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.ws = ws
        self.store = _Store(ws)
        self.show_progress = show_progress
        self.poll_interval = poll_interval
        self.sleep = sleep
        self.lock = threading.RLock()
        self.calls: dict[str, _Call] = {}
        self.queue: list[_Call] = []
        self.models: dict[str, Any] = {}  # batch id -> model
        self.deferred = 0  # deferred in the current pass
        self.settled = 0  # results settled so far (progress of the loop)
        self.submitted = 0  # batches submitted by this run
        self.closed = False  # run_batched has returned: late calls are abandoned, never sent

    # -- called by Model.complete (any thread) -----------------------------------------------
    def defer(self, model: Any, ask: Asking) -> None:
        """Record a call the cache could not answer; raise ``Deferred`` (or this run's failure)."""
        if self.closed:
            raise Deferred()
        if model._store is None:
            raise FatalProviderError("--batch needs a workspace to keep the batches and answers in")
        model.check_batch_api()
        with self.lock:
            c = self.calls.get(ask.key)
            if c is None:
                c = _Call(model=model, ask=ask)
                self.calls[ask.key] = c
                self._restore(c)
            if c.failure is not None:
                f = c.failure
                raise CallFailed(str(f), kind=f.kind, problem=f.problem)
            if not c.done and c.batch_id is None and not c.queued:
                c.queued = True
                self.queue.append(c)
            self.deferred += 1
        raise Deferred()

    def _restore(self, c: _Call) -> None:
        """Pick up what an earlier run left for this call: a batch still out, a result not yet
        read, or an invalid reply to re-ask. Failed requests of earlier runs are asked again."""
        ask = c.ask
        row = self.store.latest(ask.key)
        if row is None:
            return
        meta = json.loads(row["request_json"])
        if row["status"] == "pending" and not row["collected_at"]:
            c.batch_id, ask.tries = row["batch_id"], row["try"] - 1
            ask.budget = meta.get("_budget") or ask.budget
            c.sent, c.tool = ask.request(meta["_prompt"], meta.get("_strategy")), meta.get("_tool")
            self.models.setdefault(row["batch_id"], c.model)
        elif row["status"] == "returned" and row["raw_json"]:
            ask.tries = row["try"] - 1
            ask.budget = meta.get("_budget") or ask.budget
            c.sent, c.tool = ask.request(meta["_prompt"], meta.get("_strategy")), meta.get("_tool")
            self._settle(
                c,
                Outcome(row["custom_id"], "returned", payload=json.loads(row["raw_json"])),
                row["batch_id"],
            )
        elif (
            row["status"] == "invalid_output"
            and row["try"] < c.model.options.invalid_output_retries + 1
        ):
            ask.tries = row["try"]
            text = json.loads(row["raw_json"] or "{}").get("_text", "")
            ask.asked = feedback(ask.question.prompt, row["error"] or "", text)
            ask.budget = meta.get("_budget") or ask.budget
            ask.note = f"re-ask {ask.tries + 1}: the problem was sent back"

    def answered(self, key: str) -> bool:
        """Whether a batch of this run answered this call (its cache hit in a later pass is the
        call itself, not a cache hit to report)."""
        with self.lock:
            c = self.calls.get(key)
            return c is not None and c.done

    # -- the loop ---------------------------------------------------------------------------
    def submit(self) -> int:
        """Send every queued call, one batch per model (chunked); returns batches submitted."""
        with self.lock:
            queue, self.queue = self.queue, []
        by_model: dict[int, list[_Call]] = {}
        for c in queue:
            by_model.setdefault(id(c.model), []).append(c)
        n = 0
        for calls in by_model.values():
            for i in range(0, len(calls), MAX_PER_BATCH):
                self._submit(calls[i : i + MAX_PER_BATCH])
                n += 1
        return n

    def _submit(self, calls: list[_Call]) -> None:
        model = calls[0].model
        api = model.batch_api()
        items, rows = [], []
        for c in calls:
            ask = c.ask
            strategy = model.strategy() if ask.schema is not None else None
            c.sent = ask.request(ask_text(ask.asked, ask.schema, strategy), strategy)
            body, c.tool = model.request_body(c.sent)
            items.append((ask.key, body))
            rows.append(c)
        info = api.submit(model, items)
        stamp = now()
        self.store.write(
            "insert or replace into llm_batches (id, provider, model, family, endpoint, state, "
            "ended, request_count, counts, input_file_id, output_file_id, error_file_id, error, "
            "created_at, updated_at) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                info.id,
                model.provider,
                model.name,
                model.family,
                model.endpoint,
                info.state,
                int(info.ended),
                len(items),
                json.dumps(_counts(info)),
                info.input_file_id,
                info.output_file_id,
                info.error_file_id,
                info.error or None,
                stamp,
                stamp,
            ],
        )
        self.store.write(
            "insert or replace into llm_batch_requests (batch_id, custom_id, cache_key, purpose, "
            "try, request_json, status, created_at, updated_at) values (?,?,?,?,?,?,?,?,?)",
            [
                [
                    info.id,
                    c.ask.key,
                    c.ask.key,
                    c.ask.question.purpose,
                    c.ask.tries + 1,
                    json.dumps(
                        {
                            "_prompt": c.sent.prompt,
                            "_tool": c.tool,
                            "_strategy": c.sent.strategy,
                            "_budget": c.ask.budget,
                            "body": body,
                        },
                        ensure_ascii=False,
                    ),
                    "pending",
                    stamp,
                    stamp,
                ]
                for c, (_, body) in zip(rows, items)
            ],
            many=True,
        )
        with self.lock:
            for c in calls:
                c.batch_id, c.queued = info.id, False
            self.models[info.id] = model
        self.submitted += 1
        say(
            f"{model.display}: submitted batch {info.id} ({len(items)} request"
            f"{'s' if len(items) != 1 else ''})"
        )

    def out(self) -> dict[str, Any]:
        """Batches with calls of this run still waiting on them: id -> model."""
        with self.lock:
            ids = {
                c.batch_id
                for c in self.calls.values()
                if c.batch_id and not c.done and c.failure is None
            }
            return {i: self.models[i] for i in ids}

    def poll(self, wait: bool = True) -> None:
        """Poll the batches out until every one has ended (``wait``) or once; collect the ended."""
        out = self.out()
        if not out:
            return
        sizes = {i: self._request_count(i) for i in out}
        total = sum(sizes.values())
        label = ", ".join(sorted({m.display for m in out.values()}))
        progress = dict.fromkeys(out, 0)
        shown = 0
        try:
            with progress_bar(
                f"batch ({label})", total=total, enabled=self.show_progress
            ) as advance:
                while out:
                    for batch_id, model in list(out.items()):
                        info = model.batch_api().retrieve(model, batch_id)
                        self._update(info)
                        progress[batch_id] = (
                            sizes[batch_id] if info.ended else min(info.done, sizes[batch_id])
                        )
                        if info.ended:
                            self._collect(model, info)
                            del out[batch_id]
                    for _ in range(sum(progress.values()) - shown):
                        advance()
                    shown = sum(progress.values())
                    if not out or not wait:
                        break
                    self.sleep(self.poll_interval)
        except KeyboardInterrupt:
            say(
                "the batches keep running at the provider; re-run the same command to collect "
                "them (nothing is submitted twice)"
            )
            raise

    def _request_count(self, batch_id: str) -> int:
        rows = self.store.rows("select request_count from llm_batches where id = ?", [batch_id])
        return rows[0]["request_count"] if rows else 0

    def _update(self, info: BatchInfo) -> None:
        self.store.write(
            "update llm_batches set state = ?, ended = ?, counts = ?, output_file_id = ?, "
            "error_file_id = ?, error = ?, updated_at = ? where id = ?",
            [
                info.state,
                int(info.ended),
                json.dumps(_counts(info)),
                info.output_file_id,
                info.error_file_id,
                info.error or None,
                now(),
                info.id,
            ],
        )

    def _collect(self, model: Any, info: BatchInfo) -> None:
        """Store every result of an ended batch, then settle the calls this run made."""
        api = model.batch_api()
        outcomes = (
            {} if info.state == "failed" else {o.custom_id: o for o in api.results(model, info)}
        )
        rows = self.store.rows(
            "select custom_id, cache_key from llm_batch_requests where "
            "batch_id = ? and status = 'pending'",
            [info.id],
        )
        stamp = now()
        updates = []
        for r in rows:
            o = outcomes.get(r["custom_id"])
            if o is None:
                why = (
                    f"the batch failed: {info.error}"
                    if info.state == "failed" and info.error
                    else f"the batch ended {info.state} without a result for this request"
                )
                o = Outcome(
                    r["custom_id"], "missing" if info.state != "failed" else "errored", error=why
                )
                outcomes[r["custom_id"]] = o
            updates.append(
                [
                    o.status,
                    o.http_status,
                    o.error or None,
                    json.dumps(o.payload, ensure_ascii=False) if o.payload else None,
                    stamp,
                    info.id,
                    r["custom_id"],
                ]
            )
        self.store.write(
            "update llm_batch_requests set status = ?, http_status = ?, error = ?, "
            "raw_json = ?, updated_at = ? where batch_id = ? and custom_id = ?",
            updates,
            many=True,
        )
        self.store.write("update llm_batches set collected_at = ? where id = ?", [stamp, info.id])
        with self.lock:
            mine = [c for c in self.calls.values() if c.batch_id == info.id and not c.done]
        for c in mine:
            key = c.ask.key
            o = outcomes.get(key) or Outcome(key, "missing", error="no result")
            self._settle(c, o, info.id)
        if info.failed or info.state != "completed" and info.state != "ended":
            say(
                f"{model.display}: batch {info.id} ended {info.state}"
                + (
                    f" ({info.failed} failed request{'s' if info.failed != 1 else ''})"
                    if info.failed
                    else ""
                )
                + (f": {info.error}" if info.error else "")
            )

    # -- one result through the live path's checks -------------------------------------------
    def _settle(self, c: _Call, o: Outcome, batch_id: str) -> None:
        model, ask = c.model, c.ask
        with self.lock:
            c.batch_id = None
            self.settled += 1
        req = c.sent
        note = f"batch {batch_id}" + (f"; {ask.note}" if ask.note else "")
        if (
            o.status == "errored"
            and req is not None
            and req.strategy
            and o.field
            and o.field in STRATEGY_FIELDS.get(req.strategy, ())
        ):
            # the server refused this way of asking for JSON: move on, as a live call does
            self._log(c, req, "unsupported", None, o.error, note, o.http_status)
            self._mark(batch_id, ask.key, "unsupported", o.error)
            ask.note = model.structured.refused(
                req.strategy, CallFailed(o.error, kind="unsupported", field=o.field)
            )
            with self.lock:
                c.queued = True
                self.queue.append(c)
            return
        if o.status != "returned":
            reason = shorten(scrub(o.error or o.status, model.secrets()), 300)
            self._log(c, req, o.status, None, reason, note, o.http_status)
            model.usage.add(failures=1)
            c.failure = CallFailed(
                f"{model.label} batch {batch_id}: request {o.status}: {reason} "
                "(a re-run submits it again)",
                kind=f"batch_{o.status}",
            )
            return
        raw = model.batch_reply(o.payload, c.tool)
        ask.tries += 1
        # billed at the provider's batch price (genai-prices' batch variant; a model without one
        # keeps its live price), every reply received: an invalid one is billed too
        cost = model.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens, batch=True)
        live = model.call_cost(raw.input_tokens, raw.output_tokens, raw.cached_tokens)
        model.usage.add(
            calls=1,
            requests=1,
            input_tokens=raw.input_tokens,
            output_tokens=raw.output_tokens,
            cached_tokens=raw.cached_tokens,
            batch_calls=1,
            batch_input_tokens=raw.input_tokens,
            batch_output_tokens=raw.output_tokens,
            batch_cached_tokens=raw.cached_tokens,
            unpriced=cost is None,
            cost_usd=cost,
            batch_cost_usd=cost,
            batch_live_cost_usd=live,
        )
        if raw.refusal is not None:
            reason = shorten(scrub(raw.refusal or "no reason given", model.secrets()))
            self._log(c, req, "refused", raw, reason, note, o.http_status)
            self._mark(batch_id, ask.key, "refused", reason)
            model.usage.add(failures=1)
            c.failure = CallFailed(f"{model.label} refused to answer: {reason}", kind="refusal")
            return
        parsed, problem = read_reply(ask, raw)
        if problem is None:
            self._log(c, req, "ok", raw, "", note, o.http_status)
            model.cache.put(ask.key, req, raw, 0.0)
            self._mark(batch_id, ask.key, "ok", None)
            c.done = True
            return
        self._log(c, req, "invalid_output", raw, problem, note, o.http_status)
        self._mark(batch_id, ask.key, "invalid_output", problem, raw.text)
        tries = model.options.invalid_output_retries + 1
        if ask.tries < tries:
            reask(ask, raw, problem)
            with self.lock:
                c.queued = True
                self.queue.append(c)  # the follow-up batch
            return
        model.usage.add(failures=1)
        c.failure = gave_up(model.label, ask, tries, problem)

    def _mark(
        self, batch_id: str, key: str, status: str, error: str | None, text: str | None = None
    ) -> None:
        if text is not None:  # keep the reply text for a re-ask by a later run
            self.store.write(
                "update llm_batch_requests set raw_json = json_set(coalesce(raw_json,"
                " '{}'), '$._text', ?) where batch_id = ? and custom_id = ?",
                [text, batch_id, key],
            )
        self.store.write(
            "update llm_batch_requests set status = ?, error = ?, updated_at = ? "
            "where batch_id = ? and custom_id = ?",
            [status, error, now(), batch_id, key],
        )

    def _log(
        self,
        c: _Call,
        req: Any,
        status: str,
        raw: Any,
        error: str,
        note: str,
        http_status: int | None,
    ) -> None:
        ask = c.ask
        c.model.call_log.record_batch(
            ask.key,
            ask.question.purpose,
            req,
            ask.tries if raw else ask.tries + 1,
            status=status,
            raw=raw,
            error=error,
            note=note,
            http_status=http_status,
        )

    def close(self) -> None:
        self.store.close()


def _counts(info: BatchInfo) -> dict[str, int]:
    return {"total": info.total, "done": info.done, "failed": info.failed}


def run_batched(
    ws: Workspace,
    fn: Callable[[], T],
    *,
    wait: bool = True,
    show_progress: bool = True,
    poll_interval: float = DEFAULT_POLL_S,
    sleep: Callable[[float], None] = time.sleep,
) -> T | None:
    """Run ``fn`` until a pass of it defers no model call, answering its calls by batches.

    Raises ``BatchesPending`` when ``wait`` is False and batches are still running.
    """
    if active_collector() is not None:
        raise RuntimeError("run_batched does not nest")
    c = Collector(ws, show_progress=show_progress, poll_interval=poll_interval, sleep=sleep)
    try:
        with run_context(collector=c):
            try:
                return _passes(fn, c, wait)
            finally:
                c.closed = True
    finally:
        c.close()


def _passes(fn: Callable[[], T], c: Collector, wait: bool) -> T | None:
    """``run_batched``'s passes, each followed by submitting and collecting what it deferred."""
    idle = 0
    while True:
        c.deferred = 0
        settled = c.settled
        try:
            result = fn()
        except Deferred:  # a room whose calls are not fanned out stops at its first one
            result = None
        if c.deferred == 0:
            return result
        c.submit()
        c.poll(wait=wait)
        if c.out():
            n = len(c.out())
            requests = sum(
                1 for x in c.calls.values() if x.batch_id and not x.done and x.failure is None
            )
            raise BatchesPending(n, requests)
        idle = idle + 1 if c.settled == settled and not c.queue else 0
        if idle > 1:  # pragma: no cover - a pass that defers without anything to wait for
            raise RuntimeError("batch loop made no progress")


def deferring() -> bool:
    """Whether the running pass of ``run_batched`` has deferred a call so far (a pipeline skips
    its final steps, e.g. an export, until a pass defers nothing)."""
    c = active_collector()
    return c is not None and c.deferred > 0


def batch_rows(ws: Workspace) -> Iterator[dict[str, Any]]:
    """The stored batches, newest first (for reports and tests)."""
    yield from ws.db.query("select * from llm_batches order by created_at desc, rowid desc")
