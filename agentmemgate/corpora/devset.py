"""The miner's hand-labelled dev set (``devsets/hedges/``): stage-1 recall and cost, stage-2 keep rate.

Labels name turns by reference; texts come from the corpus files, so the committed labels stay
small (LoCoMo is CC BY-NC 4.0). A turn in scope with no label row is ``none``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import BadInput
from ..stats import Proportion, wilson
from ._rules import Rules, load_rules
from .extract import RuleExtractor
from .loaders import iter_conversations
from .model import Candidate, Conversation
from .prefilter import Lexicon, load_lexicon, scan_conversation
from .scorer import Scorer

LABELS = ("spec", "borderline", "none")


@dataclass
class DevTurn:
    part: str  # "locomo" or "longmemeval"
    conversation_id: str
    ref: str
    label: str
    reason: str = ""


@dataclass
class DevSet:
    folder: Path
    turns: list[DevTurn] = field(default_factory=list)
    conversations: dict[str, list[Conversation]] = field(default_factory=dict)  # by part
    sha256: dict[str, str] = field(default_factory=dict)  # part -> sha256 the labels were made on


def _read_tsv(path: Path) -> tuple[list[dict], str | None]:
    if not path.is_file():
        raise BadInput(f"{path}: no such label file")
    sha = None
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            if "source sha256" in line:
                sha = line.split()[-1]
            continue
        lines.append(line)
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    for r in rows:
        if r.get("label") not in LABELS[:2]:
            raise BadInput(f"{path.name}: unknown label {r.get('label')!r} for {r.get('ref')}")
    return rows, sha


def load_devset(folder: str | Path, locomo: str | Path, longmemeval: str | Path) -> DevSet:
    """Every in-scope turn with its label; the corpus files supply the conversations."""
    folder = Path(folder)
    out = DevSet(folder=folder)
    lo_rows, out.sha256["locomo"] = _read_tsv(folder / "locomo.tsv")
    lme_rows, out.sha256["longmemeval"] = _read_tsv(folder / "longmemeval.tsv")
    lo_labels = {(r["conversation"], r["ref"]): r for r in lo_rows}
    lme_labels = {r["ref"]: r for r in lme_rows}
    wanted_lme = {ref.split("/")[0] for ref in lme_labels} | set(
        _declared(folder / "longmemeval.tsv", "# Instances:")
    )
    scope = _locomo_scope(folder / "locomo.tsv")

    convs = [c for c in iter_conversations(locomo, "locomo") if c.conversation_id in scope]
    convs = [
        c.model_copy(update={"sessions": [s for s in c.sessions if scope[c.conversation_id](s)]})
        for c in convs
    ]
    out.conversations["locomo"] = convs
    for c in convs:
        for s in c.sessions:
            for t in s.turns:
                r = lo_labels.pop((c.conversation_id, t.ref), None)
                out.turns.append(
                    DevTurn(
                        "locomo",
                        c.conversation_id,
                        t.ref,
                        r["label"] if r else "none",
                        r["reason"] if r else "",
                    )
                )
    convs = [
        c for c in iter_conversations(longmemeval, "longmemeval") if c.conversation_id in wanted_lme
    ]
    out.conversations["longmemeval"] = convs
    for c in convs:
        for s in c.sessions:
            for t in s.turns:
                if not t.mined:
                    continue
                r = lme_labels.pop(t.ref, None)
                out.turns.append(
                    DevTurn(
                        "longmemeval",
                        c.conversation_id,
                        t.ref,
                        r["label"] if r else "none",
                        r["reason"] if r else "",
                    )
                )
    missing = [f"{c}:{r}" for c, r in lo_labels] + list(lme_labels)
    if missing:
        raise BadInput(
            f"{len(missing)} labelled turns are not in the corpus files (first: "
            f"{missing[0]}); are these the files the labels were made on?"
        )
    return out


HELD_OUT = ("heldout2", "heldout3", "heldout4")  # labelled sets no packaged rule was written from


def unseen_folders(
    root: Path, lexicon: Lexicon, part: str, scorer: Scorer | None = None
) -> list[Path]:
    """The held-out folders under ``root`` (``devsets/hedges``) whose ``part`` turns none of the
    measured files saw: all of ``HELD_OUT`` but those a lexicon's turn model or a scorer was
    trained on."""
    seen = set(lexicon.model.tuned_on_sets.get(part, ())) if lexicon.model is not None else set()
    if scorer is not None:
        seen |= set(scorer.tuned_on_sets.get(part, ()))
    return [Path(root) / name for name in HELD_OUT if name not in seen]


def load_devsets(folders: list[Path], locomo: str | Path, longmemeval: str | Path) -> DevSet:
    """Several labelled folders read as one set (held-out sets pooled for tighter intervals)."""
    if not folders:
        raise BadInput("no labelled sets to read (every held-out set was used to train a file?)")
    sets = [load_devset(f, locomo, longmemeval) for f in folders]
    out = DevSet(folder=Path(folders[0]))
    for d in sets:
        out.turns += d.turns
        for part, convs in d.conversations.items():
            out.conversations.setdefault(part, []).extend(convs)
        for part, sha in d.sha256.items():
            if sha and not out.sha256.get(part):
                out.sha256[part] = sha
    return out


def _declared(path: Path, prefix: str) -> list[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].split()
    return []


def _locomo_scope(path: Path):
    """``# Conversations: conv-41 conv-43:1-11`` -> {id: which sessions (by number) are in scope}."""
    scope = {}
    for item in _declared(path, "# Conversations:"):
        conv, _, sessions = item.partition(":")
        if sessions:
            lo, _, hi = sessions.partition("-")
            first, last = int(lo), int(hi or lo)
            scope[conv] = lambda s, a=first, b=last: a <= int(s.session_id.split("_")[-1]) <= b
        else:
            scope[conv] = lambda s: True
    if not scope:
        raise BadInput(f"{path.name}: no '# Conversations:' line naming the labelled conversations")
    return scope


