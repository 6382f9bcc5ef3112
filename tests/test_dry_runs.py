"""``--dry-run`` on every LLM command: calls, expected tokens and estimated cost per model, with
nothing sent and nothing stored; and the cost lines of real runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.llm import get_model
from agentmemgate.workspace import Workspace

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def built(tmp_path):
    ws = tmp_path / "ws"
    r = invoke(
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "1",
        "--workspace",
        ws,
        "--out",
        tmp_path / "out",
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    return ws


def planned(output: str, spec: str) -> int:
    line = next(x for x in output.splitlines() if x.startswith(f"{spec}: "))
    return int(line.split(": ")[1].split(" planned calls")[0].replace(",", ""))


def check_estimate(output: str, spec: str, n: int) -> None:
    """The model's planned-call line, its token line and a cost from --price 1,2."""
    assert planned(output, spec) == n, output
    lines = output.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith(f"{spec}: "))
    assert "estimated cost at most $" in lines[i] and "(price from --price)" in lines[i]
    assert lines[i + 1].startswith("  ~") and "input tokens (characters / 4)" in lines[i + 1]
    assert "output tokens (the calls' output budgets)" in lines[i + 1]


def user_turns(ws) -> int:
    return sum(
        t.role == "user"
        for a in Workspace(ws, create=False).arcs("core")
        for s in a.sessions
        for t in s.turns
    )


