"""Stage-1 prefilter throughput over a LongMemEval_s-sized input, and the share that reaches the LLM.

LongMemEval_s has 500 questions with about 50 sessions each. We synthesize that size by cycling
through the sessions of the real oracle sample (or the committed fixture when the sample is
absent), then time the prefilter alone (``scan_conversation``, no dedup, no I/O). With
``--with-io`` it also writes the synthetic file (session ids unique per question, so every turn
is scanned) and times the streaming loader plus prefilter the way ``amg mine hedges`` runs it.

Run: .venv/bin/python benchmarks/prefilter_throughput.py [--instances 500] [--sessions 50] [--with-io]

Caveat printed with the result: oracle sessions are the evidence sessions, dense in personal
statements, so the share reaching the LLM here is an upper bound for real _s haystacks, which
are mostly filler chats.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from agentmemgate.corpora import Conversation, iter_conversations, load_corpus, scan_conversation
from agentmemgate.corpora.home import corpus_file
from agentmemgate.corpora.prefilter import load_lexicon

# the real oracle sample from the corpora folder (AMG_CORPORA; `amg corpora fetch longmemeval`)
REAL = corpus_file("longmemeval", "longmemeval_oracle_subset.json", checkout=True)
FIXTURE = Path(__file__).parents[1] / "tests" / "fixtures" / "longmemeval_sample.json"


def synthesize(source: Path, instances: int, sessions: int) -> list[Conversation]:
    pool = [s for c in load_corpus(source, "longmemeval") for s in c.sessions]
    out = []
    for i in range(instances):
        picked = [
            pool[(i * 7 + j) % len(pool)].model_copy(update={"index": j}) for j in range(sessions)
        ]
        out.append(
            Conversation(
                corpus="longmemeval",
                conversation_id=f"synthetic-{i}",
                speakers=["user", "assistant"],
                sessions=picked,
                variant="s",
            )
        )
    return out


def to_json(convs: list[Conversation], path: Path) -> None:
    """The synthetic set in LongMemEval's own format. Session ids are made unique per question:
    the 99 real sessions repeat in every question, and mining scans a repeated id once, so shared
    ids would time JSON parsing of 25,000 sessions and the prefilter of only 99."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for i, c in enumerate(convs):
            f.write(
                ("," if i else "")
                + json.dumps(
                    {
                        "question_id": c.conversation_id,
                        "question_type": "synthetic",
                        "question": "",
                        "answer": "",
                        "question_date": "",
                        "haystack_dates": [s.date for s in c.sessions],
                        "haystack_session_ids": [f"{s.session_id}#{i}" for s in c.sessions],
                        "haystack_sessions": [
                            [{"role": t.speaker, "content": t.text} for t in s.turns]
                            for s in c.sessions
                        ],
                    }
                )
            )
        f.write("]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--with-io", action="store_true", help="also time streaming the JSON file")
    args = ap.parse_args()
    source = REAL if REAL.is_file() else FIXTURE
    lexicon = load_lexicon()
    convs = synthesize(source, args.instances, args.sessions)

    t0 = time.perf_counter()
    turns = sentences = hits = flagged = 0
    for conv in convs:
        scan = scan_conversation(conv, lexicon)
        turns += scan.turns_scanned
        sentences += scan.sentences_scanned
        hits += len(scan.candidates)
        flagged += sum(len(c.cue_spans) for c in scan.candidates)
    dt = time.perf_counter() - t0

    print(f"cores: {os.cpu_count()}; source: {source.name}; lexicon: {lexicon.ref}")
    print(
        f"input: {args.instances} questions x {args.sessions} sessions, {turns} user turns, "
        f"{sentences} sentences"
    )
    print(f"prefilter: {dt:.2f} s = {sentences / dt:,.0f} sentences/s ({turns / dt:,.0f} turns/s)")
    print(
        f"reaching the LLM (stage 2): {hits}/{turns} turns = {100 * hits / turns:.1f}% "
        f"(flagged sentences: {flagged}/{sentences} = {100 * flagged / sentences:.1f}%)"
    )
    print("note: oracle sessions are evidence sessions, so this share is an upper bound for _s")

    if args.with_io:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "longmemeval_s_synthetic.json"
            to_json(convs, path)
            size = path.stat().st_size
            t0 = time.perf_counter()
            seen: set[str] = set()
            unique_turns = unique_hits = 0
            for conv in iter_conversations(path):
                scan = scan_conversation(conv, lexicon, seen)
                unique_turns += scan.turns_scanned
                unique_hits += len(scan.candidates)
            dt_io = time.perf_counter() - t0
        print(
            f"stream + prefilter of a {size / 1e6:.0f} MB file: {dt_io:.2f} s "
            f"({size / 1e6 / dt_io:.1f} MB/s, {unique_turns / dt_io:,.0f} turns/s); "
            f"{unique_turns} turns scanned, {unique_hits} reach the LLM"
        )
        print(f"ratio: stream + prefilter takes {dt_io / dt:.2f}x the time of the prefilter alone")


if __name__ == "__main__":
    main()
