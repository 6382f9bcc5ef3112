"""Statement sets: named collections of statements (text + up to two preceding turns) that the
evidence-type classifier is validated on. Built by stratified sampling from mined corpora or
imported from JSONL; reference labels arrive later (``amg statements label``) or with the import.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..jsonl import read_records
from ..schema import check_evidence_type
from ..suggest import did_you_mean
from ..workspace import Workspace, now
from .model import LICENSES, ContextTurn, MinedStatement

CONTEXT_TURNS = 2
REFERENCE_STATUSES = ("imported", "voted", "agreed", "disputed", "tie")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


class Statement(BaseModel):
    """One statement of a set; ``reference`` is an evidence type (None until labeled)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    context: list[ContextTurn] = []
    speaker: str = "user"
    date: str | None = None
    reference: str | None = None
    reference_status: str | None = None  # imported / voted / agreed / disputed / tie / human
    relabel: str | None = None
    stratum: str = ""
    corpus: str = ""
    license: str = ""
    origin: str = ""


class SetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    origin: str
    created_at: str
    n: int
    with_reference: int
    by_status: dict[str, int]
    by_reference: dict[str, int]
    licenses: list[str]


def check_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise BadInput(
            f"Bad statement set name {name!r}: use letters, digits, '_', '-', '.' "
            "(at most 64 characters)"
        )
    return name


def set_exists(ws: Workspace, name: str) -> bool:
    return ws.db["statement_sets"].count_where("name = ?", [name]) > 0


def save_set(
    ws: Workspace,
    name: str,
    statements: list[Statement],
    origin: str,
    params: dict,
    replace: bool = False,
) -> int:
    """Store a new set at once (all or nothing); refuse to overwrite unless ``replace``."""
    check_name(name)
    if not statements:
        raise BadInput(f"Statement set {name!r} would be empty")
    if set_exists(ws, name) and not replace:
        raise BadInput(f"Statement set {name!r} exists; pick another name or pass --replace")
    ids = [s.id for s in statements]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise BadInput(f"Statement id {dup!r} occurs twice; ids must be unique within a set")
    with ws.db.conn:
        for table in ("statements", "statement_votes", "classifications"):
            ws.db[table].delete_where("set_name = ?", [name])
        ws.db["statement_sets"].upsert(
            {
                "name": name,
                "origin": origin,
                "params": json.dumps(params, sort_keys=True, default=str),
                "created_at": now(),
            },
            pk="name",
        )
        ws.db["statements"].insert_all(
            [
                {
                    "set_name": name,
                    "id": s.id,
                    "position": i,
                    "text": s.text,
                    "context": json.dumps([c.model_dump() for c in s.context], ensure_ascii=False),
                    "reference": s.reference,
                    "reference_status": s.reference_status,
                    "relabel": s.relabel,
                    "stratum": s.stratum,
                    "corpus": s.corpus,
                    "license": s.license,
                    "origin": s.origin,
                    "speaker": s.speaker,
                    "date": s.date,
                }
                for i, s in enumerate(statements)
            ],
            pk=("set_name", "id"),
        )
    return len(statements)


def load_set(ws: Workspace, name: str) -> list[Statement]:
    if not set_exists(ws, name):
        names = [r["name"] for r in ws.db["statement_sets"].rows]
        make = (
            "make one with `amg statements sample NAME --size N` (from mined corpora) or "
            "`amg statements import NAME FILE.jsonl`"
        )
        raise BadInput(
            f"No statement set {name!r}{did_you_mean(name, names)}; "
            + (f"sets: {', '.join(names)}; or {make}" if names else make)
        )
    rows = ws.db.execute(
        "select id, text, context, reference, reference_status, relabel, stratum, corpus, license, "
        "origin, speaker, date from statements where set_name = ? order by position",
        [name],
    ).fetchall()
    return [
        Statement(
            id=r[0],
            text=r[1],
            context=[ContextTurn(**c) for c in json.loads(r[2] or "[]")],
            reference=r[3],
            reference_status=r[4],
            relabel=r[5],
            stratum=r[6] or "",
            corpus=r[7] or "",
            license=r[8] or "",
            origin=r[9] or "",
            speaker=r[10] or "user",
            date=r[11],
        )
        for r in rows
    ]


