"""Measure an answer judge on the hand-labelled product-style answers, scored like `amg eval answers`.

Run: .venv/bin/python devsets/answers/measure.py [--judge offline|offline:answer_cues.vN|provider:model]
     [--base-url URL] [--part dev|heldout|heldout2|dev3|heldout3|heldout4..heldout12|both|all]
     [--answers FILE ...]
     [--json] [--show-errors] [--workspace DIR] [--record [--tuned-on PARTS]]
(--part both: dev and heldout; all: every part; --answers default: answers.jsonl, heldout2.jsonl,
dev3.jsonl and heldout3.jsonl to heldout12.jsonl beside this script)
(the labelling guideline, the split rule and the figures are in README.md beside this script).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from agentmemgate.answer_judge import get_answer_judge, offline_answer_version
from agentmemgate.answer_judge.devset import (
    ANSWER_FILES,
    PARTS,
    DevsetReport,
    first_try_valid,
    load_answer_set,
    measure,
)
from agentmemgate.errors import AmgError, BadInput
from agentmemgate.evaluate.judges import get_value_judge
from agentmemgate.llm import ModelRef


def _row(label: str, p) -> str:
    return f"  {label:<22} {p.fmt()}"


def _cell(p) -> str:
    return f"{p.k}/{p.n}" if p.n else "-"


def print_report(r: DevsetReport, show_errors: bool) -> None:
    kind = " (heuristic)" if r.heuristic else ""
    print(f"answers {r.answers_path} (sha256 {r.answers_sha256[:12]})")
    print(
        f"answer judge {r.judge}{kind}, rubric {r.rubric} (sha256 {r.rubric_sha256[:12]}); "
        f"equivalence judge {r.value_judge}, rubric {r.value_rubric}"
    )
    for p in r.parts:
        print(f"\n{p.part}: {p.n} answers")
        print(_row("exact set", p.exact))
        print(
            _row("false plan assertion", p.false_plan) + "   (over answers whose label lacks plan)"
        )
        print(_row("missed assertion", p.missed) + "   (over labelled roles)")
        print(_row("false initial", p.false_initial))
        print(_row("false other", p.false_other))
        print(_row("judge failures", p.failures) + "   (counted wrong in exact set)")
        print(
            f"\n  {'shape':<22} {'n':>3}  {'exact':>6} {'%':>5}  {'false plan':>10}  {'missed':>7}  "
            f"{'false init':>10}  {'false other':>11}  {'failed':>6}"
        )
        for s in p.shapes:
            pct = f"{100 * s.exact.value:.0f}" if s.exact.value is not None else "-"
            print(
                f"  {s.shape:<22} {s.n:>3}  {_cell(s.exact):>6} {pct:>5}  {_cell(s.false_plan):>10}  "
                f"{_cell(s.missed):>7}  {_cell(s.false_initial):>10}  {_cell(s.false_other):>11}  "
                f"{s.failures.k:>6}"
            )
    if show_errors:
        wrong = [i for i in r.items if not i.correct]
        print(f"\n{len(wrong)} answers judged wrong:")
        for i in wrong:
            got = "FAILED: " + i.error if i.judged is None else f"{i.judged} from {i.asserted}"
            print(f"  {i.id} [{i.part}, {i.shape}] label {i.expected}, judged {got}")
            if i.rationale:
                print(f"      {i.rationale}")
    if r.usage:
        print(f"\nmodel usage: {r.usage}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--judge",
        default="offline",
        help="offline (the newest answer rules), offline:answer_cues.vN, or provider:model",
    )
    ap.add_argument(
        "--base-url", default=None, help="an OpenAI-compatible server for an openai: judge"
    )
    ap.add_argument(
        "--part",
        default="dev",
        choices=(*PARTS, "both", "all"),
        help="dev, dev3: for writing rules; heldout and heldout2 to heldout12: for reporting them "
        "(do not tune on them); both: dev and heldout; all: every part",
    )
    ap.add_argument(
        "--answers",
        type=Path,
        nargs="+",
        default=list(ANSWER_FILES),
        help="the labelled answer files (default: answers.jsonl, heldout2.jsonl, dev3.jsonl, "
        "heldout3.jsonl to heldout12.jsonl)",
    )
    ap.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="workspace for a model judge's cache and call log (default: a new temporary "
        "one); a re-run with the same workspace asks nothing twice",
    )
    ap.add_argument(
        "--concurrency", type=int, default=2, help="model calls in flight (model judges)"
    )
    ap.add_argument("--timeout", type=float, default=None, help="seconds per model call")
    ap.add_argument("--max-tokens", type=int, default=None, help="token budget per model call")
    ap.add_argument(
        "--record",
        action="store_true",
        help="store the figures (with the rule/rubric and answer-set sha256) in "
        "agentmemgate/answer_judge/accuracy.json, which eval reports quote",
    )
    ap.add_argument(
        "--tuned-on",
        metavar="PARTS",
        default="",
        help="with --record: the parts the rules were written on or whose errors were read "
        "(comma separated, e.g. dev,heldout,dev3,heldout3,heldout2,heldout4,heldout5 for version 4); reports call "
        "those figures a fit",
    )
    ap.add_argument("--json", action="store_true", help="print the whole report as JSON")
    ap.add_argument(
        "--show-errors",
        action="store_true",
        help="list the answers judged wrong (read only the dev part's while writing rules)",
    )
    args = ap.parse_args()
    ws = None
    try:
        answers = load_answer_set(args.answers)
        offline = offline_answer_version(args.judge) is not False
        options = {
            k: v
            for k, v in (("timeout", args.timeout), ("max_tokens", args.max_tokens))
            if v is not None
        }
        if offline and (args.base_url or options or args.workspace):
            raise BadInput(
                "--base-url, --timeout, --max-tokens and --workspace are for a model judge "
                f"(provider:model); {args.judge} makes no model calls"
            )
        if args.tuned_on and not args.record:
            raise BadInput("--tuned-on marks recorded figures: use it with --record")
        unknown = [p for p in args.tuned_on.split(",") if p.strip() and p.strip() not in PARTS]
        if unknown:
            raise BadInput(f"--tuned-on: unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
        if args.record and args.part == "dev":
            raise BadInput("--record stores held-out figures: use --part heldout or --part both")
        if args.concurrency < 1:
            raise BadInput("--concurrency must be at least 1")
        if not offline:
            from agentmemgate.workspace import Workspace

            path = args.workspace
            if path is None:  # a fresh name; the Workspace makes the folder, so it can remove it
                path = Path(tempfile.mkdtemp(prefix="amg-answers-devset-"))
                path.rmdir()
            ws = Workspace(path)
        ref = ModelRef.parse(args.judge, args.base_url, options)
        judge = get_answer_judge(ref, workspace=ws)
        value_judge = get_value_judge(ref, workspace=ws)
        run = None
        if not offline:
            from agentmemgate.llm import run_concurrent

            def run(work, items):
                usage = getattr(getattr(judge, "model", None), "usage", None)
                return run_concurrent(
                    work,
                    items,
                    concurrency=args.concurrency,
                    description=f"answers ({args.judge})",
                    usage=usage,
                    progress=True,
                )

        present = [p for p in PARTS if any(it.part == p for it in answers.items)]
        parts = {"both": ("dev", "heldout"), "all": present}.get(args.part, (args.part,))
        report = measure(answers, judge, value_judge, parts=parts, run=run)
    except AmgError as e:
        if ws is not None:
            ws.discard_if_unused()  # a workspace this run created and stored nothing in goes away
        print(f"Error: {e}", file=sys.stderr)
        return 1
    first = first_try_valid(ws, args.judge.split(":", 1)[1]) if ws is not None else None
    if args.json:
        print(
            json.dumps(
                {**report.model_dump(), "first_try_valid": first.model_dump() if first else None},
                indent=2,
            )
        )
    else:
        print_report(report, args.show_errors)
        if first is not None:
            print(
                f"answer verdicts valid at the first try (questions asked in this workspace, "
                f"call log): {first.fmt()}"
            )
    if args.record:
        from agentmemgate.answer_judge.accuracy import from_report, record

        tuned = frozenset(p.strip() for p in args.tuned_on.split(",") if p.strip())
        print(f"recorded in {record(from_report(report, tuned))}", file=sys.stderr)
    if ws is not None:
        print(f"workspace (cache and call log): {ws.path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
