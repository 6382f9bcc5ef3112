"""Every command documented; bad input gives one line and a non-zero exit."""

import ast
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from agentmemgate.cli import app

runner = CliRunner()


def _walk(cmd, path=()):
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():  # typer vendors its own click
        yield from _walk(sub, path + (name,))


def test_every_command_has_help():
    root = get_command(app)
    for path, cmd in _walk(root):
        if path:
            assert cmd.help or cmd.short_help, f"amg {' '.join(path)} has no help text"
        for p in cmd.params:
            if getattr(p, "param_type_name", "") == "option" and p.name != "help":
                assert p.help, f"amg {' '.join(path)} {p.opts[0]} has no help text"


LLM_OPTIONS = {
    "--timeout",
    "--max-tokens",
    "--structured-output",
    "--price",
    "--dry-run",
    "--batch",
    "--no-wait",
}


def test_every_model_calling_command_has_all_the_llm_options():
    """The options come as one bundle (``@llm_command``): a command has all of them or none
    (natural build: without --batch and --no-wait, its fielder asks one question at a time)."""
    having = {}
    for path, cmd in _walk(get_command(app)):
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])} & LLM_OPTIONS
        if opts:
            having[" ".join(path)] = opts
    assert len(having) == 11
    for name, opts in having.items():
        assert opts == (
            LLM_OPTIONS - {"--batch", "--no-wait"} if name == "natural build" else LLM_OPTIONS
        ), name


# Every command that calls a model: the option naming each model's server, and the older names
# it keeps as aliases. One scheme: the model --ROLE is reached at --ROLE-base-url.
MODEL_SERVERS = {
    "build": {"--judge-base-url": (), "--generator-base-url": ("--base-url",)},
    "generate": {"--generator-base-url": ("--base-url",)},
    "classify": {"--classifier-base-url": ("--base-url",)},
    "catalog propose": {"--model-base-url": ("--base-url",)},
    "validate": {"--judge-base-url": ("--base-url",)},
    "validate equivalence-pairs": {"--judge-base-url": ("--base-url",), "--rejudge-base-url": ()},
    "mine hedges": {"--miner-base-url": ("--base-url",)},
    "statements label": {"--voters-base-url": ("--base-url",), "--relabel-base-url": ()},
    "eval run": {
        "--model-base-url": ("--base-url",),
        "--embedder-base-url": (),
        "--judge-base-url": (),
    },
    "eval answers": {"--judge-base-url": ()},
    "natural build": {"--fielder-base-url": ("--base-url",)},
}


def test_every_model_is_reached_at_the_server_option_named_after_it():
    found = {}
    for path, cmd in _walk(get_command(app)):
        options = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "--timeout" not in options:  # calls no model
            continue
        servers = {
            p.opts[0]: tuple(p.opts[1:])
            for p in cmd.params
            if getattr(p, "param_type_name", "") == "option" and "-base-url" in p.opts[0]
        }
        for name in servers:  # --ROLE-base-url serves the model --ROLE names
            assert name.removesuffix("-base-url") in options, (path, name)
        found[" ".join(path)] = servers
    assert found == MODEL_SERVERS


def test_the_older_names_set_the_same_option():
    commands = dict((" ".join(path), cmd) for path, cmd in _walk(get_command(app)))
    for name, servers in MODEL_SERVERS.items():
        cmd = commands[name]
        for option, older in servers.items():
            param = next(p for p in cmd.params if option in getattr(p, "opts", []))
            for flag in (option, *older):
                ctx = cmd.make_context(
                    name, [flag, "http://127.0.0.1:9/v1"], resilient_parsing=True
                )
                assert ctx.params[param.name] == "http://127.0.0.1:9/v1", (name, flag)


def test_llm_command_lists_the_options_where_llm_stands_and_keeps_those_placed_by_hand():
    import inspect

    from agentmemgate.cli._llm import DryRunOpt, LlmRun, llm_command

    @llm_command
    def cmd(a: int = 0, dry_run: DryRunOpt = False, llm: LlmRun = LlmRun(), z: int = 0):
        return llm

    assert list(inspect.signature(cmd).parameters) == [
        "a",
        "dry_run",
        "timeout",
        "max_tokens",
        "structured_output",
        "price",
        "batch",
        "no_wait",
        "z",
    ]
    run = cmd(
        a=1,
        dry_run=True,
        timeout=5.0,
        max_tokens=None,
        structured_output="auto",
        price=None,
        batch=False,
        no_wait=False,
        z=2,
    )
    assert run == LlmRun(timeout=5.0, dry_run=True)


def test_walk_reaches_subcommands():
    paths = {" ".join(p) for p, _ in _walk(get_command(app))}
    assert {"build", "report agreement", "audit create", "mine hedges"} <= paths


