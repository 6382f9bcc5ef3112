"""``amg mine hedges``: stream a corpus, prefilter (stage 1), extract (stage 2), link outcomes.

Every stage stores its results in the workspace as they finish, so a killed run resumes: stage 1
is recomputed only if it never completed for this source (it is cheap and deterministic), stage 2
skips candidates this miner already answered, and outcome linking is redone (cheap, re-streams).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import AmgError, BadInput
from ..hashing import sha256_file
from ..llm import CallFailed
from ..llm.ref import ModelRef
from ..progress import bytes_bar, progress_bar
from ..workspace import Workspace, now
from . import _store
from ._rules import load_rules
from .accuracy import scorer_ref, summary_lines
from .extract import OFFLINE_MINER, OFFLINE_SCORED, Extractor, RuleExtractor
from .loaders import check_corpus, detect_format, iter_conversations, nothing_to_mine
from .longmemeval import variant_of
from .model import LICENSES, Candidate, Extraction, MinedStatement, MinePlan, MineSummary
from .outcomes import at_risk_measurable, link_outcome
from .prefilter import PREFILTERS, Lexicon, load_lexicon, prefilter_line, scan_conversation
from .public import published_sha256
from .scorer import Scorer, load_scorer

OFFLINE_MINERS = ("offline", OFFLINE_MINER, OFFLINE_SCORED)


def default_scorer() -> Scorer | None:
    """The scorer of the default offline miner (``--miner offline``): none, the rules alone
    decide. ``scorer.v1`` (``--miner offline-scorer``) kept more speculation turns on held-out
    LoCoMo conversations but no larger a share of what it kept was speculation, and a smaller
    share on LongMemEval (docs/how-to/mining.md), so it is not the default."""
    return None


def source_key(path: Path, limit: int | None = None) -> str:
    """Names a mined source in the workspace: file name and size (hashing GBs would be slow)."""
    key = f"{path.name}:{path.stat().st_size}"
    return f"{key}:first{limit}" if limit else key


def get_extractor(
    miner: str | ModelRef,
    workspace: Workspace,
    *,
    concurrency: int = 4,
    progress: bool = False,
) -> Extractor:
    """``offline`` (rule-based stage 2) or a model spec ``provider:model`` (LLM stage 2), as a
    spec or a ``ModelRef`` (its base URL and model options, ``timeout``, ``max_tokens`` ...,
    go to the model)."""
    ref = ModelRef.parse(miner)
    if ref.spec in OFFLINE_MINERS:
        miner = ref.spec
        if ref.base_url:
            raise BadInput("--miner-base-url needs an LLM miner such as --miner openai:MODEL")
        scorer = load_scorer() if miner == OFFLINE_SCORED else None
        return RuleExtractor(scorer=scorer if miner != "offline" else default_scorer())
    from .llm_extract import LLMExtractor

    return LLMExtractor(ref, workspace=workspace, concurrency=concurrency, progress=progress)


# -- stage 1 ---------------------------------------------------------------------------------
def _source_row(ws: Workspace, key: str) -> dict | None:
    rows = list(ws.db["mine_sources"].rows_where("source_key = ?", [key]))
    return rows[0] if rows else None


def _source_texts(ws: Workspace, key: str) -> _store.SourceTexts | None:
    """Where a source's long context turns are read back from (its file, as last mined)."""
    row = _source_row(ws, key)
    return _store.SourceTexts(row["path"], row["corpus"], key) if row else None


def _lex_ref(lexicon: Lexicon, prefilter: str) -> str:
    return "none" if prefilter == "none" else f"{lexicon.ref}:{lexicon.sha256[:12]}"


