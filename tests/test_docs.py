"""The documentation site (``docs/``, ``mkdocs.yml``): it builds with ``--strict`` (no broken link,
anchor or include), its CLI reference names every command and option, and its examples run.

Examples: every fenced block tagged ``bash`` or ``python`` runs, in page order, in a fresh folder
per page, offline (no key, no network), each block in its own process, and must exit 0. Blocks
that cannot run here are tagged ``console`` (a key, a server, a corpus, a browser, or hours),
``text`` (output) or by their file type (``toml``, ``json``). ``amg`` and ``python`` in a block are
this checkout's, and ``tests/fixtures`` is reachable as in the repository root.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.main import get_command

from agentmemgate.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S
)
RUNNABLE = ("bash", "python")
# Pages whose runnable-looking blocks are run elsewhere, and why.
RUN_ELSEWHERE = {
    "how-to/extend.md": "tests/test_extend_benchmark.py walks the guide end to end (its commands "
    "need the design edits the page makes by hand)",
}

pytestmark = pytest.mark.skipif(
    __import__("importlib").util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed: pip install -e '.[test]' (or '.[docs]')",
)


def _walk(cmd, path=()):
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _walk(sub, path + (name,))


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("AMG_TEST_BASE_URL", "PYTHONPATH")
    }
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    )
    env.update(NO_MKDOCS_2_WARNING="1", NO_COLOR="1", COLUMNS="100", MPLBACKEND="Agg", **extra)
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in DOCS.rglob("*.md"):
        built = site / page.relative_to(DOCS).with_suffix("") / "index.html"
        if page.name == "index.md":
            built = site / page.relative_to(DOCS).parent / "index.html"
        assert built.is_file(), f"{page.relative_to(ROOT)} was not built"


def _sections(page_html: str) -> dict[str, str]:
    """The CLI reference page cut at its headings: heading id -> the HTML up to the next one."""
    marks = [(m.start(), m.group(1)) for m in re.finditer(r'<h[23] id="([^"]+)"', page_html)]
    return {
        ident: page_html[start : (marks[i + 1][0] if i + 1 < len(marks) else len(page_html))]
        for i, (start, ident) in enumerate(marks)
    }


def test_the_cli_reference_names_every_command_and_option(site):
    sections = _sections((site / "reference" / "cli" / "index.html").read_text(encoding="utf-8"))
    missing = []
    for path, cmd in _walk(get_command(app)):
        ident = "-".join(("amg",) + path)
        if ident not in sections:
            missing.append(f"command: amg {' '.join(path)}")
            continue
        for p in cmd.params:
            names = list(getattr(p, "opts", [])) + list(getattr(p, "secondary_opts", []))
            if p.param_type_name != "option" or p.hidden or names == ["--help"]:
                continue
            for name in names:
                if html.escape(name, quote=False) not in sections[ident]:
                    missing.append(f"option: amg {' '.join(path)} {name}")
        if (
            cmd.help
            and html.escape(cmd.help.split(".")[0].split("`")[0], quote=False)
            not in sections[ident]
        ):
            missing.append(f"help: amg {' '.join(path)}")
    assert not missing, "missing from the CLI reference:\n" + "\n".join(missing)


def test_every_workspace_table_and_rubric_is_documented(site):
    from agentmemgate._sqlite import sqlite_utils
    from agentmemgate.migrations import apply
    from agentmemgate.rubrics import RUBRIC_DIR

    db = sqlite_utils.Database(memory=True)
    apply(db)
    tables = (site / "reference" / "workspace" / "index.html").read_text(encoding="utf-8")
    assert [t for t in db.table_names() if f"<code>{t}</code>" not in tables] == []
    rubrics = (DOCS / "reference" / "rubrics.md").read_text(encoding="utf-8")
    assert [p.stem for p in RUBRIC_DIR.glob("*.txt") if f"`{p.stem}`" not in rubrics] == []


def _pages_with_examples() -> list[Path]:
    return [
        p
        for p in sorted(DOCS.rglob("*.md"))
        if any(m["lang"] in RUNNABLE for m in FENCE.finditer(p.read_text(encoding="utf-8")))
    ]


def _run_examples(page: Path, tmp: Path) -> str | None:
    """Run one page's examples in order in a fresh folder; the failure, or None."""
    bin_dir = tmp / ".bin"
    bin_dir.mkdir()
    amg = "import sys; from agentmemgate.cli import main; sys.argv[0] = 'amg'; sys.exit(main())"
    for name, line in (
        ("amg", f'"{sys.executable}" -c "{amg}" "$@"'),
        ("python", f'"{sys.executable}" "$@"'),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\nexec {line}\n")
        (bin_dir / name).chmod(0o755)
    work = tmp / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    env = _env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        HF_HOME=str(tmp / ".hf"),
        HF_DATASETS_OFFLINE="1",
        AMG_CORPORA=str(tmp / ".corpora"),
    )
    for m in FENCE.finditer(page.read_text(encoding="utf-8")):
        if m["lang"] not in RUNNABLE:
            continue
        body = "\n".join(line[len(m["indent"]) :] for line in m["body"].splitlines())
        argv = (
            ["bash", "-euo", "pipefail", "-c", body]
            if m["lang"] == "bash"
            else [sys.executable, "-c", body]
        )
        start = time.monotonic()
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            return (
                f"{page.relative_to(DOCS)}: this {m['lang']} block exited {proc.returncode} "
                f"after {time.monotonic() - start:.1f} s:\n{body}\n--- stdout ---\n"
                f"{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
            )
    return None


@pytest.fixture(scope="module")
def example_runs(request, tmp_path_factory):
    """Every selected page's examples, two pages at a time (the pages are independent, and the
    suite is sized for 2 cores): page -> a future of its failure or None."""
    pages = {
        item.callspec.params["page"]
        for item in request.session.items
        if item.module is request.module
        and hasattr(item, "callspec")
        and "page" in item.callspec.params
    }
    todo = [
        (p, tmp_path_factory.mktemp("examples"))
        for p in sorted(pages)
        if str(p.relative_to(DOCS)) not in RUN_ELSEWHERE
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {page: pool.submit(_run_examples, page, tmp) for page, tmp in todo}


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with_examples(), ids=lambda p: str(p.relative_to(DOCS)))
def test_the_examples_run(page, example_runs):
    rel = str(page.relative_to(DOCS))
    if rel in RUN_ELSEWHERE:
        pytest.skip(RUN_ELSEWHERE[rel])
    failure = example_runs[page].result()
    assert failure is None, failure
