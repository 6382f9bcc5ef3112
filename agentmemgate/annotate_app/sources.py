"""Where audit items come from: a small registry of ``--from`` sources.

A source is named ``PREFIX`` or ``PREFIX:ARG`` (``arcs``, ``arcs:core``, ``statements:longmemeval``,
``equivalence:judge-v1``) or is a JSONL file path. A loader takes a ``SourceRequest`` and yields
``SourceItem``s with stable ids derived from the source (arc id + turn, a statement id), never from
row order, so re-creating an audit from the same source names the same items.

The built-in sources read the rooms below this one (``arcs``, ``statements:SET`` from corpora,
``equivalence:SET`` from validate); a room above it can add more at import time::

    from agentmemgate.annotate_app.sources import register_source
    register_source("runs", load_runs, tasks=("evidence_type",), help="runs:NAME  ...")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..design.stored import workspace_design
from ..errors import BadInput, UnknownLevel, unreadable
from ..jsonl import read_records
from ..registry import Registry
from ..schema import Arc, TurnRef
from ..suggest import did_you_mean
from .equivalence_source import load_equivalence_items
from .items import DisplayTurn, ItemDisplay, Reference, SourceItem, SourceRequest, ValuePair
from .labels import REALISM_CRITERIA
from .statement_source import load_statement_items

if TYPE_CHECKING:
    from ..design import Design
    from ..workspace import Workspace

CONTEXT_TURNS = 2  # the classifier saw the statement and up to two preceding turns (paper, sec. 3)


Loader = Callable[[SourceRequest], Iterable[SourceItem]]


SOURCES: Registry[Loader] = Registry("source")


def register_source(
    prefix: str, loader: Loader, *, tasks: Iterable[str] | None = None, help: str = ""
) -> None:
    """Make ``--from PREFIX[:ARG]`` load items with ``loader``; ``tasks`` limits where it applies."""
    SOURCES.register(prefix, loader, tasks=tuple(tasks) if tasks is not None else None, help=help)


def known_sources() -> dict[str, str]:
    return {e.name: e.info["help"] for e in sorted(SOURCES.entries(), key=lambda e: e.name)}


def load_source(
    workspace: Workspace,
    spec: str,
    task: str,
    factor: str | None = None,
    *,
    seed: int = 0,
    info: dict | None = None,
) -> list[SourceItem]:
    """Resolve ``spec`` and load its items, refusing duplicate ids and unknown sources.

    ``seed`` is the audit's seed (sources that shuffle what an item shows use it); what the
    loader reports about its items (skipped rows, the judge behind its references) is added to
    ``info``."""
    prefix, sep, arg = spec.partition(":")
    if (reg := SOURCES.entry(prefix)) is not None:
        tasks = reg.info["tasks"]
        if tasks is not None and task not in tasks:
            raise BadInput(f"Source {prefix!r} has no {task} items; it serves: {', '.join(tasks)}")
        req = SourceRequest(workspace, arg if sep else None, task, factor, seed=seed)
        items = list(reg.obj(req))
        if info is not None:
            info.update(req.info)
    elif Path(spec).suffix.lower() in (".jsonl", ".ndjson") or Path(spec).is_file():
        items = load_jsonl(Path(spec))
    elif Path(spec).is_dir():
        raise unreadable(Path(spec))  # "... is a folder, not a file"
    else:
        raise SOURCES.unknown(
            spec,
            f"use a JSONL file or one of: {', '.join(f'{p}[:ARG]' for p in sorted(SOURCES))}",
            near=prefix,
        )
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise BadInput(f"Source {spec!r} yields item id {it.id!r} twice; ids must be unique")
        seen.add(it.id)
    if not items:
        raise BadInput(f"Source {spec!r} has no {task} items")
    return items


# -- arcs --------------------------------------------------------------------------------------
# Reference evidence type of the arc turns whose ground truth the design fixes (paper, A.6 classes):
#   initial-value statement ("I run in Ghost 14 now")           -> other (an additive observation of
#                                                                   the existing state; no change)
#   plan turn of a plan arc                                        -> speculation
#   plan turn of a control arc (the change is reported as done)    -> completed_event
#   outcome turn of a came_true arc (the confirmation)             -> completed_event
#   outcome turn of an abandoned arc (the plan is dropped)         -> other (nothing changes)
#   pending mention of an open arc (still on the maybe list)       -> speculation
#   correction arcs: the reported change a correction later fixes  -> completed_event
#                    the correction turn ("sorry, I said Boston")  -> explicit_correction
# Filler turns have no design label and are not offered.


def _turn_refs(arc: Arc) -> list[tuple[str, TurnRef, str]]:
    s = arc.spec
    out = [("initial", arc.initial_turn, "other")]
    if s.correction is not None:
        if s.correction.target == "change":
            out.append(("reported_change", arc.plan_turn, "completed_event"))
        if arc.correction_turn is not None:
            out.append(("correction", arc.correction_turn, "explicit_correction"))
        return out
    if s.outcome == "control":
        out.append(("control_change", arc.plan_turn, "completed_event"))
    else:
        out.append(("plan", arc.plan_turn, "speculation"))
    if arc.outcome_turn is not None and s.outcome in ("came_true", "abandoned"):
        out.append(
            (
                "confirmation" if s.outcome == "came_true" else "abandonment",
                arc.outcome_turn,
                "completed_event" if s.outcome == "came_true" else "other",
            )
        )
    if arc.pending_turn is not None:
        out.append(("pending", arc.pending_turn, "speculation"))
    return out


def _flat(arc: Arc) -> tuple[list[DisplayTurn], dict[TurnRef, int]]:
    turns, index = [], {}
    for si, sess in enumerate(arc.sessions):
        for ti, t in enumerate(sess.turns):
            index[TurnRef(session=si, turn=ti)] = len(turns)
            turns.append(DisplayTurn(role=t.role, text=t.text, date=sess.date.isoformat()))
    return turns, index


def _arc_strata(arc: Arc) -> dict[str, str]:
    s = arc.spec
    return {
        "split": s.split,
        "factor": s.factor,
        "level": s.level,
        "outcome": s.outcome,
        "domain": s.domain,
    }


def _split(design: Design, name: str) -> str:
    """``name`` if it is a split of the workspace's design, else a one-line error naming them."""
    if name not in design.splits:
        raise UnknownLevel(
            f"Unknown split {name!r} in design {design.name!r}; choose one of: "
            f"{', '.join(design.splits)}{did_you_mean(name, design.splits)}"
        )
    return name


