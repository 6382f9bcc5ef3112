"""``amg catalog propose``: a model writes domain files, the catalog check decides what is written.

The scripted test model stands in for the model: a valid domain file (a built-in file with a new
attribute and values no other domain has) is written at the first attempt; an invalid one is
asked again with its problems; garbage ends as a recorded failure with one-line reasons and exit
2. Every attempt is a cached call, so a re-run makes none; a dry run makes none either.
"""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from airline_domain import VALUES, airline_domain, ski_domain
from llm.batch_fakes import OpenAIBatchApi
from llm.llm_fakes import OPENAI_KEY
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.design import CATALOG_DIR
from agentmemgate.generate.propose import (
    EXAMPLE,
    RUBRIC,
    extract_toml,
    plan_proposals,
    propose_domains,
)
from agentmemgate.llm import get_model
from agentmemgate.run_context import run_context
from agentmemgate.validate.catalog import KNOWN_KEYS, LIST_MINIMUMS, check_catalog
from agentmemgate.workspace import Workspace

runner = CliRunner()
MODEL = "scripted:catalog"


def fenced(text: str) -> str:
    return f"Here is the file.\n```toml\n{text}```\n"


def propose(tmp_path: Path, *args: str):
    return runner.invoke(
        app,
        [
            "catalog",
            "propose",
            "--model",
            MODEL,
            "--out",
            str(tmp_path / "out"),
            "--workspace",
            str(tmp_path / "ws"),
            *args,
        ],
    )


def calls(tmp_path: Path) -> int:
    return Workspace(tmp_path / "ws", create=False).db["llm_calls"].count


def test_a_valid_proposal_is_written_at_the_first_attempt(tmp_path):
    model = get_model(MODEL).enqueue(fenced(airline_domain()))
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    assert r.output.splitlines()[0] == f"wrote {out}/preferred_airline.toml (attempt 1 of 3)"
    written = (out / "preferred_airline.toml").read_text(encoding="utf-8")
    assert written.endswith(airline_domain())  # the model's file, under one provenance line
    assert written.startswith(f"# preferred_airline: proposed by {MODEL} (rubric {RUBRIC}.v1)")
    assert check_catalog([out]) == []
    # the prompt: the catalog's guide and one built-in file as the example
    prompt = model.history[0].prompt
    assert (CATALOG_DIR / "README.md").read_text(encoding="utf-8").strip() in prompt
    assert (CATALOG_DIR / f"{EXAMPLE}.toml").read_text(encoding="utf-8").strip() in prompt
    assert '"preferred_airline"' in prompt
    assert len(model.history) == 1


def test_an_invalid_proposal_is_asked_again_with_its_problems(tmp_path):
    five = airline_domain(values=VALUES[:5])
    model = get_model(MODEL).enqueue(fenced(five), fenced(airline_domain()))
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].endswith("preferred_airline.toml (attempt 2 of 3)")
    at = five.splitlines().index("values = [") + 1
    reask = model.history[1].prompt
    assert model.history[0].prompt in reask  # the same request, then what was wrong
    assert (
        f"- values (line {at}): has 5 items; at least {LIST_MINIMUMS['values']} are needed [enough]"
    ) in reask
    assert five.strip() in reask  # the rejected file, which the line numbers refer to
    # a re-run repeats no call: both attempts come from the cache
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 0, r.output
    assert len(model.history) == 2 and calls(tmp_path) == 2
    assert "2 answered from the workspace cache" in r.output


def test_garbage_is_a_recorded_failure_with_one_line_reasons(tmp_path):
    model = get_model(MODEL).enqueue(
        "I am a small model.", fenced("noun = ["), fenced('noun = "x"\n')
    )
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    out = tmp_path / "out"
    lines = r.output.splitlines()
    assert lines[0] == (
        f"failed preferred_airline after 3 attempts; last reply in "
        f"{out}/rejected/preferred_airline.toml:"
    )
    reasons = [x for x in lines if x.startswith("  preferred_airline: ")]
    # the last reply misses every key but one, and the lines name them
    missing = [x for x in reasons if x.endswith(": missing key [shape]")]
    assert len(missing) == len(KNOWN_KEYS) - 1  # every key but noun
    assert lines[len(reasons) + 1] == f"0 written, 1 failed ({MODEL}, rubric {RUBRIC}.v1)"
    assert not (out / "preferred_airline.toml").exists()
    kept = (out / "rejected" / "preferred_airline.toml").read_text(encoding="utf-8")
    assert kept.startswith('noun = "x"\n') and "# switched: missing key [shape]" in kept
    assert list(out.glob("*.toml")) == []  # rejected/ is outside what --catalog OUT reads
    # what each re-ask said of the reply before
    assert (
        "- no ```toml block in the reply, and the whole reply read as TOML gives: TOML syntax "
        "error: "
    ) in model.history[1].prompt
    assert (
        "- TOML syntax error: Invalid value (at end of document) [syntax]"
        in model.history[2].prompt
    )
    assert len(model.history) == 3