def test_validate_dry_run(built):
    judge = get_model("scripted:vj")
    r = invoke(
        "validate",
        "--judge",
        "scripted:vj",
        "--allow-same-family",
        "--checks",
        "recovery",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    n = len(Workspace(built, create=False).arc_ids(splits=["core"]))
    assert r.output.splitlines()[0] == f"dry run: {n} judge calls"
    check_estimate(r.output, "scripted:vj", n)
    assert judge.history == []  # nothing sent
    assert (
        Workspace(built, create=False)
        .db["judge_verdicts"]
        .count_where("judge = ?", ["scripted:vj"])
        == 0
    )


def test_equivalence_pairs_dry_run(built):
    r = invoke(
        "validate",
        "equivalence-pairs",
        "--judge",
        "scripted:pj",
        "--n",
        "4",
        "--allow-same-family",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:2] == ["dry run: 4 judge calls", "  judge scripted:pj: 4"]
    check_estimate(r.output, "scripted:pj", 4)
    assert get_model("scripted:pj").history == []


def test_eval_run_dry_run_counts_one_extraction_call_per_user_turn(built):
    r = invoke(
        "eval",
        "run",
        "--system",
        "literal-gated",
        "--model",
        "scripted:mem",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    n = len(Workspace(built, create=False).arc_ids(splits=["core"]))
    assert r.output.splitlines()[0].startswith(f"dry run: {n} (system, arc) pairs to run")
    check_estimate(r.output, "scripted:mem", user_turns(built))
    assert "not counted: the cost below is for the extraction calls alone" in r.output
    assert get_model("scripted:mem").history == []
    assert Workspace(built, create=False).db["eval_runs"].count == 0  # nothing stored


def test_eval_answers_dry_run(built, tmp_path):
    ws = Workspace(built, create=False)
    lines = [
        {"arc_id": a.id, "after_session": s, "answer": f"I don't know ({a.id}, {s})."}
        for a in ws.arcs("core")
        for s in range(len(a.sessions))
    ]
    f = tmp_path / "answers.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = invoke(
        "eval",
        "answers",
        f,
        "--name",
        "mem0",
        "--judge",
        "scripted:aj",
        "--allow-same-family",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"dry run: {len(lines)} answers to judge")
    check_estimate(r.output, "scripted:aj", len(lines))
    assert Workspace(built, create=False).db["eval_answer_sets"].count == 0


@pytest.fixture
def statements(tmp_path):
    ws = tmp_path / "sws"
    f = tmp_path / "s.jsonl"
    f.write_text(
        "\n".join(
            json.dumps({"id": f"s{i}", "text": t})
            for i, t in enumerate(
                ["I might move to Seattle.", "I moved to Denver.", "I love jazz."]
            )
        )
    )
    assert invoke("statements", "import", "s", f, "--workspace", ws).exit_code == 0
    return ws


def test_classify_and_label_dry_runs_then_real_runs_print_cost(statements):
    r = invoke(
        "classify",
        "--statements",
        "s",
        "--classifier",
        "scripted:c",
        "--method",
        "votes",
        "--samples",
        "3",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        statements,
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == "dry run: 3 (statement, run) pairs to classify"
    check_estimate(r.output, "scripted:c", 9)  # 3 statements x 3 votes
    r = invoke(
        "statements",
        "label",
        "s",
        "--voters",
        "scripted:v",
        "--votes",
        "2",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        statements,
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == "dry run: 6 votes to cast"
    check_estimate(r.output, "scripted:v", 6)
    assert get_model("scripted:v").history == [] and get_model("scripted:c").history == []

    get_model("scripted:v").respond_with(lambda req: "completed_event")
    r = invoke(
        "statements",
        "label",
        "s",
        "--voters",
        "scripted:v",
        "--votes",
        "2",
        "--no-progress",
        "--workspace",
        statements,
    )
    assert r.exit_code == 0, r.output
    assert (
        "scripted:v: 6 calls; cost unknown: no price for this model; pass --price IN,OUT"
        in r.output.splitlines()
    )
    again = invoke(
        "statements",
        "label",
        "s",
        "--voters",
        "scripted:v",
        "--votes",
        "2",
        "--dry-run",
        "--workspace",
        statements,
    )
    assert "dry run: 0 votes to cast" in again.output


def test_dry_run_with_an_openai_spec_prices_from_the_database(built, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-never-sent")
    r = invoke(
        "validate",
        "--judge",
        "openai:gpt-4o-mini",
        "--checks",
        "recovery",
        "--dry-run",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    assert "openai:gpt-4o-mini: " in r.output and "estimated cost at most $" in r.output
    assert "prices: genai-prices " in r.output


def test_price_is_refused_without_a_model_and_when_malformed(built):
    r = invoke("validate", "--price", "1,2", "--workspace", built)
    assert r.exit_code == 1 and "--price apply to model calls" in r.output
    r = invoke("validate", "--judge", "scripted:x", "--price", "cheap", "--workspace", built)
    assert r.exit_code == 1
    assert r.output.splitlines()[0].startswith(
        "Error: --price must be two numbers per million tokens, e.g. --price 0.15,0.60"
    )


def test_eval_answers_real_run_then_the_eval_report_shows_cost(built, tmp_path):
    ws = Workspace(built, create=False)
    lines = [
        {"arc_id": a.id, "after_session": s, "answer": f"No idea ({a.id}, {s})."}
        for a in ws.arcs("core")
        for s in range(len(a.sessions))
    ]
    f = tmp_path / "answers.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    get_model("scripted:aj2").respond_with(
        lambda req: {"asserted": [], "rationale": "The answer gives no value."}
    )
    r = invoke(
        "eval",
        "answers",
        f,
        "--name",
        "mem0",
        "--judge",
        "scripted:aj2",
        "--allow-same-family",
        "--price",
        "1,2",
        "--no-progress",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    assert f"scripted:aj2: {len(lines)} calls; cost $" in r.output
    rep = invoke("report", "eval", "--judge", "scripted:aj2", "--workspace", built)
    assert rep.exit_code == 0, rep.output
    assert (
        f"- Model calls of `amg eval run` and `amg eval answers` in this workspace (call log): "
        f"scripted:aj2: {len(lines)} calls, "
    ) in rep.output


def test_a_dry_run_needs_no_api_key_and_a_real_run_still_does(built):
    for spec in ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"):
        r = invoke(
            "validate", "--judge", spec, "--checks", "recovery", "--dry-run", "--workspace", built
        )
        assert r.exit_code == 0, r.output
        assert f"{spec}: " in r.output and "estimated cost at most $" in r.output
        real = invoke("validate", "--judge", spec, "--checks", "recovery", "--workspace", built)
        assert real.exit_code == 1 and "No API key" in real.output.splitlines()[0]


def batch_estimate(output: str, spec: str = "openai:gpt-4o-mini") -> tuple[float, str]:
    line = next(x for x in output.splitlines() if x.startswith(f"{spec}: "))
    return float(line.split("estimated cost at most $")[1].split()[0].replace(",", "")), line


LOCOMO = __import__("pathlib").Path(__file__).parent / "fixtures" / "locomo_sample.json"


@pytest.mark.parametrize(
    "command",
    [
        "validate",
        "equivalence-pairs",
        "eval run",
        "eval answers",
        "classify",
        "statements label",
        "mine hedges",
        "generate",
        "build",
    ],
)
def test_dry_run_with_batch_estimates_at_batch_prices(command, built, statements, tmp_path):
    """Every command with --dry-run and --batch: the estimate at batch prices, half the live one
    for an OpenAI model genai-prices lists (its batch variant), and the line says so."""
    m = "openai:gpt-4o-mini"
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"arc_id": a.id, "after_session": s, "answer": "Denver."}) + "\n"
            for a in Workspace(built, create=False).arcs("core")
            for s in range(len(a.sessions))
        )
    )
    args = {
        "validate": ["validate", "--judge", m, "--checks", "recovery", "--workspace", built],
        "equivalence-pairs": [
            "validate",
            "equivalence-pairs",
            "--judge",
            m,
            "--n",
            "4",
            "--workspace",
            built,
        ],
        "eval run": [
            "eval",
            "run",
            "--system",
            "literal-gated",
            "--model",
            m,
            "--workspace",
            built,
        ],
        "eval answers": [
            "eval",
            "answers",
            answers,
            "--name",
            "x",
            "--judge",
            m,
            "--workspace",
            built,
        ],
        "classify": [
            "classify",
            "--statements",
            "s",
            "--classifier",
            m,
            "--method",
            "votes",
            "--samples",
            "3",
            "--workspace",
            statements,
        ],
        "statements label": [
            "statements",
            "label",
            "s",
            "--voters",
            m,
            "--votes",
            "2",
            "--workspace",
            statements,
        ],
        "mine hedges": ["mine", "hedges", LOCOMO, "--miner", m, "--workspace", tmp_path / "mws"],
        "generate": [
            "generate",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--generator",
            m,
            "--workspace",
            tmp_path / "gws",
        ],
        "build": [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--generator",
            m,
            "--judge",
            "anthropic:claude-sonnet-4-5",
            "--workspace",
            tmp_path / "bws",
            "--out",
            tmp_path / "bout",
        ],
    }[command]
    live = invoke(*args, "--dry-run", "--no-progress")
    batch = invoke(*args, "--dry-run", "--batch", "--no-progress")
    assert live.exit_code == 0 and batch.exit_code == 0, live.output + batch.output
    (cost_live, line_live), (cost_batch, line) = (
        batch_estimate(live.output),
        batch_estimate(batch.output),
    )
    assert "batch" not in line_live
    assert cost_live > 0 and cost_batch == pytest.approx(cost_live / 2, rel=0.02, abs=1e-4)
    assert "through a batch API, at batch prices: 50% of the live price" in line
    # the first lines (what would be asked) are the same either way
    assert batch.output.splitlines()[0] == live.output.splitlines()[0]


def test_eval_run_dry_run_counts_answering_systems(built, monkeypatch):
    """Baselines estimate each probe answer; a product that must call a model to be built
    (mem0 sizes its store by one embedding) is counted as an upper bound, never built."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a dry run needs no key
    r = invoke(
        "eval",
        "run",
        "--system",
        "full-context",
        "--system",
        "no-memory",
        "--system",
        "mem0",
        "--model",
        "scripted:ans",
        "--embedder",
        "openai:text-embedding-3-small",
        "--judge",
        "scripted:aj",
        "--allow-same-family",
        "--dry-run",
        "--price",
        "1,2",
        "--workspace",
        built,
    )
    assert r.exit_code == 0, r.output
    ws = Workspace(built, create=False)
    arcs = list(ws.arcs("core"))
    answers = sum(len(a.sessions) for a in arcs)
    lines = r.output.splitlines()
    assert (
        lines[0]
        == f"dry run: {3 * len(arcs)} (system, arc) pairs to run, 0 to re-score, 0 already stored"
    )
    assert lines[1] == (
        f"  full-context@scripted:ans: {len(arcs)} arcs, {answers} probe answers, "
        f"{answers} answer calls (estimated below)"
    )
    nm = lines[2].split(", ")
    assert nm[0] == f"  no-memory@scripted:ans: {len(arcs)} arcs"
    no_memory_calls = int(nm[2].split()[0])  # the same question on the same date is one call
    assert 0 < no_memory_calls <= answers
    assert lines[3] == (
        f"  mem0@scripted:ans: {len(arcs)} arcs, {answers} probe answers at most; "
        "not estimated (building it needs a model answer not in the workspace: "
        "product.mem0.embed)"
    )
    assert lines[4].startswith(f"  the answer judge: {3 * answers} calls, one per answer")
    check_estimate(r.output, "scripted:ans", answers + no_memory_calls)
    assert planned(r.output, "scripted:aj") == 3 * answers
    assert get_model("scripted:ans").history == [] and get_model("scripted:aj").history == []
    assert ws.db["eval_runs"].count == 0 and ws.db["llm_calls"].count == 0  # nothing sent or stored


def test_plan_build_counts_what_build_does_and_changes_nothing(tmp_path):
    """The library's plan function: the arcs build would render, none stored and no workspace
    left; after the build the same plan finds every arc done."""
    from agentmemgate.design import paper_design
    from agentmemgate.generate.planner import plan_split
    from agentmemgate.pipeline import build, plan_build

    ws, out = tmp_path / "ws", tmp_path / "out"
    expected = len(plan_split("core", 0, 1, design=paper_design()))
    plan = plan_build(ws, split="core", n_per_cell=1)
    assert (plan.generate.planned, plan.generate.already_done) == (expected, 0)
    assert plan.judge_calls is not None and not ws.exists() and not out.exists()
    built = build(ws, out, split="core", n_per_cell=1, show_progress=False)
    assert built.generate.rendered_now == expected and built.judge_calls is None
    again = plan_build(ws, split="core", n_per_cell=1)
    assert (again.generate.planned, again.generate.already_done) == (expected, expected)
    assert Workspace(ws, create=False).db["runs"].count == 1  # the build's run only