def update_reference(
    ws: Workspace,
    name: str,
    statement_id: str,
    reference: str | None,
    status: str,
    relabel: str | None = None,
) -> None:
    with ws.db.conn:
        ws.db["statements"].update(
            (name, statement_id),
            {"reference": reference, "reference_status": status, "relabel": relabel},
        )


def list_sets(ws: Workspace) -> list[SetInfo]:
    out = []
    for row in ws.db["statement_sets"].rows_where(order_by="created_at"):
        items = load_set(ws, row["name"])
        status: dict[str, int] = {}
        refs: dict[str, int] = {}
        for s in items:
            status[s.reference_status or "unlabeled"] = (
                status.get(s.reference_status or "unlabeled", 0) + 1
            )
            if s.reference:
                refs[s.reference] = refs.get(s.reference, 0) + 1
        out.append(
            SetInfo(
                name=row["name"],
                origin=row["origin"],
                created_at=row["created_at"],
                n=len(items),
                with_reference=sum(refs.values()),
                by_status=status,
                by_reference=refs,
                licenses=sorted({s.license for s in items if s.license}),
            )
        )
    return out


# -- import ----------------------------------------------------------------------------------
class _ImportLine(BaseModel):
    """A JSONL line: id, text, optional context [{speaker, text}] and reference label.

    Unknown keys are ignored, so ``amg mine hedges --out`` and ``amg classify --out`` files import.
    """

    model_config = ConfigDict(extra="ignore")
    id: str
    text: str
    context: list[ContextTurn] = []
    speaker: str = "user"
    date: str | None = None
    reference: str | None = None
    label: str | None = None
    corpus: str = ""
    license: str | None = None
    stratum: str = ""


def import_statements(
    ws: Workspace, name: str, path: str | Path, *, license: str | None = None, replace: bool = False
) -> int:
    """Read a JSONL file into a new set; one bad line -> a one-line error naming it, nothing saved."""
    path = Path(path)
    out = []
    for where, rec in read_records(path, _ImportLine):
        if not rec.text.strip():
            raise BadInput(f"{where}: empty text")
        raw_ref = rec.reference if rec.reference not in (None, "") else rec.label
        ref = check_evidence_type(raw_ref, where) if raw_ref not in (None, "") else None
        lic = rec.license or license or LICENSES.get(rec.corpus, "")
        out.append(
            Statement(
                id=rec.id,
                text=rec.text,
                context=rec.context[-CONTEXT_TURNS:],
                speaker=rec.speaker,
                date=rec.date,
                reference=ref,
                reference_status="imported" if ref else None,
                stratum=rec.stratum,
                corpus=rec.corpus,
                license=lic,
                origin=f"import:{path.name}",
            )
        )
    if not out:
        raise BadInput(f"{path.name}: no statements")
    return save_set(ws, name, out, f"import:{path.name}", {"file": str(path)}, replace)


# -- stratified sampling from mined corpora --------------------------------------------------
def _allocate(sizes: dict[str, int], total: int, allocation: str) -> dict[str, int]:
    """How many to draw per stratum: equal shares (capped, the rest redistributed) or proportional."""
    if allocation == "proportional":
        n = sum(sizes.values())
        raw = {k: total * v / n for k, v in sizes.items()}
        take = {k: min(sizes[k], int(r)) for k, r in raw.items()}
        for k in sorted(raw, key=lambda k: raw[k] - int(raw[k]), reverse=True):
            if sum(take.values()) >= total:
                break
            if take[k] < sizes[k]:
                take[k] += 1
        return take
    take = dict.fromkeys(sizes, 0)
    while sum(take.values()) < total:
        open_ = [k for k in sorted(sizes) if take[k] < sizes[k]]
        if not open_:
            break
        for k in open_:
            if sum(take.values()) >= total:
                break
            take[k] += 1
    return take


