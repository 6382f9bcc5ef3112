"""No import circles, and each room imports only the rooms below it in the data flow.

The import graph is built from the package's source (every ``import``, including those inside
functions and under ``TYPE_CHECKING``, and ``importlib.import_module("agentmemgate...")``), so a
circle hidden in a lazy import fails here too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "agentmemgate"

# Shared pieces beside the rooms: any room may use them; they use no room.
SHARED = {
    "agentmemgate",
    "_gc",
    "_lazy",
    "_sqlite",
    "atomic",
    "defaults",
    "errors",
    "hashing",
    "jsonl",
    "llm",
    "report_html",
    "suggest",
    "migrations",
    "outputs",
    "progress",
    "registry",
    "rubrics",
    "run_context",
    "schema",
    "streamlit_launch",
    "stats",
    "text",
    "versioned",
    "workspace",
}
# The rooms from the bottom up; a room may import the ones before it. Data flows spec -> render ->
# validate -> audit -> export -> evaluate; code may reuse a room lower in this list: ``validate``
# (what a valid arc is: structural checks, offline realism checks, judges) sits below ``generate``,
# whose LLM generator re-asks a draft that fails those checks and whose importer stores their
# verdicts. The corpora and classifier rooms come where their data enters.
ROOMS = [
    "design",
    "validate",
    "generate",
    "design_checks",
    "corpora",
    "classify",
    "annotate_app",
    "exports",
    "memory",
    "answer_judge",
    "products",
    "evaluate",
    "view",
    "pipeline",
    "cli",
]
# Known exceptions, each with its reason. Keep this short.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _targets(name: str, is_pkg: bool, node: ast.AST, modules: dict) -> list[str]:
    if isinstance(node, ast.Import):
        found = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            base = ".".join(base + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        found = [f"{base}.{a.name}" for a in node.names]
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        found = [str(node.args[0].value)]
    else:
        return []
    out = []
    for target in found:
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]  # `from pkg import name` where name is not a module
        if target in modules and target != name:
            out.append(target)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, (path, is_pkg) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = {t for node in ast.walk(tree) for t in _targets(name, is_pkg, node, modules)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        for b in targets:
            if room(a) != room(b):
                out.setdefault(room(a), set()).add(room(b))
    return out


def test_the_graph_sees_lazy_and_relative_imports():
    g = import_graph()
    assert "agentmemgate.schema" in g["agentmemgate.workspace"]  # top-level relative import
    assert "agentmemgate.llm.openai_provider" in g["agentmemgate.llm.registry"]  # inside a function
    assert "agentmemgate.exports" in g["agentmemgate.pipeline"]


def test_circle_detection_works():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_modules():
    assert cycles(import_graph()) == []


def test_no_import_circle_between_rooms():
    assert cycles(room_graph(import_graph())) == []


def test_rooms_import_only_rooms_below_them():
    graph = import_graph()
    rank = {r: i for i, r in enumerate(ROOMS)}
    unplaced = {room(m) for m in graph} - SHARED - set(rank)
    assert not unplaced, f"place the new room(s) {sorted(unplaced)} in ROOMS or SHARED"
    upward = []
    for a, targets in graph.items():
        for b in targets:
            ra, rb = room(a), room(b)
            if ra == rb or rb in SHARED or (a, b) in ALLOWED_UPWARD:
                continue  # within a room, or shared code (whose own circles are caught above)
            if ra in SHARED or rank[rb] > rank[ra]:
                upward.append(f"{a} -> {b}")
    assert upward == [], "imports that reach up (or shared code importing a room):\n" + "\n".join(
        upward
    )


def test_allowed_exceptions_still_exist():
    graph = import_graph()
    assert all(b in graph.get(a, ()) for a, b in ALLOWED_UPWARD), "drop exceptions that are gone"


# -- start-up: what importing a module costs is behaviour (which libraries it loads) -----------
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "sklearn",
    "matplotlib",
    "pyarrow",
    "openai",
    "anthropic",
    "streamlit",
    "krippendorff",
)
LAZY_ROOMS = [
    "llm",
    "validate",
    "generate",
    "corpora",
    "classify",
    "annotate_app",
    "memory",
    "view",
    "products",
    "evaluate",
]


def _loaded_after(code: str) -> list[str]:
    """The HEAVY libraries in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(n for n in {HEAVY!r} if n in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "import agentmemgate.cli",
        "import agentmemgate.workspace",  # sqlite_utils, without the pandas and numpy it would load
        "import agentmemgate.evaluate",  # what every command imports first (its registrations)
        "from agentmemgate.cli import main\nimport sys\nsys.argv = ['amg', '--help']\ntry:\n    main()\n"
        "except SystemExit:\n    pass",
    ],
)
def test_start_up_imports_no_heavy_library(code):
    assert _loaded_after(code) == []


