"""A workspace with a black-box system's judged answers: the shared offline build's core arcs,
an answers JSONL covering every verdict class, and ``run_answers`` with the offline judge."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from agentmemgate.evaluate import run_answers
from agentmemgate.workspace import Workspace

# One template per verdict class of the offline answer judge, cycled over arcs and sessions.
TEMPLATES = [
    "You go to {i}.",
    "{p}.",
    "Still {i}, but thinking about switching to {p}.",
    "I don't know.",
    "Both {i} and {p}.",
]


def answers_workspace(small_build, dest: Path, system: str = "mem0") -> Workspace:
    root, _ = small_build
    dest.mkdir(parents=True)
    src, dst = sqlite3.connect(root / "ws" / "workspace.db"), sqlite3.connect(dest / "workspace.db")
    src.backup(dst)
    src.close()
    dst.close()
    ws = Workspace(dest)
    lines = []
    for k, arc in enumerate(sorted(ws.arcs("core"), key=lambda a: a.id)):
        for s in range(len(arc.sessions)):
            text = TEMPLATES[(k + s) % len(TEMPLATES)].format(
                i=arc.spec.initial_value, p=arc.spec.plan_value
            )
            lines.append({"arc_id": arc.id, "after_session": s, "answer": text})
    path = dest / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    run_answers(ws, path, system, show_progress=False)
    return ws