def test_a_value_of_another_domain_is_sent_back(tmp_path):
    shared = airline_domain(values=[*VALUES[:7], "Frontier"])
    model = get_model(MODEL).enqueue(fenced(shared), fenced(airline_domain()))
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 0, r.output
    assert "value 'Frontier' is also a value of internet_provider" in model.history[1].prompt


def test_two_proposals_of_one_run_may_not_share_a_value(tmp_path):
    """Each proposal is checked beside the files already written to --out."""
    model = get_model(MODEL).enqueue(
        fenced(airline_domain()), fenced(airline_domain()), fenced(ski_domain())
    )
    r = propose(tmp_path, "--attribute", "preferred_airline", "--attribute", "ski_resort")
    assert r.exit_code == 0, r.output
    assert "value 'Delta' is also a value of preferred_airline" in model.history[2].prompt
    assert check_catalog([tmp_path / "out"]) == []


def test_an_edited_file_in_out_is_kept(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "preferred_airline.toml").write_text("# my own edit\n" + airline_domain())
    get_model(MODEL).enqueue(fenced(airline_domain()))
    r = propose(tmp_path, "--attribute", "preferred_airline")
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"kept {out}/preferred_airline.toml: it differs from the proposal")
    assert (out / "preferred_airline.toml").read_text().startswith("# my own edit\n")


def test_count_and_theme_let_the_model_name_the_attributes(tmp_path):
    model = get_model(MODEL).enqueue(
        {"attributes": ["Preferred Airline", "bank", "ski_resort", "ski_resort"]},
        fenced(airline_domain()),
        fenced(ski_domain()),
    )
    r = propose(tmp_path, "--count", "2", "--theme", "travel")
    assert r.exit_code == 0, r.output
    assert (
        r.output.splitlines()[0]
        == "attributes named by scripted:catalog: preferred_airline, ski_resort"
    )
    assert "Propose 2 new domains on this theme: travel" in model.history[0].prompt
    assert sorted(p.stem for p in (tmp_path / "out").glob("*.toml")) == [
        "preferred_airline",
        "ski_resort",
    ]


def test_a_dry_run_makes_no_call_and_prints_the_planned_ones(tmp_path):
    model = get_model(MODEL)
    r = propose(
        tmp_path,
        "--attribute",
        "preferred_airline",
        "--attribute",
        "ski_resort",
        "--dry-run",
        "--price",
        "1,2",
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:4] == [
        f"dry run: 2 model calls to {MODEL}",
        "  preferred_airline: 1 call",
        "  ski_resort: 1 call",
        "  a proposal that fails the catalog check is asked again: up to 2 more calls each, not "
        "counted",
    ]
    assert f"{MODEL}: 2 planned calls" in r.output
    assert model.history == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "ws").exists()