@pytest.mark.parametrize(
    "args, needle",
    [
        (["build", "--split", "nope"], "Unknown split 'nope'"),
        (["build", "--n-per-cell", "0"], "--n-per-cell"),
        (["build", "--n-per-cell", "-3"], "--n-per-cell"),
        (["build", "--generator", "bogus"], "provider:model"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, needle):
    result = runner.invoke(
        app, args + ["--workspace", str(tmp_path / "ws"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code != 0
    assert needle in result.output
    assert "Traceback" not in result.output
    assert len([l for l in result.output.splitlines() if l.strip()]) == 1


def test_unwritable_output_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(
        app,
        [
            "build",
            "--split",
            "core",
            "--n-per-cell",
            "1",
            "--workspace",
            str(tmp_path / "ws"),
            "--out",
            str(blocker / "sub"),
            "--no-progress",
        ],
    )
    assert result.exit_code != 0
    assert "Cannot create output folder" in result.output
    assert "Traceback" not in result.output


def test_build_via_cli_and_resume(tmp_path):
    args = [
        "build",
        "--split",
        "core",
        "--n-per-cell",
        "2",
        "--workspace",
        str(tmp_path / "ws"),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "rendered now: 6" in first.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0
    assert "rendered now: 0, already done: 6" in again.output
    assert (tmp_path / "out" / "core" / "data.jsonl").read_bytes()


@pytest.mark.parametrize(
    "generator, var",
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_api_key_names_the_variable(tmp_path, monkeypatch, generator, var):
    monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = runner.invoke(
        app, ["build", "--generator", generator, "--workspace", str(tmp_path / "ws")]
    )
    assert result.exit_code == 1
    assert var in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_dry_run_counts_calls_and_base_url_needs_llm(tmp_path):
    ws = str(tmp_path / "ws")
    result = runner.invoke(
        app,
        [
            "build",
            "--generator",
            "scripted:dry",
            "--split",
            "core",
            "--n-per-cell",
            "2",
            "--dry-run",
            "--workspace",
            ws,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "6 to render, 6 model calls" in result.output
    bad = runner.invoke(app, ["build", "--base-url", "http://127.0.0.1:9/v1", "--workspace", ws])
    assert bad.exit_code == 1 and "--generator-base-url needs an LLM generator" in bad.output


def test_dry_run_with_a_new_plan_keeps_finished_arcs(tmp_path):
    ws = str(tmp_path / "ws")
    base = ["--split", "core", "--workspace", ws, "--out", str(tmp_path / "out"), "--no-progress"]
    assert runner.invoke(app, ["build", "--n-per-cell", "2"] + base).exit_code == 0
    dry = runner.invoke(app, ["build", "--n-per-cell", "3", "--dry-run"] + base)
    assert dry.exit_code == 0 and "9 arcs planned, 9 to render" in dry.output
    again = runner.invoke(app, ["build", "--n-per-cell", "2"] + base)
    assert "rendered now: 0, already done: 6" in again.output


def test_failure_reasons_with_brackets_print_verbatim(capsys):
    from agentmemgate.cli._app import show
    from agentmemgate.generate import RenderFailure
    from agentmemgate.generate.run import GenerateSummary
    from agentmemgate.pipeline import BuildSummary

    reason = "server said [/INST] and [redacted]"
    gen = GenerateSummary(
        planned=1,
        rendered_now=0,
        already_done=0,
        failed=1,
        failures=[RenderFailure(spec_id="core-x", reason=reason, attempts=3)],
    )
    show(BuildSummary(splits=["core"], generator="scripted:x", generate=gen))
    assert reason in capsys.readouterr().out


def test_each_command_is_found_in_the_modules_that_register_it():
    """``amg CMD`` imports only the modules ``commands()`` names for CMD, read from their source:
    they must be exactly the modules whose functions typer runs for CMD and its subcommands."""
    from pathlib import Path

    from agentmemgate import cli
    from agentmemgate.cli import _app

    folder = Path(cli.__file__).parent
    assert set(cli.MODULES) == {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}

    def modules_of(typer_app) -> set[str]:
        found = {c.callback.__module__ for c in typer_app.registered_commands}
        if typer_app.registered_callback is not None:
            found.add(typer_app.registered_callback.callback.__module__)
        for g in typer_app.registered_groups:
            found |= modules_of(g.typer_instance)
        return found

    cli.load()
    registered: dict[str, set[str]] = {}
    for c in _app.app.registered_commands:
        name = c.name or c.callback.__name__.replace("_", "-")
        registered.setdefault(name, set()).add(c.callback.__module__)
    for g in _app.app.registered_groups:
        registered.setdefault(g.name, set()).update(modules_of(g.typer_instance))
    assert {
        name: {f"agentmemgate.cli.{m}" for m in mods} for name, mods in cli.commands().items()
    } == registered


# Flags that name different things in different commands (``--name`` of a pair set, of a design
# copy, of an answering system ...), and the model options: each declaration is its own option.
DISTINCT_OPTIONS = {
    "--base-url",  # audit create / relink: where annotators reach the app (defaults differ)
    "--classifier",
    "--design",
    "--format",
    "--from",
    "--judge",
    "--max-attempts",
    "--method",
    "--miner",
    "--model",
    "--n-per-cell",
    "--name",
    "--split",
    "--stratify-by",
    "--system",
    "--task",
}


def test_an_option_many_commands_share_is_declared_once():
    """``--workspace``, ``--seed``, ``--out``, ``--concurrency`` ... are declared in ``_options``
    (a factory where the help is the command's), so their type and limits cannot drift apart."""
    import ast
    from collections import Counter
    from pathlib import Path

    from agentmemgate import cli

    declared: Counter[str] = Counter()
    for path in Path(cli.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Option":
                flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
                if flags and str(flags[0]).startswith("--"):
                    declared[flags[0]] += 1
    assert declared["--workspace"] == 1 and declared["--seed"] == 1  # the walk found them
    assert {flag for flag, n in declared.items() if n > 1} <= DISTINCT_OPTIONS


def test_command_modules_declare_real_annotations():
    """typer reads every command's annotations at start-up: as strings (``from __future__ import
    annotations``) each one is compiled and evaluated again, a fifth of ``amg --help``."""
    cli = Path(__file__).resolve().parents[1] / "agentmemgate" / "cli"
    stringy = [
        p.name
        for p in cli.glob("*.py")
        for node in ast.parse(p.read_text()).body
        if isinstance(node, ast.ImportFrom) and node.module == "__future__"
    ]
    assert stringy == []
