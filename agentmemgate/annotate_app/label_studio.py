"""Audits in and out of Label Studio: ``amg audit export --format label-studio`` and
``amg audit import --format label-studio``.

The export is blind, as the labeling app is: each task's data is what an annotator's page shows
(the highlighted text, the turns before it, the question, the two values) and the item id; no
reference label, no one's labels, no check item. The labeling config asks for one choice among
the audit's labels, each shown in words with its definition as a hint and exported under its
label id (``alias``), so the Label Studio export reads back as the audit's labels. Importing it
reads each completed annotation as one label by its Label Studio user (``ls-user-ID``, or the
user's email when the export carries it).
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BadInput, WorkspaceError, unreadable
from ..outputs import writable
from .audits import get_audit
from .items import ItemDisplay
from .labels import display_name

if TYPE_CHECKING:
    from ..workspace import Workspace

CHOICES_NAME = "label"


def _turn_line(t) -> str:
    return f"{t.speaker or t.role}: {t.text}"


def task_data(d: ItemDisplay) -> dict:
    """What one task shows: ``shown`` (the text to label), ``context`` (the turns before it),
    ``question``, and for pairs and answers the two values."""
    data = {"item_id": d.id, "question": d.question or "", "context": "", "shown": ""}
    if d.kind == "answer" and d.answer is not None and d.pair is not None:
        data["context"] = f"Question the assistant was asked: {d.answer.question}"
        data["shown"] = d.answer.text
        data["question"] = d.question or "What does this answer assert as the user's current value?"
    if d.pair is not None:
        data["options"] = (
            f"Field: {d.pair.field}\n{d.pair.a_name}: {d.pair.a}\n{d.pair.b_name}: {d.pair.b}"
        )
        if d.kind == "pair":
            data["shown"] = data["options"]
    if d.turns:
        at = d.target if d.target is not None else len(d.turns) - 1
        data["context"] = "\n".join(_turn_line(t) for t in d.turns[:at])
        after = "\n".join(_turn_line(t) for t in d.turns[at + 1 :])
        data["shown"] = _turn_line(d.turns[at])
        if after:
            data["after"] = after
    return data


def labeling_config(labels, has: set[str]) -> str:
    """One choice among the audit's labels, shown in words, exported as label ids."""
    parts = ["<View>"]
    if "question" in has:
        parts.append('  <Header value="$question"/>')
    if "context" in has:
        parts.append('  <Text name="context" value="$context"/>')
    parts.append('  <Header value="Label this:"/>')
    parts.append('  <Text name="shown" value="$shown"/>')
    if "after" in has:
        parts.append('  <Text name="after" value="$after"/>')
    if "options" in has:
        parts.append('  <Text name="options" value="$options"/>')
    parts.append(
        f'  <Choices name="{CHOICES_NAME}" toName="shown" choice="single" required="true">'
    )
    for lab in labels.choices:
        hint = labels.definitions.get(lab) or ""
        parts.append(
            f'    <Choice value="{escape(display_name(lab))}" alias="{escape(lab)}"'
            + (f' hint="{escape(hint)}"' if hint else "")
            + "/>"
        )
    parts += ["  </Choices>", "</View>", ""]
    return "\n".join(parts)


def export_label_studio(ws: Workspace, name: str, out: str | Path | None = None) -> list[Path]:
    """Write ``tasks.json`` and ``labeling-config.xml``; returns the paths written."""
    from ..atomic import write_text_atomic

    info = get_audit(ws, name)
    rows = ws.db.execute(
        "select payload from audit_items where audit = ? and payload is not null and item_id "
        "not in (select item_id from audit_checks where audit = ?) order by position",
        [name, name],
    ).fetchall()
    if not rows:
        raise BadInput(f"Audit {name!r} has no items to show (it was imported from a file)")
    tasks = [{"data": task_data(ItemDisplay.model_validate_json(p))} for (p,) in rows]
    has = {k for t in tasks for k, v in t["data"].items() if v}
    folder = Path(out) if out is not None else ws.path / "audit-exports" / name / "label-studio"
    writable(folder)
    try:
        paths = [
            write_text_atomic(folder / "tasks.json", json.dumps(tasks, indent=2) + "\n"),
            write_text_atomic(folder / "labeling-config.xml", labeling_config(info.label_set, has)),
        ]
    except OSError as e:
        raise WorkspaceError(f"Cannot write to {str(folder)!r}: {e.strerror or e}") from None
    return paths


def _user(completed_by) -> str:
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if email:
            return re.sub(r"[^A-Za-z0-9_.-]", "_", str(email))[:64]
        completed_by = completed_by.get("id")
    if completed_by is None:
        return "ls-user-unknown"
    return f"ls-user-{completed_by}"


def read_label_studio(path: Path) -> list[dict]:
    """Rows (item_id, annotator, label, active_seconds, created_at) from a Label Studio JSON
    export; cancelled (skipped) annotations and annotations without a choice are left out."""
    if not path.is_file():
        raise unreadable(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not a Label Studio JSON export ({e})") from None
    if not isinstance(tasks, list):
        raise BadInput(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    rows = []
    for n, task in enumerate(tasks, 1):
        item = (task.get("data") or {}).get("item_id") if isinstance(task, dict) else None
        if not item:
            raise BadInput(
                f"{path}: task {n} has no data.item_id; export tasks made by "
                "`amg audit export --format label-studio`"
            )
        for ann in task.get("annotations") or []:
            if ann.get("was_cancelled"):
                continue
            chosen = [
                c
                for r in ann.get("result") or []
                if r.get("type") == "choices" and r.get("from_name") == CHOICES_NAME
                for c in (r.get("value") or {}).get("choices") or []
            ]
            if not chosen:
                continue
            secs = ann.get("lead_time")
            rows.append(
                {
                    "item_id": str(item),
                    "annotator": _user(ann.get("completed_by")),
                    "label": str(chosen[0]),
                    "role": "annotator",
                    "active_seconds": float(secs) if isinstance(secs, int | float) else None,
                    "created_at": ann.get("created_at") or "",
                    "_row": f"task {n}",
                }
            )
    if not rows:
        raise BadInput(f"{path}: no completed annotations")
    return rows