def _stage1(
    ws: Workspace,
    path: Path,
    corpus: str,
    key: str,
    lexicon: Lexicon,
    limit: int | None,
    progress: bool,
    prefilter: str = "lexicon",
) -> dict:
    """Prefilter the source, committing each conversation's candidates together with a checkpoint
    (conversations done, counts, sessions seen): a killed run resumes after the last one.
    ``prefilter="none"`` passes every mined turn on (a change of prefilter redoes stage 1)."""
    lex_ref = _lex_ref(lexicon, prefilter)
    row = _source_row(ws, key)
    if row and row["path"] != str(path.resolve()):  # the same file, moved: read it from here now
        with ws.db.conn:
            ws.db["mine_sources"].update(key, {"path": str(path.resolve())})
        row = _source_row(ws, key)
    if row and row["stage1_done"] and row["lexicon"] == lex_ref:
        return row
    resume = bool(row and row["lexicon"] == lex_ref and row["stage1_items"])
    if resume:
        done = row["stage1_items"]
        counts = {
            k: row[k]
            for k in ("conversations", "duplicate_sessions", "turns_scanned", "sentences_scanned")
        }
        position = ws.db["mined_candidates"].count_where("source_key = ?", [key])
        seen = {
            r[0]
            for r in ws.db.execute(
                "select session_id from mined_sessions where source_key = ?", [key]
            )
        }
    else:
        done, position, seen = 0, 0, set()
        counts = dict(conversations=0, duplicate_sessions=0, turns_scanned=0, sentences_scanned=0)
        found = detect_format(path)
        row = {
            "source_key": key,
            "path": str(path.resolve()),
            "corpus": found,
            "variant": variant_of(path) if found == "longmemeval" else "",
            "license": LICENSES[found],
            "lexicon": lex_ref,
            "stage1_done": 0,
            "stage1_items": 0,
            "stage1_bytes": 0,
            "offline_rules": None,
            "created_at": now(),
            **counts,
        }
        with ws.db.conn:
            _store.forget(ws.db, key)
            ws.db["mine_sources"].upsert(row, pk="source_key")
    size = path.stat().st_size
    with bytes_bar("Stage 1: prefilter", size, progress) as update:
        read = row["stage1_bytes"] or 0 if resume else 0

        def on_bytes(b: int) -> None:
            nonlocal read
            read = b

        if not (limit and done >= limit):
            for conv in iter_conversations(path, corpus, on_bytes=on_bytes, skip=done):
                dedup = conv.corpus == "longmemeval"
                before = set(seen) if dedup else None
                scan = scan_conversation(
                    conv, lexicon, seen if dedup else None, prefilter=prefilter
                )
                item, done = done, done + 1
                counts["conversations"] += 1
                counts["duplicate_sessions"] += scan.duplicate_sessions
                counts["turns_scanned"] += scan.turns_scanned
                counts["sentences_scanned"] += scan.sentences_scanned
                rows, turns = _store.candidate_rows(key, conv, scan.candidates, position, item)
                position += len(rows)
                with _store.transaction(ws.db.conn):  # candidates + their checkpoint: one commit
                    _store.save(ws.db.conn, rows, turns)
                    if dedup:
                        _store.save_sessions(ws.db.conn, key, seen - before)
                    _store.checkpoint(
                        ws.db.conn, key, {"stage1_items": done, "stage1_bytes": read, **counts}
                    )
                update(read, f"{counts['conversations']} conversations, {position} hits")
                if limit and done >= limit:
                    break
        update(size, f"{counts['conversations']} conversations, {position} hits")
    if not counts["turns_scanned"]:  # nothing to mine is an error, not "Turns scanned: 0"
        with ws.db.conn:  # and leaves no source behind (a re-run must not resume into a pass)
            _store.forget(ws.db, key)
            ws.db["mine_sources"].delete_where("source_key = ?", [key])
        raise nothing_to_mine(path, row["corpus"], counts["conversations"])
    with ws.db.conn:
        ws.db["mine_sources"].update(key, {"stage1_done": 1, "created_at": now(), **counts})
    return _source_row(ws, key)