class PartReport(BaseModel):
    """Figures for one corpus part of the dev set: each stage on its own, and the miner end to end
    (what a user of ``amg mine hedges`` gets: of the turns it keeps, how many are speculation, and
    how many of the speculation turns it keeps)."""

    model_config = ConfigDict(extra="forbid")
    part: str
    turns: int
    spec: int
    borderline: int
    flagged: Proportion  # turns stage 1 passes, over all turns in scope
    recall_spec: Proportion
    recall_spec_borderline: Proportion
    stage2_keep_spec: Proportion  # of spec turns stage 1 passed
    stage2_keep_borderline: Proportion
    stage2_keep_none: Proportion  # of flagged none turns: what stage 2 should reject
    missed: list[str]  # spec turns stage 1 missed
    dropped: list[str]  # spec turns stage 1 passed and stage 2 rejected, with the reason
    prefilter_precision: Proportion | None = None  # spec turns among the flagged ones
    precision: Proportion | None = None  # spec turns among the kept ones (borderline counts wrong)
    precision_spec_borderline: Proportion | None = None  # ... borderline counted right
    recall: Proportion | None = None  # spec turns kept, over all spec turns (end to end)
    kept_wrong: list[str] = []  # kept turns labelled none, with the value kept
    named: Proportion | None = None  # kept hedges whose attribute is not "unspecified"
    valued: Proportion | None = None  # kept hedges with a plan value


class DevReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lexicon: str
    rules: str
    parts: list[PartReport]
    scorer: str | None = None  # the learned stage-2 scorer that decided what was kept, if any


def measure(
    dev: DevSet,
    lexicon: Lexicon | None = None,
    rules: Rules | None = None,
    scorer: Scorer | None = None,
) -> DevReport:
    """Each stage and the miner end to end; ``scorer``: stage 2 keeps what the scorer keeps."""
    lex = lexicon or load_lexicon()
    rules = rules or load_rules()
    extractor = RuleExtractor(rules, scorer)
    parts = []
    for part in ("locomo", "longmemeval"):
        cands: dict[tuple[str, str], Candidate] = {}
        for conv in dev.conversations[part]:
            for c in scan_conversation(conv, lex).candidates:
                cands[(c.conversation_id, c.source_ref)] = c
        turns = [t for t in dev.turns if t.part == part]
        by_label = {lab: [t for t in turns if t.label == lab] for lab in LABELS}
        flagged = {
            lab: [t for t in by_label[lab] if (t.conversation_id, t.ref) in cands] for lab in LABELS
        }
        kept = {lab: [] for lab in LABELS}
        dropped, wrong = [], []
        named = valued = 0
        for lab in LABELS:
            for t in flagged[lab]:
                ext = extractor.extract(cands[(t.conversation_id, t.ref)])
                if ext.kept:
                    kept[lab].append(t)
                    named += ext.attribute != "unspecified"
                    valued += bool(ext.plan_value)
                    if lab == "none":
                        wrong.append(f"{_name(t)} ({ext.attribute}: {ext.plan_value})")
                elif lab == "spec":
                    dropped.append(f"{_name(t)} ({ext.reject_reason})")
        n_flag = sum(len(v) for v in flagged.values())
        n_kept = sum(len(v) for v in kept.values())
        sb = len(flagged["spec"]) + len(flagged["borderline"])
        parts.append(
            PartReport(
                part=part,
                turns=len(turns),
                spec=len(by_label["spec"]),
                borderline=len(by_label["borderline"]),
                flagged=wilson(n_flag, len(turns)),
                recall_spec=wilson(len(flagged["spec"]), len(by_label["spec"])),
                recall_spec_borderline=wilson(
                    sb, len(by_label["spec"]) + len(by_label["borderline"])
                ),
                stage2_keep_spec=wilson(len(kept["spec"]), len(flagged["spec"])),
                stage2_keep_borderline=wilson(len(kept["borderline"]), len(flagged["borderline"])),
                stage2_keep_none=wilson(len(kept["none"]), len(flagged["none"])),
                missed=[
                    _name(t) for t in by_label["spec"] if (t.conversation_id, t.ref) not in cands
                ],
                dropped=dropped,
                prefilter_precision=wilson(len(flagged["spec"]), n_flag),
                precision=wilson(len(kept["spec"]), n_kept),
                precision_spec_borderline=wilson(
                    len(kept["spec"]) + len(kept["borderline"]), n_kept
                ),
                recall=wilson(len(kept["spec"]), len(by_label["spec"])),
                kept_wrong=wrong,
                named=wilson(named, n_kept),
                valued=wilson(valued, n_kept),
            )
        )
    return DevReport(
        lexicon=f"{lex.ref}:{lex.sha256[:12]}",
        rules=f"{rules.ref}:{rules.sha256[:12]}",
        parts=parts,
        scorer=f"{scorer.ref}:{scorer.sha256[:12]}" if scorer else None,
    )


def share_passed(path: str | Path, lexicon: Lexicon | None = None) -> Proportion:
    """Share of a LongMemEval file's user turns the prefilter passes, sessions deduplicated the way
    ``amg mine hedges`` scans them."""
    lex = lexicon or load_lexicon()
    seen: set[str] = set()
    turns = hits = 0
    for conv in iter_conversations(path, "longmemeval"):
        scan = scan_conversation(conv, lex, seen)
        turns += scan.turns_scanned
        hits += len(scan.candidates)
    return wilson(hits, turns)


def _name(t: DevTurn) -> str:
    return f"{t.conversation_id}:{t.ref}" if t.part == "locomo" else t.ref
