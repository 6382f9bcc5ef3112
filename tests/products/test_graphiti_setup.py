"""What the Graphiti adapter decides before Graphiti runs, on any Python (the product itself is
tested in test_graphiti.py, on Python 3.12+): stores, group ids, episodes, one-line errors."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys

import pytest
from typer.testing import CliRunner

from agentmemgate.cli import app
from agentmemgate.errors import BadInput, MissingExtra
from agentmemgate.memory.answering import SessionInput, SessionTurn
from agentmemgate.products.graphiti import (
    GraphStore,
    episode_body,
    group_id,
    reference_time,
    sweep_orphans,
)

HAVE_GRAPHITI = importlib.util.find_spec("graphiti_core") is not None


def test_stores_from_graph_urls():
    assert GraphStore(None).kind == "embedded"
    assert GraphStore("falkor://localhost:6379").kind == "falkordb"
    assert GraphStore("redis://u:p@db.example:6380").kind == "falkordb"
    assert GraphStore("bolt://neo:pw@localhost:7687").kind == "neo4j"
    assert GraphStore("neo4j+s://x.databases.neo4j.io").kind == "neo4j"
    server = GraphStore("bolt://neo:s3cret@localhost:7687")
    assert "s3cret" not in server.describe() and "localhost" not in server.describe()
    assert GraphStore.safe_url("bolt://neo:s3cret@localhost:7687") == "bolt://localhost:7687"


@pytest.mark.parametrize(
    "url, message",
    [
        ("http://localhost:7474", "must be a FalkorDB (falkor://host:6379) or Neo4j"),
        ("bolt://", "names no host"),
        ("falkor://h:port", "has a bad port"),
        ("ftp://me:s3cret@h:1", "not 'ftp://h:1'"),
    ],
)
def test_bad_graph_urls_are_one_line_without_secrets(url, message):
    with pytest.raises(BadInput, match=re.escape(message)) as e:
        GraphStore(url)
    assert "s3cret" not in str(e.value) and "\n" not in str(e.value)


def test_the_embedded_store_needs_python_312_and_says_what_to_do():
    with pytest.raises(MissingExtra) as e:
        GraphStore(None).check_available((3, 11))
    assert str(e.value) == (
        "graphiti's embedded FalkorDB (falkordblite) needs Python 3.12+ (this is 3.11): run on "
        "Python 3.12+ with pip install 'agentmemgate[graphiti]', or give --graph-url for a "
        "FalkorDB or Neo4j server"
    )


def test_group_ids_are_safe_for_falkordb_full_text_and_stay_distinct():
    assert group_id("amg-0123abcd") == "amg_0123abcd"
    assert group_id("amg-a") != group_id("amg-b")
    with pytest.raises(BadInput):
        group_id("")


def test_a_session_is_one_message_episode_at_its_date():
    s = SessionInput(
        index=2,
        date=dt.date(2024, 5, 1),
        turns=(
            SessionTurn(role="user", text="I might  move\nto Seattle."),
            SessionTurn(role="assistant", text="Seattle is lovely."),
        ),
    )
    assert episode_body(s) == "user: I might move to Seattle.\nassistant: Seattle is lovely."
    assert reference_time(s.date) == dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def test_the_sweep_leaves_live_and_foreign_directories_alone(tmp_path):
    import os

    psutil = pytest.importorskip("psutil", reason="psutil comes with falkordblite (Python 3.12+)")

    live = tmp_path / "amg-graphiti-live"
    live.mkdir()
    me = psutil.Process()
    (live / "owner.json").write_text(
        json.dumps({"owner_pid": os.getpid(), "owner_started": me.create_time()})
    )
    foreign = tmp_path / "amg-graphiti-foreign"
    foreign.mkdir()
    dead = tmp_path / "amg-graphiti-dead"
    dead.mkdir()
    (dead / "owner.json").write_text(
        json.dumps({"owner_pid": os.getpid(), "owner_started": me.create_time() - 99})
    )
    assert sweep_orphans(tmp_path) == 1
    assert live.exists() and foreign.exists() and not dead.exists()


@pytest.mark.skipif(HAVE_GRAPHITI, reason="graphiti-core is installed here")
def test_eval_run_without_the_extra_is_one_line_naming_the_install(tmp_path):
    from agentmemgate.generate import generate, get_renderer
    from agentmemgate.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    generate(ws, get_renderer("offline"), ["core"], n_per_cell=1, show_progress=False)
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "run",
            "--system",
            "graphiti",
            "--model",
            "openai:gpt-4o-mini",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--workspace",
            str(ws.path),
        ],
        prog_name="amg",
    )
    assert res.exit_code != 0
    assert res.output.strip().startswith(
        "Error: graphiti is not installed: pip install 'agentmemgate[graphiti]'"
    )
    assert len(res.output.strip().splitlines()) == 1
    if sys.version_info < (3, 12):  # the embedded FalkorDB needs 3.12: say what works here
        assert "needs Python 3.12+; on this Python also pass --graph-url" in res.output