def sample_statements(
    ws: Workspace,
    name: str,
    size: int,
    *,
    sources: list[str] | None = None,
    miner: str | None = None,
    stratify_by: tuple[str, ...] = ("corpus", "stage2"),
    allocation: str = "equal",
    kept_only: bool = False,
    seed: int = 0,
    replace: bool = False,
) -> int:
    """Draw ``size`` mined candidates into a set, stratified (default: corpus x stage-2 verdict).

    The stage-2 stratum is the hedge level of a kept statement, "rejected", or "unextracted";
    rejected candidates matter: they carry most completed events and other statements.
    """
    from .mining import mined_statements

    if size < 1:
        raise BadInput("--size must be at least 1")
    if allocation not in ("equal", "proportional"):
        raise BadInput(f"Unknown allocation {allocation!r}; choose equal or proportional")
    unknown = set(stratify_by) - {"corpus", "stage2", "speaker", "source"}
    if unknown:
        raise BadInput(
            f"Cannot stratify by {', '.join(sorted(unknown))}; "
            "choose from corpus, stage2, speaker, source"
        )
    all_sources = [r["source_key"] for r in ws.db["mine_sources"].rows_where(order_by="created_at")]
    if not all_sources:
        raise BadInput("No mined corpora in this workspace; run `amg mine hedges` first")
    chosen = []
    for given in sources or all_sources:  # a source key, or a file name ("locomo10.json")
        found = [k for k in all_sources if k == given or k.startswith(f"{given}:")]
        if not found:
            raise BadInput(f"No mined source {given!r}; known: {', '.join(all_sources)}")
        chosen += [k for k in found if k not in chosen]
    # Two passes over the mined records, so a big source never sits in memory: strata of
    # (id, source) pairs first, then the full records of the picked ones.
    pool: dict[str, list[tuple[str, str]]] = {}
    miners = {key: miner or _default_miner(ws, key) for key in chosen}
    for key in chosen:
        for m in mined_statements(ws, key, miners[key]):
            if kept_only and not m.kept:
                continue
            pool.setdefault(_stratum(m, key, stratify_by), []).append((m.id, key))
    if not pool:
        raise BadInput("No mined statements match (try without --kept-only, or mine first)")
    rng = random.Random(seed)
    take = _allocate({k: len(v) for k, v in pool.items()}, size, allocation)
    picked: list[tuple[str, str]] = []
    stratum_of: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    for stratum in sorted(pool):
        items = sorted(pool[stratum])
        rng.shuffle(items)
        for item in items:
            if take[stratum] <= 0:
                break
            if item[0] not in seen:
                picked.append(item)
                stratum_of[item] = stratum
                seen.add(item[0])
                take[stratum] -= 1
    rng.shuffle(picked)
    records: dict[tuple[str, str], Statement] = {}
    for key in {k for _, k in picked}:
        for m in mined_statements(ws, key, miners[key]):
            if (m.id, key) in stratum_of:
                records[(m.id, key)] = Statement(
                    id=m.id,
                    text=m.text,
                    context=m.context[-CONTEXT_TURNS:],
                    speaker=m.speaker,
                    date=m.date,
                    stratum=stratum_of[(m.id, key)],
                    corpus=m.corpus,
                    license=m.license,
                    origin=f"mined:{key}:{m.miner}",
                )
    picked_statements = [records[item] for item in picked]
    params = {
        "size": size,
        "sources": chosen,
        "miner": miner,
        "stratify_by": list(stratify_by),
        "allocation": allocation,
        "kept_only": kept_only,
        "seed": seed,
    }
    return save_set(ws, name, picked_statements, "mined", params, replace)


def _stratum(m: MinedStatement, key: str, stratify_by: tuple[str, ...]) -> str:
    stage2 = m.hedge_level if m.kept else ("rejected" if m.kept is False else "unextracted")
    parts = {"corpus": m.corpus, "stage2": stage2, "speaker": m.speaker, "source": key}
    return "/".join(parts[k] for k in stratify_by)


def _default_miner(ws: Workspace, key: str) -> str | None:
    """The most recent miner that answered this source (an LLM run beats the offline one)."""
    rows = ws.db.execute(
        "select miner, max(created_at) from mined_extractions where source_key = ? "
        "group by miner order by miner in ('offline-rules', 'offline-scorer'), 2 desc",
        [key],
    ).fetchall()
    return rows[0][0] if rows else None