def test_a_dry_run_after_a_run_counts_only_what_is_not_cached(tmp_path):
    model = get_model(MODEL).enqueue(fenced(airline_domain()))
    assert propose(tmp_path, "--attribute", "preferred_airline").exit_code == 0
    r = propose(
        tmp_path, "--attribute", "preferred_airline", "--attribute", "ski_resort", "--dry-run"
    )
    assert r.output.splitlines()[:3] == [
        f"dry run: 1 model call to {MODEL}",
        "  preferred_airline: no call (answered from the cache)",
        "  ski_resort: 1 call",
    ]
    assert len(model.history) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--attribute", "x"], "catalog propose needs a model: pass --model provider:model"),
        (["--model", "offline", "--attribute", "x"], "catalog propose needs a model"),
        (
            ["--model", MODEL],
            "name what to propose: --attribute NAME (repeatable), or --count N with "
            "--theme TEXT, not both",
        ),
        (["--model", MODEL, "--count", "2"], "--count needs --theme TEXT"),
        (
            ["--model", MODEL, "--attribute", "bank"],
            "--attribute bank: already a domain (catalog (built in)/bank.toml)",
        ),
        (
            ["--model", MODEL, "--attribute", "Pet Insurer"],
            "--attribute 'Pet Insurer' must be a snake_case name",
        ),
    ],
)
def test_refusals_are_one_line_and_make_nothing(tmp_path, args, message):
    r = runner.invoke(
        app,
        [
            "catalog",
            "propose",
            *args,
            "--out",
            str(tmp_path / "out"),
            "--workspace",
            str(tmp_path / "ws"),
        ],
    )
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {message}") and len(r.output.splitlines()) == 1
    assert not (tmp_path / "ws").exists() and not (tmp_path / "out").exists()


def test_the_library_call(ws, tmp_path):
    get_model(MODEL).enqueue(fenced(airline_domain()))
    summary = propose_domains(ws, MODEL, out=tmp_path / "out", attributes=["preferred_airline"])
    assert [(p.attribute, p.status, p.attempts) for p in summary.proposals] == [
        ("preferred_airline", "written", 1)
    ]
    assert summary.failures == 0


def test_the_plan_counts_the_calls_a_run_would_make_and_writes_nothing(ws, tmp_path):
    """``plan_proposals`` takes ``propose_domains``'s arguments and returns what ``--dry-run``
    prints: a first call per attribute the cache cannot answer, none for one it can (here after
    a re-ask), and a naming call with its domain calls for ``count``."""
    out = tmp_path / "out"
    model = get_model(MODEL).enqueue(fenced(airline_domain(values=VALUES[:5])))
    model.enqueue(fenced(airline_domain()))
    both = dict(out=out, attributes=["preferred_airline", "ski_resort"])
    with run_context(dry_run=True) as run:
        plan = plan_proposals(ws, MODEL, **both)
    assert plan.calls == {"preferred_airline": 1, "ski_resort": 1} and not out.exists()
    assert [m.planned.calls for m in run.models] == [2] and model.history == []
    propose_domains(ws, MODEL, out=out, attributes=["preferred_airline"])
    assert len(model.history) == 2  # written at the second attempt
    with run_context(dry_run=True) as run:
        plan = plan_proposals(ws, MODEL, **both)
    assert plan.calls == {"preferred_airline": 0, "ski_resort": 1}
    assert [m.planned.calls for m in run.models] == [1] and len(model.history) == 2
    with run_context(dry_run=True):
        named = plan_proposals(ws, MODEL, out=out, count=3, theme="travel")
    assert (named.naming_call, named.unnamed, named.calls) == (True, 3, {})
    assert named.lines()[0] == f"dry run: 4 model calls to {MODEL}"


def test_extract_toml():
    assert extract_toml("Sure!\n```toml\na = 1\n```\nBye") == "a = 1\n"
    assert extract_toml("```\na = 1\n```") == "a = 1\n"
    assert extract_toml("a = 1") == "a = 1\n"
    assert extract_toml("```toml\na = 1\n") == "a = 1\n"  # cut off at the output limit
    assert extract_toml("  ") == ""


def test_batch_sends_every_attribute_in_one_batch(tmp_path, monkeypatch):
    """--batch: the first attempt of every attribute goes out in one batch; a re-run sends none."""

    def answer(cid, body):
        prompt = body["messages"][-1]["content"]
        return fenced(ski_domain() if '"ski_resort"' in prompt else airline_domain())

    api = OpenAIBatchApi(answer)
    monkeypatch.setattr(openai, "DefaultHttpx2Client", lambda *a, **k: api.client())
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("AMG_BATCH_POLL_SECONDS", "0")
    args = [
        "catalog",
        "propose",
        "--model",
        "openai:gpt-test",
        "--attribute",
        "preferred_airline",
        "--attribute",
        "ski_resort",
        "--out",
        str(tmp_path / "out"),
        "--workspace",
        str(tmp_path / "ws"),
        "--batch",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == 1 and len(api.lines["batch_1"]) == 2
    assert sorted(p.stem for p in (tmp_path / "out").glob("*.toml")) == [
        "preferred_airline",
        "ski_resort",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert api.created == 1
