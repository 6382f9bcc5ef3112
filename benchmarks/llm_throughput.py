"""LLM-path throughput: generation and judging at concurrency 1 vs 16 against a 300 ms mock, the
cost of a re-run, and -- with ``--base-url`` -- every LLM path against a real server.

Mock mode (default, about 30 s): starts a local OpenAI-compatible mock server (stdlib, threaded,
in its own process, fixed latency per request) that answers generation prompts with a known-good
arc and judge prompts with a valid verdict, then runs the real paths -- get_renderer / get_judge
("openai:...", base_url=...) -> OpenAI SDK -> HTTP -> cache/log -> checks -> workspace -- through
``generate.generate`` and ``validate.judge_arcs``. Prints each path's throughput at concurrency 1
and 16 and their ratio (goal >= 12x), then re-runs the finished build and re-renders every arc
with a fresh renderer, printing the HTTP calls each made (goal 0). ``--profile`` prints where the
client's CPU goes per judged question.

Real-server mode (``--base-url URL [--model NAME]``): for each path (generate, judge, mine,
classify by votes, classify by logprobs) a few items at concurrency 1 and at 4 on a fresh
workspace each: calls per second, seconds per call, the share of replies valid at the first try,
and how the items ended. A small model on a CPU is slow: expect minutes.

    .venv/bin/python benchmarks/llm_throughput.py [--latency 0.3] [--profile]
    .venv/bin/python benchmarks/llm_throughput.py --base-url http://127.0.0.1:8080/v1 [--items 3]
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from _mock_server import MockServer

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the test doubles
from reference_drafts import reference_responder

from agentmemgate.generate import generate, get_renderer, plan_split
from agentmemgate.llm import ModelRef, Request, get_model
from agentmemgate.schema import Arc
from agentmemgate.validate.judges import REALISM_CRITERIA
from agentmemgate.workspace import Workspace


# -- the mock server ---------------------------------------------------------------------------
def mock_answer(prompt: str) -> dict:
    """A valid answer for any of the toolkit's generation and judge prompts."""
    if "Options (in no particular order):" in prompt:
        level = re.findall(
            r"^- (\w+): ", prompt.split("Options (in no particular order):")[1], re.M
        )[0]
        return {"level": level, "rationale": "The plan turn decides it."}
    if re.search(r"^Judge \w+ criteria", prompt, re.M):  # realism: every criterion the rubric names
        return {
            name: {
                "verdict": "pass",
                "rationale": f"The conversation holds up as {name}.",
                **({"turns": []} if name == "consistent" else {}),  # the one that lists turns
            }
            for name in REALISM_CRITERIA
        }
    if "Decide whether two values" in prompt:
        return {
            "verdict": "equivalent",
            "confidence": 0.9,
            "rationale": "They name the same thing.",
        }
    return reference_responder(Request(prompt=prompt))


# -- mock mode ---------------------------------------------------------------------------------
def build(url: str, ws: Workspace, n_per_cell: int, concurrency: int, model: str = "mock-model"):
    renderer = get_renderer(f"openai:{model}", workspace=ws, base_url=url, concurrency=concurrency)
    return generate(ws, renderer, ["core"], n_per_cell=n_per_cell, show_progress=False)


def offline_arcs(ws: Workspace, n_per_cell: int) -> list[str]:
    from agentmemgate.generate.offline import OfflineRenderer

    generate(ws, OfflineRenderer(), ["controlled"], n_per_cell=n_per_cell, show_progress=False)
    return ["controlled"]


def judge(
    url: str,
    ws: Workspace,
    splits: list[str],
    concurrency: int,
    tasks=("recovery", "realism"),
    model: str = "mock-judge",
):
    from agentmemgate.validate import judge_arcs
    from agentmemgate.validate.judges import get_judge

    j = get_judge(ModelRef.parse(f"openai:{model}", url), workspace=ws, concurrency=concurrency)
    return judge_arcs(ws, splits, [j], list(tasks), show_progress=False)