@pytest.mark.parametrize("room_name", LAZY_ROOMS)
def test_every_re_export_of_a_room_resolves(room_name):
    import importlib

    room_mod = importlib.import_module(f"agentmemgate.{room_name}")
    names = list(getattr(room_mod, "__all__", ())) + list(getattr(room_mod, "_LAZY", {}))
    assert names
    for name in names:
        assert getattr(room_mod, name) is not None, name
    assert set(names) <= set(dir(room_mod))
    with pytest.raises(AttributeError):
        room_mod.no_such_name  # noqa: B018


def test_numpy_values_still_get_sqlite_column_types(tmp_path):
    """The sqlite_utils shim: a table created from numpy scalars gets INTEGER/REAL columns, as
    sqlite_utils gives them when it imports numpy itself."""
    code = (
        "from agentmemgate._sqlite import sqlite_utils\nimport numpy as np\n"
        f"db = sqlite_utils.Database({str(tmp_path / 'x.db')!r})\n"
        "db['t'].insert({'i': np.int64(3), 'f': np.float32(0.5)})\n"
        "print({c.name: c.type for c in db['t'].columns})"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{'i': 'INTEGER', 'f': 'REAL'}"


def _cli_modules_after(argv: list[str]) -> tuple[list[str], str]:
    """The ``agentmemgate`` modules loaded by ``amg ARGV`` in a fresh interpreter, and its output."""
    probe = (
        "import json, sys\nfrom agentmemgate.cli import main\n"
        f"sys.argv = ['amg', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\nMODULES ' + json.dumps(sorted(m for m in sys.modules "
        "if m.startswith('agentmemgate'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    text, _, mods = out.stdout.rpartition("\nMODULES ")
    return json.loads(mods), text


def test_a_command_loads_only_its_own_cli_module():
    mods, text = _cli_modules_after(["usage", "--help"])
    assert "Sum cost and tokens" in text
    assert "agentmemgate.cli.usage" in mods
    assert not {
        "agentmemgate.cli.corpora",
        "agentmemgate.cli.eval",
        "agentmemgate.cli.audit",
    } & set(mods)


def test_a_mistyped_workspace_is_refused_before_the_library_loads(tmp_path):
    mods, _ = _cli_modules_after(
        ["eval", "show", "x", "--system", "s", "--workspace", str(tmp_path / "none")]
    )
    assert "agentmemgate.cli.eval" in mods and "agentmemgate.workspace" in mods
    assert not [
        m for m in mods if m.startswith(("agentmemgate.evaluate", "agentmemgate.annotate_app"))
    ]


def test_report_help_lists_the_reports_of_every_module():
    _, text = _cli_modules_after(["report", "--help"])
    for name in ("validation", "equivalence", "agreement", "classifier", "eval"):
        assert name in text


def test_help_and_unknown_commands_see_every_command():
    _, text = _cli_modules_after(["--help"])
    for name in ("build", "validate", "audit", "mine", "import", "eval", "usage", "natural"):
        assert name in text