STAGE2_CHUNK = 2000  # candidates read from the workspace per stage-2 batch (bounded memory)
_UNANSWERED = (
    "from mined_candidates c where c.source_key = ? and not exists (select 1 from "
    "mined_extractions e where e.source_key = c.source_key and e.candidate_id = c.id "
    "and e.miner = ?)"
)


def _unanswered(ws: Workspace, key: str, miner: str, chunk: int) -> Iterator[list[Candidate]]:
    """Candidates ``miner`` has not answered, ``chunk`` at a time: a multi-GB source has hundreds
    of thousands of hits, which must not all sit in memory at once. (Offline rules read no context;
    an LLM's prompts get long context turns from the source file, in one forward pass.)"""
    source = _source_texts(ws, key)
    last = 0
    while True:
        rows = ws.db.execute(
            f"select c.rowid, {_store.COLUMNS} {_UNANSWERED} and "
            "c.rowid > ? order by c.rowid limit ?",
            [key, miner, last, chunk],
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        offline = miner in OFFLINE_MINERS
        yield _store.load(ws.db, key, [r[1:] for r in rows], source, context=not offline)


def _forget_stale_offline_answers(ws: Workspace, key: str, extractor: Extractor) -> None:
    """Offline answers are cheap and deterministic but versioned: answers of other rules files
    (an older workspace mined with rules.v1) are dropped so stage 2 redoes them with these."""
    if not isinstance(extractor, RuleExtractor):
        return
    ref = extractor.ref
    if (_source_row(ws, key) or {}).get("offline_rules") == ref:
        return
    with ws.db.conn:
        ws.db["mined_extractions"].delete_where(
            "source_key = ? and miner = ?", [key, extractor.name]
        )
        ws.db["mine_sources"].update(key, {"offline_rules": ref})


def _prepare(
    ws: Workspace,
    path: str | Path,
    corpus: str,
    miner: str | ModelRef,
    limit: int | None,
    extractor: Extractor | None,
    lexicon: str | Path | None,
    prefilter: str,
    *,
    concurrency: int = 4,
    progress: bool = False,
) -> tuple[Path, Extractor, Lexicon]:
    """A mining run's or plan's arguments checked (fast, with a one-line message, before any
    work): the corpus file, the stage-2 extractor and the stage-1 lexicon."""
    path = Path(path)
    check_corpus(path, corpus)
    if limit is not None and limit < 1:
        raise BadInput("--limit must be at least 1")
    if prefilter not in PREFILTERS:
        raise BadInput(f"Unknown --prefilter {prefilter!r}: choose {' or '.join(PREFILTERS)}")
    if prefilter == "none" and lexicon:
        raise BadInput("--lexicon is the lexicon prefilter's; --prefilter none uses no lexicon")
    extractor = extractor or get_extractor(miner, ws, concurrency=concurrency, progress=progress)
    lex = load_lexicon(path=str(lexicon)) if lexicon else load_lexicon()
    return path, extractor, lex


def plan_mine_hedges(
    ws: Workspace,
    path: str | Path,
    *,
    corpus: str = "auto",
    miner: str | ModelRef = "offline",
    limit: int | None = None,
    extractor: Extractor | None = None,
    lexicon: str | Path | None = None,
    prefilter: str = "lexicon",
) -> MinePlan:
    """What ``mine_hedges`` with the same arguments would do (``amg mine hedges --dry-run``):
    the file streamed and prefiltered in memory, and the stage-2 model calls counted on the
    extractor's model (``model.planned``; cached answers not counted). Nothing is sent or stored. With a model miner, run it inside ``run_context(dry_run=True)``
    so that no API key is needed."""
    path, extractor, lex = _prepare(ws, path, corpus, miner, limit, extractor, lexicon, prefilter)
    plan = MinePlan(corpus="", prefilter=prefilter_line(prefilter, lex))
    seen: set[str] = set()
    model_plan = getattr(extractor, "plan", None)
    for conv in iter_conversations(path, corpus):
        plan.corpus = conv.corpus
        scan = scan_conversation(
            conv, lex, seen if conv.corpus == "longmemeval" else None, prefilter=prefilter
        )
        plan.conversations += 1
        plan.turns_scanned += scan.turns_scanned
        plan.stage2 += len(scan.candidates)
        if model_plan is not None:
            for cand in scan.candidates:
                model_plan(cand)
        if limit and plan.conversations >= limit:
            break
    plan.prefilter = prefilter_line(prefilter, lex, plan.corpus or None)
    if not plan.turns_scanned:
        raise nothing_to_mine(path, plan.corpus or corpus, plan.conversations)
    return plan


# -- stage 2 ---------------------------------------------------------------------------------
class Stage2Failures:
    """This run's stage-2 failures: a count, their kinds and the first few reasons."""

    def __init__(self) -> None:
        self.count = 0
        self.kinds: dict[str, int] = {}
        self.reasons: list[str] = []

    def add(self, cand_id: str, error: str, kind: str) -> None:
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if len(self.reasons) < 5:
            self.reasons.append(f"{cand_id}: {error}")


def _stage2(ws: Workspace, key: str, extractor: Extractor, progress: bool) -> Stage2Failures:
    total = ws.db.execute(f"select count(*) {_UNANSWERED}", [key, extractor.name]).fetchone()[0]
    failures = Stage2Failures()
    if not total:
        return failures
    pending: list[dict] = []
    llm = extractor.kind == "LLM"
    batch = 1 if llm else 200  # paid answers are saved at once

    def flush() -> None:
        if pending:
            with ws.db.conn:
                ws.db["mined_extractions"].upsert_all(
                    pending, pk=("source_key", "candidate_id", "miner")
                )
                if llm:
                    for row in pending:
                        ws.db["mined_failures"].delete_where(
                            "source_key = ? and candidate_id = ? and miner = ?",
                            [key, row["candidate_id"], extractor.name],
                        )
            pending.clear()

    with progress_bar(f"Stage 2: {extractor.name}", total, enabled=progress and not llm) as advance:

        def on_result(
            cand: Candidate, ext: Extraction | None, error: str | None, kind: str = "error"
        ) -> None:
            if ext is None:
                failures.add(cand.id, error or "no answer", kind)
                with ws.db.conn:  # recorded with its reason; the candidate stays unanswered
                    ws.db["mined_failures"].upsert(
                        {
                            "source_key": key,
                            "candidate_id": cand.id,
                            "miner": extractor.name,
                            "kind": kind,
                            "error": error or "no answer",
                            "created_at": now(),
                        },
                        pk=("source_key", "candidate_id", "miner"),
                    )
            else:
                pending.append(
                    {
                        "source_key": key,
                        "candidate_id": cand.id,
                        "miner": extractor.name,
                        "kept": int(ext.kept),
                        "text": ext.text,
                        "attribute": ext.attribute,
                        "plan_value": ext.plan_value,
                        "hedge_level": ext.hedge_level,
                        "reject_reason": ext.reject_reason,
                        "llm_calls": ext.llm_calls,
                        "cached_calls": ext.cached_calls,
                        "outcome": None,
                        "outcome_ref": None,
                        "outcome_evidence": None,
                        "created_at": now(),
                        "strategy": ext.strategy,
                    }
                )
                if len(pending) >= batch:
                    flush()
            advance(failed=ext is None)

        try:
            for chunk in _unanswered(ws, key, extractor.name, STAGE2_CHUNK):
                extractor.extract_many(chunk, on_result)
                flush()
        finally:
            flush()
    return failures


# -- outcome linking -------------------------------------------------------------------------
def _link(
    ws: Workspace, path: Path, corpus: str, key: str, miner: str, limit: int | None, progress: bool
) -> None:
    kept = ws.db.execute(
        f"select {_store.COLUMNS}, e.kept, e.text, e.attribute, e.plan_value, e.hedge_level "
        "from mined_extractions e join mined_candidates c on c.source_key = e.source_key "
        "and c.id = e.candidate_id where e.source_key = ? and e.miner = ? and e.kept = 1",
        [key, miner],
    ).fetchall()
    by_conv: dict[str, list[tuple[Candidate, Extraction]]] = {}
    cands = _store.load(ws.db, key, [r[:8] for r in kept], context=False)
    for cand, (kept_flag, text, attribute, value, level) in zip(cands, (r[8:] for r in kept)):
        by_conv.setdefault(cand.conversation_id, []).append(
            (
                cand,
                Extraction(
                    kept=bool(kept_flag),
                    text=text,
                    attribute=attribute,
                    plan_value=value,
                    hedge_level=level,
                ),
            )
        )
    if not by_conv:
        return
    rules = load_rules()
    n = 0
    size = path.stat().st_size
    with bytes_bar("Outcome linking", size, progress) as update:
        for conv in iter_conversations(path, corpus, on_bytes=update):
            n += 1
            links = [
                (cand, link_outcome(conv, cand, ext, rules))
                for cand, ext in by_conv.pop(conv.conversation_id, [])
            ]
            with (
                ws.db.conn
            ):  # one statement per conversation (sqlite-utils' update commits each row)
                ws.db.conn.executemany(
                    "update mined_extractions set outcome = ?, outcome_ref = ?, outcome_evidence = ? "
                    "where source_key = ? and candidate_id = ? and miner = ?",
                    [
                        (link.outcome, link.outcome_ref, link.evidence, key, cand.id, miner)
                        for cand, link in links
                    ],
                )
            if not by_conv or (limit and n >= limit):
                break
        update(size)


# -- summary and export ----------------------------------------------------------------------
def summary(
    ws: Workspace,
    key: str,
    miner: str,
    failures: Stage2Failures | None = None,
    usage: dict[str, int] | None = None,
) -> MineSummary:
    """The counts of a mined source for ``miner``; ``failures`` and ``usage`` are this run's."""
    src = _source_row(ws, key)
    if src is None:
        raise BadInput(f"No mined source {key!r} in this workspace; run `amg mine hedges` first")
    hits = ws.db["mined_candidates"].count_where("source_key = ?", [key])
    rows = ws.db.execute(
        "select e.kept, e.outcome, e.outcome_ref, e.llm_calls, e.cached_calls "
        "from mined_extractions e join mined_candidates c on c.source_key = e.source_key "
        "and c.id = e.candidate_id where e.source_key = ? and e.miner = ?",
        [key, miner],
    ).fetchall()
    kept = [r for r in rows if r[0]]
    outcomes = [r[1] for r in kept]
    return MineSummary(
        source=key,
        corpus=src["corpus"],
        miner=miner,
        conversations=src["conversations"],
        duplicate_sessions_skipped=src["duplicate_sessions"],
        turns_scanned=src["turns_scanned"],
        sentences_scanned=src["sentences_scanned"],
        prefilter_hits=hits,
        llm_calls=sum(r[3] or 0 for r in rows),
        llm_cached=sum(r[4] or 0 for r in rows),
        hedges=len(kept),
        came_true=outcomes.count("came_true"),
        abandoned=outcomes.count("abandoned"),
        unresolved=outcomes.count("unresolved"),
        at_risk_measurable=sum(at_risk_measurable(r[1], r[2]) for r in kept),
        errors=ws.db["mined_failures"].count_where("source_key = ? and miner = ?", [key, miner]),
        llm_calls_now=(usage or {}).get("calls", 0),
        llm_cache_hits_now=(usage or {}).get("cache_hits", 0),
        failure_kinds=failures.kinds if failures else {},
        failure_reasons=failures.reasons if failures else [],
        variant=src["variant"] or "",
        limited=":first" in key,
    )


def mined_statements(ws: Workspace, key: str, miner: str | None = None) -> Iterator[MinedStatement]:
    """Every stage-1 candidate of a source, merged with ``miner``'s stage-2 verdict if any."""
    src = _source_row(ws, key)
    if src is None:
        raise BadInput(f"No mined source {key!r} in this workspace; run `amg mine hedges` first")
    sql = (
        f"select {_store.COLUMNS}, e.miner, e.kept, e.text, e.attribute, e.plan_value, "
        "e.hedge_level, e.reject_reason, e.outcome, e.outcome_ref, e.outcome_evidence, f.error "
        "from mined_candidates c left join mined_extractions e on e.source_key = c.source_key "
        "and e.candidate_id = c.id and e.miner = ? left join mined_failures f on "
        "f.source_key = c.source_key and f.candidate_id = c.id and f.miner = ? "
        "where c.source_key = ? order by c.position"
    )
    cursor = ws.db.execute(sql, [miner or "", miner or "", key])  # a cursor: big sources stream
    source = _source_texts(ws, key)
    while rows := cursor.fetchmany(500):
        cands = _store.load(ws.db, key, [r[:8] for r in rows], source)
        for cand, (
            m,
            kept,
            text,
            attr,
            value,
            level,
            reason,
            outcome,
            ref,
            evidence,
            failed,
        ) in zip(cands, (r[8:] for r in rows)):
            if m is None and failed is not None:  # asked and failed: say so, not "prefilter-only"
                m, reason = miner, f"stage 2 failed: {failed}"
            text = text if text is not None else _cue_span(cand)
            yield MinedStatement(
                id=cand.id,
                corpus=cand.corpus,
                conversation_id=cand.conversation_id,
                source_ref=cand.source_ref,
                speaker=cand.speaker,
                date=cand.date,
                text=text,
                context=cand.context,
                turn_text=cand.turn_text,
                session_id=session_of(cand.corpus, cand.source_ref),
                session_index=cand.session_index,
                turn_index=cand.turn_index,
                text_span=_span(cand, text),
                prefilter_cues=cand.prefilter_cues,
                miner=m or "prefilter-only",
                kept=None if kept is None else bool(kept),
                attribute=attr,
                plan_value=value,
                hedge_level=level,
                reject_reason=reason,
                outcome=outcome,
                outcome_ref=ref,
                outcome_evidence=evidence,
                license=src["license"],
            )


def session_of(corpus: str, ref: str) -> str:
    """The session a turn reference names: LoCoMo ``D3:5`` -> ``session_3`` (the file's key);
    LongMemEval ``question/session/turn`` -> the haystack session id."""
    if corpus == "locomo":
        head = ref.split(":", 1)[0]
        return f"session_{head[1:]}" if head[:1] == "D" and head[1:].isdigit() else ""
    parts = ref.split("/")
    return parts[1] if len(parts) == 3 else ""


def _span(cand: Candidate, text: str) -> tuple[int, int] | None:
    """Where ``text`` sits in the turn: the cue sentence it came from when there is one, else its
    first occurrence; None when it is not verbatim (an LLM may paraphrase)."""
    for a, b in cand.cue_spans:
        i = cand.turn_text.find(text, a, max(b, a + len(text)))
        if i >= 0:
            return (i, i + len(text))
    i = cand.turn_text.find(text) if text else -1
    return (i, i + len(text)) if i >= 0 else None


def _cue_span(cand: Candidate) -> str:
    """Before stage 2: the turn from its first to its last cue sentence (a verbatim span)."""
    if not cand.cue_spans:
        return cand.turn_text
    return cand.turn_text[cand.cue_spans[0][0] : cand.cue_spans[-1][1]]


def write_jsonl(records: Iterator[MinedStatement], out: Path) -> int:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        with open(out, "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec.model_dump(), ensure_ascii=False) + "\n")
                n += 1
    except OSError as e:
        raise BadInput(f"Cannot write {str(out)!r}: {e.strerror or e}") from None
    return n


def sources(ws: Workspace) -> list[dict]:
    return list(ws.db["mine_sources"].rows_where(order_by="created_at"))


def mine_hedges(
    ws: Workspace,
    path: str | Path,
    *,
    corpus: str = "auto",
    miner: str | ModelRef = "offline",
    out: str | Path | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    progress: bool = False,
    extractor: Extractor | None = None,
    lexicon: str | Path | None = None,
    echo: Callable[[str], None] | None = None,
    prefilter: str = "lexicon",
) -> MineSummary:
    """Mine one corpus file end to end; returns the summary (also printed by the CLI).

    ``miner``: ``offline`` (the rules), ``offline-scorer`` or a model, as a spec or a ``ModelRef``
    (with its base URL and model options). ``lexicon`` is a cue-lexicon TOML file of your own (default: the packaged ``cues.vN.toml``);
    changing it re-runs stage 1 for this source. ``prefilter``: ``lexicon`` (stage 1 as above)
    or ``none`` (every mined turn goes to stage 2). What a run would do and cost, counted
    without sending or storing anything: ``plan_mine_hedges`` with the same arguments.
    """
    path, extractor, lex = _prepare(
        ws,
        path,
        corpus,
        miner,
        limit,
        extractor,
        lexicon,
        prefilter,
        concurrency=concurrency,
        progress=progress,
    )
    key = source_key(path, limit)
    rules = load_rules()
    sha, published = sha256_file(path), published_sha256(path.name)
    source_lines = []
    if published and sha != published:
        source_lines.append(
            f"Warning: {path.name} is not the published file (sha256 {sha[:12]}..., published "
            f"{published[:12]}...)"
        )
        if echo:
            echo(source_lines[0])
    run = ws.start_run(
        "mine hedges",
        {
            "path": str(path),
            "corpus": corpus,
            "miner": extractor.name,
            "limit": limit,
            "lexicon": _lex_ref(lex, prefilter),
            "prefilter": prefilter,
            "rules": f"{rules.ref}:{rules.sha256[:12]}",
            "scorer": scorer_ref(getattr(extractor, "scorer", None)),
            "sha256": sha,
            "published_sha256": "unknown" if published is None else published == sha,
        },
    )
    status = "failed"
    try:
        _stage1(ws, path, corpus, key, lex, limit, progress, prefilter)
        _forget_stale_offline_answers(ws, key, extractor)
        unanswered = ws.db.execute(
            f"select count(*) {_UNANSWERED}", [key, extractor.name]
        ).fetchone()[0]
        answered_before = (
            ws.db["mined_candidates"].count_where("source_key = ?", [key]) - unanswered
        )
        failures = _stage2(ws, key, extractor, progress)
        _link(ws, path, corpus, key, extractor.name, limit, progress)
        model = getattr(extractor, "model", None)
        result = summary(
            ws, key, extractor.name, failures, model.usage.as_dict() if model is not None else None
        )
        result.prefilter_lines = prefilter_line(prefilter, lex, result.corpus)
        result.answered_before = answered_before
        result.source_lines = source_lines
        result.source_said = bool(source_lines) and echo is not None
        result.accuracy_lines = summary_lines(
            result.corpus,
            lex,
            rules,
            offline=isinstance(extractor, RuleExtractor),
            prefilter=prefilter,
            scorer=getattr(extractor, "scorer", None),
        )
        if out is not None:
            n = write_jsonl(mined_statements(ws, key, extractor.name), Path(out))
            if echo:
                echo(
                    f"Wrote {n} candidates ({result.hedges} hedge{'s' if result.hedges != 1 else ''}) "
                    f"to {out} (license: {result.corpus} {LICENSES[result.corpus].split(' (')[0]})"
                )
        status = "ok" if not result.errors else "partial"
        return result
    except (AmgError, CallFailed, KeyboardInterrupt):
        status = "interrupted"
        raise
    finally:
        ws.finish_run(run, status)