def mock_mode(args) -> None:
    server = MockServer(args.latency, mock_answer)
    get_model("openai:mock-model", base_url=server.url)  # import the SDK before timing anything
    with tempfile.TemporaryDirectory() as tmp:
        rates = {}
        for concurrency, arcs in ((1, args.arcs_serial), (16, args.arcs_parallel)):
            ws = Workspace(Path(tmp) / f"ws-c{concurrency}")
            n_per_cell = max(1, arcs // 3)  # the core split has three cells
            calls, secs, summary = server.calls_during(
                functools.partial(build, server.url, ws, n_per_cell, concurrency)
            )
            assert summary.failed == 0, summary.failures
            rates[concurrency] = summary.rendered_now / secs
            print(
                f"generation, concurrency {concurrency:>2}: {summary.rendered_now} arcs, {calls} calls, "
                f"{secs:.2f} s, {rates[concurrency]:.2f} arcs/s"
            )
        ratio = rates[16] / rates[1]
        print(
            f"generation speed-up 16 vs 1: {ratio:.1f}x (goal >= 12x) {'OK' if ratio >= 12 else 'BELOW GOAL'}"
        )

        calls, secs, summary = server.calls_during(lambda: build(server.url, ws, n_per_cell, 16))
        print(
            f"re-run of the finished build: {calls} calls (goal 0), "
            f"{summary.already_done} arcs already done, {secs:.2f} s"
        )
        specs = plan_split("core", 0, n_per_cell)
        fresh = get_renderer(
            "openai:mock-model", workspace=Workspace(ws.path), base_url=server.url, concurrency=16
        )
        planned = fresh.planned_calls(specs)
        calls, secs, results = server.calls_during(lambda: list(fresh.render_many(specs)))
        assert all(isinstance(r, Arc) for r in results)
        print(
            f"re-render of all {len(specs)} arcs by a fresh renderer: {calls} calls (goal 0; "
            f"dry run predicted {planned}), {fresh.usage()['cache_hits']} cache hits, {secs:.2f} s"
        )

        jrates = {}
        for concurrency, per_cell in ((1, args.judge_serial), (16, args.judge_parallel)):
            jws = Workspace(Path(tmp) / f"judge-c{concurrency}")
            splits = offline_arcs(jws, per_cell)
            calls, secs, s = server.calls_during(
                functools.partial(judge, server.url, jws, splits, concurrency)
            )
            assert s.failures == 0, s.failure_examples
            jrates[concurrency] = s.judged_now / secs
            print(
                f"judging, concurrency {concurrency:>2}: {s.judged_now} questions, {calls} calls, "
                f"{secs:.2f} s, {jrates[concurrency]:.2f} questions/s"
            )
        jratio = jrates[16] / jrates[1]
        print(
            f"judging speed-up 16 vs 1: {jratio:.1f}x (goal >= 12x, ideal 16x) "
            f"{'OK' if jratio >= 12 else 'BELOW GOAL'}"
        )
        if args.profile:
            profile_judging(server, Path(tmp) / "judge-profile", args.judge_parallel)
    server.stop()


def command_mode(args) -> None:
    """The judging path timed the way a user times it: the whole ``amg validate`` command (start-up,
    imports, structural checks, judging, report) on the controlled split of a fresh offline build,
    at concurrency 1 and 16, as a subprocess; wall and CPU time (the child's user + system)."""
    import os
    import shutil
    import subprocess
    import sys

    amg = [sys.executable, "-c", "from agentmemgate.cli import main; main()"]
    server = MockServer(args.latency, mock_answer)
    env = {**os.environ, "OPENAI_API_KEY": "sk-mock"}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(
            [*amg, "generate", "--split", "controlled", "--workspace", str(base), "--no-progress"],
            check=True,
            capture_output=True,
            env=env,
        )
        times = {}
        for concurrency in args.levels:
            ws = Path(tmp) / f"c{concurrency}"
            shutil.copytree(base, ws)
            before, t0 = server.requests, time.perf_counter()
            p = subprocess.Popen(
                [
                    *amg,
                    "validate",
                    "--split",
                    "controlled",
                    "--judge",
                    "openai:mock-judge",
                    "--base-url",
                    server.url,
                    "--concurrency",
                    str(concurrency),
                    "--workspace",
                    str(ws),
                    "--no-progress",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
            )
            out = p.stdout.read()
            _, status, ru = os.wait4(p.pid, 0)
            wall, calls = time.perf_counter() - t0, server.requests - before
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"amg validate failed:\n{out.decode()}")
            times[concurrency] = wall
            print(
                f"amg validate --split controlled, concurrency {concurrency:>2}: {calls} calls, "
                f"{wall:.2f} s wall, {ru.ru_utime + ru.ru_stime:.2f} s CPU "
                f"(ideal {calls * args.latency / concurrency:.2f} s of waiting)",
                flush=True,
            )
        if set(times) != {1, 16}:
            server.stop()
            return
        ratio = times[1] / times[16]
        print(
            f"whole command, concurrency 16 vs 1: {ratio:.1f}x (goal >= 14x, ideal 16x) "
            f"{'OK' if ratio >= 14 else 'BELOW GOAL'}; load average "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
    server.stop()


def profile_judging(server: MockServer, path: Path, per_cell: int) -> None:
    """Where the client's CPU goes per judged question: cProfile on thread CPU time, in the main
    thread (prompts, storing verdicts) and in every worker (the judge's calls), merged."""
    import cProfile
    import pstats
    import threading

    from agentmemgate.validate import judge_arcs
    from agentmemgate.validate.judges import get_judge

    ws = Workspace(path)
    splits = offline_arcs(ws, per_cell)
    j = get_judge(ModelRef.parse("openai:mock-judge", server.url), workspace=ws, concurrency=16)
    local, profs = threading.local(), []
    ask = j.ask

    def profiled_ask(question):
        prof = getattr(local, "prof", None)
        if prof is None:
            prof = local.prof = cProfile.Profile(time.thread_time)
            profs.append(prof)
        prof.enable()
        try:
            return ask(question)
        finally:
            prof.disable()

    j.ask = profiled_ask
    main = cProfile.Profile(time.thread_time)
    t0 = time.process_time()
    main.enable()
    s = judge_arcs(ws, splits, [j], ["recovery", "realism"], show_progress=False)
    main.disable()
    cpu = time.process_time() - t0
    print(
        f"\nprofile: {s.judged_now} questions, client CPU {1000 * cpu / max(s.judged_now, 1):.1f} ms "
        "per question (all threads); by function, thread CPU time:"
    )
    stats = pstats.Stats(main)
    for prof in profs:
        stats.add(prof)
    stats.sort_stats("cumulative").print_stats(40)


# -- real-server mode --------------------------------------------------------------------------
def first_try_share(ws: Workspace, since_id: int) -> tuple[int, int]:
    """(calls whose first model reply was valid, calls with a model reply) in the call log."""
    rows = ws.db.execute(
        "select cache_key, status from llm_calls where id > ? order by id", [since_id]
    ).fetchall()
    first: dict[str, str] = {}
    for key, status in rows:
        if status in ("ok", "invalid_output") and key not in first:
            first[key] = status
    return sum(s == "ok" for s in first.values()), len(first)


def real_mode(args) -> None:
    from agentmemgate.classify import classify_set
    from agentmemgate.corpora import import_statements, mine_hedges

    url, model = args.base_url, args.model
    options = {"timeout": args.timeout}
    fixtures = Path(__file__).parents[1] / "tests" / "fixtures"
    statements = [
        ("s1", "I might move to Seattle next year, my dad lives there."),
        ("s2", "I moved to Denver last month."),
        ("s3", "Actually I was wrong before: I work at Acme, not Apex."),
        ("s4", "I love jazz."),
        ("s5", "I'm thinking about adopting a dog."),
        ("s6", "We finally sold the old car last week."),
    ][: max(2, args.items)]

    def run_path(name: str, ws: Workspace, concurrency: int) -> tuple[str, int]:
        if name == "generate":
            r = get_renderer(
                f"openai:{model}",
                workspace=ws,
                base_url=url,
                concurrency=concurrency,
                max_attempts=1,
                **options,
            )
            s = generate(ws, r, ["core"], n_per_cell=1, show_progress=False)
            return f"{s.rendered_now} arcs passed checks, {s.failed} failed", r.model.usage.calls
        if name == "judge":
            from agentmemgate.validate import judge_arcs
            from agentmemgate.validate.judges import get_judge

            splits = offline_arcs(ws, 1)
            arcs = list(ws.arcs("controlled"))[: args.items]
            ids = {a.id for a in arcs}
            with ws.db.conn:
                ws.db.execute(
                    "delete from arcs where id not in (%s)" % ",".join("?" * len(ids)), list(ids)
                )
            j = get_judge(
                ModelRef.parse(f"openai:{model}", url, options),
                workspace=ws,
                concurrency=concurrency,
            )
            s = judge_arcs(ws, splits, [j], ["recovery"], show_progress=False)
            return (
                f"{s.judged_now - s.failures}/{s.judged_now} recovery verdicts parsed",
                j.model.usage.calls,
            )
        if name == "mine":
            s = mine_hedges(
                ws,
                fixtures / "locomo_sample.json",
                miner=ModelRef.parse(f"openai:{model}", url, options),
                concurrency=concurrency,
                limit=1,
            )
            return (
                f"{s.prefilter_hits - s.errors}/{s.prefilter_hits} stage-2 answers "
                f"({s.hedges} hedges kept)",
                s.llm_calls_now,
            )
        f = ws.path / "s.jsonl"
        f.write_text("\n".join(json.dumps({"id": i, "text": t}) for i, t in statements))
        import_statements(ws, "s", f)
        method = "votes" if name == "classify-votes" else "logprobs"
        r = classify_set(
            ws,
            "s",
            ModelRef.parse(f"openai:{model}", url, options),
            method=method,
            samples=3,
            concurrency=concurrency,
        )
        example = f"; e.g. {r.first_error}" if r.first_error else ""
        return f"{r.new}/{r.statements} distributions ({r.errors} failed){example}", None

    print(f"server {url}, model {model}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.paths.split(","):
            for concurrency in (1, 4):
                ws = Workspace(Path(tmp) / f"{name}-c{concurrency}")
                t0 = time.perf_counter()
                try:
                    outcome, calls = run_path(name, ws, concurrency)
                except Exception as e:
                    outcome, calls = f"could not run: {e}", 0
                secs = time.perf_counter() - t0
                valid, replies = first_try_share(ws, 0)
                if calls is None:  # count the model's replies in the call log
                    calls = ws.db.execute(
                        "select count(*) from llm_calls where status in ('ok', 'invalid_output')"
                    ).fetchone()[0]
                share = f"{valid}/{replies} = {100 * valid / replies:.0f}%" if replies else "n/a"
                rate = (
                    f"{calls / secs:.3f} calls/s, {secs / calls:.1f} s per call"
                    if calls
                    else "no calls"
                )
                print(
                    f"{name:<17} concurrency {concurrency}: {calls} calls in {secs:.0f} s ({rate}); "
                    f"valid at first try {share}; {outcome}",
                    flush=True,
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.3, help="Seconds per mock request.")
    ap.add_argument("--arcs-serial", type=int, default=15, help="Arcs at concurrency 1 (x3).")
    ap.add_argument("--arcs-parallel", type=int, default=96, help="Arcs at concurrency 16 (x3).")
    ap.add_argument(
        "--judge-serial",
        type=int,
        default=1,
        help="Arcs per controlled cell judged at concurrency 1.",
    )
    ap.add_argument(
        "--judge-parallel",
        type=int,
        default=8,
        help="Arcs per controlled cell judged at concurrency 16.",
    )
    ap.add_argument(
        "--profile", action="store_true", help="Profile the client CPU per judged question."
    )
    ap.add_argument(
        "--command",
        action="store_true",
        help="Time the whole `amg validate` command (judging, controlled split) at 1 and 16.",
    )
    ap.add_argument(
        "--levels",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[1, 16],
        help="Concurrency levels for --command (default 1,16; the ratio needs both).",
    )
    ap.add_argument(
        "--base-url", help="A real OpenAI-compatible server: benchmark every LLM path against it."
    )
    ap.add_argument("--model", default="local", help="Model name for --base-url.")
    ap.add_argument(
        "--items", type=int, default=3, help="Items per path and concurrency with --base-url."
    )
    ap.add_argument(
        "--timeout", type=float, default=600, help="Client timeout per request with --base-url."
    )
    ap.add_argument(
        "--paths",
        default="generate,judge,mine,classify-votes,classify-logprobs",
        help="Paths to run with --base-url (comma separated).",
    )
    args = ap.parse_args()
    if args.base_url:
        real_mode(args)
    elif args.command:
        command_mode(args)
    else:
        mock_mode(args)


if __name__ == "__main__":
    main()