def _judged_turn(arc: Arc, role: str | None) -> TurnRef | None:
    """The turn a difficulty item highlights: the confirmation for a confirmation-wording level,
    the correction for a correction, else the plan."""
    if role == "confirmation_wording":
        return arc.outcome_turn
    return arc.correction_turn if arc.spec.correction is not None else arc.plan_turn


def _load_arcs(req: SourceRequest) -> Iterable[SourceItem]:
    design = workspace_design(req.workspace)
    split = _split(design, req.arg) if req.arg else None
    arcs = list(req.workspace.arcs(split))
    if not arcs:
        where = f" in split {split!r}" if split else ""
        raise BadInput(
            f"No arcs{where} in workspace {str(req.workspace.path)!r}; "
            "run `amg build` (or `amg generate`) first"
        )
    for arc in arcs:
        flat, index = _flat(arc)
        strata = _arc_strata(arc)
        if req.task == "evidence_type":
            for role, ref, label in _turn_refs(arc):
                i = index.get(ref)
                if i is None or flat[i].role != "user":
                    continue
                ctx = flat[max(0, i - CONTEXT_TURNS) : i]
                yield SourceItem(
                    display=ItemDisplay(
                        id=f"{arc.id}:s{ref.session}t{ref.turn}",
                        kind="statement",
                        turns=ctx + [flat[i]],
                        target=len(ctx),
                    ),
                    reference=Reference(label=label, source="design"),
                    strata={**strata, "turn": role, "reference": label},
                )
        elif req.task == "difficulty":
            if req.factor and arc.spec.factor != req.factor:
                continue
            factor = design.factors.get(arc.spec.factor)
            ref = _judged_turn(arc, factor.role if factor is not None else None)
            yield SourceItem(
                display=ItemDisplay(
                    id=arc.id,
                    kind="conversation",
                    turns=flat,
                    target=index.get(ref) if ref else None,
                ),
                reference=Reference(label=arc.spec.level, source="design"),
                strata={**strata, "reference": arc.spec.level},
            )
        elif req.task == "realism":
            for crit, question in REALISM_CRITERIA.items():
                yield SourceItem(
                    display=ItemDisplay(
                        id=f"{arc.id}:{crit}",
                        kind="conversation",
                        turns=flat,
                        target=index[arc.plan_turn] if crit == "motivated" else None,
                        question=question,
                        group=crit,
                    ),
                    strata={**strata, "criterion": crit},
                )


