"""The eval commands as a user types them, on a small offline build with the real systems."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from agentmemgate.answer_judge import get_answer_judge
from agentmemgate.answer_judge.base import ANSWER_CUES_DIR
from agentmemgate.cli import app
from agentmemgate.workspace import Workspace

runner = CliRunner()


def amg(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(result, needle):
    assert result.exit_code == 1, result.output
    assert needle in result.output
    assert "Traceback" not in result.output
    assert len([l for l in result.output.splitlines() if l.strip()]) == 1


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """All splits, one arc per cell, every default system run once."""
    from agentmemgate.pipeline import build

    root = tmp_path_factory.mktemp("eval_cli")
    build(root / "ws", root / "out", split="all", n_per_cell=1, show_progress=False)
    r = amg("eval", "run", "--workspace", root / "ws", "--no-progress")
    assert r.exit_code == 0, r.output
    return root, r.output


@pytest.fixture
def copy(evaluated, tmp_path):
    """A private copy of the evaluated workspace (sqlite backup: WAL contents included)."""
    src = sqlite3.connect(evaluated[0] / "ws" / "workspace.db")
    (tmp_path / "ws").mkdir()
    dst = sqlite3.connect(tmp_path / "ws" / "workspace.db")
    src.backup(dst)
    src.close()
    dst.close()
    return tmp_path / "ws"


def test_run_summary_and_rerun(evaluated, copy):
    _, out = evaluated
    assert "literal-gated" in out and "cautious-gated[no-retry]" in out and "offline rules" in out
    assert "ran now" in out and "failed 0" in out
    again = amg("eval", "run", "--workspace", copy, "--no-progress")
    assert again.exit_code == 0 and "ran now 0" in again.output and "already stored" in again.output
    # the follow-up commands it suggests reach this workspace when pasted
    assert f"report: amg report eval --workspace {copy};" in again.output
    assert f"--system NAME --workspace {copy}" in again.output


def test_report_on_splits_no_system_ran_says_which_run_fills_it(copy):
    from agentmemgate.evaluate.store import latest_systems

    ws = Workspace(copy, create=False)
    assert latest_systems(ws)  # results exist, on the other splits
    ws.db.execute(
        "delete from eval_scores where arc_id in (select id from arcs where split = 'core')"
    )
    ws.db.conn.commit()
    one_line_error(
        amg("report", "eval", "--split", "core", "--workspace", copy),
        "run `amg eval run --split core`",
    )


def test_report_json_layout(copy, tmp_path):
    r = amg("report", "eval", "--json", "--workspace", copy, "--out", tmp_path / "rep")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data["systems"]) >= {
        "literal-ungated",
        "literal-gated",
        "cautious-ungated",
        "cautious-gated",
        "plan-typed-literal",
        "plan-typed-cautious",
        "plan-typed-literal-strict",
        "plan-typed-cautious-strict",
        "cautious-gated[no-retry]",
    }
    lg = data["systems"]["literal-gated"]
    assert "pending_contamination" in lg["core"] and "pending_contamination" not in lg["heldout"]
    assert {"staged_at_plan_turn", "promoted", "discarded", "calls_per_user_message"} <= set(
        lg["core"]
    )
    assert "promoted" not in data["systems"]["literal-ungated"]["core"]
    assert set(lg["controlled"]["by_level"]) >= {"strongly_hedged", "verbatim", "completed_change"}
    assert any(
        d["system"] == "literal-gated" and d["baseline"] == "literal-ungated"
        for d in data["differences"]
    )
    assert any(
        d["kind"] == "variant_minus_base" and d["system"] == "cautious-gated[no-retry]"
        for d in data["differences"]
    )
    files = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert files == [
        "eval.json",
        "eval.md",
        "figure2_contamination_by_hedge.png",
        "figure3_promotion_by_wording.png",
    ]
    assert json.loads((tmp_path / "rep" / "eval.json").read_text())["systems"] == data["systems"]


def test_report_markdown_has_the_papers_tables(copy):
    r = amg("report", "eval", "--workspace", copy)
    assert r.exit_code == 0, r.output
    heads = [line for line in r.stdout.splitlines() if line.startswith("## ")]
    # the summary and the notes first; then tables titled by what they show, paper's number after
    assert heads[:2] == [
        "## Summary: each system's contamination, accuracy and premature writes",
        "## Why: results the tables alone do not explain",
    ]
    for n in (2, 3, 4, 5, 6, 7):
        assert sum(f"Table {n})" in h or f"Table {n};" in h for h in heads) == 1, n
    assert not any(h.startswith("## Table") for h in heads)
    for title in (
        "Contamination: at-risk plans",
        "Task accuracy: one probe",
        "Held-out detail",
        "At-end contamination by hedge-strength level",
        "Promotion by confirmation wording",
        "Plan-typed baseline",
        "Retry ablation",
        "Paired differences",
        "Overhead",
        "Offline components",
    ):
        assert title in r.stdout, title
    assert "wrote " in r.stderr


def test_show_one_arc(copy):
    ws = Workspace(copy, create=False)
    arc = next(a for a in ws.arcs("core") if a.spec.outcome == "came_true")
    r = amg("eval", "show", arc.id, "--system", "literal-gated", "--workspace", copy)
    assert r.exit_code == 0, r.output
    assert "read as it arrived" in r.output and "[plan turn]" in r.output
    assert "Store after session 0" in r.output and "Measures (judge offline)" in r.output
    one_line_error(
        amg("eval", "show", "nope", "--system", "literal-gated", "--workspace", copy),
        "No arc 'nope'",
    )
    one_line_error(
        amg("eval", "show", arc.id, "--system", "mystery", "--workspace", copy),
        "No evaluation results for system 'mystery'",
    )


@pytest.mark.parametrize(
    "args, needle",
    [
        (["eval", "run", "--system", "bogus-system"], "Unknown memory system 'bogus-system'"),
        (["eval", "run", "--split", "nope"], "Unknown split 'nope'"),
        (["eval", "run", "--judge", "bogus"], "provider:model"),
        (["eval", "run", "--judge", "openai:gpt-4o-mini"], "No API key"),
        (["eval", "run", "--timeout", "30"], "--timeout apply to model calls"),
    ],
)
def test_bad_run_arguments(copy, args, needle):
    one_line_error(amg(*args, "--workspace", copy, "--no-progress"), needle)


def test_missing_workspace_is_refused(tmp_path):
    for args in (
        ["eval", "run"],
        ["report", "eval"],
        ["eval", "show", "x", "--system", "y"],
        ["eval", "answers", tmp_path / "a.jsonl", "--name", "n"],
    ):
        one_line_error(amg(*args, "--workspace", tmp_path / "nope"), "No workspace at")
    assert not (tmp_path / "nope").exists()


def test_report_before_any_run(tmp_path):
    from agentmemgate.generate import generate, get_renderer

    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    one_line_error(amg("report", "eval", "--workspace", ws.path), "No evaluation results")


def test_answers_command(copy, tmp_path):
    ws = Workspace(copy, create=False)
    arcs = list(ws.arcs("heldout"))
    good = tmp_path / "good.jsonl"
    good.write_text(
        "".join(
            json.dumps(
                {
                    "arc_id": a.id,
                    "after_session": i,
                    "answer": a.spec.plan_value if i == 0 else "I don't know",
                }
            )
            + "\n"
            for a in arcs
            for i in range(len(a.sessions))
        )
    )
    r = amg("eval", "answers", good, "--name", "product-x", "--workspace", copy, "--no-progress")
    assert r.exit_code == 0, r.output
    assert f"for {len(arcs)} arcs" in r.output
    newest = get_answer_judge("offline").rubric  # offline: the newest answer rules
    assert f"Answer judge offline ({newest}" in r.output and "held-out part" in r.output
    assert f"answers read by {newest}" in r.output
    rep = json.loads(
        amg("report", "eval", "--json", "--workspace", copy, "--out", tmp_path / "rep").stdout
    )
    assert any("held-out part" in n and "exact set" in n for n in rep["meta"]["notes"])
    px = rep["systems"]["product-x"]["heldout"]
    assert px["task_accuracy"]["k"] == 0  # "I don't know" asserts nothing
    assert px["exposure"]["n"] == sum(a.spec.outcome in ("abandoned", "open") for a in arcs)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        good.read_text()
        + json.dumps({"arc_id": arcs[0].id, "after_session": 0, "answer": "again"})
        + "\n"
    )
    before = ws.db["eval_answers"].count
    one_line_error(
        amg("eval", "answers", bad, "--name", "product-y", "--workspace", copy), "duplicate answer"
    )
    assert ws.db["eval_answers"].count == before
    one_line_error(
        amg("eval", "answers", tmp_path / "missing.jsonl", "--name", "p", "--workspace", copy),
        f"No such file: '{tmp_path / 'missing.jsonl'}'",
    )
    # v1 stays selectable by name; an unknown version is a one-line error
    r1 = amg(
        "eval",
        "answers",
        good,
        "--name",
        "product-v1",
        "--judge",
        "offline:answer_cues.v1",
        "--workspace",
        copy,
        "--no-progress",
    )
    assert r1.exit_code == 0, r1.output
    assert "judge offline (heuristic), answers read by answer_cues.v1" in r1.output
    released = sorted(ANSWER_CUES_DIR.glob("answer_cues.v*.toml"))
    unknown = 1 + max(int(p.name.split(".v")[1].split(".")[0]) for p in released)
    one_line_error(
        amg(
            "eval",
            "answers",
            good,
            "--name",
            f"product-v{unknown}",
            "--judge",
            f"offline:answer_cues.v{unknown}",
            "--workspace",
            copy,
        ),
        f"No offline answer rules version {unknown}",
    )


def test_export_card_has_an_evaluation_section(copy, tmp_path):
    r = amg("export", "--workspace", copy, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    card = (tmp_path / "out" / "README.md").read_text()
    assert "## Evaluation" in card and "literal-gated" in card
    assert "## Evaluation" in (tmp_path / "out" / "core" / "README.md").read_text()


def test_export_without_eval_has_no_evaluation_section(tmp_path):
    from agentmemgate.pipeline import build

    build(tmp_path / "ws", tmp_path / "out", split="core", n_per_cell=1, show_progress=False)
    assert "## Evaluation" not in (tmp_path / "out" / "README.md").read_text()


def test_llm_path_through_the_scripted_model_matches_offline(copy):
    """``--model scripted:NAME`` drives the memory room's LLM components (answered by its
    scripted_responder, which applies the offline rules to the prompt): the same scores as the
    offline run, and a re-run makes no model call."""
    from scripted_memory import scripted_responder

    from agentmemgate.llm import get_model

    model = get_model("scripted:eval-cli")
    model.respond_with(scripted_responder)
    args = [
        "eval",
        "run",
        "--system",
        "literal-gated",
        "--model",
        "scripted:eval-cli",
        "--split",
        "core",
        "--workspace",
        copy,
        "--no-progress",
        "--concurrency",
        "4",
    ]
    r = amg(*args)
    assert r.exit_code == 0, r.output
    assert "(LLM)" in r.output
    calls = len(model.history)
    assert calls > 0
    again = amg(*args)
    assert again.exit_code == 0 and "ran now 0" in again.output
    assert len(model.history) == calls
    from agentmemgate.evaluate import store

    ws = Workspace(copy, create=False)
    rows = store.latest_systems(ws)
    llm = rows["literal-gated@scripted:eval-cli"]
    assert llm["model"] == "scripted:eval-cli" and not llm["info"].offline
    assert rows["literal-gated"]["info"].offline  # the offline run keeps its own name
    rep = json.loads(
        amg(
            "report",
            "eval",
            "--json",
            "--split",
            "core",
            "--workspace",
            copy,
            "--out",
            copy.parent / "rep",
        ).stdout
    )
    assert rep["systems"]["literal-gated@scripted:eval-cli"] == rep["systems"]["literal-gated"]
    assert (
        rep["meta"]["systems"]["literal-gated@scripted:eval-cli"]["ungated_twin"]
        == "literal-ungated@scripted:eval-cli"
    )
    assert any("LLM components" in n for n in rep["meta"]["notes"])


def test_llm_options_reach_the_component_models(copy):
    """``--max-tokens`` (like --timeout and --structured-output) applies to every model call of
    the run: each component request carries the override instead of its own budget."""
    from scripted_memory import scripted_responder

    from agentmemgate.llm import get_model

    model = get_model("scripted:eval-budget")
    model.respond_with(scripted_responder)
    r = amg(
        "eval",
        "run",
        "--system",
        "literal-gated",
        "--model",
        "scripted:eval-budget",
        "--split",
        "core",
        "--max-tokens",
        "777",
        "--workspace",
        copy,
        "--no-progress",
    )
    assert r.exit_code == 0, r.output
    assert model.history and {q.max_tokens for q in model.history} == {777}


def test_what_a_hand_audit_tripped_on(copy, tmp_path):
    """One session numbering in `eval show` for answers, no empty reasons, dashes that say why."""
    import re

    ws = Workspace(copy, create=False)
    arcs = list(ws.arcs("heldout"))
    path = tmp_path / "answers.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"arc_id": a.id, "after_session": i, "answer": f"They use {a.spec.initial_value}."}
            )
            + "\n"
            for a in arcs
            for i in range(len(a.sessions))
        )
    )
    assert (
        amg(
            "eval", "answers", path, "--name", "prod", "--workspace", copy, "--no-progress"
        ).exit_code
        == 0
    )
    arc = next(a for a in arcs if a.spec.outcome == "open")
    out = amg("eval", "show", arc.id, "--system", "prod", "--workspace", copy).output
    heads = [int(n) for n in re.findall(r"^Session (\d+) ", out, re.M)]
    answered = [int(n) for n in re.findall(r"Answer after session (\d+):", out)]
    # sessions counted from 0, as the exports count them
    assert heads == answered == list(range(len(arc.sessions)))
    window = re.search(r"no answer after session ([\d, or]+) asserts", out).group(1)
    assert set(map(int, re.findall(r"\d+", window))) <= set(heads)
    assert f"after session {len(arc.sessions)}" not in out

    # Every measure a gated system scores says why, in show and in the store.
    for a in ws.arcs("controlled"):
        shown = amg("eval", "show", a.id, "--system", "literal-gated", "--workspace", copy).output
        assert "()" not in shown and re.search(r"^  \w+: (yes|no)$", shown, re.M) is None, shown
    for (raw,) in ws.db.execute("select score from eval_scores"):
        score = json.loads(raw)
        assert set(score["values"]) <= {k for k, v in score["why"].items() if v}, score

    md = amg("report", "eval", "--workspace", copy, "--out", tmp_path / "rep").stdout
    table5 = md.split("## Held-out detail")[1].split("\n## ")[0]
    assert "— gated only" in table5 and "— answers only" in table5
    assert "— not from answers" in table5 and "gated only\" marks" in table5
    assert re.search(r"\| — \|", table5) is None  # no bare dash


def test_report_html_is_one_page_with_the_markdowns_tables_and_figures(copy, tmp_path):
    import base64

    from report_pages import HOSTILE, assert_same_tables, assert_shown_as_text

    ws = Workspace(copy, create=False)
    answers = tmp_path / "<img src=x onerror=alert(2)>.jsonl"  # its name is in the report
    answers.write_text(
        "".join(
            json.dumps({"arc_id": a.id, "after_session": i, "answer": "no idea"}) + "\n"
            for a in ws.arcs("heldout")
            for i in range(len(a.sessions))
        )
    )
    r = amg("eval", "answers", answers, "--name", HOSTILE, "--workspace", copy, "--no-progress")
    assert r.exit_code == 0, r.output
    rep = tmp_path / "rep"
    r = amg("report", "eval", "--html", "--workspace", copy, "--out", rep)
    assert r.exit_code == 0, r.output
    wrote = next(line for line in r.stderr.splitlines() if line.startswith("wrote "))
    assert f"{rep / 'eval.html'}" in wrote
    page = (rep / "eval.html").read_text(encoding="utf-8")
    md = (rep / "eval.md").read_text(encoding="utf-8")
    assert HOSTILE in md and "Table 7" in page and "cautious-gated[no-retry]" in page
    assert_same_tables(md, page)  # every k/n, percent and interval, with its n
    assert_shown_as_text(page)
    for png in ("figure2_contamination_by_hedge.png", "figure3_promotion_by_wording.png"):
        assert base64.b64encode((rep / png).read_bytes()).decode() in page
    again = amg("report", "eval", "--workspace", copy, "--out", rep)  # without --html: as before
    assert again.exit_code == 0 and "eval.html" not in again.stderr


def test_check_is_a_gate_for_ci(copy):
    """Bounds met: exit 0; a bound missed: exit 1 with its line (value, interval, bound)."""
    report = json.loads(amg("report", "eval", "--workspace", copy, "--json").stdout)
    row = next(r for r in report["summary"] if r["system"] == "literal-ungated")
    end = row["end_contamination"]
    assert end["k"] > 0  # the literal pipeline without a gate stores plans
    ok = amg(
        "eval", "check", "--system", "literal-ungated", "--workspace", copy,
        "--max-end-contamination", "100%", "--min-task-accuracy", "0",
    )  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[-1].strip() == "passed"
    bound = end["value"] / 2
    missed = amg(
        "eval", "check", "--system", "literal-ungated", "--workspace", copy,
        "--max-end-contamination", f"{bound}", "--min-task-accuracy", "0",
    )  # fmt: skip
    assert missed.exit_code == 1
    lines = [line.strip() for line in missed.output.splitlines()]
    want = (
        f"missed: end contamination {end['k']}/{end['n']} {100 * end['value']:.1f}% "
        f"[{100 * end['ci_low']:.1f}, {100 * end['ci_high']:.1f}] > {100 * bound:.1f}%"
    )
    assert any(line.startswith(want) for line in lines), missed.output
    assert sum(line.startswith("missed:") for line in lines) == 1
    assert any(line.startswith("ok: task accuracy") for line in lines)


def test_check_refuses_what_it_cannot_decide(copy):
    for args, needle in (
        (["--system", "literal-gated"], "Give at least one bound"),
        (["--system", "literal-gated", "--min-task-accuracy", "90"], "outside 0-1"),
        (["--system", "literal-gated", "--min-task-accuracy", "most"], "is not a proportion"),
        (["--system", "literal-gatd", "--min-task-accuracy", "0.9"], "did you mean"),
        (
            ["--system", "literal-gated", "--split", "heldout", "--max-pending-contamination", "0"],
            "pending contamination does not apply",
        ),
    ):
        one_line_error(amg("eval", "check", "--workspace", copy, *args), needle)


def test_check_never_passes_on_part_of_the_arcs(copy):
    ws = Workspace(copy, create=False)
    with ws.db.conn:
        ws.db.execute(
            "delete from eval_scores where system = 'literal-gated' and arc_id in "
            "(select arc_id from eval_scores where system = 'literal-gated' and split = 'core' "
            "limit 1)"
        )
    r = amg(
        "eval", "check", "--system", "literal-gated", "--split", "core", "--workspace", copy,
        "--min-task-accuracy", "0",
    )  # fmt: skip
    assert r.exit_code == 1
    assert "missed: 1 of" in r.output and "arcs of core have no score for literal-gated" in r.output
