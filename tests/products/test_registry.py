"""The products room: the one answer call, the baselines' prompts, names and their one-line errors,
and the hook a product module plugs into (options in, provenance out)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json

import pytest
from typer.testing import CliRunner

from agentmemgate import rubrics
from agentmemgate.cli import app
from agentmemgate.errors import BadInput, MissingExtra
from agentmemgate.evaluate import EvalOptions
from agentmemgate.llm import ModelRef, get_model
from agentmemgate.memory.answering import Retrieved, SessionInput, SessionTurn
from agentmemgate.products import (
    AnsweringOptions,
    answer_probe,
    format_memories,
    get_answering,
    registry,
)
from agentmemgate.products.contract import Answering
from agentmemgate.products.full_context import transcript

runner = CliRunner()
DAY = dt.date(2024, 3, 5)


def one_line_error(result, needle):
    assert result.exit_code == 1, result.output
    assert needle in result.output, result.output
    assert "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_answer_probe_sends_the_memories_the_question_and_the_date_only(ws):
    model = get_model("scripted:answer", workspace=ws).enqueue("  You use Deezer.  ")
    mems = [
        Retrieved(text="User uses Pandora", score=0.9),
        Retrieved(
            text="User  plans to\nswitch to Deezer",
            valid_at="2024-01-08",
            invalid_at="2024-02-01",
            meta={"id": "m-17"},
        ),
    ]
    assert answer_probe(model, "Which music app does the user use?", DAY, mems) == "You use Deezer."
    sent = model.history[0]
    expected = rubrics.load("product_answer", 1).render(
        memories="1. User uses Pandora\n2. User plans to switch to Deezer (true from 2024-01-08; "
        "no longer true from 2024-02-01)",
        question="Which music app does the user use?",
        date="2024-03-05",
    )
    assert sent.prompt == expected and sent.system is None  # nothing else: no score, no ids
    assert "m-17" not in sent.prompt and "0.9" not in sent.prompt
    assert format_memories([]) == "(no memories were retrieved)"


def test_full_context_transcript_has_every_session_date_and_role():
    s = [
        SessionInput(
            index=0,
            date=dt.date(2024, 1, 1),
            turns=(
                SessionTurn(role="user", text="I use Pandora."),
                SessionTurn(role="assistant", text="Noted."),
            ),
        ),
        SessionInput(
            index=1,
            date=dt.date(2024, 1, 8),
            turns=(SessionTurn(role="user", text="I might switch to Deezer."),),
        ),
    ]
    assert transcript(s) == (
        "Session 1 (2024-01-01)\nuser: I use Pandora.\nassistant: Noted.\n\n"
        "Session 2 (2024-01-08)\nuser: I might switch to Deezer."
    )
    assert transcript([]) == "(no conversation yet)"


@pytest.mark.parametrize("name", ["full-context", "no-memory", "mem0", "graphiti"])
def test_answering_systems_refuse_the_offline_model(name):
    with pytest.raises(BadInput, match=f"{name} needs --model provider:model"):
        get_answering(name, AnsweringOptions(model="offline"))


def _without(monkeypatch, library):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        registry.importlib.util, "find_spec", lambda n, *a: None if n == library else real(n, *a)
    )


def test_a_missing_product_names_its_install_command(monkeypatch):
    _without(monkeypatch, "mem0")
    with pytest.raises(
        MissingExtra, match=r"^mem0 is not installed: pip install 'agentmemgate\[mem0\]'$"
    ):
        get_answering("mem0", AnsweringOptions(model="scripted:x"))
    from agentmemgate.evaluate import available_systems

    line = next(x for x in available_systems() if x.name == "mem0")
    assert (
        not line.available
        and line.note == "mem0 is not installed: pip install 'agentmemgate[mem0]'"
    )


def test_an_installed_library_without_its_adapter_says_so(monkeypatch):
    monkeypatch.setitem(
        registry.PRODUCTS,
        "mem0",
        registry.Product("mem0", "agentmemgate.products.no_such_adapter", "json", "json", "test"),
    )
    with pytest.raises(BadInput, match="The mem0 adapter is not part of this build"):
        get_answering("mem0", AnsweringOptions(model="scripted:x"))


def test_the_product_hook_gets_the_options_and_its_provenance_is_stored(ws, monkeypatch):
    """What a product module sees (``build(options)``) and what the run keeps of it."""
    from evaluate.test_measures import OPEN  # tests/ is on the path (rootdir packages)

    from agentmemgate.evaluate import run_eval
    from agentmemgate.memory.system import SystemInfo
    from agentmemgate.products.no_memory import NoMemory

    ws.save_specs([OPEN.spec])
    ws.save_arc(OPEN)
    seen = []

    def build(options):
        seen.append(options)
        model = get_model(options.model, workspace=options.workspace)
        info = SystemInfo(name="mem0", description="a stand-in product", gated=False, offline=False)
        return Answering(
            info=info,
            factory=lambda: NoMemory(info, model),
            model=options.model,
            provenance={
                "product": "mem0",
                "library": "mem0ai",
                "library_version": "9.9",
                "model": options.model,
                "embedder": options.embedder,
                "dimensions": 8,
                "store": "in-memory",
            },
        )

    monkeypatch.setattr(registry, "load_product", lambda name: build)
    get_model("scripted:prod").respond_with(lambda req: "I don't know.")
    s = run_eval(
        ws,
        ["core"],
        ["mem0"],
        EvalOptions(
            model=ModelRef.parse("scripted:prod", base_url="http://10.0.0.1:9/v1"),
            embedder=ModelRef.parse("openai:embed-small", base_url="http://10.0.0.2:9/v1"),
        ),
        show_progress=False,
    )
    assert s.names == ["mem0@scripted:prod"] and s.ran_now == 1
    o = seen[0]
    assert (o.model, o.embedder, o.embedder_base_url, o.base_url) == (
        "scripted:prod",
        "openai:embed-small",
        "http://10.0.0.2:9/v1",
        "http://10.0.0.1:9/v1",
    )
    assert o.workspace is not None and o.workspace.path == ws.path
    row = next(ws.db["eval_systems"].rows_where("name = ?", ["mem0@scripted:prod"]))
    prov = json.loads(row["options"])
    assert prov["library_version"] == "9.9" and prov["embedder"] == "openai:embed-small"
    assert prov["base_url"] is True and prov["embedder_base_url"] is True
    assert row["kind"] == "answering"
    dump = "\n".join(str(r) for t in ("eval_systems", "eval_runs") for r in ws.db[t].rows)
    assert "10.0.0" not in dump  # where the servers are stays out of the database


def test_cli_one_line_errors(ws, monkeypatch):
    w = str(ws.path)
    one_line_error(
        runner.invoke(app, ["eval", "run", "--system", "nonesuch", "--workspace", w]),
        "Unknown memory system 'nonesuch'; systems: literal-ungated,",
    )
    r = runner.invoke(app, ["eval", "run", "--system", "nonesuch", "--workspace", w])
    assert "full-context, no-memory, mem0, graphiti" in r.output and "amg eval systems" in r.output
    one_line_error(
        runner.invoke(app, ["eval", "run", "--system", "full-context", "--workspace", w]),
        "full-context needs --model provider:model",
    )
    one_line_error(
        runner.invoke(
            app, ["eval", "run", "--system", "no-memory", "--no-retry", "--workspace", w]
        ),
        "apply to component systems",
    )
    _without(monkeypatch, "mem0")
    one_line_error(
        runner.invoke(
            app, ["eval", "run", "--system", "mem0", "--model", "scripted:x", "--workspace", w]
        ),
        "mem0 is not installed: pip install 'agentmemgate[mem0]'",
    )


def test_cli_eval_systems_one_line_each():
    r = runner.invoke(app, ["eval", "systems"])
    assert r.exit_code == 0, r.output
    names = [line.split()[0] for line in r.output.splitlines()]
    assert names[:2] == ["literal-ungated", "literal-gated"]
    assert {"cautious-gated", "full-context", "no-memory", "mem0", "graphiti"} <= set(names)
    assert len(names) == len(set(names))