register_source(
    "arcs",
    _load_arcs,
    tasks=("evidence_type", "difficulty", "realism"),
    help="arcs[:SPLIT]  the workspace's arcs: their turns (evidence_type) or whole arcs "
    "(difficulty, realism)",
)
# The rooms below this one are audited through loaders kept here (they read those rooms' data;
# those rooms know nothing of audits).
register_source(
    "statements",
    load_statement_items,
    tasks=("evidence_type",),
    help="statements:SET[@disputed|@voted|@tie|@all]  a statement set (agreed items by default)",
)
register_source(
    "equivalence",
    load_equivalence_items,
    tasks=("equivalence",),
    help="equivalence[:SET]  stored equivalence pairs (default set 'default'); "
    "reference = the first judge's verdict",
)


# -- JSONL -------------------------------------------------------------------------------------
class _JsonTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    speaker: str = "user"
    role: Literal["user", "assistant", "other"] | None = None
    date: str | None = None

    def display(self) -> DisplayTurn:
        sp = self.speaker.strip()
        role = self.role or (sp.lower() if sp.lower() in ("user", "assistant") else "other")
        return DisplayTurn(
            role=role, speaker="" if sp.lower() == role else sp, text=self.text, date=self.date
        )


class _JsonPair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    description: str | None = None
    a: str
    b: str
    a_name: str = "Value A"
    b_name: str = "Value B"


class _JsonItem(BaseModel):
    """One JSONL line: a statement (text + context), a conversation (turns + target) or a pair."""

    model_config = ConfigDict(extra="forbid")
    id: str
    text: str | None = None
    speaker: str = "user"
    date: str | None = None
    context: list[_JsonTurn] = []
    turns: list[_JsonTurn] | None = None
    target: int | None = None
    pair: _JsonPair | None = None
    question: str | None = None
    group: str | None = None
    reference: str | None = None
    reference_source: Literal["design", "model", "judge", "human", "import"] = "import"
    meta: dict[str, str | int | float | bool] = {}

    def source_item(self) -> SourceItem:
        if self.pair is not None:
            display = ItemDisplay(
                id=self.id,
                kind="pair",
                pair=ValuePair(**self.pair.model_dump()),
                question=self.question,
                group=self.group,
            )
        elif self.turns is not None:
            display = ItemDisplay(
                id=self.id,
                kind="conversation",
                turns=[t.display() for t in self.turns],
                target=self.target,
                question=self.question,
                group=self.group,
            )
        elif self.text is not None:
            ctx = [t.display() for t in self.context[-CONTEXT_TURNS:]]
            me = _JsonTurn(text=self.text, speaker=self.speaker, date=self.date).display()
            display = ItemDisplay(
                id=self.id,
                kind="statement",
                turns=ctx + [me],
                target=len(ctx),
                question=self.question,
                group=self.group,
            )
        else:
            raise ValueError("needs one of: text, turns, pair")
        strata = {k: str(v) for k, v in self.meta.items()}
        ref = None
        if self.reference is not None and self.reference.strip():
            ref = Reference(label=self.reference, source=self.reference_source)
            strata["reference"] = self.reference
        return SourceItem(display=display, reference=ref, strata=strata)


def load_jsonl(path: Path) -> list[SourceItem]:
    """One item per line; a bad line is reported by number, and nothing is loaded."""
    out = []
    for where, rec in read_records(path, _JsonItem):
        try:
            out.append(rec.source_item())
        except ValidationError as e:  # an ItemDisplay rule (e.g. a target outside the turns)
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            raise BadInput(f"{where}: {loc + ': ' if loc else ''}{msg}") from None
        except ValueError as e:
            raise BadInput(f"{where}: {e}") from None
    return out
