"""Workspaces for the viewer: an evaluated one (two systems on every split, a closed and an open
audit, one arc rewritten with hostile text), and an empty one."""

from __future__ import annotations

import sqlite3

import pytest

# Text that would run or render as HTML if any page treated it as HTML or Markdown.
HOSTILE = (
    '<script>window.amgPwned = 1</script> <img src=x onerror="window.amgPwned = 2"> '
    '[click me](javascript:window.amgPwned=3) **not bold** <b>not bold either</b> '
    ':red[not red] $x^2$'
)
HOSTILE_RATIONALE = '<img src=y onerror="window.amgPwned = 4"> <a href="javascript:alert(1)">a</a>'
SYSTEMS = ["literal-gated", "literal-ungated"]


def copy_workspace(src, dest):
    """A private copy (sqlite backup: the WAL's contents included)."""
    dest.mkdir(parents=True)
    a, b = sqlite3.connect(src / "workspace.db"), sqlite3.connect(dest / "workspace.db")
    a.backup(b)
    a.close()
    b.close()
    return dest


@pytest.fixture(scope="session")
def viewed(small_build, tmp_path_factory):
    """(workspace folder, hostile arc id, audit tokens): the small offline build evaluated with
    two systems; audit ``done`` closed (every item labeled), audit ``open`` not."""
    from agentmemgate.annotate_app import create_audit
    from agentmemgate.annotate_app.queues import annotator_queue, record_label
    from agentmemgate.evaluate import run_eval
    from agentmemgate.workspace import Workspace

    root, _ = small_build
    path = copy_workspace(root / "ws", tmp_path_factory.mktemp("view") / "ws")
    ws = Workspace(path, create=False)
    arc = next(a for a in ws.arcs("heldout"))
    arc.sessions[0].turns[0].text = HOSTILE
    ws.save_arc(arc)
    with ws.db.conn:
        ws.db.execute(
            "update judge_verdicts set rationale = ? where item_id = ?",
            [HOSTILE_RATIONALE, arc.spec.id],
        )
    run_eval(ws, ["core", "heldout", "controlled", "corrections"], SYSTEMS, show_progress=False)
    tokens = {}
    for name, n in (("done", None), ("open", None)):
        made = create_audit(
            ws, name, "realism", "arcs:core", sample_n=3, annotators=["ana", "bo"], seed=1
        )
        tokens[name] = {who: link.split("token=", 1)[1] for who, link in made.links.items()}
    for who, token in tokens["done"].items():
        for i, item in enumerate(annotator_queue(ws, token)):
            record_label(ws, token, item.display.id, "yes" if who == "ana" or i else "no")
    first = annotator_queue(ws, tokens["open"]["ana"])[0]
    record_label(ws, tokens["open"]["ana"], first.display.id, "yes")
    ws.db.conn.close()
    return path, arc.spec.id, tokens


@pytest.fixture
def empty_ws(tmp_path):
    from agentmemgate.workspace import Workspace

    ws = Workspace(tmp_path / "empty")
    ws.db.conn.close()
    return tmp_path / "empty"
